"""Shape a ``Report`` for a model: ``blast_radius``, ``affected_tests`` and ``explain`` results.

Pure functions of a finished ``Report`` and the ``CodeGraph`` it was computed on (read for node
kinds and test locations only). Facts (changes, proved breaks, hidden channels) are kept apart
from selections (ranked sites, tests, co-change, batches); each list is cut to ``limit`` with
the cut counted in ``omitted``; within a list, sites in tests rank below production sites.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from impact_ls.agent import audit as texts
from impact_ls.agent.shapes import (
    AffectedTestsOutput,
    AffectedTestsResult,
    Audit,
    BatchSelection,
    BlastFacts,
    BlastRadiusOutput,
    BlastResult,
    BlastSelections,
    BreakFact,
    BucketName,
    Chain,
    ChangeFact,
    CoChangeSelection,
    DagEdgeOut,
    DagNodeOut,
    DagOut,
    ExplainOutput,
    ExplainResult,
    Next,
    NextEditSelection,
    Request,
    Resolution,
    Site,
    Step,
    TestSelection,
    UnanalyzableFact,
)
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import Bucket, Change, NodeKind, Report, TriageEntry

DEFAULT_LIMIT = 10
MAX_LIMIT = 200
DEFAULT_TESTS_LIMIT = 50
MAX_TESTS_LIMIT = 2000
MAX_CHAINS = 3
NEAREST_CANDIDATES = 3

T = TypeVar("T")

_BUCKETS: dict[Bucket, BucketName] = {
    Bucket.MUST_INSPECT: "must_inspect",
    Bucket.MAY_IMPACT: "may_impact",
    Bucket.LOW_RISK: "low_risk",
}
_TEST_KINDS = frozenset({NodeKind.TEST, NodeKind.FIXTURE})
_WEIGHT_REASONS = (
    (1.0, "a test or fixture edge reaches it directly"),
    (0.56, "it calls, instantiates or subclasses what reaches the change"),
    (0.5, "its module contains a test that reaches the change"),
    (0.45, "its module imports what changed"),
)
_RECORDED = "recorded coverage saw it execute a reached entity"


def bound(value: int | None, default: int, low: int, high: int) -> int:
    """``value`` clamped to ``[low, high]``; ``default`` when absent."""
    return max(low, min(high, default if value is None else value))


def _location(file: str, line: int) -> str:
    return f"{file}:{line}"


def _is_test(graph: CodeGraph, entity: str) -> bool:
    node = graph.node(entity)
    return node is not None and node.kind in _TEST_KINDS


def _change(change: Change) -> ChangeFact:
    return ChangeFact(
        change_type=str(change.change_type),
        entity=change.entity,
        file=change.file,
        line_range=list(change.line_range),
        before_sig=change.before_sig,
        after_sig=change.after_sig,
        what=change.what,
    )


def _resolution(entry: TriageEntry) -> Resolution:
    if entry.unanalyzable:
        return "unanalyzable"
    return "name-matched" if entry.name_matched else "resolved"


def _site(entry: TriageEntry, graph: CodeGraph) -> Site:
    (line, col), (end_line, end_col) = entry.range
    return Site(
        entity=entry.entity,
        location=_location(entry.file, line or entry.line),
        file=entry.file,
        line=line or entry.line,
        range=[[line, col], [end_line, end_col]],
        bucket=_BUCKETS[entry.bucket],
        conf=round(entry.conf, 4),
        distance=entry.distance,
        relation=str(entry.relation),
        reason=entry.reason,
        resolution=_resolution(entry),
        breaks=[BreakFact(kind=b.kind, detail=b.detail) for b in entry.breaks],
        seed=entry.seed,
        via=entry.via,
        test=_is_test(graph, entry.entity),
    )


def _sites(entries: Sequence[TriageEntry], graph: CodeGraph) -> list[Site]:
    """Production sites first, then sites in tests; the report's order within each."""
    sites = [_site(e, graph) for e in entries]
    return sorted(sites, key=lambda s: s.test)


class _Cutter:
    """Cuts lists to a limit and remembers what each cut left out."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.counts: dict[str, int] = {}
        self.omitted: dict[str, int] = {}

    def cut(self, name: str, items: list[T]) -> list[T]:
        self.counts[name] = len(items)
        if len(items) > self.limit:
            self.omitted[name] = len(items) - self.limit
            return items[: self.limit]
        return items

    @property
    def truncated(self) -> bool:
        return bool(self.omitted)


def _tests(report: Report, graph: CodeGraph) -> list[TestSelection]:
    """The report's tests, highest confidence first, each with why it was selected."""
    by_test_id = {node.test_id: node for node in graph.tests() if node.test_id}
    reasons: dict[str, str] = {}
    for edge in report.dag.edges:
        reasons.setdefault(edge.target, edge.cause)
    for entry in (*report.triage.must_inspect, *report.triage.may_impact):
        reasons[entry.entity] = entry.reason
    out = []
    for hit in sorted(report.tests, key=lambda t: (-t.conf, t.test, t.file)):
        node = by_test_id.get(hit.test)
        reason = hit.reason or (reasons.get(node.id) if node is not None else None)
        if reason is None:
            weight = next((why for floor, why in _WEIGHT_REASONS if hit.conf >= floor), _RECORDED)
            reason = f"selected at confidence {hit.conf:.2f}: {weight}"
        out.append(
            TestSelection(
                test=hit.test,
                conf=round(hit.conf, 4),
                changed_file=hit.file,
                reason=reason,
                location=_location(node.file, node.span.line) if node is not None else None,
            )
        )
    return out


def _audit(report: Report, verified: str, heuristic: str, *, cut: bool) -> Audit:
    return Audit(
        verified=f"{verified} Analysis: {report.audit.verified}."
        if report.audit.verified
        else verified,
        heuristic=f"{heuristic} Analysis: {report.audit.heuristic}."
        if report.audit.heuristic
        else heuristic,
        truncated=report.audit.truncated or cut,
        notes=list(report.audit.notes),
    )


def _dag(report: Report, limit: int) -> DagOut:
    nodes = report.dag.nodes[: max(limit, 1) * 4]
    kept = {n.entity for n in nodes} | {c.entity for c in report.changes}
    edges = [e for e in report.dag.edges if e.source in kept and e.target in kept]
    return DagOut(
        nodes=[
            DagNodeOut(
                entity=n.entity,
                kind=n.kind,
                location=_location(n.file, n.line),
                signature=n.signature,
                batch_id=n.batch_id,
            )
            for n in nodes
        ],
        edges=[
            DagEdgeOut.model_validate({"from": e.source, "to": e.target, "cause": e.cause})
            for e in edges
        ],
        truncated=report.dag.truncated or len(nodes) < len(report.dag.nodes),
    )


def blast_radius_output(
    report: Report, graph: CodeGraph, *, root: str, limit: int, include_dag: bool
) -> BlastRadiusOutput:
    """The ``blast_radius`` result: the DESIGN §4 report, audit first, facts apart."""
    cutter = _Cutter(limit)
    facts = BlastFacts(
        changes=cutter.cut("changes", [_change(c) for c in report.changes]),
        must_inspect=cutter.cut("must_inspect", _sites(report.triage.must_inspect, graph)),
        unanalyzable=cutter.cut(
            "unanalyzable",
            [
                UnanalyzableFact(
                    location=_location(u.file, u.line),
                    file=u.file,
                    line=u.line,
                    entity=u.entity,
                    name=u.name,
                    reason=u.reason,
                )
                for u in report.unanalyzable
            ],
        ),
    )
    selections = BlastSelections(
        may_impact=cutter.cut("may_impact", _sites(report.triage.may_impact, graph)),
        low_risk=cutter.cut("low_risk", _sites(report.triage.low_risk, graph)),
        tests=cutter.cut("tests", _tests(report, graph)),
        cochange=cutter.cut(
            "cochange",
            [CoChangeSelection(file=c.file, score=round(c.score, 4)) for c in report.cochange],
        ),
        batches=cutter.cut(
            "batches",
            [
                BatchSelection(
                    batch_id=b.batch_id, members=list(b.members), size=b.size, split=b.split
                )
                for b in report.batches
            ],
        ),
        next_edits=cutter.cut(
            "next_edits",
            [NextEditSelection(entity=i.entity, reason=i.reason) for i in report.next_edits.items],
        ),
        next_edits_source="llm" if report.next_edits.source == "llm" else "batch_order",
    )
    dag = _dag(report, limit) if include_dag else None
    result = BlastResult(
        root=root,
        base=report.base,
        facts=facts,
        selections=selections,
        dag=dag,
        counts=cutter.counts,
        omitted=cutter.omitted,
        truncated=cutter.truncated or report.audit.truncated or (dag is not None and dag.truncated),
    )
    return BlastRadiusOutput(
        audit=_audit(report, texts.BLAST_VERIFIED, texts.BLAST_HEURISTIC, cut=cutter.truncated),
        result=result,
        next=_blast_next(report, result, root=root, limit=limit),
    )


def _blast_next(report: Report, result: BlastResult, *, root: str, limit: int) -> Next:
    if not report.changes:
        return Next(action="none", reason=f"no Python change against {report.base}")
    if result.omitted.get("must_inspect"):
        return Next(
            action="inspect",
            reason=f"{result.omitted['must_inspect']} must-inspect sites were cut; call again "
            "with a larger limit before editing",
            request=Request(
                tool="blast_radius",
                arguments={"root": root, "base": report.base, "limit": min(limit * 4, MAX_LIMIT)},
            ),
        )
    must = result.facts.must_inspect
    if must:
        return Next(
            action="edit",
            reason=f"{report.next.reason}. Update each must_inspect site as its reason and breaks "
            "say, batch by batch; then run the affected tests",
            request=Request(tool="explain", arguments={"root": root, "site": must[0].location}),
        )
    if report.tests:
        return Next(
            action="run-tests",
            reason="no site must change; run the affected tests to validate the edit",
            request=Request(tool="affected_tests", arguments={"root": root, "base": report.base}),
        )
    return Next(action="answer", reason=report.next.reason or "nothing depends on this change")


def affected_tests_output(
    report: Report, graph: CodeGraph, *, root: str, min_conf: float, limit: int
) -> AffectedTestsOutput:
    """The ``affected_tests`` result: pytest node ids at or above ``min_conf``, with reasons."""
    selected = [t for t in _tests(report, graph) if t.conf >= min_conf]
    shown = selected[:limit]
    omitted = len(selected) - len(shown)
    result = AffectedTestsResult(
        root=root,
        base=report.base,
        min_conf=min_conf,
        tests=shown,
        count=len(selected),
        omitted=omitted,
        truncated=omitted > 0,
    )
    if not report.changes:
        nxt = Next(action="none", reason=f"no Python change against {report.base}")
    elif not selected:
        nxt = Next(action="answer", reason=f"no test reaches the change at confidence ≥ {min_conf}")
    elif omitted:
        nxt = Next(
            action="inspect",
            reason=f"{omitted} more tests were cut",
            request=Request(
                tool="affected_tests",
                arguments={
                    "root": root,
                    "base": report.base,
                    "min_conf": min_conf,
                    "limit": min(len(selected), MAX_TESTS_LIMIT),
                },
            ),
        )
    else:
        ids = " ".join(t.test for t in shown)
        nxt = Next(action="run-tests", reason=f"run: python -m pytest {ids}")
    return AffectedTestsOutput(
        audit=_audit(report, texts.TESTS_VERIFIED, texts.TESTS_HEURISTIC, cut=omitted > 0),
        result=result,
        next=nxt,
    )


def _all_entries(report: Report) -> list[TriageEntry]:
    triage = report.triage
    return [*triage.must_inspect, *triage.may_impact, *triage.low_risk]


def _covers(entry: TriageEntry, line: int) -> bool:
    (start, _), (end, _) = entry.range
    return entry.line == line or (start or entry.line) <= line <= (end or start or entry.line)


def _chain(entry: TriageEntry, report: Report, entries: Sequence[TriageEntry]) -> Chain:
    """The hops from ``entry``'s seed to ``entry``, following each entry's walk predecessor."""
    by_key = {(e.seed, e.entity): e for e in entries}
    path = [entry]
    current = entry
    while current.via and current.via != current.seed and len(path) <= len(entries):
        previous = by_key.get((current.seed, current.via))
        if previous is None or previous in path:
            break
        path.append(previous)
        current = previous
    path.reverse()
    steps: list[Step] = []
    trace: list[str] = []
    source = entry.seed
    for hop in path:
        site = _location(hop.file, hop.range[0][0] or hop.line)
        steps.append(
            Step(
                distance=hop.distance,
                entity=hop.entity,
                location=site,
                relation=str(hop.relation),
                cause=hop.reason,
                breaks=[BreakFact(kind=b.kind, detail=b.detail) for b in hop.breaks],
                resolution=_resolution(hop),
            )
        )
        trace.append(f"{source} -[{hop.relation} at {site}]-> {hop.entity}")
        source = hop.entity
    change = next((c for c in report.changes if c.entity == entry.seed), None)
    return Chain(change=_change(change) if change else None, steps=steps, trace=trace)


def explain_output(
    report: Report, graph: CodeGraph, *, root: str, file: str, line: int
) -> ExplainOutput:
    """The ``explain`` result: the cause chain from the edit to the site at ``file:line``."""
    entries = _all_entries(report)
    matches = [e for e in entries if e.file == file and _covers(e, line)]
    if not matches and (node := graph.node_at(file, line)) is not None:
        matches = [e for e in entries if e.entity == node.id]
    asked = _location(file, line)
    audit = _audit(
        report, texts.EXPLAIN_VERIFIED, texts.EXPLAIN_HEURISTIC, cut=len(matches) > MAX_CHAINS
    )
    if matches:
        chains = [_chain(e, report, entries) for e in matches[:MAX_CHAINS]]
        bucket = matches[0].bucket.value
        must = bucket == "must_inspect"
        first = matches[0]
        reason = first.reason + (
            ": " + "; ".join(b.detail for b in first.breaks) if first.breaks else ""
        )
        return ExplainOutput(
            audit=audit,
            result=ExplainResult(
                site=asked,
                found=True,
                bucket=bucket,
                chains=chains,
                candidates=[],
                truncated=len(matches) > MAX_CHAINS,
            ),
            next=Next(action="edit" if must else "answer", reason=reason),
        )
    same_file = sorted(
        (e for e in entries if e.file == file), key=lambda e: (abs(e.line - line), e.line)
    )
    nearest = same_file or [*report.triage.must_inspect, *report.triage.may_impact]
    candidates = [_site(e, graph) for e in nearest[:NEAREST_CANDIDATES]]
    return ExplainOutput(
        audit=audit,
        result=ExplainResult(
            site=asked,
            found=False,
            bucket=None,
            chains=[],
            candidates=candidates,
            truncated=len(nearest) > NEAREST_CANDIDATES,
        ),
        next=Next(
            action="outside" if not candidates else "clarify",
            reason=f"{asked} is not a site of the blast radius against {report.base}"
            + ("; the nearest sites are in candidates" if candidates else ""),
            request=Request(
                tool="explain", arguments={"root": root, "site": candidates[0].location}
            )
            if candidates
            else None,
        ),
    )
