"""The pipeline, stated once: classify → relations → walk → binding → hidden → cochange → testmap
→ rank → triage → batch → dag → nextedit ⇒ Report.

Contract: ``analyze`` takes the current ``CodeGraph``, pytest's ``Collection`` of it (the node ids
each test definition runs under; without one, the collection is modelled with pytest's default
options), each dirty file's baseline and current text, ``Settings``, a co-change lookup, optional
recorded coverage (``testmap.RecordedTests``) and an optional completion client, and returns the
``Report`` plus the ``test_map.txt`` text. It reads no file, clock or environment itself (the
co-change and recorded lookups are the caller's); the same input gives the same report. The walk
starts from the *baseline* entity (a deleted or renamed function still finds its callers through
dangling edges); the graph is the current state.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from impact_ls.analysis.batch import build_batches
from impact_ls.analysis.binding import bind_sites
from impact_ls.analysis.classify import classify_changes
from impact_ls.analysis.dag import build_dag
from impact_ls.analysis.hidden import find_hidden_channels
from impact_ls.analysis.nextedit import CompletionClient, decide_next_edits, next_action
from impact_ls.analysis.rank import Ranked, rank_members
from impact_ls.analysis.testmap import RecordedTests, TestMap, format_test_map, map_tests
from impact_ls.analysis.triage import TestedSite, triage_members
from impact_ls.analysis.walk import WalkResult, walk_dependents
from impact_ls.config import Settings
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.graph.collection import Collection, collected_ids
from impact_ls.graph.pytest_config import PytestConfig
from impact_ls.model import (
    Audit,
    Batch,
    Change,
    ChangeType,
    CoChange,
    Dag,
    Member,
    NextEdits,
    QualName,
    Report,
    TestHit,
    Triage,
    Unanalyzable,
)

logger = logging.getLogger(__name__)

CoChangeLookup = Callable[[Sequence[str], str], tuple[CoChange, ...]]

_VERIFIED = (
    "change types from parso trees of baseline and current text; callers, overriders, "
    "instantiations, importers and field users from resolved graph edges; binding of each "
    "distance-1 call site's arguments to the new signature"
)
_HEURISTIC = (
    "name-matched call candidates (receiver type unknown), sites beyond distance 1, lexical "
    "ranking, git co-change scores, test confidence by path weight, next-edit order"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceChange:
    """A dirty file: its module name and its baseline and current text."""

    file: str
    module: str
    before: str
    after: str


def analyze(
    *,
    graph: CodeGraph,
    sources: Sequence[SourceChange],
    settings: Settings,
    cochange_of: CoChangeLookup | None = None,
    root: str = ".",
    base: str = "HEAD",
    llm: CompletionClient | None = None,
    notes: Sequence[str] = (),
    collection: Collection | None = None,
    recorded: RecordedTests | None = None,
) -> tuple[Report, str]:
    """Run every stage in order and return the report and the ``test_map.txt`` text."""
    if collection is None:
        collection = collected_ids(graph, PytestConfig())
    classified = _classify(sources, settings)
    changes = classified.changes
    walked = _walk(changes, graph, settings)
    breaks = bind_sites(walked.members, changes, graph)
    hidden = _hidden(changes, graph)
    cochange = _cochange(changes, sources, cochange_of, graph)
    tested = _map_tests(changes, walked, graph, settings, collection=collection, recorded=recorded)
    ranked = _rank(changes, walked, graph, cochange, _test_conf(tested.selection))
    partners = {c.file: c.score for c in cochange}
    triage = triage_members(
        ranked,
        changes,
        breaks=breaks,
        hidden=hidden,
        settings=settings,
        cochange=partners,
        tested=_tested_sites(tested.selection, graph),
    )
    batches = _batch(triage, changes, graph, settings)
    dag = _dag(changes, triage, batches, tested.shown, graph=graph, settings=settings)
    next_edits = decide_next_edits(changes, dag, triage, batches, client=llm)
    noted = (*notes, *classified.notes, *walked.notes, *tested.notes)
    audit = _audit(noted, classified, walked, dag, tests_cut=tested.truncated)
    found = _Findings(changes, triage, batches, tested, cochange, hidden, dag, next_edits)
    return _report(found, root=root, base=base, audit=audit), format_test_map(tested.selection)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Classified:
    changes: tuple[Change, ...]
    notes: tuple[str, ...]
    truncated: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class _Walked:
    members: tuple[Member, ...]
    by_seed: Mapping[QualName, tuple[Member, ...]]
    notes: tuple[str, ...]
    truncated: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class _Tested:
    selection: tuple[TestHit, ...]  # every selected pair
    shown: tuple[TestHit, ...]  # the pairs the report lists
    notes: tuple[str, ...]
    truncated: bool
    cut: bool  # the search stopped at its budget


@dataclass(frozen=True, slots=True)
class _Findings:
    changes: tuple[Change, ...]
    triage: Triage
    batches: tuple[Batch, ...]
    tested: _Tested
    cochange: tuple[CoChange, ...]
    hidden: tuple[Unanalyzable, ...]
    dag: Dag
    next_edits: NextEdits


def _classify(sources: Sequence[SourceChange], settings: Settings) -> _Classified:
    changes: list[Change] = []
    for source in sources:
        if source.before == source.after:
            continue
        changes.extend(
            classify_changes(
                file=source.file,
                module=source.module,
                before=source.before,
                after=source.after,
                max_changes=settings.max_changes,
            )
        )
    changes.sort(key=lambda c: (c.file, c.line_range, c.entity))
    notes: list[str] = []
    truncated = len(changes) > settings.max_changes
    if truncated:
        notes.append(f"{len(changes)} changes; analyzed the first {settings.max_changes}")
        changes = changes[: settings.max_changes]
    if any(c.change_type is ChangeType.INCOMPLETE for c in changes):
        notes.append("part of the edit does not parse yet; its region is reported as incomplete")
    return _Classified(changes=tuple(changes), notes=tuple(notes), truncated=truncated)


def _walk(changes: Sequence[Change], graph: CodeGraph, settings: Settings) -> _Walked:
    members: list[Member] = []
    by_seed: dict[QualName, list[Member]] = {}
    notes: list[str] = []
    truncated = False
    for change in changes:
        walk = walk_dependents(
            change, graph, max_depth=settings.max_depth, max_nodes=settings.max_walk_nodes
        )
        if walk.truncated:
            truncated = True
            notes.append(_cap_note(change, walk, settings.max_walk_nodes))
        members.extend(walk.members)
        by_seed.setdefault(change.entity, []).extend(walk.members)
    return _Walked(
        members=tuple(members),
        by_seed={seed: tuple(found) for seed, found in by_seed.items()},
        notes=tuple(notes),
        truncated=truncated,
    )


def _cap_note(change: Change, walk: WalkResult, cap: int) -> str:
    if walk.omitted_direct:
        return (
            f"{change.entity}: walk capped at max-walk-nodes = {cap}; {walk.omitted} dependents "
            f"not kept, {walk.omitted_direct} of them direct"
        )
    return f"{change.entity}: walk capped, {walk.omitted} farther sites omitted"


def _hidden(changes: Sequence[Change], graph: CodeGraph) -> tuple[Unanalyzable, ...]:
    found: set[Unanalyzable] = set()
    for change in changes:
        if change.change_type not in (ChangeType.ADD, ChangeType.INCOMPLETE):
            found.update(find_hidden_channels(change, graph))
    return tuple(sorted(found, key=lambda u: (u.file, u.line, u.entity)))


def _cochange(
    changes: Sequence[Change],
    sources: Sequence[SourceChange],
    cochange_of: CoChangeLookup | None,
    graph: CodeGraph,
) -> tuple[CoChange, ...]:
    if cochange_of is None or not changes:
        return ()
    changed_files = sorted({s.file for s in sources})
    task_text = " ".join(c.short_name for c in changes)
    # history remembers deleted files and changelogs too: a partner is a Python file of the graph
    found = [
        c
        for c in cochange_of(changed_files, task_text)
        if c.file.endswith(".py") and _indexed(graph, c.file)
    ]
    return tuple(sorted(found, key=lambda c: (-c.score, c.file)))


def _indexed(graph: CodeGraph, file: str) -> bool:
    return bool(graph.nodes_in_file(file))


def _tested_sites(hits: Sequence[TestHit], graph: CodeGraph) -> tuple[TestedSite, ...]:
    """Each selected test file once: its most confident test definition (then the first id)."""
    # thousands of hits per keystroke (django's ``timezone.now`` selects 3,800): the order
    # (highest conf, then test id, then changed file) is compared field by field, no key built
    best: dict[str, TestHit] = {}
    for hit in hits:
        if hit.entity is None:
            continue
        test_file = hit.test_file
        held = best.get(test_file)
        if held is not None and (
            hit.conf < held.conf
            or (hit.conf == held.conf and (hit.test, hit.file) >= (held.test, held.file))
        ):
            continue
        best[test_file] = hit
    out = []
    for test_file, hit in sorted(best.items()):
        node = graph.node(hit.entity) if hit.entity is not None else None
        if node is None or hit.entity is None:
            continue
        out.append(
            TestedSite(
                test_file=test_file,
                entity=hit.entity,
                line=node.span.line,
                conf=hit.conf,
                changed_file=hit.file,
            )
        )
    return tuple(out)


def _test_conf(hits: Sequence[TestHit]) -> dict[QualName, float]:
    """Each affected test definition's best confidence (over its ids and changed files)."""
    conf: dict[QualName, float] = {}
    for hit in hits:
        entity = hit.entity
        if entity is not None:
            held = conf.get(entity)
            if held is None or hit.conf > held:
                conf[entity] = hit.conf
    return conf


def _rank(
    changes: Sequence[Change],
    walked: _Walked,
    graph: CodeGraph,
    cochange: Sequence[CoChange],
    test_conf: Mapping[QualName, float],
) -> tuple[Ranked, ...]:
    cochange_by_file = {c.file: c.score for c in cochange}
    ranked: list[Ranked] = []
    for change in changes:
        ranked.extend(
            rank_members(
                walked.by_seed.get(change.entity, ()),
                change,
                graph,
                cochange=cochange_by_file,
                test_conf=test_conf,
            )
        )
    return tuple(ranked)


def _map_tests(
    changes: Sequence[Change],
    walked: _Walked,
    graph: CodeGraph,
    settings: Settings,
    *,
    collection: Collection,
    recorded: RecordedTests | None,
) -> _Tested:
    """The whole selection, and the most confident ``max_test_pairs`` of it for the report."""
    found: TestMap = map_tests(
        changes,
        walked.members,
        graph,
        min_conf=settings.test_map_min,
        max_nodes=settings.max_test_nodes,
        collection=collection,
        recorded=recorded,
    )
    selection = found.hits
    cap = max(settings.max_test_pairs, 0)
    notes = list(found.notes)
    shown = selection
    if len(selection) > cap:
        kept = sorted(selection, key=lambda h: (-h.conf, h.file, h.test))[:cap]
        shown = tuple(sorted(kept, key=lambda h: (h.file, -h.conf, h.test)))
        ids = len({h.test for h in selection})
        notes.append(
            f"{len(selection)} test pairs ({ids} tests) selected; the report lists the {cap} "
            "most confident (max-test-pairs); 'impact-ls tests' prints every one"
        )
    return _Tested(
        selection=selection,
        shown=shown,
        notes=tuple(notes),
        truncated=found.truncated or len(shown) < len(selection),
        cut=found.truncated,
    )


def _batch(
    triage: Triage, changes: Sequence[Change], graph: CodeGraph, settings: Settings
) -> tuple[Batch, ...]:
    return build_batches(
        triage,
        changes,
        graph,
        max_batches=settings.max_batches,
        max_members=settings.max_batch_members,
    )


def _dag(
    changes: Sequence[Change],
    triage: Triage,
    batches: Sequence[Batch],
    hits: Sequence[TestHit],
    *,
    graph: CodeGraph,
    settings: Settings,
) -> Dag:
    return build_dag(
        changes,
        triage,
        batches,
        hits,
        graph,
        max_nodes=settings.max_dag_nodes,
        max_edges=settings.max_dag_edges,
        max_tokens=settings.max_dag_tokens,
    )


def _audit(
    notes: Sequence[str], classified: _Classified, walked: _Walked, dag: Dag, *, tests_cut: bool
) -> Audit:
    return Audit(
        verified=_VERIFIED,
        heuristic=_HEURISTIC,
        truncated=classified.truncated or walked.truncated or dag.truncated or tests_cut,
        notes=tuple(sorted(set(notes))),
    )


def _report(found: _Findings, *, root: str, base: str, audit: Audit) -> Report:
    triage, changes, tested = found.triage, found.changes, found.tested
    logger.debug(
        "analysis: %d changes, %d must, %d may, %d tests",
        len(changes),
        len(triage.must_inspect),
        len(triage.may_impact),
        len(tested.selection),
    )
    return Report(
        root=root,
        base=base,
        audit=audit,
        changes=changes,
        triage=triage,
        batches=found.batches,
        tests=tested.shown,
        selection=tested.selection,
        selection_cut=tested.cut,
        cochange=found.cochange,
        unanalyzable=found.hidden,
        dag=found.dag,
        next_edits=found.next_edits,
        next=next_action(changes, triage, tested.selection),
        stale=any(c.change_type is ChangeType.INCOMPLETE for c in changes),
    )
