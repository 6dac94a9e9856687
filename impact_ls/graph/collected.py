"""The project's collected pytest ids, kept current with the graph at a small cost per edit.

``CollectedTests`` is the I/O side of ``graph/collection.py``: it reads the pytest config
(``graph/pytest_config.py``), reads and scans the files whose hints the model needs (cached by
content digest, so a file is scanned again only when its text changed), and caches the
``Collection`` per graph version. An edit that leaves a file's collection inputs as they were
— its definitions (ids, kinds, headers, decorators), its ``contains``/``inherit``/``import``/
``reexport`` edges and its hints — keeps the cached collection for the new version: typing in a
function body never recomputes it. Everything else (a new test, a renamed class, a rebuild)
recomputes it once, on the next request.

Not thread-safe by itself: callers hold the project index's lock, as for every graph query.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path

from impact_ls.graph.codegraph import CodeGraph
from impact_ls.graph.collect_hints import EMPTY_HINTS, FileHints, scan_hints
from impact_ls.graph.collection import Collection, collected_ids, hint_files
from impact_ls.graph.pytest_config import PytestConfig, read_pytest_config
from impact_ls.model import EdgeKind

logger = logging.getLogger(__name__)

TextOf = Callable[[str], str | None]
DigestOf = Callable[[str], str | None]
Fingerprint = tuple[object, ...]

_STRUCTURE = frozenset({EdgeKind.CONTAINS, EdgeKind.INHERIT, EdgeKind.IMPORT, EdgeKind.REEXPORT})


class CollectedTests:
    """pytest's collection of one project root, cached per graph version."""

    def __init__(self, root: Path, *, text_of: TextOf, digest_of: DigestOf) -> None:
        self.root = Path(root)
        self._text_of = text_of
        self._digest_of = digest_of
        self._config: PytestConfig | None = None
        self._hints: dict[str, tuple[str | None, FileHints]] = {}
        self._cached: tuple[CodeGraph, int, Collection] | None = None

    @property
    def config(self) -> PytestConfig:
        """The pytest configuration, read on first use and after ``reload``."""
        if self._config is None:
            self._config = read_pytest_config(self.root)
            logger.debug("pytest config: %s", self._config.source or "pytest defaults")
        return self._config

    def reload(self) -> None:
        """Read the pytest configuration again (a config file may have changed)."""
        self._config = None
        self._cached = None

    def collection(self, graph: CodeGraph) -> Collection:
        """The collection of ``graph`` as it is now (computed at most once per version)."""
        cached = self._cached
        if cached is not None and cached[0] is graph and cached[1] == graph.version:
            return cached[2]
        config = self.config
        files = hint_files(graph, config)
        hints = {file: self._hints_of(file) for file in files}
        found = collected_ids(graph, config, hints)
        self._cached = (graph, graph.version, found)
        return found

    def fingerprint(self, graph: CodeGraph, file: str) -> Fingerprint:
        """What of ``file`` the collection depends on (compare before and after an edit)."""
        nodes = sorted(
            (n.id, n.kind.value, n.signature, n.decorators) for n in graph.nodes_in_file(file)
        )
        edges = sorted(
            (e.kind.value, e.source, e.target, e.member or "")
            for e in graph.edges_in_file(file)
            if e.kind in _STRUCTURE
        )
        scanned = self._hints.get(file)
        return (tuple(nodes), tuple(edges), scanned[1] if scanned is not None else None)

    def edited(self, graph: CodeGraph, file: str, *, before: Fingerprint, version: int) -> None:
        """After ``file`` changed: keep the cached collection if its inputs are unchanged.

        ``before`` is ``fingerprint(graph, file)`` and ``version`` the graph's version, both
        taken just before the change.
        """
        cached = self._cached
        if cached is None or cached[0] is not graph or cached[1] != version:
            return
        if file in self._hints:
            self._hints_of(file)  # rescan now: the hints are part of the fingerprint
        if self.fingerprint(graph, file) == before:
            self._cached = (graph, graph.version, cached[2])

    def _hints_of(self, file: str) -> FileHints:
        digest = self._digest_of(file)
        known = self._hints.get(file)
        if known is not None and digest is not None and known[0] == digest:
            return known[1]
        text = self._text_of(file)
        # the tests run on this machine, so its platform decides platform branches
        hints = scan_hints(text, platform=sys.platform) if text is not None else EMPTY_HINTS
        self._hints[file] = (digest, hints)
        return hints
