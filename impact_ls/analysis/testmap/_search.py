"""The widest-path search of the test map: from the starts to every entity that can run them.

``widest_paths(starts, graph, tests=..., min_conf=..., budget=...)`` settles entities in order of
decreasing confidence (a best-first search: each entity is expanded once, at its best value) and
stops after ``budget`` expansions, saying so. A path is a chain of the relations that can
*execute* a start (see the package docstring for the rule): backwards over ``tests``,
``fixture``, ``call``, ``instantiate``, ``inherit`` and ``class-member`` edges, from a re-exported
name to its alias, from a nested function or an implicitly called dunder to its container, and
forwards over ``override`` edges (a caller of the base method may dispatch to the override), and
from a method to the fixtures that build its class and to a mixin's ``self.m()`` calls
(``_through_subclasses``).
Imports are not paths: importing a name runs none of its code (import-time breaks are found apart,
``_breaks.py``).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from impact_ls import config
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import EdgeKind, NodeKind, QualName

_BACKWARD: dict[EdgeKind, float] = {
    EdgeKind.TESTS: config.TEST_WEIGHT_TESTS,
    EdgeKind.FIXTURE: config.TEST_WEIGHT_TESTS,
    EdgeKind.CALL: config.TEST_WEIGHT_CALL,
    EdgeKind.INSTANTIATE: config.TEST_WEIGHT_CALL,
    EdgeKind.INHERIT: config.TEST_WEIGHT_INHERIT,
    # a read of a field, a constant, or of a function or class handed on as a value
    # (``key=self._rank``, ``partial(Cls, ...)``): the reader may use what was read
    EdgeKind.CLASS_MEMBER: config.TEST_WEIGHT_CALL,
}
_CALLS = frozenset({EdgeKind.CALL, EdgeKind.INSTANTIATE})
_NESTING = frozenset({NodeKind.FUNCTION, NodeKind.METHOD, NodeKind.TEST, NodeKind.FIXTURE})
_PROPERTIES = frozenset({"property", "cached_property"})
# incoming edges that are no use of a method: its class holding it, an override of it
_NOT_USES = frozenset({EdgeKind.CONTAINS, EdgeKind.OVERRIDE})
# how a fixture builds an instance: calls the class, or hands it on (``partial(Cls, …)``)
_BUILDS = frozenset({EdgeKind.INSTANTIATE, EdgeKind.CLASS_MEMBER})
_FAMILY_KINDS = _BUILDS | {EdgeKind.INHERIT}  # what ``_Families`` reads
# subclasses looked at per reached method: its cost bound in a hierarchy as wide as django's
# ``Field`` (mixins are combined near the class they serve)
_MAX_SUBCLASSES = 32

# Methods Python calls without a call expression naming them (operators, protocols, builtins
# such as ``len``/``str``/``iter``, ``with``, descriptors): the graph sees few of their sites, so
# reaching one reaches its class — every instance may run it.
IMPLICIT_DUNDERS = frozenset(
    {
        "__abs__", "__add__", "__aenter__", "__aexit__", "__aiter__", "__and__", "__anext__",
        "__await__", "__bool__", "__bytes__", "__call__", "__ceil__", "__complex__",
        "__contains__", "__copy__", "__deepcopy__", "__del__", "__delattr__", "__delete__",
        "__delitem__", "__dir__", "__divmod__", "__enter__", "__eq__", "__exit__", "__float__",
        "__floor__", "__floordiv__", "__format__", "__fspath__", "__ge__", "__get__",
        "__getattr__", "__getattribute__", "__getitem__", "__getnewargs__",
        "__getnewargs_ex__", "__getstate__", "__gt__", "__hash__", "__iadd__", "__iand__",
        "__ifloordiv__", "__ilshift__", "__imatmul__", "__imod__", "__imul__", "__index__",
        "__init_subclass__", "__int__", "__invert__", "__ior__", "__ipow__", "__irshift__",
        "__isub__", "__iter__", "__itruediv__", "__ixor__", "__le__", "__len__",
        "__length_hint__", "__lshift__", "__lt__", "__matmul__", "__missing__", "__mod__",
        "__mul__", "__ne__", "__neg__", "__next__", "__or__", "__pos__", "__pow__",
        "__radd__", "__rand__", "__rdivmod__", "__reduce__", "__reduce_ex__", "__repr__",
        "__reversed__", "__rfloordiv__", "__rlshift__", "__rmatmul__", "__rmod__", "__rmul__",
        "__ror__", "__round__", "__rpow__", "__rrshift__", "__rshift__", "__rsub__",
        "__rtruediv__", "__rxor__", "__set__", "__set_name__", "__setattr__", "__setitem__",
        "__setstate__", "__sizeof__", "__str__", "__sub__", "__truediv__", "__trunc__",
        "__xor__", "__class_getitem__", "__post_init__",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Reach:
    """Each reached entity's best confidence; ``cut`` when the budget stopped the search."""

    best: Mapping[QualName, float]
    expanded: int
    cut: bool


def widest_paths(
    starts: Mapping[QualName, float],
    graph: CodeGraph,
    *,
    tests: Mapping[QualName, object],
    min_conf: float,
    budget: int,
) -> Reach:
    """Best bottleneck confidence of any execution path from ``starts`` to each entity.

    Best-first: an entity is expanded once, at its highest value (bottleneck values only fall
    along a path, so the first time it is popped is its best). Ties pop by qualname, so the
    entities a cut leaves out do not depend on dictionary order.
    """
    best: dict[QualName, float] = {}
    heap = [(-conf, qid) for qid, conf in starts.items() if conf >= min_conf]
    heapq.heapify(heap)
    expanded = 0
    families = graph.memo("testmap.families", _Families, kinds=_FAMILY_KINDS)
    while heap:
        negative, qid = heapq.heappop(heap)
        if qid in best:
            continue
        conf = -negative
        best[qid] = conf
        if expanded >= budget:
            # the budget is spent: what is still queued counts as reached, nothing goes on
            for left, name in heap:
                if -left > best.get(name, 0.0):
                    best[name] = -left
            return Reach(best=best, expanded=expanded, cut=True)
        expanded += 1
        for nxt, weight in _neighbours(qid, graph, tests, families):
            value = conf if conf < weight else weight
            if value >= min_conf and nxt not in best:
                heapq.heappush(heap, (-value, nxt))
    return Reach(best=best, expanded=expanded, cut=False)


def _neighbours(
    qid: QualName,
    graph: CodeGraph,
    tests: Mapping[QualName, object],
    families: _Families,
) -> Iterator[tuple[QualName, float]]:
    for edge in graph.dependents_unordered(qid):
        if edge.kind is EdgeKind.REEXPORT:
            if edge.member:  # ``pkg.f`` is ``pkg.impl.f``: the same object under another name
                yield QualName(f"{edge.source}.{edge.member}"), config.TEST_WEIGHT_TESTS
            continue
        weight = _BACKWARD.get(edge.kind)
        if weight is None:
            continue
        if edge.kind in _CALLS and edge.source in tests:
            # a collected test calling the entity is a ``tests`` edge, whatever its node kind
            weight = config.TEST_WEIGHT_TESTS
        yield edge.source, weight
    for edge in graph.dependencies_unordered(qid):
        if edge.kind is EdgeKind.OVERRIDE:
            yield edge.target, config.TEST_WEIGHT_CALL
    if qid not in tests:  # pytest runs a collected test itself, not through its class
        yield from _container(qid, graph, families)
    yield from _through_subclasses(qid, graph, families)


def _through_subclasses(
    qid: QualName, graph: CodeGraph, families: _Families
) -> Iterator[tuple[QualName, float]]:
    """Where a method of class ``C`` runs on an instance no call site names as a ``C``.

    A fixture that builds a ``C`` (or a subclass) hands the test an object whose calls the graph
    may not resolve (``functools.partial(C, …)``, a factory, an overridden fixture): the
    fixture — or the fixture a builder is nested in — is a path to the method. And a mixin ``M``
    combined with ``C`` in a subclass calls ``self.m()`` that it does not define: the graph
    names that target ``M.m``, a qualname with no node: its callers may run ``C.m``.
    """
    parent, _, name = qid.rpartition(".")
    holder = graph.node(parent) if parent else None
    if holder is None or holder.kind is not NodeKind.CLASS:
        return
    node = graph.node(qid)
    if node is not None and node.kind is not NodeKind.METHOD:
        return
    for klass in families.inheriting(holder.id, name):
        for fixture in families.builders(klass):
            yield fixture, config.TEST_WEIGHT_CALL
    for base in families.cobases(holder.id):
        virtual = QualName(f"{base}.{name}")
        if graph.node(virtual) is not None:
            continue
        # the sites that call ``self.m()`` there, not the name itself: it holds nothing
        for edge in graph.dependents_unordered(virtual):
            if edge.kind in _CALLS:
                yield edge.source, config.TEST_WEIGHT_CALL


class _Families:
    """Each class's direct subclasses, transitive bases and building fixtures, computed once
    per graph version (``CodeGraph.memo``): every search reaches methods of the same classes."""

    def __init__(self, graph: CodeGraph) -> None:
        self._graph = graph
        self._subclasses: dict[QualName, tuple[QualName, ...]] = {}
        self._bases: dict[QualName, tuple[QualName, ...]] = {}
        self._builders: dict[QualName, tuple[QualName, ...]] = {}
        self._cobases: dict[QualName, tuple[QualName, ...]] = {}
        self._inheriting: dict[tuple[QualName, str], tuple[QualName, ...]] = {}

    def inheriting(self, klass: QualName, name: str) -> tuple[QualName, ...]:
        """``klass`` and the classes that inherit ``name`` from it (not those overriding it,
        nor their subclasses), nearest first, at most ``_MAX_SUBCLASSES``."""
        found = self._inheriting.get((klass, name))
        if found is None:
            found = self._inheriting[(klass, name)] = tuple(self._inheritors(klass, name))
        return found

    def _inheritors(self, klass: QualName, name: str) -> list[QualName]:
        graph = self._graph
        out = [klass]
        seen = {klass}
        index = 0
        while index < len(out) and len(out) < _MAX_SUBCLASSES:
            for sub in self._direct_subclasses(out[index]):
                if sub not in seen:
                    seen.add(sub)
                    if graph.node(QualName(f"{sub}.{name}")) is None:
                        out.append(sub)
                        if len(out) >= _MAX_SUBCLASSES:
                            return out
            index += 1
        return out

    def cobases(self, klass: QualName) -> tuple[QualName, ...]:
        """The other bases (transitively) of ``klass``'s subclasses: the mixins it is combined
        with, once per class (a virtual ``M.m`` with no callers costs a lookup only)."""
        found = self._cobases.get(klass)
        if found is None:
            family = [klass]
            seen = {klass}
            index = 0
            while index < len(family) < _MAX_SUBCLASSES:
                for sub in self._direct_subclasses(family[index]):
                    if sub not in seen and len(family) < _MAX_SUBCLASSES:
                        seen.add(sub)
                        family.append(sub)
                index += 1
            out: list[QualName] = []
            for sub in family[1:]:
                for base in self.bases(sub):
                    if base not in seen:
                        seen.add(base)
                        out.append(base)
            found = self._cobases[klass] = tuple(out)
        return found

    def _direct_subclasses(self, klass: QualName) -> tuple[QualName, ...]:
        found = self._subclasses.get(klass)
        if found is None:
            found = tuple(
                e.source
                for e in self._graph.dependents_unordered(klass)
                if e.kind is EdgeKind.INHERIT
            )
            self._subclasses[klass] = found
        return found

    def bases(self, klass: QualName) -> tuple[QualName, ...]:
        """Every class ``klass`` inherits from, transitively."""
        found = self._bases.get(klass)
        if found is None:
            seen = {klass}
            frontier = [klass]
            out: list[QualName] = []
            while frontier:
                current = frontier.pop()
                for edge in self._graph.dependencies_unordered(current):
                    if edge.kind is EdgeKind.INHERIT and edge.target not in seen:
                        seen.add(edge.target)
                        frontier.append(edge.target)
                        out.append(edge.target)
            found = self._bases[klass] = tuple(out)
        return found

    def builders(self, klass: QualName) -> tuple[QualName, ...]:
        """The fixtures that instantiate ``klass`` or hand it on, directly or in a builder."""
        found = self._builders.get(klass)
        if found is None:
            out: dict[QualName, None] = {}
            for edge in self._graph.dependents_unordered(klass):
                if edge.kind in _BUILDS:
                    fixture = _fixture_of(edge.source, self._graph)
                    if fixture is not None:
                        out[fixture] = None
            found = self._builders[klass] = tuple(out)
        return found


def _fixture_of(qid: QualName, graph: CodeGraph) -> QualName | None:
    """The fixture ``qid`` is or is nested in (a factory's inner builder), else None."""
    current = qid
    while current:
        node = graph.node(current)
        if node is not None and node.kind is NodeKind.FIXTURE:
            return current
        if node is not None and node.kind not in _NESTING:
            return None
        current = QualName(current.rpartition(".")[0])
    return None


def _container(
    qid: QualName, graph: CodeGraph, families: _Families
) -> Iterable[tuple[QualName, float]]:
    """A nested function runs when its enclosing one does; a method run without a call the graph
    sees — an implicitly called dunder, a property, a method nothing is seen to use (a class-body
    alias such as ``x = property(_get, _set)``, a callback, a receiver of unknown type) — runs
    on any instance of its class."""
    parent, _, name = qid.rpartition(".")
    if not parent:
        return ()
    holder = graph.node(parent)
    if holder is None:
        return ()
    if holder.kind in _NESTING:
        return ((QualName(parent), config.TEST_WEIGHT_CALL),)
    node = graph.node(qid)  # None for a method the edit deleted: its class still ran it
    if node is not None and node.kind is not NodeKind.METHOD:
        return ()  # a test or fixture in a class is run by pytest, not through an instance
    if holder.kind is not NodeKind.CLASS:
        return ()
    if name in IMPLICIT_DUNDERS or _is_property(graph, qid):
        return ((QualName(parent), config.TEST_WEIGHT_CALL),)
    incoming = graph.dependents_unordered(qid)
    if not all(e.kind in _NOT_USES for e in incoming):
        return ()
    if not any(e.kind is EdgeKind.OVERRIDE for e in incoming):
        return ((QualName(parent), config.TEST_WEIGHT_CALL),)
    # overridden: only instances of the classes that inherit this very method run it — what
    # uses those classes, not the class node (whose subclasses, the overriders, would follow)
    return [
        (edge.source, config.TEST_WEIGHT_CALL)
        for klass in families.inheriting(holder.id, name)
        for edge in graph.dependents_unordered(klass)
        if edge.kind in _BACKWARD and edge.kind is not EdgeKind.INHERIT
    ]


def _is_property(graph: CodeGraph, qid: QualName) -> bool:
    node = graph.node(qid)
    return node is not None and any(
        d.rsplit(".", 1)[-1] in _PROPERTIES or d.endswith((".setter", ".deleter"))
        for d in node.decorators
    )
