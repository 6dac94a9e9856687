"""The I/O shell around the pure pipeline: one project's graph, git history and settings.

``Engine`` is what the CLI and the language server share. It owns the ``ProjectIndex`` (cached
code graph), the ``GitRepo`` and the ``CoChangeIndex``; it reads baselines from git, feeds the pure
``analysis.pipeline.analyze`` and writes ``test_map.txt`` under ``.impact_ls/``. The analysis sees
the current graph with each dirty file's *baseline* incoming edges overlaid (``graph/baseline.py``:
a deleted function keeps its callers): an editor buffer's are read off the graph when the buffer
first replaces the file on disk (the file is at its baseline then), any other baseline's by
putting the file at its baseline for a moment; both are cached per baseline. When
``impact-ls record`` has stored recorded coverage, each analysis hands it to the test map (the
file rule is ``record/recorded.py``'s). It never writes a user's source file.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from impact_ls.analysis.nextedit import CompletionClient
from impact_ls.analysis.pipeline import SourceChange, analyze
from impact_ls.cachedir import prepare_cache_dir, project_cache_dir
from impact_ls.config import Settings, settings_from_mapping, settings_from_pyproject
from impact_ls.errors import RevisionError
from impact_ls.graph.baseline import BaselineEdges, Snapshot, snapshot
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.graph.collected import CollectedTests
from impact_ls.graph.confirm import JediConfirmer
from impact_ls.graph.facts import gc_paused
from impact_ls.graph.project import ProjectIndex
from impact_ls.graph.workspace import read_source
from impact_ls.history.cochange import CoChangeIndex
from impact_ls.history.repo import GitRepo
from impact_ls.model import CoChange, Edge, Node, Report
from impact_ls.record.recorded import RecordedCoverage
from impact_ls.record.store import RecordStore, record_db_candidates

logger = logging.getLogger(__name__)

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class FileEdit:
    """One dirty file: its baseline text and its current text (None = absent)."""

    file: str
    baseline: str | None
    current: str | None


def load_settings(
    root: Path, overrides: Settings | Mapping[str, Any] | None = None
) -> tuple[Settings, tuple[str, ...]]:
    """Settings for ``root``: ``[tool.impact-ls]`` overlaid by ``overrides`` (a mapping wins)."""
    if isinstance(overrides, Settings):
        return overrides, ()
    settings, warnings = settings_from_pyproject(root)
    if overrides:
        settings, more = settings_from_mapping(overrides, settings)
        warnings = [*warnings, *more]
    return settings, tuple(warnings)


def _repo_prefix(repo: GitRepo | None, root: Path) -> str:
    """``root`` relative to the repository's work tree, as a path prefix ("" at the top)."""
    if repo is None:
        return ""
    try:
        relative = root.resolve().relative_to(repo.root.resolve()).as_posix()
    except ValueError:
        return ""
    return "" if relative == "." else relative + "/"


class Engine:
    """One project root: graph, history, settings, and the analysis entry points."""

    def __init__(self, root: Path, settings: Settings, warnings: tuple[str, ...] = ()) -> None:
        self.root = root.resolve()
        self.settings = settings
        self.warnings = warnings
        self.repo = GitRepo.discover(self.root)
        # pygit2 repositories are not thread-safe; the server calls from several threads.
        self._git_lock = threading.RLock()
        self._prefix = _repo_prefix(self.repo, self.root)
        # Open buffers (text, digest), for jedi: it must read the call site as the user sees it.
        self._documents: dict[str, tuple[str, str]] = {}
        self.confirmer = JediConfirmer(
            self.root, self._text_of, digest_of=self._digest_of, node_of=self._node_of
        )
        self.index = self._new_index(settings)
        # pytest's collection (config, per-file hints, node ids), cached per graph version
        self.tests = CollectedTests(self.root, text_of=self._text_of, digest_of=self._digest_of)
        # each dirty file's baseline incoming edges, per baseline digest
        self._baselines = BaselineEdges()
        # per dirty file: (its snapshot, the graph and its version, what the graph lacks of it)
        self._lacking: dict[str, tuple[Snapshot, CodeGraph, int, tuple[Edge, ...]]] = {}
        self._history: CoChangeIndex | None = None
        self._history_lock = threading.Lock()
        self._record_store: RecordStore | None = None
        # (recorded commit, HEAD) → whether HEAD's history contains the recorded commit.
        self._record_lineage: dict[tuple[str, str | None], bool] = {}

    @classmethod
    def open(
        cls,
        root: Path,
        settings: Settings | Mapping[str, Any] | None = None,
        *,
        build: bool = True,
        progress: Progress | None = None,
    ) -> Engine:
        """An engine for ``root``; with ``build`` the graph is indexed before returning."""
        resolved, warnings = load_settings(Path(root), settings)
        engine = cls(Path(root), resolved, warnings)
        if build:
            engine.build(progress=progress)
        return engine

    @property
    def ready(self) -> bool:
        """False while the graph is still being indexed."""
        return self.index.ready

    def build(self, *, progress: Progress | None = None) -> None:
        """Index (or re-index) the workspace; safe to call from a background thread."""
        self.index.build(progress=progress)
        with self.index.lock:
            self.tests.reload()
            self._baselines.clear()
            self._lacking.clear()

    def reconfigure(self, settings: Settings) -> None:
        """Apply new settings; the graph is re-indexed only when file selection changed."""
        old = self.settings
        self.settings = settings
        if (old.include, old.exclude, old.max_file_bytes) != (
            settings.include,
            settings.exclude,
            settings.max_file_bytes,
        ):
            self.index = self._new_index(settings)
            self._lacking.clear()
            self.index.build()

    def _new_index(self, settings: Settings) -> ProjectIndex:
        confirmer = self.confirmer if settings.jedi_confirm else None
        return ProjectIndex(self.root, settings, confirmer=confirmer)

    def _text_of(self, file: str) -> str | None:
        if file in self._documents:
            return self._documents[file][0]
        found = read_source(self.root, file, self.settings)
        return found if isinstance(found, str) else None

    def _digest_of(self, file: str) -> str | None:
        # Per edge of a walk, so never a read: the buffer's digest, else the indexed disk hash.
        if file in self._documents:
            return self._documents[file][1]
        sha = self.index.content_hash(file)
        return None if sha is None else "disk:" + sha

    def _node_of(self, qid: str) -> Node | None:
        return self.index.graph.node(qid)

    def confirm_pending(self, on_done: Callable[[int], object]) -> bool:
        """Let jedi decide, in the background, the candidates the last live analysis deferred.

        ``on_done(verdicts)`` runs on the jedi thread when it is done; False: nothing deferred.
        """
        return self.confirmer.confirm_pending(on_done)

    def head(self) -> str | None:
        """The HEAD commit, or None without git or commits."""
        if self.repo is None:
            return None
        with self._git_lock:
            return self.repo.head_sha()

    def relpath(self, path: str | Path) -> str | None:
        """``path`` relative to the root (posix), or None when it lies outside."""
        return self.index.relpath(path)

    def baseline_text(self, file: str, *, base: str = "HEAD") -> str | None:
        """The text of ``file`` at git revision ``base``; None when not in git there."""
        if self.repo is None or self.head() is None:
            return None
        try:
            with self._git_lock:
                return self.repo.file_at(base, self._prefix + file)
        except RevisionError:
            return None

    def set_document(self, file: str, text: str) -> None:
        """Let an open buffer's text stand for ``file`` in the graph."""
        digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
        with self.index.lock:
            if file not in self._documents:
                self._keep_disk_baseline(file)
            self._documents[file] = (text, "buffer:" + digest)
            self._update(file, text)

    def _keep_disk_baseline(self, file: str) -> None:
        """Before a buffer first replaces ``file``, keep what others use of its text on disk.

        The graph holds the disk text now, which is the baseline of nearly every edit: reading
        its incoming edges here costs a lookup, where reading them later costs two re-resolutions.
        """
        sha = self.index.content_hash(file)
        facts = self.index.facts(file)
        if sha is not None and facts is not None and self.index.ready:
            self._baselines.put(file, sha, snapshot(self.index.graph, facts))

    def _update(self, file: str, text: str | None) -> None:
        """Patch the graph with ``file``'s text (None: gone), keeping the collection if it can."""
        graph = self.index.graph
        before, version = self.tests.fingerprint(graph, file), graph.version
        if text is None:
            self.index.remove(file)
        else:
            self.index.update(file, text)
        self.tests.edited(self.index.graph, file, before=before, version=version)
        self._baselines.changed((file,))

    def close_document(self, file: str) -> None:
        """Return ``file`` to its text on disk (or drop it if it is gone)."""
        text = read_source(self.root, file, self.settings)
        with self.index.lock:
            self._documents.pop(file, None)
            self._update(file, text if isinstance(text, str) else None)

    def refresh(self) -> tuple[str, ...]:
        """Re-read files that changed on disk and refresh co-change when HEAD moved."""
        changed = self.index.refresh()
        with self.index.lock:
            self.tests.reload()  # a pytest config file may be among the changes
            self._baselines.clear()
            self._lacking.clear()
        with self._history_lock, self._git_lock:
            if self._history is not None and self.repo is not None:
                self._history = self._history.refresh(self.repo)
        return changed

    def history(self) -> CoChangeIndex:
        """The co-change index, built on first use and cached per HEAD."""
        with self._history_lock:
            if self._history is None:
                self._history = self._build_history()
            return self._history

    def _build_history(self) -> CoChangeIndex:
        if self.repo is None:
            return CoChangeIndex.empty("not a git repository: no co-change history")
        try:
            # Also for an empty repository: build() keeps the cache folder for later refreshes.
            with self._git_lock:
                return CoChangeIndex.build(
                    self.repo,
                    cache_dir=self._cache_dir(),
                    max_commit_files=self.settings.max_commit_files,
                )
        except Exception as exc:  # history is a bonus; its failure must not cost the analysis
            logger.warning("co-change history unavailable: %s", exc, exc_info=True)
            return CoChangeIndex.empty(f"co-change history unavailable: {exc}")

    def _cache_dir(self) -> Path | None:
        try:
            return prepare_cache_dir(project_cache_dir(self.root))
        except OSError as exc:
            logger.info("no cache folder in %s: %s", self.root, exc)
            return None

    def analyze(
        self,
        edits: Sequence[FileEdit],
        *,
        base: str = "HEAD",
        llm: CompletionClient | None = None,
        live: bool = False,
    ) -> Report:
        """The blast radius of ``edits`` (baseline vs current text) against the current graph.

        ``live`` (the editor, per keystroke): jedi answers only from its cache and queues the
        rest for ``confirm_pending``; otherwise it may spend ``jedi_budget_s`` on this analysis.
        """
        history = self.history()
        before = self._base_time(base)
        with self._git_lock:
            branch = self.repo.branch_name() if self.repo else None
        prefix = self._prefix

        def cochange_of(files: Sequence[str], task_text: str) -> tuple[CoChange, ...]:
            if before is None:
                return ()
            partners = history.partners(
                [prefix + f for f in files],
                task_text=f"{task_text} {branch or ''}",
                before=before,
                limit=self.settings.max_cochange,
            )
            # History speaks repository paths; the report speaks root paths.
            return tuple(
                CoChange(file=p.file[len(prefix) :], score=p.score)
                for p in partners
                if p.file.startswith(prefix)
            )

        sources = [
            SourceChange(
                file=edit.file,
                module=self.index.module_for(edit.file),
                before=edit.baseline or "",
                after=edit.current or "",
            )
            for edit in sorted(edits, key=lambda e: e.file)
        ]
        notes = [*self.index.notes, *history.notes, *self.warnings, *self.tests.config.notes]
        recorded = self._recorded(edits)
        if recorded is not None and recorded.note:
            notes.append(recorded.note)
        if not self.index.ready:
            notes.append("indexing in progress: the graph is partial")
        if before is None and self.repo is not None:
            notes.append(f"no commit at {base}: no co-change history")
        jedi_budget = 0.0 if live else self.settings.jedi_budget_s
        settings = self.settings
        if live:  # per keystroke: the test search's smaller budget (a note says when it cuts)
            settings = replace(settings, max_test_nodes=settings.max_test_nodes_live)
        # The collector is held for the analysis (then collects once): its tens of thousands
        # of short-lived values set off ~40 collections per keystroke on django (16 ms of
        # QuerySet.filter's analysis), each rescanning what the last ones promoted.
        with self.index.lock, self.confirmer.budget(jedi_budget) as jedi, gc_paused():
            graph = self._baseline_view(edits)
            report, test_map = analyze(
                graph=graph,
                collection=self.tests.collection(self.index.graph),
                sources=sources,
                settings=settings,
                cochange_of=cochange_of,
                root=".",
                base=base,
                llm=llm,
                notes=tuple(notes),
                recorded=recorded,
            )
        self._write_test_map(test_map)
        if jedi.asked:
            notes = sorted({*report.audit.notes, jedi.note()})
            report = replace(report, audit=replace(report.audit, notes=tuple(notes)))
        return report

    def _baseline_view(self, edits: Sequence[FileEdit]) -> CodeGraph:
        """The current graph with each edited file's baseline incoming edges (lock held)."""
        extra: list[Edge] = []
        for edit in edits:
            if edit.baseline is None or edit.baseline == edit.current:
                continue
            found = self._baseline_snapshot(edit.file, edit.baseline)
            if found is not None:
                extra.extend(self._incoming_lacking(edit.file, found))
                extra.extend(found.moved(self.index.facts(edit.file), edit.current))
        return self.index.graph.overlaid(extra)

    def _incoming_lacking(self, file: str, found: Snapshot) -> tuple[Edge, ...]:
        """The baseline's incoming edges the graph no longer holds, kept while neither changes:
        every keystroke between two saves asks the same (``QuerySet.filter``'s file has
        thousands of incoming edges, each looked up in the graph: 5 ms a keystroke)."""
        graph = self.index.graph
        held = self._lacking.get(file)
        if held is not None and held[0] is found and held[1] is graph and held[2] == graph.version:
            return held[3]
        lacking = tuple(graph.lacking(found.incoming))
        self._lacking[file] = (found, graph, graph.version, lacking)
        return lacking

    def _baseline_snapshot(self, file: str, baseline: str) -> Snapshot | None:
        digest = hashlib.sha256(baseline.encode("utf-8", "surrogatepass")).hexdigest()
        found = self._baselines.get(file, digest)
        if found is not None:
            return found
        graph = self.index.graph
        before, version = self.tests.fingerprint(graph, file), graph.version
        found = self.index.baseline_snapshot(file, baseline)
        # the file is back at its current text: the cached collection still holds
        self.tests.edited(self.index.graph, file, before=before, version=version)
        if found is not None:
            self._baselines.put(file, digest, found)
        return found

    def _recorded(self, edits: Sequence[FileEdit]) -> RecordedCoverage | None:
        """The recorded coverage for this analysis, or None when nothing was recorded here."""
        store = self._open_record_store()
        run = store.data_run() if store is not None else None
        if store is None or run is None:
            return None
        head = self.head()
        key = (run.head or "", head)
        if key not in self._record_lineage:
            with self._git_lock:
                ahead = self.repo.commits_since(run.head) if self.repo and run.head else None
            self._record_lineage[key] = ahead is not None
        baselines = {
            edit.file: hashlib.sha256(edit.baseline.encode("utf-8", "surrogatepass")).hexdigest()
            for edit in edits
            if edit.baseline is not None
        }
        return RecordedCoverage(
            store,
            run=run,
            current_sha=self.index.content_hash,
            baselines=baselines,
            in_history=self._record_lineage[key],
        )

    def _open_record_store(self) -> RecordStore | None:
        # Opened once, when a record first exists; a stat per analysis until then.
        if self._record_store is None and any(p.is_file() for p in record_db_candidates(self.root)):
            self._record_store = RecordStore.open_existing(self.root)
        return self._record_store

    def _base_time(self, base: str) -> int | None:
        if self.repo is None or self.head() is None:
            return None
        try:
            with self._git_lock:
                return self.repo.commit_time(base)
        except RevisionError:
            return None

    def _write_test_map(self, text: str) -> None:
        cache = self._cache_dir()
        if cache is None:
            return
        try:
            (cache / "test_map.txt").write_text(text, encoding="utf-8")
        except OSError as exc:
            logger.info("cannot write test_map.txt: %s", exc)

    def collected_count(self) -> int:
        """How many node ids pytest collects in the project (as the test map models it)."""
        with self.index.lock:
            return len(self.tests.collection(self.index.graph))

    def worktree_edits(self, *, base: str = "HEAD", files: Sequence[str] = ()) -> list[FileEdit]:
        """The changed ``.py`` files of the working tree against ``base`` (all, or ``files``)."""
        if self.repo is None:
            raise RevisionError(
                f"{self.root} is not a git repository; analyze compares against a git revision "
                "(run 'git init' and commit, or analyze inside a repository)"
            )
        wanted = {self.relpath(f) or f for f in files}
        edits = []
        with self._git_lock:
            self.repo.resolve(base)
            changed = [
                path[len(self._prefix) :]
                for path in self.repo.changed_files(base)
                if path.startswith(self._prefix)
            ]
            baselines = {file: self.repo.file_at(base, self._prefix + file) for file in changed}
        for file in changed:
            if wanted and file not in wanted:
                continue
            current = read_source(self.root, file, self.settings)
            edits.append(
                FileEdit(
                    file=file,
                    baseline=baselines[file],
                    current=current if isinstance(current, str) else None,
                )
            )
        return edits

    def analyze_worktree(
        self,
        *,
        base: str = "HEAD",
        files: Sequence[str] = (),
        llm: CompletionClient | None = None,
    ) -> Report:
        """The blast radius of the working tree (or ``files``) against git revision ``base``."""
        return self.analyze(self.worktree_edits(base=base, files=files), base=base, llm=llm)
