"""Confirm or reject name-matched call edges with jedi, lazily, under a time budget, cached.

A call like ``handler.open()`` whose receiver type static resolution cannot see is linked to
every method named ``open`` (``Edge.name_matched``). ``JediConfirmer`` asks jedi what the
attribute at that call site really is (``Script.goto``, then ``infer``): the target itself →
``True``; something else (another class's method, a stdlib method) → ``False``; nothing found,
no text, or over budget → ``None`` (undecided: the edge stays, as a MAY).

It plugs into ``CodeGraph(confirmer=...)``; queries with ``confirmed=True`` call it. Answers are
cached in an LRU (``config.JEDI_CACHE_SIZE``) keyed by the edge and the sha1 of the file's text,
so an edit anywhere in the file invalidates them. jedi runs on one worker thread; while a call
that blew its budget is still running, further calls answer ``None`` at once instead of queueing.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any

import cachetools

from impact_ls.config import JEDI_BUDGET_S, JEDI_CACHE_SIZE
from impact_ls.model import Edge, Node

logger = logging.getLogger(__name__)

TextLookup = Callable[[str], str | None]
NodeLookup = Callable[[str], Node | None]


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
        self._budget_s = budget_s
        self._cache: cachetools.LRUCache[tuple[Edge, str], bool | None] = cachetools.LRUCache(
            maxsize=max(cache_size, 1)
        )
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._busy: Future[bool | None] | None = None
        self._project: Any = None

    def __call__(self, edge: Edge) -> bool | None:
        """``True`` if jedi resolves the call site to ``edge.target``, ``False`` if to something
        else, ``None`` when it cannot tell within the budget."""
        if not edge.name_matched:
            return None
        text = self._text_of(edge.file)
        if text is None:
            return None
        key = (edge, hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest())
        with self._lock:
            if key in self._cache:
                return self._cache[key]
            if self._busy is not None and not self._busy.done():
                return None  # a previous call is still over budget: do not queue behind it
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jedi")
            future = self._executor.submit(self._decide, edge, text)
            self._busy = future
        try:
            verdict = future.result(timeout=self._budget_s)
        except FutureTimeout:
            logger.debug("jedi over budget (%.1fs) for %s", self._budget_s, edge.target)
            return None
        except Exception as exc:  # jedi's internal errors must not reach the analysis
            logger.debug("jedi failed on %s:%d: %s", edge.file, edge.span.line, exc)
            verdict = None
        with self._lock:
            self._cache[key] = verdict
        return verdict

    def close(self) -> None:
        """Stop the worker thread (pending jedi work is abandoned)."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)

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
