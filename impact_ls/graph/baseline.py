"""The baseline's incoming edges of a dirty file: what the rest of the project used of it.

The analysis walks from the *baseline* entity (DESIGN §3), but the graph holds the current text:
a deleted method has no node and its callers' edges are gone (they no longer resolve). So for
each dirty file the edges *into* what its baseline text defined — from every other file, as the
graph resolves them with that file at its baseline — are kept and overlaid on the current graph
(``CodeGraph.overlaid``) for the analysis. The dirty file's own edges come from its current
text, which no longer resolves a reference to a name it removed (``_INTEGER_RE.match(s)`` after
``_INTEGER_RE`` was renamed at its definition): its baseline edges into removed names are kept
too, each moved to the current site that still names it (same scope, same last name) and
dropped where none does (the reference was fixed as well); and the reads of removed names at
import time that the extractor does not record (``graph/import_reads.py``).

``snapshot(graph, facts)`` reads both off a graph in which ``facts`` (the baseline) is the file's
state; ``Snapshot.edges(current)`` gives the overlay against the current facts.
``ProjectIndex.baseline_snapshot`` puts the file at its baseline for that read and back.
``BaselineEdges`` caches snapshots per (file, baseline digest) for the engine, and forgets an
entry once a file it has edges from changes (its edges may be stale).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass

from impact_ls.graph.codegraph import CodeGraph
from impact_ls.graph.facts import FileFacts
from impact_ls.graph.import_reads import unbound_reads
from impact_ls.model import ArgShape, Edge, EdgeKind, NodeKind, QualName, Span

_CLASSES = frozenset({NodeKind.CLASS})
_CALLED = frozenset({EdgeKind.CALL, EdgeKind.INSTANTIATE, EdgeKind.TESTS})


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot:
    """What a dirty file's baseline was to the project: names, incoming and own edges."""

    file: str
    module: str
    defined: frozenset[QualName]
    incoming: frozenset[Edge]  # evidenced in other files
    own: tuple[Edge, ...]  # evidenced in the file, into names it defined

    def edges(self, current: FileFacts | None, text: str | None = None) -> list[Edge]:
        """The edges to overlay on the current graph, whose facts of the file are ``current``
        (``text``, its current text, adds the import-time reads of removed names)."""
        return [*self.incoming, *self.moved(current, text)]

    def moved(self, current: FileFacts | None, text: str | None = None) -> list[Edge]:
        """Of ``edges``, those that depend on the current facts and text: the file's own uses of
        names it no longer defines, where they are now, and the import-time reads of them."""
        out: list[Edge] = []
        if current is None:
            return out
        gone = self.defined - defined_names(current)
        for edge in self.own:
            if edge.target in gone:
                out.extend(_moved(edge, current))
        if text is not None and gone:
            out.extend(unbound_reads(text, module=current.module, file=self.file, gone=gone))
        return out


def snapshot(graph: CodeGraph, facts: FileFacts) -> Snapshot:
    """The baseline view of ``facts``' file, read off ``graph`` (where the file is ``facts``)."""
    defined = defined_names(facts)
    own = tuple(e for e in graph.edges_in_file(facts.file) if e.target in defined)
    return Snapshot(
        file=facts.file,
        module=facts.module,
        defined=frozenset(defined),
        incoming=incoming_edges(graph, facts),
        own=own,
    )


def _moved(edge: Edge, current: FileFacts) -> list[Edge]:
    """``edge`` at each site of the current text that still names its target from its scope."""
    module = current.module
    scope = "" if edge.source == module else edge.source.removeprefix(module + ".")
    name = edge.target.rpartition(".")[2]
    spans: list[tuple[Span, object]] = []
    if edge.kind in _CALLED:
        spans = [
            (c.span, c.args) for c in current.calls if c.scope == scope and c.callee[-1:] == (name,)
        ]
    elif edge.kind is EdgeKind.CLASS_MEMBER:
        spans = [
            (a.span, None) for a in current.accesses if a.scope == scope and a.chain[-1:] == (name,)
        ]
    elif edge.kind is EdgeKind.INHERIT:
        for d in current.definitions:
            if d.qualname == scope:
                pairs = zip(d.bases, d.base_spans, strict=False)
                spans = [(sp, None) for b, sp in pairs if b[-1:] == (name,)]
    return [
        Edge(
            source=edge.source,
            target=edge.target,
            kind=edge.kind,
            file=edge.file,
            span=span,
            args=args if isinstance(args, ArgShape) else None,
            name_matched=edge.name_matched,
            member=edge.member,
        )
        for span, args in spans
    ]


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
    return frozenset(
        graph.dependents_through_aliases(defined_names(facts), lambda e: e.file != facts.file)
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Entry:
    digest: str
    snapshot: Snapshot
    sources: frozenset[str]  # the other files the incoming edges are evidenced in


class BaselineEdges:
    """Baseline incoming edges per dirty file, cached per baseline digest (thread-safe)."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def get(self, file: str, digest: str) -> Snapshot | None:
        """The cached snapshot of ``file`` at the baseline with ``digest``, or None."""
        with self._lock:
            entry = self._entries.get(file)
        return entry.snapshot if entry is not None and entry.digest == digest else None

    def put(self, file: str, digest: str, found: Snapshot) -> None:
        """Remember ``found`` as ``file``'s baseline snapshot at ``digest``."""
        sources = frozenset(e.file for e in found.incoming)
        entry = _Entry(digest=digest, snapshot=found, sources=sources)
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
