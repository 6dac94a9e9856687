"""Test impact (spec §3.5): which pytest tests each changed file can break, with a confidence.

Contract:
    input    the changes, the walk's members, the ``CodeGraph`` (the current state, with the
             dirty files' baseline incoming edges overlaid: ``graph/baseline.py``), pytest's
             ``Collection`` of it (``graph/collection.py``), ``min_conf`` (spec: 0.45),
             ``max_nodes`` (``config.MAX_TEST_NODES``: the search's budget) and the optional
             ``recorded`` coverage (``RecordedTests``). Without a collection, each test node
             stands for its defining id alone.
    output   ``TestMap``: every ``TestHit(file=<changed file>, test=<pytest node id>, conf,
             entity=<definition>, evidence, reason)``, sorted by file, then conf descending, then
             test id — never capped (a report may show fewer, ``Report.shown_tests``) — and the
             notes of a search the budget cut. ``format_test_map`` renders ``test_map.txt``.
    gate     a method-body change that cannot escape its function (classify's escape gate: only
             locals changed or renamed, only the docstring) selects no test.
    ids      every node id pytest collects for a reached test definition (inherited and imported
             test classes, unittest methods, the project's ``python_*`` options); a definition
             pytest does not collect (``__test__ = False``, outside ``testpaths``) yields
             nothing. A parametrized test is its function-level id.
    paths    the rule: a path is a chain of relations along which the change can *execute* —
             calls and instantiations (a test's own is a ``tests`` edge), fixtures, inheritance
             (a subclass instance runs the base's code), override dispatch (a caller of the base
             method may run the override), reads of a field, constant, function or class (the
             reader may call what it read: ``key=self._rank``, ``partial(Cls, ...)``), the
             enclosing function of a nested one, the class of an implicitly called dunder
             (``__eq__``, ``__iter__``, ``__exit__``…: any instance may run it), a re-exported
             alias (``pkg.f`` is ``pkg.impl.f``), a fixture that builds an instance whose
             class runs the method (``partial(Cls, …)``, a factory's inner builder), a mixin's
             ``self.m()`` on a subclass that combines it with the method's class. Starts: each
             change's entities (the walk
             seeds; for a constructor also its class) and the walk's members but those it
             reached only as importers. Importing a name
             is no path — it runs none of its code — except where the import itself breaks
             (below). Reaching a test class, a ``setUp``-like method, a test module's top level
             or a fixture selects the ids that run them (``_scopes.py``; a fixture only for
             the ids pytest gives it: the nearest definition of its name wins).
    breaks   an import-time break (``_breaks.py``: a removed name imported or used at import
             time, a decorator or module-level call that no longer binds, a module that does not
             parse) fails every test whose collection imports the broken module, transitively
             and through package ``__init__`` files: those ids get conf 1.0 and the reason.
    weights  tests 1.0 (fixture counts as tests), call 0.56 (instantiate, field and value reads,
             override, nesting and dunder containers count as calls), inherit 0.56, an alias hop
             1.0; an id reached through a test class, module or setup method is capped at
             contains 0.5.
    conf     the widest path: max over paths of the *smallest* edge weight on the path (spec
             §3.5's example — a two-hop CALLS chain scores 0.56 — is this bottleneck reading).
             A start scores 1.0.
    budget   the search expands each entity once, best first, and stops after ``max_nodes``
             expansions with a note: it is bounded by cost, never by a hop count.
    recorded with ``recorded`` (coverage stored by ``impact-ls record``), a test that executed a
             line of one of a file's starts is affected too: conf 1.0 for a changed entity,
             0.56 for one the walk reached; ``TestHit.evidence`` says which selected it.
    named    a changed file whose changes can be observed (not only added definitions) and
             reach no test by the rules above gets every id of its module's own test files —
             ``test_<module>.py``, ``<module>_test.py`` anywhere pytest collects (``_naming.py``)
             — at conf 0.5, evidence ``named``: the last resort for code only a registry, a
             template or a plugin lookup calls.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Protocol

from impact_ls import config
from impact_ls.analysis.relations import walk_seeds
from impact_ls.analysis.testmap._breaks import ImportBreaks, find_import_breaks
from impact_ls.analysis.testmap._naming import named_for, own_test_files
from impact_ls.analysis.testmap._scopes import conftest_ids, is_conftest, scope_ids
from impact_ls.analysis.testmap._search import widest_paths
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.graph.collection import Collection
from impact_ls.graph.fastinit import fast_init
from impact_ls.model import (
    Change,
    ChangeType,
    Evidence,
    Member,
    NodeKind,
    QualName,
    Relation,
    TestHit,
    TestId,
)

logger = logging.getLogger(__name__)

_CONSTRUCTORS = frozenset({"__init__", "__new__"})
# changes no test can observe yet (an added definition) or that a rule of their own covers (a
# file that does not parse: ``_add_breaks``); triage's ``TestedBy`` entries skip them too
UNOBSERVED = frozenset({ChangeType.ADD, ChangeType.INCOMPLETE})
_DECIMALS = 4


class RecordedTests(Protocol):
    """Recorded coverage as the test map reads it; ``impact_ls.record`` supplies it."""

    def tests_of(self, entities: AbstractSet[QualName]) -> Mapping[QualName, frozenset[TestId]]:
        """The tests that executed a line of each entity (only entities with some)."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class TestMap:
    """Every selected (changed file, test) pair, and what cut the search, if anything did."""

    __test__ = False  # not a pytest class, despite the name

    hits: tuple[TestHit, ...] = ()
    notes: tuple[str, ...] = ()
    truncated: bool = False


@dataclass(slots=True)
class _Picked:
    """One changed file's selection while it is assembled: id → conf, evidence, reason."""

    conf: dict[TestId, float]
    evidence: dict[TestId, Evidence]
    reason: dict[TestId, str]

    def add(self, test: TestId, conf: float, reason: str = "") -> None:
        if conf > self.conf.get(test, 0.0):
            self.conf[test] = conf
        self.evidence.setdefault(test, Evidence.STATIC)
        if reason:
            self.reason.setdefault(test, reason)


# thousands per analysis (django's ``timezone.now`` selects 3,800 ids)
_new_hit = fast_init(TestHit)


def map_tests(
    changes: Sequence[Change],
    members: Sequence[Member],
    graph: CodeGraph,
    *,
    min_conf: float,
    max_nodes: int = config.MAX_TEST_NODES,
    collection: Collection | None = None,
    recorded: RecordedTests | None = None,
) -> TestMap:
    """The tests each changed file reaches, with the widest-path confidence of §3.5."""
    by_seed: dict[QualName, set[QualName]] = defaultdict(set)
    for member in members:
        # an importer runs none of the imported code: import-time breaks are found apart
        if any(r is not Relation.IMPORTED_BY for r in member.relations):
            by_seed[member.seed].add(member.entity)
    by_file: dict[str, list[Change]] = defaultdict(list)
    for change in changes:
        if change.change_type is ChangeType.METHOD_BODY and not change.escapes:
            continue  # nothing outside the function can observe it: no test to re-run
        by_file[change.file].append(change)
    collected = collection or Collection.of_graph(graph)
    hits: list[TestHit] = []
    notes: list[str] = []
    for file in sorted(by_file):
        file_changes = by_file[file]
        seeds = _seeds(file_changes, graph)
        starts = set(seeds)
        for change in file_changes:
            starts.update(by_seed.get(change.entity, ()))
        breaks = find_import_breaks(file_changes, graph)
        picked, cut = _static(starts, breaks, graph, collected, min_conf=min_conf, budget=max_nodes)
        if cut:
            notes.append(_budget_note(file, max_nodes))
        _add_breaks(picked, breaks, graph, collected, file_changes)
        if recorded is not None:
            _add_recorded(recorded.tests_of(starts), seeds, picked, min_conf=min_conf)
        if not any(conf >= min_conf for conf in picked.conf.values()):
            _add_named(picked, file, file_changes, collected, min_conf=min_conf)
        hits.extend(
            _new_hit(
                file,
                test,
                round(conf, _DECIMALS),
                collected.definition_of(test),
                picked.evidence[test],
                picked.reason.get(test, ""),
            )
            for test, conf in picked.conf.items()
            if conf >= min_conf
        )
    hits.sort(key=lambda h: (h.file, -h.conf, h.test))
    return TestMap(hits=tuple(hits), notes=tuple(notes), truncated=bool(notes))


def _seeds(changes: Sequence[Change], graph: CodeGraph) -> set[QualName]:
    """The entities one file's changes start from: walk seeds, and a constructor's class."""
    seeds: set[QualName] = set()
    for change in changes:
        seeds.update(walk_seeds(change, graph))
        parent, _, name = change.entity.rpartition(".")
        constructor = change.change_type is ChangeType.CONSTRUCTOR or (
            change.change_type is ChangeType.DELETE and name in _CONSTRUCTORS
        )
        if constructor and parent:
            seeds.add(QualName(parent))
    return seeds


def _static(
    starts: set[QualName],
    breaks: ImportBreaks,
    graph: CodeGraph,
    collected: Collection,
    *,
    min_conf: float,
    budget: int,
) -> tuple[_Picked, bool]:
    """The ids the path search reaches from ``starts`` (and the break starts); whether it cut."""
    tests = collected.definitions()
    weights = dict.fromkeys(starts, 1.0)
    weights.update(dict.fromkeys(breaks.starts, 1.0))
    reach = widest_paths(weights, graph, tests=tests, min_conf=min_conf, budget=budget)
    picked = _Picked({}, {}, {})
    for qid, conf in reach.best.items():
        for test in tests.get(qid, ()):
            picked.add(test, conf)
        scoped = scope_ids(qid, graph, collected)
        if scoped:
            capped = min(conf, config.TEST_WEIGHT_CONTAINS)
            for test in scoped:
                picked.add(test, capped)
    return picked, reach.cut


def _add_breaks(
    picked: _Picked,
    breaks: ImportBreaks,
    graph: CodeGraph,
    collected: Collection,
    changes: Sequence[Change],
) -> None:
    """Every id of a test module or ``conftest.py`` that fails to import; conftest hooks."""
    for module, why in breaks.modules.items():
        node = graph.node(module)
        if node is None:
            continue
        reason = f"import-time break: {why}"
        if is_conftest(node.file):
            ids = collected.ids_below(node.file.rpartition("/")[0])
        elif node.file in collected.files:
            # nothing of a module that does not parse may be known: the file id stands for it
            ids = collected.ids_in(node.file) or (TestId(node.file),)
        else:
            continue
        for test in ids:
            picked.add(test, config.TEST_WEIGHT_TESTS, reason)
    for change in changes:
        if (
            change.change_type is ChangeType.INCOMPLETE
            and change.file in collected.files
            and not any(n.kind is NodeKind.MODULE for n in graph.nodes_in_file(change.file))
        ):
            picked.add(TestId(change.file), 1.0, f"{change.file} does not parse")
        hook = conftest_ids(change, graph, collected)
        for test in hook:
            picked.add(test, config.TEST_WEIGHT_TESTS, f"{change.file}: {change.entity} changed")


def _add_recorded(
    found: Mapping[QualName, frozenset[TestId]],
    seeds: AbstractSet[QualName],
    picked: _Picked,
    *,
    min_conf: float,
) -> None:
    """Union the tests that executed a start entity into one file's selection."""
    for entity, executed_by in found.items():
        weight = (
            config.TEST_WEIGHT_RECORDED if entity in seeds else config.TEST_WEIGHT_RECORDED_REACHED
        )
        if weight < min_conf:
            continue
        for test in executed_by:
            seen = picked.evidence.get(test)
            picked.evidence[test] = (
                Evidence.RECORDED if seen in (None, Evidence.RECORDED) else Evidence.BOTH
            )
            if weight > picked.conf.get(test, 0.0):
                picked.conf[test] = weight


def _add_named(
    picked: _Picked,
    file: str,
    changes: Sequence[Change],
    collected: Collection,
    *,
    min_conf: float,
) -> None:
    """Every id of the changed module's own test files (``_naming.py``), for a file whose
    changes reach no test: only a change that can be observed (not an added definition alone)."""
    weight = config.TEST_WEIGHT_NAMED
    if weight < min_conf or all(c.change_type in UNOBSERVED for c in changes):
        return
    for test_file in own_test_files(file, collected.files):
        reason = f"no path reaches a test of {file}; {test_file} is its own test file by name"
        for test in collected.ids_in(test_file):
            picked.add(test, weight, reason)
            picked.evidence[test] = Evidence.NAMED


def _budget_note(file: str, budget: int) -> str:
    return (
        f"{file}: the test search stopped after {budget} entities (max-test-nodes, or "
        "max-test-nodes-live in the editor); tests farther from the change may be missing"
    )


def format_test_map(hits: Sequence[TestHit]) -> str:
    """``test_map.txt``: one ``file test_id conf`` line per pair, in the given order."""
    return "".join(f"{h.file} {h.test} {h.conf!r}\n" for h in hits)


__all__ = [
    "UNOBSERVED",
    "RecordedTests",
    "TestMap",
    "format_test_map",
    "map_tests",
    "named_for",
]
