"""Per-workspace-folder state: the engine, the open documents, their baselines and reports.

Threading contract: a ``Session`` is shared by the event loop and the single worker thread.
The worker owns everything the engine sees (``Document.baseline``, ``synced``, ``good``) and is
the only thread that calls the engine. The loop owns what the editor sees (``Document.shown``,
``Document.diagnostics``, ``Session.test_diagnostics``) and the set of open documents; it hands
the worker immutable snapshots (``Snapshot``) instead of live buffers.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types

from impact_ls.config import Settings
from impact_ls.engine import Engine, FileEdit, load_settings
from impact_ls.errors import ImpactError
from impact_ls.model import ChangeType, Report
from impact_ls.server import present

logger = logging.getLogger(__name__)

Units = Callable[[str], int]
"""How many client position units (UTF-16 code units by default) a string takes."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot:
    """The open buffers of a session at one moment: URI → text, and file → URI."""

    texts: Mapping[str, str] = field(default_factory=dict)
    uris: Mapping[str, str] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class Document:
    """One open document; see the module docstring for which thread owns which field."""

    uri: str
    file: str
    opened_text: str
    saved_text: str | None
    # worker-owned
    baseline: str | None = None
    baseline_known: bool = False
    synced: str | None = None
    good: Report | None = None
    llm_key: tuple[Any, ...] | None = None
    # loop-owned
    shown: Report | None = None
    diagnostics: dict[str, list[types.Diagnostic]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Analysis:
    """What one analysis run produced for a document, ready to show."""

    report: Report | None
    diagnostics: dict[str, list[types.Diagnostic]]
    text: str


class DiskLines:
    """Lines of files on disk, cached by mtime, shared by the loop and the worker."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._cache: dict[str, tuple[int, list[str]]] = {}
        self._lock = threading.Lock()

    def lines(self, file: str) -> list[str] | None:
        """The lines of ``file`` (root-relative), or None when unreadable."""
        path = self._root / file
        try:
            mtime = path.stat().st_mtime_ns
        except OSError:
            return None
        with self._lock:
            hit = self._cache.get(file)
            if hit is not None and hit[0] == mtime:
                return hit[1]
        try:
            text = path.read_bytes().decode("utf-8", "replace")
        except OSError:
            return None
        lines = text.splitlines()
        with self._lock:
            self._cache[file] = (mtime, lines)
        return lines


class SessionLocator:
    """``present.Locator`` over open buffers first, then the disk."""

    def __init__(self, session: Session, snapshot: Snapshot, units: Units) -> None:
        self._session = session
        self._snapshot = snapshot
        self._units = units
        self._lines: dict[str, list[str] | None] = {}

    def uri(self, file: str) -> str:
        """The URI of ``file``: the open document's own URI when there is one."""
        return self._snapshot.uris.get(file) or (self._session.root / file).as_uri()

    def _line(self, file: str, line: int) -> str | None:
        if file not in self._lines:
            text = self._snapshot.texts.get(self.uri(file))
            self._lines[file] = (
                text.splitlines() if text is not None else self._session.disk.lines(file)
            )
        lines = self._lines[file]
        if lines is None or not 1 <= line <= len(lines):
            return None
        return lines[line - 1]

    def position(self, file: str, line: int, col: int) -> types.Position:
        """Convert a 1-based line and UTF-8 byte column to the client's units."""
        text = self._line(file, line)
        if text is None or col <= 0:
            return types.Position(line=max(line - 1, 0), character=max(col, 0))
        prefix = text.encode("utf-8")[:col].decode("utf-8", "ignore")
        return types.Position(line=line - 1, character=self._units(prefix))

    def line_end(self, file: str, line: int) -> types.Position:
        """The end of a 1-based line in the client's units."""
        text = self._line(file, line)
        return types.Position(line=max(line - 1, 0), character=self._units(text) if text else 0)


class Session:
    """One workspace folder: its engine, open documents and what was last shown."""

    def __init__(self, root: Path, *, uri: str, overrides: Mapping[str, Any]) -> None:
        self.root = root
        self.uri = uri
        self.overrides = dict(overrides)
        self.engine: Engine | None = None
        self.open_error: str | None = None
        self.documents: dict[str, Document] = {}
        self.test_diagnostics: dict[str, list[types.Diagnostic]] = {}
        self.disk = DiskLines(root)
        self.head: str | None = None
        self.logged: set[str] = set()  # log lines already sent, so each is said once
        self._settings, _ = load_settings(root, self.overrides)

    # ------------------------------------------------------------------ paths

    @property
    def settings(self) -> Settings:
        """The engine's settings once it is open, else pyproject overlaid by the client's."""
        return self.engine.settings if self.engine is not None else self._settings

    def relpath(self, path: Path) -> str | None:
        """``path`` relative to the root (posix), or None outside it."""
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return None

    def locator(self, snapshot: Snapshot, units: Units) -> SessionLocator:
        """A locator over ``snapshot`` and the disk."""
        return SessionLocator(self, snapshot, units)

    # ------------------------------------------------------------------ loop side

    def open_document(self, uri: str, file: str, text: str) -> Document:
        """Record an opened document; ``saved_text`` is what the disk holds now."""
        lines = self.disk.lines(file)
        saved = None
        if lines is not None:
            try:
                saved = (self.root / file).read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError):
                saved = None
        doc = Document(uri=uri, file=file, opened_text=text, saved_text=saved)
        self.documents[uri] = doc
        return doc

    def close_document(self, uri: str) -> Document | None:
        """Forget a document; its diagnostics go with it."""
        return self.documents.pop(uri, None)

    def accept(self, doc: Document, analysis: Analysis) -> None:
        """Show a finished analysis of ``doc``."""
        doc.shown = analysis.report
        doc.diagnostics = analysis.diagnostics

    def diagnostics(self) -> dict[str, list[types.Diagnostic]]:
        """Every URI's diagnostics: the union over all documents plus test failures."""
        parts: list[Mapping[str, list[types.Diagnostic]]] = [
            d.diagnostics for d in self.documents.values()
        ]
        parts.append(self.test_diagnostics)
        return present.union_diagnostics(parts)

    def reports(self) -> list[Report]:
        """The reports currently shown, in URI order."""
        return [d.shown for _, d in sorted(self.documents.items()) if d.shown is not None]

    # ------------------------------------------------------------------ worker side

    def open_engine(self) -> Engine:
        """Open the engine without indexing (the caller builds it); a second call reuses it."""
        if self.engine is not None:
            return self.engine
        engine = Engine.open(self.root, self.overrides, build=False)
        self.engine = engine
        self.head = engine.head()
        return engine

    def reconfigure(self, overrides: Mapping[str, Any]) -> Settings:
        """Apply new client settings (pyproject re-read) to the engine."""
        self.overrides = dict(overrides)
        settings, _ = load_settings(self.root, self.overrides)
        self._settings = settings
        if self.engine is not None:
            self.engine.reconfigure(settings)
        for doc in list(self.documents.values()):
            doc.baseline_known = False
            doc.synced = None
        return settings

    def refresh(self) -> bool:
        """Re-read changed files; return whether HEAD moved (baselines are then re-read)."""
        if self.engine is None:
            return False
        self.engine.refresh()
        head = self.engine.head()
        moved = head != self.head
        self.head = head
        if moved:
            logger.info("HEAD of %s moved to %s: refreshing baselines", self.root, head)
            for doc in list(self.documents.values()):
                doc.baseline_known = False
        for doc in list(self.documents.values()):
            doc.synced = None  # a refresh may have put the disk text back: re-apply buffers
        return moved

    def _know_baseline(self, doc: Document) -> None:
        """Read ``doc``'s baseline once; a refresh or a moved HEAD forgets it."""
        if not doc.baseline_known:
            doc.baseline = self._baseline(doc)
            doc.baseline_known = True

    def _baseline(self, doc: Document) -> str | None:
        assert self.engine is not None
        saved = doc.saved_text if doc.saved_text is not None else doc.opened_text
        if self.settings.baseline == "saved" or self.engine.head() is None:
            return saved
        return self.engine.baseline_text(doc.file)

    def analyze(
        self,
        doc: Document,
        text: str,
        *,
        snapshot: Snapshot,
        units: Units,
        llm: Any = None,
    ) -> Analysis:
        """Patch the graph with ``text``; analyze ``doc`` against its baseline (worker thread)."""
        engine = self.engine
        if engine is None:
            return Analysis(report=None, diagnostics={}, text=text)
        self._know_baseline(doc)
        if doc.synced != text:
            engine.set_document(doc.file, text)
            doc.synced = text
        if text == doc.baseline:
            doc.good = None
            return Analysis(report=None, diagnostics={}, text=text)
        report = engine.analyze(
            [FileEdit(file=doc.file, baseline=doc.baseline, current=text)], llm=llm, live=True
        )
        if any(c.change_type is ChangeType.INCOMPLETE for c in report.changes):
            # Keep the last good report while the region does not parse: no flicker.
            previous = doc.good
            report = dataclasses.replace(previous or report, stale=True)
        else:
            doc.good = report
        diagnostics = present.report_diagnostics(
            report,
            locator=self.locator(snapshot, units),
            may_severity=self.settings.may_severity,
        )
        return Analysis(report=report, diagnostics=diagnostics, text=text)

    def complete_selection(self, doc: Document, text: str) -> list[str]:
        """Every test the document's edit selects, searched without the editor's budget (the
        CLI's), so that running it misses nothing the lens's bounded search cut (worker
        thread)."""
        engine = self._require_engine()
        self._know_baseline(doc)
        if doc.baseline is None or text == doc.baseline:
            return []
        report = engine.analyze([FileEdit(file=doc.file, baseline=doc.baseline, current=text)])
        return [str(t) for t in report.selected_tests(engine.settings.test_map_min)]

    def workspace_report(self, texts: Mapping[str, str], *, llm: Any = None) -> Report:
        """The working tree against HEAD, open buffers standing for their files (worker thread)."""
        engine = self._require_engine()
        edits: dict[str, FileEdit] = {}
        if engine.head() is not None:
            edits = {e.file: e for e in engine.worktree_edits()}
        for doc in list(self.documents.values()):
            text = texts.get(doc.uri)
            if text is None:
                continue
            self._know_baseline(doc)
            if text == doc.baseline:
                edits.pop(doc.file, None)
            else:
                edits[doc.file] = FileEdit(file=doc.file, baseline=doc.baseline, current=text)
        return engine.analyze([edits[f] for f in sorted(edits)], llm=llm)

    def file_report(self, file: str, *, llm: Any = None) -> Report:
        """The working-tree change of one file that is not open, against HEAD (worker thread)."""
        return self._require_engine().analyze_worktree(files=[file], llm=llm)

    def _require_engine(self) -> Engine:
        if self.engine is None:
            raise ImpactError(
                f"{self.root} could not be opened ({self.open_error or 'still opening'}); "
                "see the server log"
            )
        return self.engine

    def forget(self, doc: Document) -> None:
        """Return a closed document's file to its disk text in the graph (worker thread)."""
        if self.engine is not None and doc.synced is not None:
            self.engine.close_document(doc.file)


class Sessions:
    """The workspace folders, longest root first so nested folders win."""

    def __init__(self) -> None:
        self._by_root: dict[Path, Session] = {}

    def add(self, session: Session) -> None:
        """Add a folder's session (a second one for the same root is ignored)."""
        self._by_root.setdefault(session.root, session)

    def remove(self, root: Path) -> Session | None:
        """Drop the session of ``root``."""
        return self._by_root.pop(root, None)

    def __iter__(self) -> Iterator[Session]:
        return iter(list(self._by_root.values()))

    def __len__(self) -> int:
        return len(self._by_root)

    def find(self, path: Path) -> Session | None:
        """The innermost session whose root contains ``path``."""
        resolved = path.resolve()
        best: Session | None = None
        for root, session in self._by_root.items():
            if (resolved == root or root in resolved.parents) and (
                best is None or len(root.parts) > len(best.root.parts)
            ):
                best = session
        return best
