"""The pipeline, stated once: classify → relations → walk (+binding) → cochange → testmap → rank
→ triage → batch → dag → nextedit ⇒ Report.

Contract: ``analyze`` takes the current ``CodeGraph``, each dirty file's baseline and current
text, ``Settings``, a co-change lookup and an optional completion client, and returns the
``Report`` plus the ``test_map.txt`` text. It reads no file, clock or environment; the same input
gives the same report. The walk starts from the *baseline* entity (a deleted or renamed function
still finds its callers through dangling edges); the graph is the current state.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from impact_ls.analysis.batch import build_batches
from impact_ls.analysis.classify import classify_changes
from impact_ls.analysis.dag import build_dag
from impact_ls.analysis.hidden import find_hidden_channels
from impact_ls.analysis.nextedit import CompletionClient, decide_next_edits, next_action
from impact_ls.analysis.rank import Ranked, rank_members
from impact_ls.analysis.testmap import format_test_map, map_tests
from impact_ls.analysis.triage import triage_members
from impact_ls.analysis.walk import walk_dependents
from impact_ls.config import Settings
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import (
    Audit,
    Change,
    ChangeType,
    CoChange,
    Member,
    QualName,
    Report,
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
) -> tuple[Report, str]:
    """Run every stage in order and return the report and the ``test_map.txt`` text."""
    changes = _classify(sources, settings)
    notes = list(notes)
    truncated = False
    if len(changes) > settings.max_changes:
        notes.append(f"{len(changes)} changes; analyzed the first {settings.max_changes}")
        changes = changes[: settings.max_changes]
        truncated = True
    if any(c.change_type is ChangeType.INCOMPLETE for c in changes):
        notes.append("part of the edit does not parse yet; its region is reported as incomplete")

    members: list[Member] = []
    members_by_seed: dict[QualName, list[Member]] = {}
    hidden: list[Unanalyzable] = []
    for change in changes:
        walk = walk_dependents(
            change, graph, max_depth=settings.max_depth, max_nodes=settings.max_walk_nodes
        )
        if walk.truncated:
            truncated = True
            notes.append(f"{change.entity}: walk capped, {walk.omitted} farther sites omitted")
        members.extend(walk.members)
        members_by_seed.setdefault(change.entity, []).extend(walk.members)
        if change.change_type not in (ChangeType.ADD, ChangeType.INCOMPLETE):
            hidden.extend(find_hidden_channels(change, graph))

    hits = map_tests(
        changes,
        members,
        graph,
        min_conf=settings.test_map_min,
        max_pairs=settings.max_test_pairs,
    )
    changed_files = sorted({s.file for s in sources})
    task_text = " ".join(c.short_name for c in changes)
    cochange = cochange_of(changed_files, task_text) if cochange_of and changes else ()
    cochange_by_file = {c.file: c.score for c in cochange}
    conf_by_test: dict[str, float] = {}
    for hit in hits:
        conf_by_test[hit.test] = max(conf_by_test.get(hit.test, 0.0), hit.conf)
    test_conf: dict[QualName, float] = {
        node.id: conf_by_test[node.test_id]
        for node in graph.tests()
        if node.test_id in conf_by_test
    }

    ranked: list[Ranked] = []
    for change in changes:
        ranked.extend(
            rank_members(
                members_by_seed.get(change.entity, ()),
                change,
                graph,
                cochange=cochange_by_file,
                test_conf=test_conf,
            )
        )
    triage = triage_members(ranked, changes, graph, hidden=hidden, settings=settings)
    batches = build_batches(
        triage,
        changes,
        graph,
        max_batches=settings.max_batches,
        max_members=settings.max_batch_members,
    )
    dag = build_dag(
        changes,
        triage,
        batches,
        hits,
        graph,
        max_nodes=settings.max_dag_nodes,
        max_edges=settings.max_dag_edges,
        max_tokens=settings.max_dag_tokens,
    )
    next_edits = decide_next_edits(changes, dag, triage, batches, client=llm)
    logger.debug(
        "analysis: %d changes, %d members, %d must, %d may, %d tests",
        len(changes),
        len(members),
        len(triage.must_inspect),
        len(triage.may_impact),
        len(hits),
    )
    report = Report(
        root=root,
        base=base,
        audit=Audit(
            verified=_VERIFIED,
            heuristic=_HEURISTIC,
            truncated=truncated or dag.truncated,
            notes=tuple(sorted(set(notes))),
        ),
        changes=changes,
        triage=triage,
        batches=batches,
        tests=hits,
        cochange=tuple(sorted(cochange, key=lambda c: (-c.score, c.file))),
        unanalyzable=tuple(sorted(set(hidden), key=lambda u: (u.file, u.line, u.entity))),
        dag=dag,
        next_edits=next_edits,
        next=next_action(changes, triage, hits),
        stale=any(c.change_type is ChangeType.INCOMPLETE for c in changes),
    )
    return report, format_test_map(hits)


def _classify(sources: Sequence[SourceChange], settings: Settings) -> tuple[Change, ...]:
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
    return tuple(sorted(changes, key=lambda c: (c.file, c.line_range, c.entity)))
