"""Test impact (spec §3.5): which pytest tests each changed file can break, with a confidence.

Contract:
    input    the changes, the walk's members, the current ``CodeGraph``, pytest's
             ``Collection`` of it (``graph/collection.py``), ``min_conf`` (spec: 0.45),
             ``max_pairs`` (spec: 256), ``max_hops`` (``config.MAX_TEST_HOPS``) and the
             optional ``recorded`` coverage (``RecordedTests``). Without a collection, each
             test node stands for its defining id alone (the path search by itself, as unit
             tests build it).
    output   ``TestHit(file=<changed file>, test=<pytest node id>, conf, entity=<definition>,
             evidence)`` sorted by file, then conf descending, then test id; ``format_test_map``
             renders ``test_map.txt``.
    gate     a method-body change that cannot escape its function (classify's escape gate: only
             locals changed or renamed, only the docstring) selects no test.
    ids      every node id pytest collects for a reached test definition: an inherited test
             once per collecting subclass (``tests/test_b.py::TestB::test_x`` runs
             ``TestA.test_x``), a test class imported into another test module once more
             there, unittest ``TestCase`` methods, tests named by the project's
             ``python_functions``/``python_classes``; a definition pytest does not collect
             (``__test__ = False``, outside ``testpaths``) yields nothing. A parametrized test
             is its function-level id, which pytest runs with every parametrization.
    paths    a test is affected by a changed file iff a path of at most ``max_hops`` edges leads
             from one of its changes' entities (the walk seeds; for a constructor also its class)
             or from one of those changes' members to the test. A path runs against the
             dependency direction over ``tests``, ``fixture``, ``call``, ``instantiate``,
             ``inherit``, ``import`` and ``reexport`` edges (``pkg/__init__`` re-exporting
             ``f`` continues at the alias ``pkg.f``), and along ``contains`` edges from a
             container to what it contains (a test module that imports the entity reaches its
             tests).
    weights  tests 1.0 (fixture counts as tests, and so does a call or instantiation made by a
             collected test definition, such as a unittest method the extractor did not mark
             as a test), call 0.56 (instantiate is a call), inherit 0.56, contains 0.5,
             import 0.45 (reexport is an import).
    conf     the widest path: max over paths of the *smallest* edge weight on the path. A direct
             ``tests`` edge scores 1.0; a test that calls a helper that calls the entity scores
             min(1.0, 0.56) = 0.56; a test module that only imports it, min(0.45, 0.5) = 0.45.
             (Spec §3.5 says "max single-edge weight" but its own example — a two-hop CALLS
             chain scores 0.56 although the test's own edge is a TESTS edge — is the bottleneck
             reading, which is what is implemented.) A start that is itself a test scores 1.0.
    recorded with ``recorded`` (coverage stored by ``impact-ls record``), a test that executed a
             line of one of a file's starts (the entities above) is affected too: conf 1.0 for
             a changed entity (``TEST_WEIGHT_RECORDED``), 0.56 for one the walk reached; a class
             or function counts with what is nested in it. Each hit says whether a static path, the
             recording or both selected it (``TestHit.evidence``); conf is the higher one.
    caps     hits below ``min_conf`` are dropped; beyond ``max_pairs`` the highest-confidence
             pairs are kept (ties by file, then test id). Confidences have 4 decimals.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Protocol

from impact_ls import config
from impact_ls.analysis.relations import walk_seeds
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.graph.collection import Collection
from impact_ls.model import (
    Change,
    ChangeType,
    EdgeKind,
    Evidence,
    Member,
    QualName,
    TestHit,
    TestId,
)

logger = logging.getLogger(__name__)

_BACKWARD: dict[EdgeKind, float] = {
    EdgeKind.TESTS: config.TEST_WEIGHT_TESTS,
    EdgeKind.FIXTURE: config.TEST_WEIGHT_TESTS,
    EdgeKind.CALL: config.TEST_WEIGHT_CALL,
    EdgeKind.INSTANTIATE: config.TEST_WEIGHT_CALL,
    EdgeKind.INHERIT: config.TEST_WEIGHT_INHERIT,
    EdgeKind.IMPORT: config.TEST_WEIGHT_IMPORT,
    EdgeKind.REEXPORT: config.TEST_WEIGHT_IMPORT,
}
_FORWARD: dict[EdgeKind, float] = {EdgeKind.CONTAINS: config.TEST_WEIGHT_CONTAINS}
_CALLS = frozenset({EdgeKind.CALL, EdgeKind.INSTANTIATE})
_CONSTRUCTORS = frozenset({"__init__", "__new__"})
_DECIMALS = 4


class RecordedTests(Protocol):
    """Recorded coverage as the test map reads it; ``impact_ls.record`` supplies it."""

    def tests_of(self, entities: AbstractSet[QualName]) -> Mapping[QualName, frozenset[TestId]]:
        """The tests that executed a line of each entity (only entities with some)."""
        ...


def map_tests(
    changes: Sequence[Change],
    members: Sequence[Member],
    graph: CodeGraph,
    *,
    min_conf: float,
    max_pairs: int,
    max_hops: int = config.MAX_TEST_HOPS,
    collection: Collection | None = None,
    recorded: RecordedTests | None = None,
) -> tuple[TestHit, ...]:
    """The tests each changed file reaches, with the widest-path confidence of §3.5."""
    by_seed: dict[QualName, set[QualName]] = defaultdict(set)
    for member in members:
        by_seed[member.seed].add(member.entity)
    starts_by_file: dict[str, set[QualName]] = defaultdict(set)
    seeds_by_file: dict[str, set[QualName]] = defaultdict(set)
    for change in changes:
        if change.change_type is ChangeType.METHOD_BODY and not change.escapes:
            continue  # nothing outside the function can observe it: no test to re-run
        seeds = seeds_by_file[change.file]
        seeds.update(walk_seeds(change, graph))
        parent, _, name = change.entity.rpartition(".")
        if change.change_type is ChangeType.CONSTRUCTOR and name in _CONSTRUCTORS and parent:
            seeds.add(QualName(parent))
        starts_by_file[change.file].update(seeds, by_seed.get(change.entity, ()))
    collected = collection or Collection.of_graph(graph)
    tests = collected.definitions()
    hits: list[TestHit] = []
    for file in sorted(starts_by_file):
        best = _widest(
            starts_by_file[file], graph, tests=tests, min_conf=min_conf, max_hops=max_hops
        )
        # one id runs one definition, so each id's confidence is its definition's
        per_test = {
            test_id: best[qid] for qid in best.keys() & tests.keys() for test_id in tests[qid]
        }
        evidence = dict.fromkeys(per_test, Evidence.STATIC)
        if recorded is not None:
            found = recorded.tests_of(starts_by_file[file])
            _add_recorded(found, seeds_by_file[file], per_test, evidence, min_conf=min_conf)
        hits.extend(
            TestHit(
                file=file,
                test=test,
                conf=round(conf, _DECIMALS),
                entity=collected.definition_of(test),
                evidence=evidence[test],
            )
            for test, conf in per_test.items()
        )
    kept = sorted(hits, key=lambda h: (-h.conf, h.file, h.test))[:max_pairs]
    if len(kept) < len(hits):
        logger.debug("test map capped: %d of %d pairs kept", len(kept), len(hits))
    return tuple(sorted(kept, key=lambda h: (h.file, -h.conf, h.test)))


def _add_recorded(
    found: Mapping[QualName, frozenset[TestId]],
    seeds: AbstractSet[QualName],
    per_test: dict[TestId, float],
    evidence: dict[TestId, Evidence],
    *,
    min_conf: float,
) -> None:
    """Union the tests that executed a start entity into one file's ``per_test``."""
    for entity, executed_by in found.items():
        weight = (
            config.TEST_WEIGHT_RECORDED if entity in seeds else config.TEST_WEIGHT_RECORDED_REACHED
        )
        if weight < min_conf:
            continue
        for test in executed_by:
            seen = evidence.get(test)
            evidence[test] = (
                Evidence.RECORDED if seen in (None, Evidence.RECORDED) else Evidence.BOTH
            )
            per_test[test] = max(per_test.get(test, 0.0), weight)


def format_test_map(hits: Sequence[TestHit]) -> str:
    """``test_map.txt``: one ``file test_id conf`` line per pair, in the given order."""
    return "".join(f"{h.file} {h.test} {h.conf!r}\n" for h in hits)


def _widest(
    starts: set[QualName],
    graph: CodeGraph,
    *,
    tests: Mapping[QualName, tuple[TestId, ...]],
    min_conf: float,
    max_hops: int,
) -> dict[QualName, float]:
    """Best bottleneck weight of any path of ≤ ``max_hops`` edges from ``starts`` to each node.

    Nodes first reached by the last hop are kept only when they are ``tests``: nothing walks on
    from them, and only tests are read from the result (the last hop is the widest on django).
    """
    best = dict.fromkeys(starts, 1.0)
    frontier = dict(best)
    for hop in range(1, max_hops + 1):
        last = hop == max_hops
        improved: dict[QualName, float] = {}
        # Each node keeps the maximum over all paths, so visiting order cannot change the
        # result: unsorted edges and frontier (sorting them dominated the cost on django).
        for qid, conf in frontier.items():
            for nxt, weight in _neighbours(qid, graph, tests):
                value = conf if conf < weight else weight
                # min() never grows along a path, so a value under the floor is a dead end.
                if value < min_conf or (last and nxt not in tests):
                    continue
                if value <= best.get(nxt, 0.0):
                    continue
                if value > improved.get(nxt, 0.0):
                    improved[nxt] = value
        if not improved:
            break
        best.update(improved)
        frontier = improved
    return best


def _neighbours(
    qid: QualName, graph: CodeGraph, tests: Mapping[QualName, object]
) -> Iterator[tuple[QualName, float]]:
    for edge in graph.dependents_unordered(qid):
        weight = _BACKWARD.get(edge.kind)
        if weight is None:
            continue
        if edge.kind in _CALLS and edge.source in tests:
            # a collected test calling the entity is a ``tests`` edge, whatever its node kind
            weight = config.TEST_WEIGHT_TESTS
        if edge.kind is EdgeKind.REEXPORT and edge.member:
            yield QualName(f"{edge.source}.{edge.member}"), weight
        else:
            yield edge.source, weight
    for edge in graph.dependencies_unordered(qid):
        weight = _FORWARD.get(edge.kind)
        if weight is not None:
            yield edge.target, weight
