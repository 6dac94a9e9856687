"""The JSON-RPC edge: every request gets a response, and faults nobody can act on stay in the log.

pygls 2 turns each incoming body into a typed message inside ``json.loads``
(``structure_message``); when that fails it logs, reports the error out of band and drops the
message, so a client waiting for the answer to a malformed request waits forever. This protocol:

- answers a request whose params do not fit its method with ``InvalidParams`` (-32602), naming
  the bad field; a message with an ``id`` but neither a ``method`` nor a ``result``/``error``,
  or with a ``method`` that is not a string, with ``InvalidRequest`` (-32600);
- answers a request that arrives before ``initialize`` with ``ServerNotInitialized`` (-32002);
- ignores, with one log line, a malformed notification and a ``didChange`` of a document that
  was never opened (pygls would raise ``KeyError`` on it).

A body that is not JSON at all is logged and dropped: it names no request to answer, and an
``id: null`` error reply trips clients that insist on numeric ids (Neovim asserts on it).
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from typing import Any
from urllib.parse import unquote

from cattrs import transform_error
from cattrs.errors import ClassValidationError
from lsprotocol import types
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

logger = logging.getLogger(__name__)

_LIFECYCLE = frozenset({types.INITIALIZE, types.SHUTDOWN, types.EXIT})


class _Handled:
    """What ``structure_message`` returns for a message it already answered or dropped."""

    jsonrpc = ""


HANDLED = _Handled()


def _camel(segment: str) -> str:
    head, *rest = segment.split("_")
    return head + "".join(part.title() for part in rest)


def _wire_path(reason: str) -> str:
    """``… @ $.params.text_document.uri`` as the client wrote it: ``… @ $.textDocument.uri``."""
    text, sep, path = reason.rpartition(" @ ")
    if not sep:
        return reason
    parts = path.split(".")
    if parts[:2] == ["$", "params"]:
        parts = ["$", *parts[2:]]
    return f"{text} @ {'.'.join(_camel(p) for p in parts)}"


def _why(exc: BaseException) -> str:
    """The field-level reasons of a structuring failure, e.g. ``… @ $.textDocument.uri``."""
    cause = exc.__cause__ if exc.__cause__ is not None else exc
    if isinstance(cause, ClassValidationError):
        reasons = transform_error(cause, path="$")
        if reasons:
            return "; ".join(_wire_path(r) for r in reasons[:3])
    return str(cause) or type(cause).__name__


class ImpactProtocol(LanguageServerProtocol):
    """``LanguageServerProtocol`` that answers malformed requests and logs unknown documents."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        """Structure one message; answer or drop it here when it is malformed."""
        if "jsonrpc" not in data:
            return data  # a nested object: json.loads calls us for those too
        method = data.get("method")
        has_id = "id" in data
        if has_id and method is None and "result" not in data and "error" not in data:
            return self._refuse(data, types.ErrorCodes.InvalidRequest, "a request needs a method")
        if method is not None and not isinstance(method, str):
            return self._refuse(data, types.ErrorCodes.InvalidRequest, "method must be a string")
        try:
            return super().structure_message(data)
        except Exception as exc:
            if not has_id or method is None:
                logger.warning("ignored a malformed %s notification: %s", method, _why(exc))
                return HANDLED
            return self._refuse(
                data, types.ErrorCodes.InvalidParams, f"invalid params for {method}: {_why(exc)}"
            )

    def _refuse(self, data: dict[str, Any], code: int, message: str) -> _Handled:
        msg_id = data.get("id")
        logger.warning("refused message %r: %s", msg_id, message)
        if isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool):
            self._send_data(
                {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
            )
        return HANDLED

    def handle_message(self, message: Any) -> None:
        """Dispatch ``message``; requests before ``initialize`` get ``ServerNotInitialized``."""
        if message is HANDLED:
            return
        method = getattr(message, "method", None)
        if (
            self._workspace is None
            and isinstance(method, str)
            and method not in _LIFECYCLE
            and hasattr(message, "id")
        ):
            self._refuse(
                {"id": message.id},
                types.ErrorCodes.ServerNotInitialized,
                f"{method} before initialize: send initialize first",
            )
            return
        super().handle_message(message)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(
        self, params: types.DidChangeTextDocumentParams
    ) -> Generator[Any, Any, None]:
        """Apply a change to an open document; a change to any other is ignored with a log line."""
        uri = params.text_document.uri
        if unquote(uri) not in self.workspace.text_documents:
            logger.warning(
                "didChange for %s, which is not open: ignored (didOpen comes first)", uri
            )
            return
        yield from super().lsp_text_document__did_change(params)
