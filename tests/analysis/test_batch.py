"""Batches: connected components under hard edges, seed first, split at 50, capped at 32."""

from __future__ import annotations

from impact_ls.analysis.batch import build_batches
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import (
    Batch,
    Bucket,
    Change,
    ChangeType,
    Edge,
    EdgeKind,
    Node,
    NodeKind,
    QualName,
    Relation,
    Span,
    Triage,
    TriageEntry,
)

Q = QualName
SEED = Q("pkg.auth.login")
CHANGE = Change(
    change_type=ChangeType.METHOD_SIGNATURE, entity=SEED, file="pkg/auth.py", line_range=(3, 5)
)


def _entry(entity: str, distance: int, bucket: Bucket, via: str | None, **kw) -> TriageEntry:
    return TriageEntry(
        entity=Q(entity),
        file=entity.rsplit(".", 1)[0].replace(".", "/") + ".py",
        line=distance * 10,
        range=((distance * 10, 0), (distance * 10, 9)),
        conf=0.7 if bucket is Bucket.MUST_INSPECT else 0.35,
        distance=distance,
        relation=Relation.CALLED_BY,
        reason="",
        seed=SEED,
        change_type=ChangeType.METHOD_SIGNATURE,
        bucket=bucket,
        via=Q(via) if via else None,
        **kw,
    )


def _call(source: str, target: str) -> Edge:
    return Edge(
        source=Q(source), target=Q(target), kind=EdgeKind.CALL, file="x.py", span=Span(line=1)
    )


def test_two_disconnected_clusters_and_a_singleton():
    graph = CodeGraph.of(
        [Node(id=SEED, kind=NodeKind.FUNCTION, file="pkg/auth.py", span=Span(line=3))],
        [
            _call("pkg.api.handle", SEED),
            _call("pkg.api.route", "pkg.api.handle"),
            _call("pkg.jobs.b", "pkg.jobs.a"),
            # contains is no dependency: it must not glue the clusters together
            Edge(
                source=Q("pkg.api"),
                target=Q("pkg.jobs.a"),
                kind=EdgeKind.CONTAINS,
                file="pkg/api.py",
                span=Span(line=1),
            ),
        ],
    )
    triage = Triage(
        must_inspect=(_entry("pkg.api.handle", 1, Bucket.MUST_INSPECT, SEED),),
        may_impact=(
            _entry("pkg.api.route", 2, Bucket.MAY_IMPACT, "pkg.api.handle"),
            # reached through LOW-RISK members, joined to each other by a call only
            _entry("pkg.jobs.a", 2, Bucket.MAY_IMPACT, "pkg.low.x"),
            _entry("pkg.jobs.b", 3, Bucket.MAY_IMPACT, "pkg.low.y"),
            _entry("pkg.plugins.run", 1, Bucket.MAY_IMPACT, SEED, unanalyzable=True),
        ),
        low_risk=(_entry("pkg.low.x", 1, Bucket.LOW_RISK, SEED),),
    )
    batches = build_batches(triage, [CHANGE], graph, max_batches=32, max_members=50)
    assert batches == (
        Batch(batch_id=0, members=(SEED, Q("pkg.api.handle"), Q("pkg.api.route"))),
        Batch(batch_id=1, members=(Q("pkg.plugins.run"),)),
        Batch(batch_id=2, members=(Q("pkg.jobs.a"), Q("pkg.jobs.b"))),
    )


def test_a_deleted_seed_joins_its_callers_through_dangling_edges():
    change = Change(
        change_type=ChangeType.DELETE,
        entity=Q("pkg.auth.gone"),
        file="pkg/auth.py",
        line_range=(3, 5),
    )
    graph = CodeGraph.of([], [_call("pkg.api.handle", "pkg.auth.gone")])
    entry = _entry("pkg.api.handle", 1, Bucket.MUST_INSPECT, None)
    batches = build_batches(
        Triage(must_inspect=(entry,)), [change], graph, max_batches=32, max_members=50
    )
    assert batches == (Batch(batch_id=0, members=(Q("pkg.auth.gone"), Q("pkg.api.handle"))),)


def test_a_large_component_is_split_at_fifty_nearest_first():
    entries = tuple(
        _entry(f"pkg.c{i:03}.f", 1 if i < 70 else 2, Bucket.MUST_INSPECT, SEED) for i in range(120)
    )
    batches = build_batches(
        Triage(must_inspect=entries), [CHANGE], CodeGraph(), max_batches=32, max_members=50
    )
    assert [(b.batch_id, b.size, b.split) for b in batches] == [
        (0, 50, True),
        (1, 50, True),
        (2, 21, True),
    ]
    assert batches[0].members[:2] == (SEED, Q("pkg.c000.f"))
    assert batches[1].members[-1] == Q("pkg.c098.f")
    assert batches[2].members[-1] == Q("pkg.c119.f")


def test_batch_count_is_capped():
    hidden = tuple(
        _entry(f"pkg.h{i:02}.f", 1, Bucket.MAY_IMPACT, SEED, unanalyzable=True) for i in range(40)
    )
    batches = build_batches(
        Triage(may_impact=hidden), [CHANGE], CodeGraph(), max_batches=32, max_members=50
    )
    assert len(batches) == 32
    assert batches[0] == Batch(batch_id=0, members=(SEED,))
    assert batches[-1] == Batch(batch_id=31, members=(Q("pkg.h30.f"),))
