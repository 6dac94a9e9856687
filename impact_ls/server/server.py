"""The language server: pygls handlers over sessions, the worker and ``present``.

``build_server(settings)`` returns a fresh ``ImpactServer``. Handlers are thin: they find the
session and document, schedule work or read the latest ``Report``, and convert it with
``present``. The editor thread never runs an analysis: ``didOpen``/``didChange`` are debounced per
URI onto the single worker thread; indexing runs on its own daemon thread with
``window/workDoneProgress``. Every notification handler is a boundary that logs unexpected
exceptions with their traceback and keeps the server running. Faults the user cannot act on
(a bad message from the client, a handler's bug) go to the log, never to a pop-up; the server
shows a message only when the user can do something about it (``protocol.py`` answers malformed
requests).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from impact_ls import __version__
from impact_ls.config import Settings
from impact_ls.server import commands, graph_page, hierarchy, present
from impact_ls.server.config import SECTION, client_section, overrides_of, validate
from impact_ls.server.llm_http import client_from_settings
from impact_ls.server.protocol import ImpactProtocol
from impact_ls.server.session import Analysis, Document, Session, Sessions, Snapshot
from impact_ls.server.worker import Worker

logger = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

_WATCH_ID = "impact-ls/watched-files"
_WATCHERS = ("**/*.py", "**/.git/HEAD", "**/.git/refs/heads/**", "**/pyproject.toml")


def _boundary(fn: Callable[P, R]) -> Callable[P, R]:
    """Log any exception of a notification handler with its traceback instead of raising it."""
    if asyncio.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def wrapped_async(*args: P.args, **kwargs: P.kwargs) -> Any:
            try:
                return await fn(*args, **kwargs)
            except Exception:
                logger.exception("%s failed", fn.__name__)
                return None

        return wrapped_async  # type: ignore[return-value]

    @functools.wraps(fn)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception:
            logger.exception("%s failed", fn.__name__)
            return None

    return wrapped


class ImpactServer(LanguageServer):
    """The pygls server plus impact_ls state: sessions, the worker, what was published."""

    def __init__(self, settings: Settings | None = None) -> None:
        super().__init__(
            name="impact-ls",
            version=__version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=ImpactProtocol,
        )
        self.cli_overrides = overrides_of(settings)
        self.client_options: dict[str, Any] = {}
        self.sessions = Sessions()
        self.worker = Worker()
        self.published: dict[str, list[types.Diagnostic]] = {}
        self.background: set[asyncio.Task[Any]] = set()
        self.indexing: dict[Path, asyncio.Future[None]] = {}
        self.starts: dict[Path, asyncio.Task[None]] = {}
        self.watching = False
        self.pending_warnings: list[str] = []
        self._progress_ids = 0

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log a fault of the server or of a client's message; pygls would pop it up instead.

        Nobody can act on ``Error in server: KeyError: 'file:///…'``: the traceback is in the log
        (pygls logs it where the fault happened), and requests carry their error in the reply.
        """
        logger.error("%s: %s: %s", getattr(source, "__name__", source), type(error).__name__, error)

    # ------------------------------------------------------------------ settings

    def overrides(self) -> dict[str, Any]:
        """Client settings overlaid by the command line's (CLI flags win)."""
        return {**self.client_options, **self.cli_overrides}

    def apply_client_settings(self, value: Any) -> list[str]:
        """Take our section of ``value``; return the warnings of what was rejected."""
        section, warnings = client_section(value)
        good, bad = validate(section)
        self.client_options = good
        return warnings + bad

    def warn_settings(self, warnings: list[str]) -> None:
        """One ``window/showMessage`` for every settings problem found together."""
        if warnings:
            self.show(
                "impact-ls: " + "; ".join(warnings) + " (defaults kept)", types.MessageType.Warning
            )

    def show(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        """Tell the user something through ``window/showMessage``."""
        logger.info("showMessage: %s", message)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def log_line(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        """One line in the editor's log of this server (``window/logMessage``), not a pop-up."""
        logger.info("logMessage: %s", message)
        self.window_log_message(types.LogMessageParams(type=kind, message=f"impact-ls: {message}"))

    def log_skipped(self, session: Session) -> None:
        """Say in the editor's log which files indexing left out and why (once per file)."""
        engine = session.engine
        if engine is None:
            return
        for note in engine.index.notes:
            if note.startswith("skipped ") and note not in session.logged:
                session.logged.add(note)
                hint = " (raise maxFileBytes to include it)" if "larger than" in note else ""
                self.log_line(note + hint, types.MessageType.Warning)

    # ------------------------------------------------------------------ folders

    def add_folder(self, uri: str) -> Session | None:
        """Create the session of a workspace folder (not yet indexed)."""
        path = to_fs_path(uri)
        if path is None or not Path(path).is_dir():
            logger.warning("workspace folder %s is not a local directory; ignored", uri)
            return None
        session = Session(Path(path).resolve(), uri=uri, overrides=self.overrides())
        self.sessions.add(session)
        return session

    def spawn(self, coro: Awaitable[Any]) -> None:
        """Run ``coro`` in the background, keeping a reference and logging its failure."""
        task = asyncio.ensure_future(coro)
        self.background.add(task)

        def _done(t: asyncio.Task[Any]) -> None:
            self.background.discard(t)
            if not t.cancelled() and (exc := t.exception()) is not None:
                logger.error("background task failed", exc_info=exc)

        task.add_done_callback(_done)

    def begin(self, session: Session) -> asyncio.Task[None]:
        """The one start of ``session`` (opened and indexed once; later calls share it)."""
        task = self.starts.get(session.root)
        if task is None:
            task = asyncio.ensure_future(self.start(session))
            self.starts[session.root] = task
            self.background.add(task)
            task.add_done_callback(self.background.discard)
        return task

    async def start(self, session: Session) -> None:
        """Open the engine on the worker, then index in the background with progress."""
        try:
            await self.worker.call(session.open_engine)
        except Exception as exc:
            logger.exception("cannot open %s", session.root)
            session.open_error = str(exc)
            self.show(f"impact-ls cannot analyze {session.root}: {exc}", types.MessageType.Error)
            return
        if session.engine is not None and session.engine.warnings:
            self.warn_settings(list(session.engine.warnings))
        await self.index(session)

    async def index(self, session: Session) -> None:
        """(Re)build the graph of ``session`` on a daemon thread with ``workDoneProgress``."""
        engine = session.engine
        if engine is None:
            return
        if (running := self.indexing.get(session.root)) is not None and not running.done():
            await running
            return
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self.indexing[session.root] = done
        progress = await self.begin_progress(f"impact-ls: indexing {session.root.name}")

        def report(count: int, total: int) -> None:
            loop.call_soon_threadsafe(progress.report, f"{count}/{total} files", count, total)

        def build() -> None:
            try:
                engine.build(progress=report)
            except BaseException as exc:
                loop.call_soon_threadsafe(_settle, done, exc)
            else:
                loop.call_soon_threadsafe(_settle, done, None)

        # A daemon thread, not an executor: exit must not wait for a large index to finish.
        threading.Thread(target=build, name="impact-index", daemon=True).start()
        try:
            await done
        except Exception as exc:
            logger.exception("indexing %s failed", session.root)
            self.show(f"impact-ls could not index {session.root}: {exc}", types.MessageType.Error)
            progress.end(f"failed: {exc}")
            return
        progress.end(f"indexed {len(engine.index.files())} files")
        self.log_skipped(session)
        self.reanalyze(session)

    async def begin_progress(self, title: str, *, cancellable: bool = False) -> Progress:
        """Start a server-initiated ``window/workDoneProgress`` (a no-op if unsupported)."""
        caps = self.client_capabilities.window
        if caps is None or not caps.work_done_progress:
            return Progress(self, None)
        self._progress_ids += 1
        token = f"impact-ls/{self._progress_ids}"
        try:
            await self.work_done_progress.create_async(token)
        except Exception:
            logger.info("client refused progress token %s", token, exc_info=True)
            return Progress(self, None)
        self.work_done_progress.begin(
            token, types.WorkDoneProgressBegin(title=title, percentage=0, cancellable=cancellable)
        )
        return Progress(self, token)

    async def register_watchers(self) -> None:
        """Ask the client to send ``didChangeWatchedFiles`` for sources, HEAD and pyproject."""
        caps = self.client_capabilities.workspace
        watched = caps.did_change_watched_files if caps else None
        if watched is None or not watched.dynamic_registration:
            return
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern=g) for g in _WATCHERS]
        )
        await self.client_register_capability_async(
            types.RegistrationParams(
                registrations=[
                    types.Registration(
                        id=_WATCH_ID,
                        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        register_options=options,
                    )
                ]
            )
        )
        self.watching = True

    # ------------------------------------------------------------------ documents

    def locate(self, uri: str) -> tuple[Session, str] | None:
        """The session and root-relative file of ``uri``, or None outside every folder."""
        path = to_fs_path(uri)
        if path is None:
            return None
        session = self.sessions.find(Path(path))
        if session is None:
            return None
        file = session.relpath(Path(path))
        return (session, file) if file is not None else None

    def document(self, uri: str) -> tuple[Session, Document] | None:
        """The session and open document of ``uri``, or None."""
        found = self.locate(uri)
        if found is None:
            return None
        session, _ = found
        doc = session.documents.get(uri)
        return (session, doc) if doc is not None else None

    def snapshot(self, session: Session) -> Snapshot:
        """The current text of every open document of ``session``."""
        texts = {}
        for uri in session.documents:
            texts[uri] = self.workspace.get_text_document(uri).source
        return Snapshot(texts=texts, uris={d.file: d.uri for d in session.documents.values()})

    def units(self, text: str) -> int:
        """Client position units of ``text`` in the negotiated encoding."""
        return int(self.workspace.position_codec.client_num_units(text))

    def schedule(
        self,
        session: Session,
        doc: Document,
        *,
        delay_s: float,
        cascade: bool,
        llm: Any = None,
    ) -> None:
        """Analyze ``doc`` after ``delay_s`` on the worker; a newer schedule supersedes it."""
        snapshot = self.snapshot(session)
        text = snapshot.texts[doc.uri]
        size = len(text.encode("utf-8", "replace"))
        if size > (limit := session.settings.max_file_bytes):
            note = (
                f"{doc.file} is not analyzed: {size} bytes, larger than maxFileBytes ({limit}); "
                "raise maxFileBytes to include it"
            )
            if (key := f"too large: {doc.file}") not in session.logged:
                session.logged.add(key)
                self.log_line(note, types.MessageType.Warning)
            return

        def job(generation: int) -> Analysis:
            started = time.perf_counter()
            analysis = session.analyze(doc, text, snapshot=snapshot, units=self.units, llm=llm)
            logger.debug("analyzed %s in %.1f ms", doc.file, (time.perf_counter() - started) * 1e3)
            return analysis

        def deliver(generation: int, analysis: Analysis) -> None:
            self.deliver(session, doc, analysis, cascade=cascade, after_llm=llm is not None)

        self.worker.schedule(doc.uri, job, delay_s=delay_s, deliver=deliver)

    def deliver(
        self, session: Session, doc: Document, analysis: Analysis, *, cascade: bool, after_llm: bool
    ) -> None:
        """Show a finished analysis; re-check the other documents; ask the LLM if configured."""
        if session.documents.get(doc.uri) is not doc:
            return  # closed meanwhile
        started = time.perf_counter()
        session.accept(doc, analysis)
        self.publish()
        self.refresh_lenses()
        logger.debug("published %s in %.1f ms", doc.file, (time.perf_counter() - started) * 1e3)
        if cascade:
            self.reanalyze(session, skip=doc.uri)
        if session.engine is not None:
            # jedi's verdicts on deferred name-matched candidates refine the next analysis.
            loop = asyncio.get_running_loop()
            session.engine.confirm_pending(
                lambda decided: loop.call_soon_threadsafe(self._after_jedi, session, decided)
            )
        report = analysis.report
        if after_llm or report is None or report.stale or not report.triage.must_inspect:
            return
        client = client_from_settings(session.settings)
        key = (analysis.text, tuple(e.entity for e in report.triage.must_inspect))
        if client is not None and key != doc.llm_key:
            doc.llm_key = key
            self.schedule(session, doc, delay_s=0, cascade=False, llm=client)

    def _after_jedi(self, session: Session, decided: int) -> None:
        if decided:
            self.reanalyze(session)

    def reanalyze(self, session: Session, *, skip: str | None = None) -> None:
        """Re-check every open document of ``session`` now (the graph or settings changed)."""
        for uri, doc in list(session.documents.items()):
            if uri != skip:
                self.schedule(session, doc, delay_s=0, cascade=False)

    def debounce_s(self, session: Session) -> float:
        """The configured debounce in seconds."""
        return session.settings.debounce_ms / 1000

    def publish(self) -> None:
        """Publish the union of every session's diagnostics; clear URIs whose cause went away."""
        current = present.union_diagnostics(s.diagnostics() for s in self.sessions)
        for uri in sorted(set(self.published) | set(current)):
            diags = current.get(uri, [])
            if self.published.get(uri, []) == diags:
                continue
            if diags:
                self.published[uri] = diags
            else:
                self.published.pop(uri, None)
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=diags)
            )

    def refresh_lenses(self) -> None:
        """Ask the client to re-request code lenses when it supports the refresh request."""
        caps = self.client_capabilities.workspace
        if caps is not None and caps.code_lens is not None and caps.code_lens.refresh_support:
            self.workspace_code_lens_refresh(None)

    async def resync(self, session: Session, *, reconfigure: bool = False) -> None:
        """Re-read changed files (and settings) on the worker, then re-check every document."""
        if reconfigure:
            await self.worker.call(session.reconfigure, self.overrides())
        await self.worker.call(session.refresh)
        self.reanalyze(session)

    async def check_head(self, session: Session) -> None:
        """Re-read changed files; when HEAD moved, re-check every open document."""
        if await self.worker.call(session.refresh):
            self.reanalyze(session)

    def shutdown_work(self) -> None:
        """Stop timers and queued work; running threads are daemons and die with the process."""
        self.worker.shutdown()
        for task in list(self.background):
            task.cancel()


class Progress:
    """One server-initiated progress; every method is a no-op without a token."""

    def __init__(self, server: LanguageServer, token: str | None) -> None:
        self._server = server
        self.token = token
        self._pct = -1

    def report(self, message: str, done: int, total: int) -> None:
        """Report ``done`` of ``total``; only a changed percentage is sent."""
        pct = 100 * done // total if total else 100
        if self.token is None or pct == self._pct:
            return
        self._pct = pct
        self._server.work_done_progress.report(
            self.token, types.WorkDoneProgressReport(message=message, percentage=pct)
        )

    def end(self, message: str) -> None:
        """End the progress with a closing message."""
        if self.token is not None:
            self._server.work_done_progress.end(
                self.token, types.WorkDoneProgressEnd(message=message)
            )

    def cancelled(self) -> bool:
        """Whether the user cancelled it in the editor (``window/workDoneProgress/cancel``)."""
        if self.token is None:
            return False
        future = self._server.work_done_progress.tokens.get(self.token)
        return future is not None and future.cancelled()


def _settle(future: asyncio.Future[None], exc: BaseException | None) -> None:
    if future.done():
        return
    if exc is None:
        future.set_result(None)
    else:
        future.set_exception(exc)


def _folders(params: types.InitializeParams) -> list[str]:
    if params.workspace_folders:
        return [f.uri for f in params.workspace_folders]
    if params.root_uri:
        return [params.root_uri]
    if params.root_path:
        return [Path(params.root_path).resolve().as_uri()]
    return []


def build_server(settings: Settings | None = None) -> ImpactServer:
    """A fresh impact_ls language server; ``settings`` (from the CLI) override the client's."""
    server = ImpactServer(settings)
    _register_lifecycle(server)
    _register_documents(server)
    _register_workspace(server)
    _register_features(server)
    commands.register(server)
    hierarchy.register(server)
    graph_page.register(server)
    return server


def _register_lifecycle(server: ImpactServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: ImpactServer, params: types.InitializeParams) -> None:
        ls.pending_warnings = ls.apply_client_settings(params.initialization_options)
        for uri in _folders(params):
            ls.add_folder(uri)

    @server.feature(types.INITIALIZED)
    @_boundary
    async def initialized(ls: ImpactServer, params: types.InitializedParams) -> None:
        ls.warn_settings(ls.pending_warnings)
        if not len(ls.sessions):
            logger.info("no workspace folder: documents will not be analyzed")
        for session in ls.sessions:
            ls.begin(session)
        await ls.register_watchers()

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: ImpactServer, params: None) -> None:
        ls.shutdown_work()


def _register_documents(server: ImpactServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @_boundary
    def did_open(ls: ImpactServer, params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        found = ls.locate(uri)
        if found is None or not found[1].endswith(".py"):
            logger.info("%s is outside the workspace folders or not Python; not analyzed", uri)
            return
        session, file = found
        doc = session.open_document(uri, file, params.text_document.text)
        if not ls.watching:
            ls.spawn(ls.check_head(session))  # no file watcher: notice a moved HEAD here
        ls.schedule(session, doc, delay_s=ls.debounce_s(session), cascade=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @_boundary
    def did_change(ls: ImpactServer, params: types.DidChangeTextDocumentParams) -> None:
        if (found := ls.document(params.text_document.uri)) is not None:
            session, doc = found
            ls.schedule(session, doc, delay_s=ls.debounce_s(session), cascade=True)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    @_boundary
    def did_save(ls: ImpactServer, params: types.DidSaveTextDocumentParams) -> None:
        if (found := ls.locate(params.text_document.uri)) is not None:
            ls.spawn(ls.resync(found[0]))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @_boundary
    def did_close(ls: ImpactServer, params: types.DidCloseTextDocumentParams) -> None:
        found = ls.locate(params.text_document.uri)
        if found is None or (doc := found[0].close_document(params.text_document.uri)) is None:
            logger.info("didClose for %s, which is not open: ignored", params.text_document.uri)
            return
        session = found[0]
        ls.worker.bump(doc.uri)
        ls.spawn(ls.worker.call(session.forget, doc))
        ls.publish()
        ls.reanalyze(session)


def _register_workspace(server: ImpactServer) -> None:
    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    @_boundary
    def did_change_watched_files(
        ls: ImpactServer, params: types.DidChangeWatchedFilesParams
    ) -> None:
        touched: dict[Path, tuple[Session, bool]] = {}
        for change in params.changes:
            if (found := ls.locate(change.uri)) is not None:
                session, file = found
                reconfigure = (
                    file == "pyproject.toml" or touched.get(session.root, (session, False))[1]
                )
                touched[session.root] = (session, reconfigure)
        for session, reconfigure in touched.values():
            ls.spawn(ls.resync(session, reconfigure=reconfigure))

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    @_boundary
    async def did_change_configuration(
        ls: ImpactServer, params: types.DidChangeConfigurationParams
    ) -> None:
        value = params.settings
        caps = ls.client_capabilities.workspace
        if not value and caps is not None and caps.configuration:
            pulled = await ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
            )
            value = pulled[0] if pulled else None
        ls.warn_settings(ls.apply_client_settings(value))
        for session in ls.sessions:
            ls.spawn(ls.resync(session, reconfigure=True))

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    @_boundary
    def did_change_folders(ls: ImpactServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for folder in params.event.removed:
            path = to_fs_path(folder.uri)
            if path is not None and ls.sessions.remove(root := Path(path).resolve()) is not None:
                ls.starts.pop(root, None)
                ls.publish()
        for folder in params.event.added:
            if (session := ls.add_folder(folder.uri)) is not None:
                ls.begin(session)


def _register_features(server: ImpactServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    def code_lens(ls: ImpactServer, params: types.CodeLensParams) -> list[types.CodeLens] | None:
        if (found := ls.document(params.text_document.uri)) is None:
            return None
        session, doc = found
        locator = session.locator(ls.snapshot(session), ls.units)
        return present.code_lenses(doc.shown, file=doc.file, locator=locator) or None

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.Empty]
        ),
    )
    def code_action(
        ls: ImpactServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        if (found := ls.locate(params.text_document.uri)) is None:
            return None
        session, file = found
        doc = session.documents.get(params.text_document.uri)
        actions = present.code_actions(
            session.reports(),
            file=file,
            rng=params.range,
            locator=session.locator(ls.snapshot(session), ls.units),
            own=doc.shown if doc is not None else None,
            context=params.context.diagnostics,
        )
        if only := params.context.only:
            actions = [a for a in actions if any(str(a.kind or "").startswith(k) for k in only)]
        return actions or None
