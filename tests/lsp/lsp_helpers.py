"""Helpers for the pytest-lsp tests: start the server, edit documents, wait for results."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

TIMEOUT_S = 30.0


def capabilities(*, watch: bool = False, lens_refresh: bool = False) -> types.ClientCapabilities:
    """Neovim 0.11's capabilities, optionally with dynamic file watching and lens refresh."""
    caps = client_capabilities("neovim@v0.11.0")
    assert caps.workspace is not None
    if watch:
        caps.workspace.did_change_watched_files = types.DidChangeWatchedFilesClientCapabilities(
            dynamic_registration=True, relative_pattern_support=True
        )
    if lens_refresh:
        caps.workspace.code_lens = types.CodeLensWorkspaceClientCapabilities(refresh_support=True)
    return caps


def _converter() -> Any:
    """pygls' converter with a fixed ``Command | CodeAction`` hook.

    lsprotocol 2025.0.0 structures any object with a ``command`` key as a ``Command``, so a
    ``CodeAction`` carrying a command comes back as a Command whose ``command`` is the repr of
    a dict. A Command's ``command`` is a string; a CodeAction's is an object.
    """
    converter = default_converter()

    def hook(obj: Any, _: type) -> types.Command | types.CodeAction:
        if isinstance(obj.get("command"), str):
            return converter.structure(obj, types.Command)
        return converter.structure(obj, types.CodeAction)

    converter.register_structure_hook(types.Command | types.CodeAction, hook)
    return converter


@contextlib.asynccontextmanager
async def serve(
    *roots: Path,
    options: dict[str, Any] | None = None,
    caps: types.ClientCapabilities | None = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[LanguageClient]:
    """Start the server, initialize it on ``roots`` and shut it down afterwards."""
    client = LanguageClient(converter_factory=_converter)
    register_lsp_features(client)
    registrations: list[types.RegistrationParams] = []
    refreshes: list[None] = []

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def _register(ls: LanguageClient, params: types.RegistrationParams) -> None:
        registrations.append(params)

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def _refresh(ls: LanguageClient, params: None) -> None:
        refreshes.append(params)

    client.registrations = registrations  # type: ignore[attr-defined]
    client.lens_refreshes = refreshes  # type: ignore[attr-defined]
    server_env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    await client.start_io(sys.executable, "-m", "impact_ls", "serve", env=server_env)
    client.init_result = await client.initialize_session(  # type: ignore[attr-defined]
        types.InitializeParams(
            capabilities=caps or capabilities(),
            root_uri=roots[0].as_uri() if roots else None,
            workspace_folders=[types.WorkspaceFolder(uri=r.as_uri(), name=r.name) for r in roots]
            or None,
            initialization_options=options,
        )
    )
    try:
        yield client
    finally:
        await asyncio.wait_for(client.shutdown_session(), TIMEOUT_S)
        await client.stop()


async def until(
    condition: Callable[[], Any], *, timeout: float = TIMEOUT_S, what: str = "condition"
) -> Any:
    """Poll ``condition`` until it returns something truthy; fail with ``what`` on timeout."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = condition()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def until_async(
    probe: Callable[[], Awaitable[Any]],
    expected: Any,
    *,
    timeout: float = TIMEOUT_S,
    what: str = "value",
) -> None:
    """Await ``probe()`` repeatedly until it returns ``expected``."""
    deadline = asyncio.get_running_loop().time() + timeout
    while (value := await probe()) != expected:
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}: last {value!r}")
        await asyncio.sleep(0.05)


def indexed(client: LanguageClient) -> bool:
    """Whether an indexing progress has ended."""
    return any(
        any(isinstance(v, types.WorkDoneProgressEnd) for v in values)
        for values in client.progress_reports.values()
    )


class Doc:
    """An open document the test edits incrementally, like an editor would."""

    def __init__(self, client: LanguageClient, path: Path) -> None:
        self.client = client
        self.path = path
        self.uri = path.as_uri()
        self.text = path.read_text(encoding="utf-8")
        self.version = 0
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=self.uri, language_id="python", version=0, text=self.text
                )
            )
        )

    def _position(self, offset: int) -> types.Position:
        before = self.text[:offset]
        line = before.count("\n")
        col = len(before) - (before.rfind("\n") + 1)
        return types.Position(line=line, character=col)

    def replace(self, old: str, new: str) -> None:
        """Replace the first ``old`` by ``new`` with one incremental change."""
        offset = self.text.index(old)
        rng = types.Range(start=self._position(offset), end=self._position(offset + len(old)))
        self.text = self.text[:offset] + new + self.text[offset + len(old) :]
        self.version += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=self.uri, version=self.version
                ),
                content_changes=[types.TextDocumentContentChangePartial(range=rng, text=new)],
            )
        )

    def close(self) -> None:
        """Close the document."""
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=self.uri)
            )
        )

    def save(self) -> None:
        """Write the buffer to disk and tell the server."""
        self.path.write_text(self.text, encoding="utf-8")
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=self.uri)
            )
        )


def diagnostics(
    client: LanguageClient, path: Path, *, code: str | None = None
) -> list[types.Diagnostic]:
    """The diagnostics last published for ``path`` (optionally of one code)."""
    diags = list(client.diagnostics.get(path.as_uri(), []))
    return [d for d in diags if code is None or d.code == code]


def lines_of(diags: list[types.Diagnostic]) -> list[int]:
    """0-based start lines of ``diags``, sorted."""
    return sorted(d.range.start.line for d in diags)


async def command(client: LanguageClient, name: str, *args: Any) -> Any:
    """Run ``workspace/executeCommand`` and return its result."""
    return await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=list(args))
        ),
        TIMEOUT_S,
    )


async def lenses(client: LanguageClient, doc: Doc) -> list[types.CodeLens]:
    """The code lenses of ``doc``."""
    result = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=doc.uri))
    )
    return list(result or [])


async def actions(
    client: LanguageClient, doc: Doc, line: int, character: int = 0
) -> list[types.CodeAction]:
    """The code actions at a position of ``doc``."""
    pos = types.Position(line=line, character=character)
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=doc.uri),
            range=types.Range(start=pos, end=pos),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return [a for a in result or [] if isinstance(a, types.CodeAction)]
