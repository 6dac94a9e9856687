"""Confirm or reject name-matched call edges with jedi, under a time budget, cached.

A call like ``handler.open()`` whose receiver type static resolution cannot see is linked to
every method named ``open`` (``Edge.name_matched``). ``JediConfirmer`` asks jedi what the
attribute at that call site really is (``Script.goto``, then ``infer``): the target itself →
``True``; something else (another class's method, a stdlib method) → ``False``; nothing found,
no text, or over budget → ``None`` (undecided: the edge stays, marked, as a MAY).

It plugs into ``CodeGraph(confirmer=...)``: queries with ``confirmed=True`` drop refuted edges and
unmark confirmed ones. Verdicts are cached in an LRU (``config.JEDI_CACHE_SIZE``) keyed by the
edge and the sha1 of the file's text, so an edit anywhere in the file invalidates them.

Time: jedi costs 0.1 to 0.4 s per call site on django and click (median; some take seconds), so an
analysis cannot wait for it on every candidate. ``budget(seconds)`` opens one analysis's
allowance: inside it a cache miss runs jedi synchronously while the allowance lasts; past it (or
with a zero allowance, as the language server uses) the edge is answered ``None`` and queued.
``confirm_pending(on_done)`` works through the queue on a background thread and calls
``on_done`` with the number of verdicts it reached, so the editor can re-run the analysis.

jedi runs on one daemon thread (it is not thread-safe, and a daemon never holds up the exit of
the CLI); a call that blew its budget keeps that thread, and further calls answer ``None`` at
once instead of queueing behind it.
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cachetools

from impact_ls.config import JEDI_BUDGET_S, JEDI_CACHE_SIZE
from impact_ls.model import Edge, Node

logger = logging.getLogger(__name__)

TextLookup = Callable[[str], str | None]
NodeLookup = Callable[[str], Node | None]
_Job = tuple[Edge, str, "Future[bool | None]"]


@dataclass(slots=True)
class JediTally:
    """What one budgeted analysis asked of jedi: verdicts by kind, and the candidates left open."""

    confirmed: int = 0
    refuted: int = 0
    undecided: int = 0
    deferred: int = 0  # over the allowance: queued for ``confirm_pending``

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
        node_of: NodeLookup | None = None,
        budget_s: float = JEDI_BUDGET_S,
        cache_size: int = JEDI_CACHE_SIZE,
    ) -> None:
        self._root = Path(root).resolve()
        self._text_of = text_of
        self._node_of = node_of
        self._call_budget_s = budget_s
        self._cache: cachetools.LRUCache[tuple[Edge, str], bool | None] = cachetools.LRUCache(
            maxsize=max(cache_size, 1)
        )
        self._lock = threading.RLock()
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._busy: Future[bool | None] | None = None
        self._project: Any = None
        self._deadline: float | None = None
        self._tally: JediTally | None = None
        self._pending: dict[Edge, None] = {}

    def __call__(self, edge: Edge) -> bool | None:
        """``True`` if jedi resolves the call site to ``edge.target``, ``False`` if to something
        else, ``None`` when it cannot tell within the budget."""
        if not edge.name_matched:
            return None
        text = self._text_of(edge.file)
        if text is None:
            return None
        key = (edge, _digest(text))
        with self._lock:
            if key in self._cache:
                return self._count(self._cache[key])
            allowance = self._allowance()
            if allowance <= 0 or self._running_over_budget():
                self._pending[edge] = None
                if self._tally is not None:
                    self._tally.deferred += 1
                return None
            future = self._submit(edge, text, key)
        # A call that outlives the wait still lands in the cache when jedi finishes.
        return self._count(self._wait(future, edge, min(allowance, self._call_budget_s)))

    @contextlib.contextmanager
    def budget(self, seconds: float) -> Iterator[JediTally]:
        """Allow cache misses ``seconds`` of jedi in total while the block runs (one analysis)."""
        tally = JediTally()
        with self._lock:
            self._deadline = time.monotonic() + max(seconds, 0.0)
            self._tally = tally
        try:
            yield tally
        finally:
            with self._lock:
                self._deadline = None
                self._tally = None

    def confirm_pending(self, on_done: Callable[[int], object] | None = None) -> bool:
        """Decide the queued candidates on the jedi thread, then call ``on_done(verdicts)``.

        Returns False (and does nothing) when nothing is queued.
        """
        with self._lock:
            edges = list(self._pending)
            self._pending.clear()
        if not edges:
            return False
        threading.Thread(
            target=self._confirm_all, args=(edges, on_done), name="jedi-pending", daemon=True
        ).start()
        return True

    def close(self) -> None:
        """Stop the jedi thread after its current call (queued work is abandoned)."""
        with self._lock:
            self._pending.clear()
            thread, self._thread = self._thread, None
        if thread is not None:
            self._jobs.put(None)

    def _allowance(self) -> float:
        if self._deadline is None:
            return self._call_budget_s
        return self._deadline - time.monotonic()

    def _running_over_budget(self) -> bool:
        return self._busy is not None and not self._busy.done()

    def _count(self, verdict: bool | None) -> bool | None:
        if self._tally is not None:
            if verdict is True:
                self._tally.confirmed += 1
            elif verdict is False:
                self._tally.refuted += 1
            else:
                self._tally.undecided += 1
        return verdict

    def _submit(self, edge: Edge, text: str, key: tuple[Edge, str]) -> Future[bool | None]:
        future: Future[bool | None] = Future()

        def remember(done: Future[bool | None]) -> None:
            with self._lock:
                self._cache[key] = done.result()

        future.add_done_callback(remember)
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="jedi", daemon=True)
            self._thread.start()
        self._busy = future
        self._jobs.put((edge, text, future))
        return future

    def _wait(self, future: Future[bool | None], edge: Edge, seconds: float) -> bool | None:
        try:
            return future.result(timeout=max(seconds, 0.0))
        except FutureTimeout:
            logger.debug("jedi over budget (%.2fs) for %s", seconds, edge.target)
            return None

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            edge, text, future = job
            try:
                future.set_result(self._decide(edge, text))
            except Exception as exc:  # jedi's internal errors must not reach the analysis
                logger.debug("jedi failed on %s:%d: %s", edge.file, edge.span.line, exc)
                future.set_result(None)

    def _confirm_all(self, edges: list[Edge], on_done: Callable[[int], object] | None) -> None:
        decided = 0
        for edge in edges:
            text = self._text_of(edge.file)
            if text is None:
                continue
            key = (edge, _digest(text))
            with self._lock:
                if key in self._cache:
                    continue
                future = self._submit(edge, text, key)
            # No deadline here: the background thread can wait for jedi as long as it takes.
            decided += future.result() is not None
        logger.debug("jedi decided %d of %d pending candidates", decided, len(edges))
        if on_done is not None:
            on_done(decided)

    def _decide(self, edge: Edge, text: str) -> bool | None:
        import jedi  # type: ignore[import-untyped]  # slow to import; only when first needed

        position = _member_position(text, edge)
        if position is None:
            return None
        if self._project is None:
            self._project = jedi.Project(self._root)
        script = jedi.Script(code=text, path=self._root / edge.file, project=self._project)
        line, column = position
        names = script.goto(line, column, follow_imports=True)
        if not names:
            names = script.infer(line, column)
        if not names:
            return None
        target = self._node_of(edge.target) if self._node_of is not None else None
        for name in names:
            if name.full_name == edge.target:
                return True
            if target is not None and name.module_path is not None and name.line is not None:
                same_file = Path(name.module_path).resolve() == self._root / target.file
                if same_file and name.line == target.span.line:
                    return True
        return False


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
