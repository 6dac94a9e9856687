"""The ``workspace/executeCommand`` commands, all listed in ``executeCommandProvider``.

- ``impact.showBlastRadius [uri?]`` → the DESIGN §4 report of an open document, of a file's
  working-tree change, or of the whole workspace (open buffers included).
- ``impact.runAffectedTests [{"uri"?, "tests"?, "complete"?}]`` → pytest on the selection
  (default: the affected tests of the document, else of every open document) with cancellable
  progress; failures become diagnostics on the tests; returns the pass/fail counts. With
  ``complete`` the document's selection is first searched again without the editor's budget
  (what the lens asks when that budget cut the search).
- ``impact.reindex [uri?]`` → rebuild the graph with progress, then re-check open documents.
- ``impact.openLocation [{"uri", "range"?}]`` → ``window/showDocument`` (what code actions run).
- ``impact.showLocations [uri, position, locations]`` → opens the first location; clients that
  can show a list (VS Code's ``editor.action.showReferences``, Neovim's quickfix) intercept it.

Malformed arguments and unknown documents come back as ``InvalidParams`` errors that say what
was expected; nothing here raises anything else on bad input.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from impact_ls.errors import ImpactError
from impact_ls.model import Report
from impact_ls.report.json_report import report_to_dict
from impact_ls.server import present
from impact_ls.server.llm_http import client_from_settings
from impact_ls.server.testrun import RunOutcome, run_pytest

if TYPE_CHECKING:
    from impact_ls.server.server import ImpactServer
    from impact_ls.server.session import Session

logger = logging.getLogger(__name__)


def _invalid(message: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(message=message)


def _uri_arg(args: Sequence[Any], command: str) -> str | None:
    """The optional first argument: a URI string or an object with a ``uri``."""
    if not args or args[0] is None:
        return None
    first = args[0]
    if isinstance(first, dict):
        first = first.get("uri")
        if first is None:
            return None
    if not isinstance(first, str) or not first:
        raise _invalid(
            f"{command}: expected a document URI string or {{'uri': ...}}, got {args[0]!r}"
        )
    return first


def _session_of(srv: ImpactServer, uri: str | None, command: str) -> tuple[Session, str | None]:
    if uri is not None:
        found = srv.locate(uri)
        if found is None:
            raise _invalid(f"{command}: {uri} is outside the workspace folders")
        return found
    sessions = list(srv.sessions)
    if not sessions:
        raise _invalid(f"{command}: no workspace folder is open")
    return sessions[0], None


async def show_blast_radius(ls: LanguageServer, *args: Any) -> dict[str, Any]:
    """The report of a document, a file, or the whole workspace (no argument)."""
    srv = cast("ImpactServer", ls)
    uri = _uri_arg(args, present.CMD_SHOW_BLAST_RADIUS)
    try:
        if uri is None:
            reports = [(s, await _workspace_report(srv, s)) for s in srv.sessions]
            if not reports:
                raise _invalid(f"{present.CMD_SHOW_BLAST_RADIUS}: no workspace folder is open")
            if len(reports) == 1:
                return report_to_dict(reports[0][1])
            return {
                "version": 1,
                "workspaces": [{"root": s.uri, "report": report_to_dict(r)} for s, r in reports],
            }
        session, file = _session_of(srv, uri, present.CMD_SHOW_BLAST_RADIUS)
        doc = session.documents.get(uri)
        if doc is not None:
            return report_to_dict(doc.shown or Report(root=".", base="HEAD"))
        assert file is not None
        llm = client_from_settings(session.settings)
        return report_to_dict(await srv.worker.call(lambda: session.file_report(file, llm=llm)))
    except ImpactError as exc:
        raise _invalid(f"{present.CMD_SHOW_BLAST_RADIUS}: {exc}") from exc


async def _workspace_report(srv: ImpactServer, session: Session) -> Report:
    texts = srv.snapshot(session).texts
    llm = client_from_settings(session.settings)
    return await srv.worker.call(lambda: session.workspace_report(texts, llm=llm))


def _tests_arg(args: Sequence[Any]) -> tuple[str | None, list[str] | None, bool]:
    """``[{"uri"?, "tests"?, "complete"?}]``, ``[uri]``, ``[[ids]]`` or nothing."""
    command = present.CMD_RUN_AFFECTED_TESTS
    if not args or args[0] is None:
        return None, None, False
    first = args[0]
    uri: Any = None
    tests: Any = None
    complete: Any = False
    if isinstance(first, str):
        uri = first
    elif isinstance(first, list):
        tests = first
    elif isinstance(first, dict):
        uri, tests = first.get("uri"), first.get("tests")
        complete = first.get("complete", False)
    else:
        raise _invalid(f"{command}: expected {{'uri': ..., 'tests': [...]}}, got {first!r}")
    if uri is not None and not isinstance(uri, str):
        raise _invalid(f"{command}: 'uri' must be a string, got {uri!r}")
    if not isinstance(complete, bool) or (complete and (uri is None or tests is not None)):
        raise _invalid(f"{command}: 'complete' is true or false, with a 'uri' and no 'tests'")
    if tests is not None:
        if not isinstance(tests, list) or not all(isinstance(t, str) and t.strip() for t in tests):
            raise _invalid(f"{command}: 'tests' must be a list of pytest node ids, got {tests!r}")
        if bad := [t for t in tests if t.startswith("-")]:
            # A node id never starts with "-": refuse what pytest would read as an option.
            raise _invalid(f"{command}: not pytest node ids: {bad!r}")
    return uri, tests, complete


async def run_affected_tests(ls: LanguageServer, *args: Any) -> dict[str, Any]:
    """Run pytest on the affected tests; failures become diagnostics; return the counts."""
    srv = cast("ImpactServer", ls)
    uri, tests, complete = _tests_arg(args)
    session, _ = _session_of(srv, uri, present.CMD_RUN_AFFECTED_TESTS)
    doc = session.documents.get(uri) if uri else None
    if complete and doc is not None:
        edited, text = doc, srv.snapshot(session).texts.get(doc.uri, "")
        tests = await srv.worker.call(lambda: session.complete_selection(edited, text))
    if tests is None:
        reports = [doc.shown] if doc is not None and doc.shown else session.reports()
        tests = sorted({t for r in reports for t in present.affected_tests(r)})
    settings = session.settings
    progress = await srv.begin_progress(
        f"impact-ls: running {len(tests)} affected tests", cancellable=True
    )
    try:
        run = await run_pytest(
            tests,
            root=session.root,
            settings=settings,
            timeout_s=settings.test_timeout_s,
            on_progress=lambda done, total: progress.report(f"{done}/{total} tests", done, total),
            is_cancelled=progress.cancelled,
        )
    finally:
        progress.end("done")
    locator = session.locator(srv.snapshot(session), srv.units)
    session.test_diagnostics = present.test_diagnostics(run, locator=locator)
    srv.publish()
    kind = {
        RunOutcome.PASSED: types.MessageType.Info,
        RunOutcome.NO_TESTS: types.MessageType.Info,
        RunOutcome.CANCELLED: types.MessageType.Info,
    }.get(run.outcome, types.MessageType.Warning)
    srv.show(f"impact-ls: {run.message}", kind)
    return run.as_dict()


async def reindex(ls: LanguageServer, *args: Any) -> dict[str, Any]:
    """Re-read changed files and rebuild the graph of one folder (a URI) or all of them."""
    srv = cast("ImpactServer", ls)
    uri = _uri_arg(args, present.CMD_REINDEX)
    sessions = [_session_of(srv, uri, present.CMD_REINDEX)[0]] if uri else list(srv.sessions)
    for session in sessions:
        started = srv.starts.get(session.root)
        if started is None or not started.done():
            await srv.begin(session)  # the first indexing is still to come or under way
        else:
            await srv.worker.call(session.refresh)
            await srv.index(session)
    return {
        "reindexed": [s.uri for s in sessions],
        "files": sum(len(s.engine.index.files()) for s in sessions if s.engine is not None),
    }


def _location_arg(value: Any, command: str) -> tuple[str, types.Range | None]:
    if not isinstance(value, dict) or not isinstance(value.get("uri"), str):
        raise _invalid(f"{command}: expected {{'uri': ..., 'range': ...}}, got {value!r}")
    rng = value.get("range")
    if rng is None:
        return value["uri"], None
    try:
        return value["uri"], types.Range(
            start=types.Position(
                line=int(rng["start"]["line"]), character=int(rng["start"]["character"])
            ),
            end=types.Position(
                line=int(rng["end"]["line"]), character=int(rng["end"]["character"])
            ),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise _invalid(f"{command}: malformed range {rng!r}") from exc


async def _show(srv: ImpactServer, uri: str, rng: types.Range | None) -> bool:
    caps = srv.client_capabilities.window
    if caps is None or caps.show_document is None or not caps.show_document.support:
        line = f":{rng.start.line + 1}" if rng else ""
        srv.show(f"impact-ls: next edit at {uri}{line}")
        return False
    result = await srv.window_show_document_async(
        types.ShowDocumentParams(uri=uri, take_focus=True, selection=rng)
    )
    return bool(result and result.success)


async def open_location(ls: LanguageServer, *args: Any) -> dict[str, Any]:
    """Open ``{"uri", "range"}`` in the editor via ``window/showDocument``."""
    srv = cast("ImpactServer", ls)
    if not args:
        raise _invalid(f"{present.CMD_OPEN_LOCATION}: expected a location argument")
    uri, rng = _location_arg(args[0], present.CMD_OPEN_LOCATION)
    return {"uri": uri, "shown": await _show(srv, uri, rng)}


async def show_locations(ls: LanguageServer, *args: Any) -> dict[str, Any]:
    """The fallback of a batch lens: open its first location and return them all."""
    srv = cast("ImpactServer", ls)
    command = present.CMD_SHOW_LOCATIONS
    if len(args) != 3 or not isinstance(args[2], list):
        raise _invalid(f"{command}: expected [uri, position, locations], got {list(args)!r}")
    locations = [_location_arg(loc, command) for loc in args[2]]
    shown = await _show(srv, *locations[0]) if locations else False
    return {"locations": args[2], "shown": shown}


_COMMANDS = {
    present.CMD_SHOW_BLAST_RADIUS: show_blast_radius,
    present.CMD_RUN_AFFECTED_TESTS: run_affected_tests,
    present.CMD_REINDEX: reindex,
    present.CMD_OPEN_LOCATION: open_location,
    present.CMD_SHOW_LOCATIONS: show_locations,
}


def register(server: LanguageServer) -> None:
    """Register every command on ``server``."""
    for name, handler in _COMMANDS.items():
        server.command(name)(handler)
