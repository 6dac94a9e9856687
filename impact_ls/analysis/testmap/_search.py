"""The widest-path search of the test map: from the starts to every entity that can run them.

``widest_paths(starts, graph, tests=..., min_conf=..., budget=...)`` settles entities in order of
decreasing confidence (a best-first search: each entity is expanded once, at its best value) and
stops after ``budget`` expansions, saying so. A path is a chain of the relations that can
*execute* a start (see the package docstring for the rule): backwards over ``tests``,
``fixture``, ``call``, ``instantiate``, ``inherit`` and ``class-member`` edges, from a re-exported
name to its alias, from a nested function or an implicitly called dunder to its container, and
forwards over ``override`` edges (a caller of the base method may dispatch to the override).
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
        for nxt, weight in _neighbours(qid, graph, tests):
            value = conf if conf < weight else weight
            if value >= min_conf and nxt not in best:
                heapq.heappush(heap, (-value, nxt))
    return Reach(best=best, expanded=expanded, cut=False)


def _neighbours(
    qid: QualName, graph: CodeGraph, tests: Mapping[QualName, object]
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
    yield from _container(qid, graph)


def _container(qid: QualName, graph: CodeGraph) -> Iterable[tuple[QualName, float]]:
    """A nested function runs when its enclosing one does; an implicit dunder, on any instance."""
    parent, _, name = qid.rpartition(".")
    if not parent:
        return ()
    holder = graph.node(parent)
    if holder is None:
        return ()
    if holder.kind in _NESTING:
        return ((QualName(parent), config.TEST_WEIGHT_CALL),)
    if holder.kind is NodeKind.CLASS and name in IMPLICIT_DUNDERS:
        return ((QualName(parent), config.TEST_WEIGHT_CALL),)
    return ()
