"""The baseline's incoming edges of a dirty file: what the rest of the project used of it.

The analysis walks from the *baseline* entity (DESIGN §3), but the graph holds the current text:
a deleted method has no node and its callers' edges are gone (they no longer resolve). So for
each dirty file the edges *into* what its baseline text defined — from every other file, as the
graph resolves them with that file at its baseline — are kept and overlaid on the current graph
(``CodeGraph.overlaid``) for the analysis. Edges evidenced in the dirty file itself are taken
from its current text only.

``incoming_edges(graph, facts)`` reads them off a graph in which ``facts`` (the baseline) is the
file's state; ``ProjectIndex.baseline_edges`` puts the file at its baseline for that read and
back. ``BaselineEdges`` caches them per (file, baseline digest) for the engine, and forgets an
entry once a file it has edges from changes (its edges may be stale).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass

from impact_ls.graph.codegraph import CodeGraph
from impact_ls.graph.facts import FileFacts
from impact_ls.model import Edge, EdgeKind, NodeKind, QualName

_CLASSES = frozenset({NodeKind.CLASS})


def defined_names(facts: FileFacts) -> set[QualName]:
    """Every qualname ``facts`` defines: the module, its definitions, class attributes and
    module constants (fields are edge targets although they are no nodes)."""
    module = facts.module
    names = {QualName(module)}
    for definition in facts.definitions:
        qualname = QualName(f"{module}.{definition.qualname}")
        names.add(qualname)
        if definition.kind in _CLASSES:
            names.update(QualName(f"{qualname}.{attr}") for attr in definition.attributes)
    names.update(QualName(f"{module}.{name}") for name in facts.constants)
    return names


def incoming_edges(graph: CodeGraph, facts: FileFacts) -> frozenset[Edge]:
    """The edges of ``graph`` into what ``facts`` defines (and into re-exported aliases of it),
    evidenced in other files."""
    targets = defined_names(facts)
    frontier = list(targets)
    found: set[Edge] = set()
    while frontier:
        current = frontier.pop()
        for edge in graph.dependents_unordered(current):
            if edge.file == facts.file:
                continue
            found.add(edge)
            if edge.kind is EdgeKind.REEXPORT and edge.member:
                alias = QualName(f"{edge.source}.{edge.member}")
                if alias not in targets:
                    targets.add(alias)
                    frontier.append(alias)
    return frozenset(found)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Entry:
    digest: str
    edges: frozenset[Edge]
    sources: frozenset[str]  # the files the edges are evidenced in


class BaselineEdges:
    """Baseline incoming edges per dirty file, cached per baseline digest (thread-safe)."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def get(self, file: str, digest: str) -> frozenset[Edge] | None:
        """The cached edges of ``file`` at the baseline with ``digest``, or None."""
        with self._lock:
            entry = self._entries.get(file)
        return entry.edges if entry is not None and entry.digest == digest else None

    def put(self, file: str, digest: str, edges: frozenset[Edge]) -> None:
        """Remember ``edges`` as ``file``'s baseline incoming edges at ``digest``."""
        entry = _Entry(digest=digest, edges=edges, sources=frozenset(e.file for e in edges))
        with self._lock:
            self._entries[file] = entry

    def changed(self, files: Iterable[str]) -> None:
        """Forget entries with edges from one of ``files`` (their sites may have moved)."""
        touched = set(files)
        with self._lock:
            for file in [f for f, e in self._entries.items() if e.sources & touched]:
                del self._entries[file]

    def clear(self) -> None:
        """Forget everything (a rebuild or a refresh from disk)."""
        with self._lock:
            self._entries.clear()
