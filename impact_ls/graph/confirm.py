"""Confirm or reject name-matched call edges with jedi, under a time budget, cached.

A call like ``handler.open()`` whose receiver type static resolution cannot see is linked to
every method named ``open`` (``Edge.name_matched``). ``JediConfirmer`` asks jedi what the
attribute at that call site really is (``Script.goto``, then ``infer``): the target itself →
``True``; something else (another class's method, a stdlib method) → ``False``; nothing found,
no text, or over budget → ``None`` (undecided: the edge stays, marked, as a MAY).

It plugs into ``CodeGraph(confirmer=...)``: queries with ``confirmed=True`` drop refuted edges and
unmark confirmed ones. Verdicts are cached in an LRU of ``config.JEDI_CACHE_SIZE`` files, keyed by
the edge and a digest of the file's text (``digest_of``, else the sha1 of ``text_of``), so an edit
anywhere in the file invalidates them; a cached answer reads no text.

Time: jedi costs 0.1 to 0.4 s per call site on django and click (median; some take seconds), so an
analysis cannot wait for it on every candidate. ``budget(seconds)`` opens one analysis's
allowance, whose clock starts at the analysis's first cache miss (what comes before, reading the
graph and the test collection, is not jedi's time): a miss runs jedi synchronously while the
allowance lasts; past it (or with a zero allowance, as the language server uses) the edge is
answered ``None`` and queued.
``confirm_pending(on_done)`` works through the queue on a background thread and calls
``on_done`` with the number of verdicts it reached, so the editor can re-run the analysis.

jedi runs on one daemon thread for the whole process (``_JediThread``); a call that blew its
budget keeps that thread, and further calls answer ``None`` at once instead of queueing behind it.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cachetools

from impact_ls.config import JEDI_BUDGET_S, JEDI_CACHE_SIZE
from impact_ls.model import Edge, Node

logger = logging.getLogger(__name__)

TextLookup = Callable[[str], str | None]
DigestLookup = Callable[[str], str | None]
NodeLookup = Callable[[str], Node | None]


@dataclass(slots=True)
class JediTally:
    """What one budgeted analysis asked of jedi: verdicts by kind, and the candidates left open."""

    confirmed: int = 0
    refuted: int = 0
    undecided: int = 0
    deferred: int = 0  # over the allowance: queued for ``confirm_pending``
    seen: set[Edge] = field(default_factory=set)

    def first_time(self, edge: Edge) -> bool:
        """Whether ``edge`` is counted now (a walk may ask about one edge more than once)."""
        if edge in self.seen:
            return False
        self.seen.add(edge)
        return True

    @property
    def asked(self) -> int:
        """Name-matched candidates looked up, cached answers included."""
        return self.confirmed + self.refuted + self.undecided + self.deferred

    def note(self) -> str:
        """One line for the report's audit."""
        text = (
            f"jedi checked {self.asked} name-matched call candidates: {self.confirmed} confirmed, "
            f"{self.refuted} refuted, {self.undecided} undecided"
        )
        if self.deferred:
            text += f", {self.deferred} left for later (time budget)"
        return text


class JediConfirmer:
    """A ``Confirmer`` for ``CodeGraph``: jedi's verdict on one name-matched edge."""

    def __init__(
        self,
        root: Path,
        text_of: TextLookup,
        *,
        digest_of: DigestLookup | None = None,
        node_of: NodeLookup | None = None,
        budget_s: float = JEDI_BUDGET_S,
        cache_size: int = JEDI_CACHE_SIZE,
    ) -> None:
        self._root = Path(root).resolve()
        self._text_of = text_of
        self._digest_of = digest_of
        self._node_of = node_of
        self._call_budget_s = budget_s
        self._cache = _Verdicts(cache_size)
        # While a budget is open: each file's verdicts at its digest, looked up once.
        self._window: dict[str, dict[Edge, bool | None] | None] | None = None
        self._lock = threading.RLock()
        self._closed = False
        self._busy: Future[bool | None] | None = None
        self._project: Any = None
        self._allowed: float | None = None  # seconds the open analysis gives jedi
        self._deadline: float | None = None
        self._tally: JediTally | None = None
        self._pending: dict[Edge, None] = {}
        self._runner: threading.Thread | None = None  # the background pass, while one runs
        self._on_done: Callable[[int], object] | None = None
        # touched by the jedi thread only (``_names_at``)
        self._scripts: cachetools.LRUCache[tuple[str, str], Any] = cachetools.LRUCache(_SCRIPTS)
        self._answers: cachetools.LRUCache[tuple[str, str, int, int], tuple[_Name, ...]] = (
            cachetools.LRUCache(_ANSWERS)
        )

    def __call__(self, edge: Edge) -> bool | None:
        """``True`` if jedi resolves the call site to ``edge.target``, ``False`` if to something
        else, ``None`` when it cannot tell within the budget."""
        if not edge.name_matched:
            return None
        if self._window is None:
            return self._look_up(edge)
        verdicts = self._window_verdicts(self._window, edge.file)
        if verdicts is None:
            return None
        verdict = verdicts.get(edge, _UNSEEN)
        if verdict is not _UNSEEN:
            return self._count(edge, verdict)
        if self._allowance() <= 0 or self._running_over_budget():
            return self._defer(edge)
        return self._look_up(edge)

    def known(self, edge: Edge) -> bool | None:
        """The verdict already reached on ``edge`` at its file's text, if any: nothing is asked,
        queued or counted (a walk counting entities it will not show)."""
        if not edge.name_matched:
            return None
        if self._window is not None:
            verdicts = self._window_verdicts(self._window, edge.file)
            # most files have no verdict yet, and hashing an edge to find none is not free
            return verdicts.get(edge) if verdicts else None
        digest, _ = self._digest_and_text(edge.file)
        if digest is None:
            return None
        with self._lock:
            return self._cache.get((edge, digest))[1]

    def _window_verdicts(
        self, window: dict[str, dict[Edge, bool | None] | None], file: str
    ) -> dict[Edge, bool | None] | None:
        """``file``'s live verdicts, found once per open budget: a walk asks thousands of edges."""
        verdicts = window.get(file, _UNSEEN)
        if verdicts is _UNSEEN:
            verdicts = window[file] = self._verdicts_of(file)
        return verdicts  # type: ignore[no-any-return]

    def _look_up(self, edge: Edge) -> bool | None:
        digest, text = self._digest_and_text(edge.file)
        if digest is None:
            return None
        key = (edge, digest)
        with self._lock:
            known, verdict = self._cache.get(key)
            if known:
                return self._count(edge, verdict)
            allowance = self._allowance()
            if allowance <= 0 or self._running_over_budget():
                return self._defer(edge)
        text = text if text is not None else self._text_of(edge.file)
        if text is None:
            return None
        with self._lock:
            future = self._submit(edge, text, key)
        # A call that outlives the wait still lands in the cache when jedi finishes.
        return self._count(edge, self._wait(future, edge, min(allowance, self._call_budget_s)))

    def _defer(self, edge: Edge) -> bool | None:
        """Queue ``edge`` for ``confirm_pending``; undecided for now."""
        with self._lock:
            self._pending[edge] = None
            if self._tally is not None and self._tally.first_time(edge):
                self._tally.deferred += 1
        return None

    def _verdicts_of(self, file: str) -> dict[Edge, bool | None] | None:
        """The live verdicts of ``file`` at its current text (None: the file has no text)."""
        digest, _ = self._digest_and_text(file)
        if digest is None:
            return None
        with self._lock:
            return self._cache.of(file, digest)

    def _digest_and_text(self, file: str) -> tuple[str | None, str | None]:
        """A digest of ``file``'s text (None: no text), and the text if reading it was needed."""
        if self._digest_of is not None:
            return self._digest_of(file), None
        text = self._text_of(file)
        return (None if text is None else _digest(text)), text

    @contextlib.contextmanager
    def budget(self, seconds: float) -> Iterator[JediTally]:
        """Allow cache misses ``seconds`` of jedi in total while the block runs (one analysis)."""
        tally = JediTally()
        with self._lock:
            self._allowed = max(seconds, 0.0)
            self._deadline = None  # set by the first cache miss (``_allowance``)
            self._tally = tally
            # One analysis reads a fixed graph: each file's digest is looked up once.
            self._window = {}
        try:
            yield tally
        finally:
            with self._lock:
                self._allowed = None
                self._deadline = None
                self._tally = None
                self._window = None

    def confirm_pending(self, on_done: Callable[[int], object] | None = None) -> bool:
        """Decide the queued candidates on the jedi thread, then call ``on_done(verdicts)``.

        One background pass at a time: while one runs, newly queued candidates wait for it to
        finish its batch and are taken next (``on_done`` is then the latest one given). Every
        keystroke queues what its analysis could not decide; a pass per keystroke asked jedi
        about the same candidates again and again. Returns False when nothing is queued.
        """
        with self._lock:
            if not self._pending:
                return False
            self._on_done = on_done
            if self._runner is None:
                self._runner = threading.Thread(
                    target=self._drain, name="jedi-pending", daemon=True
                )
                self._runner.start()
        return True

    def _drain(self) -> None:
        try:
            while True:
                with self._lock:
                    edges = list(self._pending)
                    self._pending.clear()
                    on_done = self._on_done
                    if not edges or self._closed:
                        self._runner = None
                        return
                self._confirm_all(edges, on_done)
        except BaseException:
            with self._lock:  # a failing callback must not leave the queue without a pass
                self._runner = None
            raise

    def close(self) -> None:
        """Drop the queued candidates and stop deciding them in the background."""
        with self._lock:
            self._pending.clear()
            self._closed = True

    def _allowance(self) -> float:
        """Seconds of jedi left to the open analysis (one call's budget outside one)."""
        if self._allowed is None:
            return self._call_budget_s
        if self._deadline is None:
            if self._allowed <= 0:
                return 0.0
            # the first miss of the analysis: jedi's time starts now. An analysis whose test
            # collection took longer than the budget left jedi nothing (1,108 of 1,118
            # candidates deferred on bench_commits)
            self._deadline = time.monotonic() + self._allowed
        return self._deadline - time.monotonic()

    def _running_over_budget(self) -> bool:
        return self._busy is not None and not self._busy.done()

    def _count(self, edge: Edge, verdict: bool | None) -> bool | None:
        if self._tally is not None and self._tally.first_time(edge):
            if verdict is True:
                self._tally.confirmed += 1
            elif verdict is False:
                self._tally.refuted += 1
            else:
                self._tally.undecided += 1
        return verdict

    def _submit(self, edge: Edge, text: str, key: tuple[Edge, str]) -> Future[bool | None]:
        def remember(done: Future[bool | None]) -> None:
            with self._lock:
                self._cache.put(key, done.result())

        def decide() -> bool | None:
            try:
                return self._decide(edge, text, key[1])
            except Exception as exc:  # jedi's internal errors must not reach the analysis
                logger.debug("jedi failed on %s:%d: %s", edge.file, edge.span.line, exc)
                return None

        self._busy = _JEDI_THREAD.submit(decide, remember)
        return self._busy

    def _wait(self, future: Future[bool | None], edge: Edge, seconds: float) -> bool | None:
        try:
            return future.result(timeout=max(seconds, 0.0))
        except FutureTimeout:
            logger.debug("jedi over budget (%.2fs) for %s", seconds, edge.target)
            return None

    def _confirm_all(self, edges: list[Edge], on_done: Callable[[int], object] | None) -> None:
        decided = 0
        for edge in edges:
            if self._closed:
                return
            digest, text = self._digest_and_text(edge.file)
            if digest is not None and text is None:
                text = self._text_of(edge.file)
            if digest is None or text is None:
                continue
            key = (edge, digest)
            with self._lock:
                if self._cache.get(key)[0]:
                    continue
                future = self._submit(edge, text, key)
            # No deadline here: the background thread can wait for jedi as long as it takes.
            decided += future.result() is not None
        logger.debug("jedi decided %d of %d pending candidates", decided, len(edges))
        if on_done is not None:
            on_done(decided)

    def _decide(self, edge: Edge, text: str, digest: str) -> bool | None:
        position = _member_position(text, edge)
        if position is None:
            return None
        names = self._names_at(edge.file, text, digest, position)
        if not names:
            return None
        target = self._node_of(edge.target) if self._node_of is not None else None
        for full_name, module_path, line in names:
            if full_name == edge.target:
                return True
            if target is not None and module_path is not None and line is not None:
                same_file = Path(module_path).resolve() == self._root / target.file
                if same_file and line == target.span.line:
                    return True
        return False

    def _names_at(
        self, file: str, text: str, digest: str, position: tuple[int, int]
    ) -> tuple[_Name, ...]:
        """What jedi says the attribute at ``position`` is (on the jedi thread only).

        A site name-matched to k methods is one question, not k; the questions about one file
        share its ``Script``, whose inference state (the imports followed) is most of a
        question's cost: a fresh ``Script`` per question took three times as long on starlette.
        """
        key = (file, digest, *position)
        found = self._answers.get(key)
        if found is not None:
            return found
        script = self._scripts.get((file, digest))
        if script is None:
            import jedi  # type: ignore[import-untyped]  # slow to import; only when first needed

            if self._project is None:
                self._project = jedi.Project(self._root)
            script = jedi.Script(code=text, path=self._root / file, project=self._project)
            self._scripts[(file, digest)] = script
        line, column = position
        names = script.goto(line, column, follow_imports=True) or script.infer(line, column)
        found = self._answers[key] = tuple(
            (name.full_name, name.module_path, name.line) for name in names
        )
        return found


# what jedi names at a site: (full name, module path, line), as ``_decide`` compares them
_Name = tuple[str | None, Any, int | None]
# Scripts kept for the next question about the same file; each holds its parse and inference
_SCRIPTS = 8
_ANSWERS = 4096


class _JediThread:
    """The process's one jedi thread.

    jedi keeps process-wide caches and is not thread-safe, so every confirmer (one per workspace
    folder) queues its calls here; a daemon never holds up the exit of the CLI.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], bool | None], Future[bool | None]]] = (
            queue.SimpleQueue()
        )
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def submit(
        self, job: Callable[[], bool | None], on_done: Callable[[Future[bool | None]], object]
    ) -> Future[bool | None]:
        """Queue ``job``; ``on_done`` runs with its future once it has an answer."""
        future: Future[bool | None] = Future()
        future.add_done_callback(on_done)
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="jedi", daemon=True)
                self._thread.start()
        self._jobs.put((job, future))
        return future

    def _serve(self) -> None:
        while True:
            job, future = self._jobs.get()
            future.set_result(job())


_JEDI_THREAD = _JediThread()


class _Verdicts:
    """The verdict cache: an LRU of files, each holding the verdicts for one digest of its text.

    Keyed by file first so a lookup hashes the edge once and a new text drops the file's old
    verdicts at once.
    """

    def __init__(self, max_files: int) -> None:
        self._files: cachetools.LRUCache[str, tuple[str, dict[Edge, bool | None]]] = (
            cachetools.LRUCache(maxsize=max(max_files, 1))
        )

    def of(self, file: str, digest: str) -> dict[Edge, bool | None]:
        """The verdicts of ``file`` at ``digest``; older ones of the file are dropped."""
        entry = self._files.get(file)
        if entry is None or entry[0] != digest:
            entry = self._files[file] = (digest, {})
        return entry[1]

    def get(self, key: tuple[Edge, str]) -> tuple[bool, bool | None]:
        """(known, verdict) of one edge at one digest."""
        edge, digest = key
        entry = self._files.get(edge.file)
        if entry is None or entry[0] != digest or edge not in entry[1]:
            return False, None
        return True, entry[1][edge]

    def put(self, key: tuple[Edge, str], verdict: bool | None) -> None:
        """Remember ``verdict`` for one edge at one digest."""
        self.of(key[0].file, key[1])[key[0]] = verdict


_UNSEEN: Any = object()


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def _member_position(text: str, edge: Edge) -> tuple[int, int] | None:
    """jedi's (line, column) of the called attribute inside the call at ``edge.span``."""
    member = edge.target.rsplit(".", 1)[-1]
    lines = text.splitlines()
    first = edge.span.line
    last = max(edge.span.end_line, first)
    if not 0 < first <= len(lines):
        return None
    pattern = re.compile(r"\.\s*(" + re.escape(member) + r")\s*\(")
    start_col = _char_col(lines[first - 1], edge.span.col)
    for lineno in range(first, min(last, len(lines)) + 1):
        line = lines[lineno - 1]
        found = pattern.search(line, start_col if lineno == first else 0)
        if found is not None:
            return lineno, found.start(1)
    return None


def _char_col(line: str, byte_col: int) -> int:
    if line.isascii():
        return byte_col
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))
