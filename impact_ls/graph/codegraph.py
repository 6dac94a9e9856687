"""The in-memory code graph: nodes, edges and dynamic references with typed, directional queries.

``CodeGraph`` only indexes and answers; it never reads files. ``graph/project.py`` builds it from
per-file facts and patches it one file at a time through ``replace_file``. Tests build one by hand
with ``CodeGraph.of(nodes, edges, dynamic)``.

Direction: an edge points from the dependent (``source``) to its dependency (``target``), so
"who breaks if X changes" is ``dependents(X, kinds=...)`` — the incoming edges of X.
Edges may target qualnames that are not nodes (a field ``pkg.mod.Class.attr``, or a definition
that the current text no longer has): that is how a deleted function still finds its callers.

Name-matched edges (an attribute call whose receiver type is unknown, linked to every same-named
method) carry ``name_matched=True``; an optional ``confirmer`` (jedi, time-budgeted, cached) judges
them when a query asks for ``confirmed=True``: a refuted edge is dropped, a confirmed one comes
back without the mark, an undecided one stays as it is.

``overlaid(edges)`` is a read-only view with extra edges (a dirty file's baseline incoming edges,
``graph/baseline.py``): same queries, no copy of the indexes.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace
from typing import TypeVar, cast

from impact_ls.graph.kinds import (
    DYNAMIC_MODULE_GETATTR,
    DYNAMIC_REGISTRY,
    DYNAMIC_STRING_LITERAL,
    NODE_TEST,
)
from impact_ls.model import (
    COMPUTED,
    DynamicRef,
    Edge,
    EdgeKind,
    Node,
    NodeKind,
    QualName,
)

Confirmer = Callable[[Edge], bool | None]
_T = TypeVar("_T")
_K = TypeVar("_K", bound=str)
_V = TypeVar("_V", Edge, DynamicRef)

_IMPORT_KINDS = frozenset({EdgeKind.IMPORT, EdgeKind.REEXPORT, EdgeKind.TYPE_REF})
_MODULE_IMPORTS = frozenset({EdgeKind.IMPORT, EdgeKind.REEXPORT})
_CALL_KINDS = frozenset({EdgeKind.CALL})
_OVERRIDES = frozenset({EdgeKind.OVERRIDE})


class CodeGraph:
    """Indexes over one snapshot of the project's definitions and dependencies."""

    def __init__(self, *, confirmer: Confirmer | None = None) -> None:
        self._nodes: dict[QualName, Node] = {}
        self._by_file: dict[str, dict[QualName, Node]] = defaultdict(dict)
        self._by_name: dict[str, set[QualName]] = defaultdict(set)
        self._edges_by_file: dict[str, list[Edge]] = defaultdict(list)
        self._incoming: dict[QualName, list[Edge]] = defaultdict(list)
        self._outgoing: dict[QualName, list[Edge]] = defaultdict(list)
        self._dynamic_by_file: dict[str, list[DynamicRef]] = defaultdict(list)
        self._dynamic_by_name: dict[str, list[DynamicRef]] = defaultdict(list)
        # Small indexes the analysis reads on every run (scanning every node or reference
        # instead cost milliseconds per analysis on django).
        self._tests: dict[QualName, Node] = {}
        # import/reexport edges by the parent of their target (``from m import x`` → ``m``)
        self._imports_by_parent: dict[QualName, list[Edge]] = defaultdict(list)
        self._getattr_by_file: dict[str, list[DynamicRef]] = {}
        self._computed_by_file: dict[str, list[DynamicRef]] = {}
        self._registries_by_file: dict[str, list[DynamicRef]] = {}
        self._version = 0
        self._memos: dict[str, tuple[int, object]] = {}
        self.confirmer = confirmer

    @classmethod
    def of(
        cls,
        nodes: Iterable[Node],
        edges: Iterable[Edge] = (),
        dynamic: Iterable[DynamicRef] = (),
        *,
        confirmer: Confirmer | None = None,
    ) -> CodeGraph:
        """Build a graph from finished values (tests, or a fresh build)."""
        graph = cls(confirmer=confirmer)
        by_file: dict[str, tuple[list[Node], list[Edge], list[DynamicRef]]] = defaultdict(
            lambda: ([], [], [])
        )
        for node in nodes:
            by_file[node.file][0].append(node)
        for edge in edges:
            by_file[edge.file][1].append(edge)
        for ref in dynamic:
            by_file[ref.file][2].append(ref)
        for file, (file_nodes, file_edges, file_dynamic) in by_file.items():
            graph.replace_file(file, file_nodes, file_edges, file_dynamic)
        return graph

    def replace_file(
        self,
        file: str,
        nodes: Iterable[Node],
        edges: Iterable[Edge],
        dynamic: Iterable[DynamicRef] = (),
    ) -> None:
        """Swap everything that ``file`` defines or evidences for the given values."""
        self.remove_file(file)
        self._version += 1
        for node in nodes:
            self._nodes[node.id] = node
            self._by_file[file][node.id] = node
            self._by_name[node.name].add(node.id)
            # Same invariant as ``_nodes``: the id's latest node, kept only while it is a test.
            if node.kind is NODE_TEST:
                self._tests[node.id] = node
            else:
                self._tests.pop(node.id, None)
        self._add_edges(file, edges)
        for ref in dynamic:
            self._dynamic_by_file[file].append(ref)
            self._dynamic_by_name[ref.name].append(ref)
            if ref.kind is DYNAMIC_MODULE_GETATTR:
                self._getattr_by_file.setdefault(file, []).append(ref)
            elif ref.kind is DYNAMIC_REGISTRY:
                self._registries_by_file.setdefault(file, []).append(ref)
            elif ref.kind is not DYNAMIC_STRING_LITERAL and COMPUTED in ref.name:
                self._computed_by_file.setdefault(file, []).append(ref)

    def replace_edges(self, file: str, edges: Iterable[Edge]) -> None:
        """Swap only the edges evidenced in ``file`` (re-resolution after another file changed)."""
        self._drop_edges(file)
        self._version += 1
        self._add_edges(file, edges)

    def replace_edges_of(self, edges_by_file: Mapping[str, Iterable[Edge]]) -> None:
        """``replace_edges`` of several files at once, in the mapping's order (the same graph).

        Each index bucket is filtered once for all of them: the files one change re-resolves
        share their most used targets (a module, ``len``), whose buckets were filtered again
        for every file — most of a baseline read's graph time on aiohttp.
        """
        self._drop_edges_of(list(edges_by_file))
        self._version += 1
        for file, edges in edges_by_file.items():
            self._add_edges(file, edges)

    def _add_edges(self, file: str, edges: Iterable[Edge]) -> None:
        edges = edges if isinstance(edges, list) else list(edges)
        if not edges:
            return
        # a load adds every edge of the project here (400k on django): the indexes are looked
        # up once, not once per edge
        self._edges_by_file[file].extend(edges)
        incoming, outgoing, imports = self._incoming, self._outgoing, self._imports_by_parent
        for edge in edges:
            incoming[edge.target].append(edge)
            outgoing[edge.source].append(edge)
            if edge.kind in _MODULE_IMPORTS:
                imports[_parent(edge.target)].append(edge)

    def remove_file(self, file: str) -> None:
        """Forget everything defined or evidenced in ``file``."""
        self._version += 1
        for qid in self._by_file.pop(file, {}):
            node = self._nodes.pop(qid, None)
            if node is not None:
                self._tests.pop(qid, None)
                names = self._by_name.get(node.name)
                if names is not None:
                    names.discard(qid)
                    if not names:
                        del self._by_name[node.name]
        self._drop_edges(file)
        self._getattr_by_file.pop(file, None)
        self._computed_by_file.pop(file, None)
        self._registries_by_file.pop(file, None)
        refs = Counter(ref.name for ref in self._dynamic_by_file.pop(file, ()))
        _cut_runs(self._dynamic_by_name, refs, file)

    def _drop_edges(self, file: str) -> None:
        edges = self._edges_by_file.pop(file, [])
        if not edges:
            return
        _cut_runs(self._incoming, Counter(e.target for e in edges), file)
        _cut_runs(self._outgoing, Counter(e.source for e in edges), file)
        parents = Counter(_parent(e.target) for e in edges if e.kind in _MODULE_IMPORTS)
        _cut_runs(self._imports_by_parent, parents, file)

    def _drop_edges_of(self, files: list[str]) -> None:
        held = [file for file in files if self._edges_by_file.get(file)]
        if len(held) <= 1:  # the common case, one file re-resolved: as ``replace_edges``
            for file in held:
                self._drop_edges(file)
            return
        dropped = [self._edges_by_file.pop(file) for file in held]
        gone = set(held)
        every = [edge for edges in dropped for edge in edges]
        targets = {e.target for e in every}
        sources = {e.source for e in every}
        parents = {_parent(e.target) for e in every if e.kind in _MODULE_IMPORTS}
        for index, keys in (
            (self._incoming, targets),
            (self._outgoing, sources),
            (self._imports_by_parent, parents),
        ):
            for key in keys:
                bucket = index.get(key)
                if bucket is None:
                    continue
                bucket[:] = [e for e in bucket if e.file not in gone]
                if not bucket:
                    del index[key]

    @property
    def version(self) -> int:
        """A counter bumped by every change, so derived values can be cached per version."""
        return self._version

    def memo(
        self, key: str, build: Callable[[CodeGraph], _T], *, kinds: AbstractSet[EdgeKind]
    ) -> _T:
        """``build(graph)``, kept until the graph changes: an index derived from it (``key``
        names it) that every analysis would otherwise rebuild. ``kinds`` are the edge kinds it
        reads: an overlay whose extra edges hold none of them shares the viewed graph's value
        (built on that graph)."""
        held = self._memos.get(key)
        if held is not None and held[0] == self._version:
            return cast("_T", held[1])
        value = build(self)
        self._memos[key] = (self._version, value)
        return value

    def node(self, qid: str) -> Node | None:
        """The node with this qualname, if the current text defines it."""
        return self._nodes.get(QualName(qid))

    def nodes(self) -> Iterator[Node]:
        """Every node, in no particular order."""
        return iter(self._nodes.values())

    def edges(self) -> Iterator[Edge]:
        """Every edge, in no particular order."""
        for edges in self._edges_by_file.values():
            yield from edges

    def dynamic_refs(self) -> Iterator[DynamicRef]:
        """Every dynamic reference, in no particular order."""
        for refs in self._dynamic_by_file.values():
            yield from refs

    def files(self) -> list[str]:
        """Every file that defines a node or evidences an edge or a dynamic reference, sorted."""
        return sorted(set(self._by_file) | set(self._edges_by_file) | set(self._dynamic_by_file))

    def nodes_in_file(self, file: str) -> list[Node]:
        """The file's nodes in source order."""
        return sorted(self._by_file.get(file, {}).values(), key=lambda n: (n.span.line, n.id))

    def edges_in_file(self, file: str) -> list[Edge]:
        """The edges whose evidence lies in ``file``."""
        return list(self._edges_by_file.get(file, ()))

    def node_at(self, file: str, line: int) -> Node | None:
        """The innermost definition of ``file`` whose span contains ``line``."""
        best: Node | None = None
        for node in self._by_file.get(file, {}).values():
            end = node.span.end_line or node.span.line
            if node.span.line <= line <= end and (
                best is None or (node.span.line >= best.span.line and end <= _end(best))
            ):
                best = node
        return best

    def find_by_name(self, name: str) -> list[Node]:
        """Every node whose last dotted component is ``name``, sorted by id."""
        return sorted((self._nodes[q] for q in self._by_name.get(name, ())), key=lambda n: n.id)

    def dependents(
        self, target: str, *, kinds: Iterable[EdgeKind] | None = None, confirmed: bool = False
    ) -> list[Edge]:
        """Incoming edges of ``target``: what depends on it (callers, importers, subclasses…)."""
        return self._select(self._incoming_of(QualName(target)), kinds, confirmed)

    def dependencies(
        self, source: str, *, kinds: Iterable[EdgeKind] | None = None, confirmed: bool = False
    ) -> list[Edge]:
        """Outgoing edges of ``source``: what it depends on (callees, imports, bases…)."""
        return self._select(self._outgoing_of(QualName(source)), kinds, confirmed)

    def dependents_unordered(self, target: str) -> tuple[Edge, ...]:
        """Every incoming edge of ``target``, unsorted and unfiltered.

        For hot loops whose result does not depend on edge order (``dependents`` sorts, which
        costs more than the lookup itself on a large graph).
        """
        return tuple(self._incoming_of(QualName(target)))

    def dependencies_unordered(self, source: str) -> tuple[Edge, ...]:
        """Every outgoing edge of ``source``, unsorted and unfiltered (for hot loops)."""
        return tuple(self._outgoing_of(QualName(source)))

    def has_edge(self, *, source: str, target: str, kind: EdgeKind | None = None) -> bool:
        """Whether an edge (of ``kind``, if given) runs from ``source`` to ``target``."""
        return any(
            e.target == target and (kind is None or e.kind is kind)
            for e in self._outgoing_of(QualName(source))
        )

    def _select(
        self,
        edges: Iterable[Edge],
        kinds: Iterable[EdgeKind] | None,
        confirmed: bool,
        ordered: bool = True,
    ) -> list[Edge]:
        wanted = frozenset(kinds) if kinds is not None else None
        out = [e for e in edges if wanted is None or e.kind in wanted]
        if confirmed and self.confirmer is not None:
            out = [e for e in map(self._confirmed, out) if e is not None]
        return sorted(out, key=_edge_key) if ordered else out

    def _confirmed(self, edge: Edge) -> Edge | None:
        """``edge`` as the confirmer judges it: dropped if refuted, unmarked if confirmed."""
        if not edge.name_matched or self.confirmer is None:
            return edge
        verdict = self.confirmer(edge)
        if verdict is None:
            return edge
        return replace(edge, name_matched=False) if verdict else None

    def callers_of(self, qid: str, *, confirmed: bool = False, ordered: bool = True) -> list[Edge]:
        """Call edges into a function or method (unsorted unless ``ordered``: sorting cost a
        sixth of a reverse walk whose result does not depend on the order)."""
        return self._select(
            self._incoming_of(QualName(qid)), _CALL_KINDS, confirmed=confirmed, ordered=ordered
        )

    def sources_into(
        self, targets: Iterable[QualName], kinds: AbstractSet[EdgeKind], *, unrefuted: bool
    ) -> set[QualName]:
        """The sources of the edges of ``kinds`` into any of ``targets``; with ``unrefuted``, a
        name-matched edge the confirmer has already refuted is left out, and the confirmer is
        asked nothing new (its ``known(edge)`` answers from what it decided before; one
        without it is asked as usual).

        One call for a whole walk level: counting the entities 2 and 3 hops from
        ``QuerySet.filter`` asks about ~1,700 of them."""
        known = getattr(self.confirmer, "known", self.confirmer) if unrefuted else None
        found: set[QualName] = set()
        for target in targets:
            for edge in self._incoming_of(target):
                if edge.kind in kinds and (
                    known is None or not edge.name_matched or known(edge) is not False
                ):
                    found.add(edge.source)
        return found

    def targets_from(
        self, sources: Iterable[QualName], kinds: AbstractSet[EdgeKind]
    ) -> set[QualName]:
        """The targets of the edges of ``kinds`` out of any of ``sources``."""
        return {
            edge.target
            for source in sources
            for edge in self._outgoing_of(source)
            if edge.kind in kinds
        }

    def instantiations_of(self, qid: str) -> list[Edge]:
        """Instantiate edges into a class (calls of the class)."""
        return self.dependents(qid, kinds=(EdgeKind.INSTANTIATE,))

    def overriders_of(self, qid: str, *, ordered: bool = True) -> list[Edge]:
        """Override edges from methods that override ``qid`` (unsorted unless ``ordered``)."""
        return self._select(self._incoming_of(QualName(qid)), _OVERRIDES, False, ordered)

    def methods_overridden_by(self, qid: str, *, ordered: bool = True) -> list[Edge]:
        """Override edges from ``qid`` to the base methods it overrides (unsorted unless
        ``ordered``)."""
        return self._select(self._outgoing_of(QualName(qid)), _OVERRIDES, False, ordered)

    def subclasses_of(self, qid: str) -> list[Edge]:
        """Inherit edges from direct subclasses of ``qid``."""
        return self.dependents(qid, kinds=(EdgeKind.INHERIT,))

    def superclasses_of(self, qid: str) -> list[Edge]:
        """Inherit edges from ``qid`` to its direct bases."""
        return self.dependencies(qid, kinds=(EdgeKind.INHERIT,))

    def field_users_of(self, qid: str) -> list[Edge]:
        """Class-member edges reading or writing a field or module constant."""
        return self.dependents(qid, kinds=(EdgeKind.CLASS_MEMBER,))

    def tests_of(self, qid: str) -> list[Edge]:
        """Tests edges from tests that exercise ``qid`` directly."""
        return self.dependents(qid, kinds=(EdgeKind.TESTS,))

    def fixture_users_of(self, qid: str) -> list[Edge]:
        """Fixture edges from tests and fixtures that request the fixture ``qid``."""
        return self.dependents(qid, kinds=(EdgeKind.FIXTURE,))

    def importers_of(self, qid: str) -> list[Edge]:
        """Import, type-ref and re-export edges into ``qid``, following re-export chains.

        ``pkg/__init__.py`` re-exporting ``pkg.impl.f`` makes every importer of ``pkg.f`` an
        importer of ``pkg.impl.f`` too; the chain is followed transitively, cycles cut.
        """
        found = self.dependents_through_aliases([QualName(qid)], lambda e: e.kind in _IMPORT_KINDS)
        return sorted(set(found), key=_edge_key)

    def dependents_through_aliases(
        self, targets: Iterable[QualName], keep: Callable[[Edge], bool]
    ) -> Iterator[Edge]:
        """The incoming edges of ``targets`` that ``keep`` admits, and those of every name that
        re-exports one of them (``pkg.f`` for ``pkg.impl.f``), transitively, each name once.

        Only a kept re-export edge leads on to its alias. Unordered.
        """
        seen = set(targets)
        frontier = list(seen)
        while frontier:
            current = frontier.pop()
            for edge in self._incoming_of(current):
                if not keep(edge):
                    continue
                yield edge
                if edge.kind is EdgeKind.REEXPORT and edge.member:
                    alias = QualName(f"{edge.source}.{edge.member}")
                    if alias not in seen:
                        seen.add(alias)
                        frontier.append(alias)

    def module_importers_of(self, module: str) -> list[Edge]:
        """Import and re-export edges that import ``module`` or a name from it (unsorted).

        ``import m``, ``from m import x`` and ``from pkg import m`` all run ``m`` on import; the
        edge's source is the importing scope (a module for a module-level import).
        """
        qid = QualName(module)
        direct = [e for e in self._incoming_of(qid) if e.kind in _MODULE_IMPORTS]
        return [*direct, *self._imports_into(qid)]

    def _imports_into(self, parent: QualName) -> Iterable[Edge]:
        return self._imports_by_parent.get(parent, ())

    def modules(self) -> list[Node]:
        """Every module node, sorted by id."""
        return sorted((n for n in self._nodes.values() if n.kind is NodeKind.MODULE), key=_id)

    def overlaid(self, edges: Iterable[Edge]) -> CodeGraph:
        """A read-only view of this graph with ``edges`` added (those it already has are skipped).

        The view shares this graph's indexes, so it is cheap and sees later changes to them; it
        must not be patched (``replace_file`` and friends belong to the graph it views).
        """
        extra = self.lacking(edges)
        return _Overlay(self, extra) if extra else self

    def lacking(self, edges: Iterable[Edge]) -> list[Edge]:
        """The ones of ``edges`` this graph does not hold, in order, each once."""
        # one set per target, not a scan of its incoming list per edge: a dirty file's
        # baseline edges into a popular target (742 callers of QuerySet.filter) are many. Most
        # are the very objects the graph holds (files not re-resolved since the baseline was
        # read keep their edges), found by identity before any edge is hashed.
        same: dict[QualName, set[int]] = {}
        existing: dict[QualName, frozenset[Edge]] = {}
        extra: dict[Edge, None] = {}
        for edge in edges:
            ids = same.get(edge.target)
            if ids is None:
                ids = same[edge.target] = set(map(id, self._incoming_of(edge.target)))
            if id(edge) in ids:
                continue
            have = existing.get(edge.target)
            if have is None:
                have = existing[edge.target] = frozenset(self._incoming_of(edge.target))
            if edge not in have:
                extra[edge] = None
        return list(extra)

    def is_overlaid(self, edge: Edge) -> bool:
        """Whether ``edge`` is one of an overlay's extra edges (never, on a graph itself)."""
        return False

    def _incoming_of(self, target: QualName) -> Sequence[Edge]:
        return self._incoming.get(target, ())

    def _outgoing_of(self, source: QualName) -> Sequence[Edge]:
        return self._outgoing.get(source, ())

    def registries_in(self, file: str) -> list[DynamicRef]:
        """The stores into module-level registries that ``file``'s functions make."""
        return list(self._registries_by_file.get(file, ()))

    def registries(self) -> list[DynamicRef]:
        """Every store into a module-level registry that a function makes (a few per project)."""
        return _in_place_order(self._registries_by_file)

    def dynamic_refs_named(self, name: str) -> list[DynamicRef]:
        """Dynamic references whose string names ``name``."""
        return sorted(self._dynamic_by_name.get(name, ()), key=lambda r: (r.file, r.span.line))

    def module_getattr_refs(self) -> list[DynamicRef]:
        """Modules that define ``__getattr__`` and so may serve any name."""
        return _in_place_order(self._getattr_by_file)

    def computed_name_refs(self) -> list[DynamicRef]:
        """``getattr``-like lookups of a name computed around a literal (``"on_" + kind``)."""
        return _in_place_order(self._computed_by_file)

    def tests(self) -> list[Node]:
        """Every pytest test node, sorted by test id."""
        return sorted(self._tests.values(), key=lambda n: n.test_id or n.id)

    def stats(self) -> dict[str, int]:
        """Counts of nodes, edges and dynamic references."""
        return {
            "files": len(self.files()),
            "nodes": len(self._nodes),
            "edges": sum(len(e) for e in self._edges_by_file.values()),
            "dynamic": sum(len(r) for r in self._dynamic_by_file.values()),
        }


class _Overlay(CodeGraph):
    """``CodeGraph.overlaid``: the viewed graph's indexes plus a few extra edges."""

    def __init__(self, base: CodeGraph, extra: Sequence[Edge]) -> None:
        # Share every index of ``base`` (no copy), then layer the extra edges over the edge ones.
        self.__dict__.update(base.__dict__)
        self._base = base
        self._memos = {}  # never the viewed graph's: a view's values may differ from it
        self._extra_in: dict[QualName, list[Edge]] = defaultdict(list)
        self._extra_out: dict[QualName, list[Edge]] = defaultdict(list)
        self._extra_imports: dict[QualName, list[Edge]] = defaultdict(list)
        self._extra = tuple(extra)
        for edge in extra:
            self._extra_in[edge.target].append(edge)
            self._extra_out[edge.source].append(edge)
            if edge.kind in _MODULE_IMPORTS:
                self._extra_imports[_parent(edge.target)].append(edge)

    def _incoming_of(self, target: QualName) -> Sequence[Edge]:
        extra = self._extra_in.get(target)
        own = self._base._incoming_of(target)
        return [*own, *extra] if extra else own

    def _outgoing_of(self, source: QualName) -> Sequence[Edge]:
        extra = self._extra_out.get(source)
        own = self._base._outgoing_of(source)
        return [*own, *extra] if extra else own

    def _imports_into(self, parent: QualName) -> Iterable[Edge]:
        extra = self._extra_imports.get(parent)
        own = self._base._imports_into(parent)
        return [*own, *extra] if extra else own

    def memo(
        self, key: str, build: Callable[[CodeGraph], _T], *, kinds: AbstractSet[EdgeKind]
    ) -> _T:
        """The viewed graph's value unless an extra edge is of ``kinds``; then this view's own."""
        if not any(edge.kind in kinds for edge in self._extra):
            return self._base.memo(key, build, kinds=kinds)
        return super().memo(key, build, kinds=kinds)

    def is_overlaid(self, edge: Edge) -> bool:
        """Whether ``edge`` is one of this view's extra edges rather than the graph's own."""
        return edge in self._extra_in.get(edge.target, ())

    @property
    def version(self) -> int:
        """The viewed graph's version (the view itself never changes)."""
        return self._base.version

    def edges(self) -> Iterator[Edge]:
        """Every edge of the viewed graph, then the extra ones."""
        yield from self._base.edges()
        yield from self._extra

    def replace_file(self, *args: object, **kwargs: object) -> None:
        raise TypeError("an overlaid graph is a read-only view")

    replace_edges = remove_file = replace_file


def _parent(qid: str) -> QualName:
    return QualName(qid.rpartition(".")[0])


def _id(node: Node) -> str:
    return node.id


def _end(node: Node) -> int:
    return node.span.end_line or node.span.line


def _edge_key(edge: Edge) -> tuple[str, int, int, str, str, str]:
    return (edge.file, edge.span.line, edge.span.col, edge.kind.value, edge.source, edge.target)


def _cut_runs(index: dict[_K, list[_V]], counts: Mapping[_K, int], file: str) -> None:
    """Remove ``file``'s entries from the buckets of ``index`` named in ``counts`` (how many
    each bucket holds of them), dropping buckets left empty.

    A file's entries are one run in every bucket: each file's are added in one go, after its
    old ones were removed. The file being edited is the last one added, so its run ends the
    bucket and is cut in the time of its own length, where filtering read every bucket the
    file touches whole (``len``, ``isinstance``, a string literal's every use; an update of
    django's ``query.py`` took 51 ms with filtering, 45 ms with cutting). A run elsewhere (the
    first edit of a file) is filtered out.
    """
    for key, count in counts.items():
        bucket = index.get(key)
        if bucket is None:
            continue
        if len(bucket) == count:
            del index[key]
        elif len(bucket) > count and bucket[-count].file == file and bucket[-1].file == file:
            del bucket[-count:]
        else:
            bucket[:] = [entry for entry in bucket if entry.file != file]
            if not bucket:
                del index[key]


def _in_place_order(by_file: dict[str, list[DynamicRef]]) -> list[DynamicRef]:
    """Every reference of a per-file index, by file and line."""
    return sorted(
        (r for refs in by_file.values() for r in refs), key=lambda r: (r.file, r.span.line)
    )
