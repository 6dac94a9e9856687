"""The impact DAG: node set, edge causes, order, and the node/edge/token caps."""

from __future__ import annotations

import json

from impact_ls.analysis.causes import cause_label
from impact_ls.analysis.dag import build_dag, estimate_tokens
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import (
    Batch,
    Bucket,
    Change,
    ChangeType,
    Dag,
    DagEdge,
    DagNode,
    Node,
    NodeKind,
    Param,
    QualName,
    Relation,
    Span,
    TestHit,
    TestId,
    Triage,
    TriageEntry,
)

Q = QualName
SEED = Q("pkg.auth.login")
CHANGE = Change(
    change_type=ChangeType.METHOD_SIGNATURE,
    entity=SEED,
    file="pkg/auth.py",
    line_range=(3, 5),
    before_sig="def login(user):",
    after_sig="def login(user, mfa):",
    before_params=(Param(name="user"),),
    after_params=(Param(name="user"), Param(name="mfa")),
)


def _entry(entity: str, distance: int, bucket: Bucket, via: str, conf: float) -> TriageEntry:
    return TriageEntry(
        entity=Q(entity),
        file="pkg/api.py",
        line=10 * distance,
        range=((10 * distance, 4), (10 * distance, 20)),
        conf=conf,
        distance=distance,
        relation=Relation.CALLED_BY,
        reason=cause_label(CHANGE, site=entity, relation=Relation.CALLED_BY),
        seed=SEED,
        change_type=ChangeType.METHOD_SIGNATURE,
        bucket=bucket,
        via=Q(via),
    )


def _fn(qid: str, file: str, line: int, sig: str, *, kind=NodeKind.FUNCTION, test_id=None) -> Node:
    return Node(
        id=Q(qid),
        kind=kind,
        file=file,
        span=Span(line=line),
        signature=sig,
        test_id=TestId(test_id) if test_id else None,
    )


def _graph() -> CodeGraph:
    return CodeGraph.of(
        [
            _fn("pkg.auth.login", "pkg/auth.py", 3, "def login(user, mfa):"),
            _fn("pkg.api.handle", "pkg/api.py", 9, "def handle(request):"),
            _fn("pkg.api.route", "pkg/api.py", 19, "def route(path):"),
            _fn("pkg.api.quiet", "pkg/api.py", 29, "def quiet():"),
            _fn(
                "tests.test_auth.test_login",
                "tests/test_auth.py",
                4,
                "def test_login():",
                kind=NodeKind.TEST,
                test_id="tests/test_auth.py::test_login",
            ),
        ]
    )


TRIAGE = Triage(
    must_inspect=(_entry("pkg.api.handle", 1, Bucket.MUST_INSPECT, SEED, 0.7),),
    may_impact=(_entry("pkg.api.route", 2, Bucket.MAY_IMPACT, "pkg.api.handle", 0.35),),
    low_risk=(_entry("pkg.api.quiet", 1, Bucket.LOW_RISK, SEED, 0.0),),
)
BATCHES = (Batch(batch_id=0, members=(SEED, Q("pkg.api.handle"), Q("pkg.api.route"))),)
TESTS = (TestHit(file="pkg/auth.py", test=TestId("tests/test_auth.py::test_login"), conf=1.0),)


def _dag(**caps) -> Dag:
    limits = {"max_nodes": 200, "max_edges": 400, "max_tokens": 12_000} | caps
    return build_dag([CHANGE], TRIAGE, BATCHES, TESTS, _graph(), **limits)


def test_dag_has_seed_must_may_and_tests_with_cause_edges():
    assert _dag() == Dag(
        nodes=(
            DagNode(
                entity=SEED,
                kind="function",
                file="pkg/auth.py",
                line=3,
                signature="def login(user, mfa):",
                batch_id=0,
            ),
            DagNode(
                entity=Q("pkg.api.handle"),
                kind="function",
                file="pkg/api.py",
                line=9,
                signature="def handle(request):",
                batch_id=0,
            ),
            DagNode(
                entity=Q("pkg.api.route"),
                kind="function",
                file="pkg/api.py",
                line=19,
                signature="def route(path):",
                batch_id=0,
            ),
            DagNode(
                entity=Q("tests.test_auth.test_login"),
                kind="test",
                file="tests/test_auth.py",
                line=4,
                signature="def test_login():",
                batch_id=None,
            ),
        ),
        edges=(
            DagEdge(
                source=SEED,
                target=Q("pkg.api.handle"),
                cause=(
                    "method-signature changed (added param mfa) → pkg.api.handle must re-bind via "
                    "CalledBy"
                ),
            ),
            DagEdge(
                source=SEED,
                target=Q("tests.test_auth.test_login"),
                cause=(
                    "method-signature changed (added param mfa) → tests/test_auth.py::test_login "
                    "must be re-tested via TestedBy"
                ),
            ),
            DagEdge(
                source=Q("pkg.api.handle"),
                target=Q("pkg.api.route"),
                cause=(
                    "method-signature changed (added param mfa) → pkg.api.route must re-bind via "
                    "CalledBy"
                ),
            ),
        ),
        truncated=False,
    )


def test_node_and_edge_caps_drop_the_farthest():
    capped = _dag(max_nodes=2)
    assert [n.entity for n in capped.nodes] == [SEED, "pkg.api.handle"]
    assert [(e.source, e.target) for e in capped.edges] == [(SEED, "pkg.api.handle")]
    assert capped.truncated
    edges = _dag(max_edges=1)
    assert len(edges.nodes) == 4
    assert [(e.source, e.target) for e in edges.edges] == [(SEED, "pkg.api.handle")]
    assert edges.truncated


def _size(dag: Dag) -> int:
    payload = {
        "nodes": [
            {
                "entity": n.entity,
                "kind": n.kind,
                "file": n.file,
                "line": n.line,
                "signature": n.signature,
                "batch_id": n.batch_id,
            }
            for n in dag.nodes
        ],
        "edges": [{"from": e.source, "to": e.target, "cause": e.cause} for e in dag.edges],
    }
    return estimate_tokens(json.dumps(payload, ensure_ascii=False))


def _wide_graph(count: int, sig_len: int) -> tuple[CodeGraph, Triage]:
    nodes = [_fn("pkg.auth.login", "pkg/auth.py", 3, "def login(user, mfa):")]
    entries = []
    for i in range(count):
        qid = f"pkg.callers.c{i:03}"
        long_sig = f"def c{i:03}(" + ", ".join(f"a{j}" for j in range(sig_len)) + "):"
        nodes.append(_fn(qid, "pkg/callers.py", i + 1, long_sig if i == 0 else f"def c{i:03}():"))
        entries.append(_entry(qid, 1, Bucket.MUST_INSPECT, SEED, round(0.99 - i / 1000, 4)))
    return CodeGraph.of(nodes), Triage(must_inspect=tuple(entries))


def test_token_cap_cuts_the_longest_signature_first():
    graph, triage = _wide_graph(3, 400)
    full = build_dag(
        [CHANGE], triage, (), (), graph, max_nodes=200, max_edges=400, max_tokens=12_000
    )
    assert not full.truncated
    budget = _size(full) - 200
    cut = build_dag(
        [CHANGE], triage, (), (), graph, max_nodes=200, max_edges=400, max_tokens=budget
    )
    assert cut.truncated
    assert _size(cut) <= budget
    assert [n.entity for n in cut.nodes] == [n.entity for n in full.nodes]
    original = next(n for n in full.nodes if n.entity == "pkg.callers.c000").signature
    longest = next(n for n in cut.nodes if n.entity == "pkg.callers.c000")
    assert longest.signature.endswith("…")
    assert original.startswith(longest.signature[:-1])
    assert len(longest.signature) < len(original)
    # the cut is the smallest that fits: one more character would not
    assert _size(cut) >= budget - 1
    assert [n.signature for n in cut.nodes[2:]] == ["def c001():", "def c002():"]


def test_token_cap_then_drops_the_farthest_nodes_but_never_the_seed():
    graph, triage = _wide_graph(150, 10)
    dag = build_dag([CHANGE], triage, (), (), graph, max_nodes=200, max_edges=400, max_tokens=2_000)
    assert dag.truncated
    assert _size(dag) <= 2_000
    assert dag.nodes[0].entity == SEED
    kept = [n.entity for n in dag.nodes[1:]]
    # highest confidence first: the prefix c000, c001, … survives
    assert kept == [f"pkg.callers.c{i:03}" for i in range(len(kept))]
    assert 0 < len(kept) < 150
    assert {e.target for e in dag.edges} == set(kept)
    # the longest prefix that fits: one node more would not
    more = build_dag(
        [CHANGE],
        triage,
        (),
        (),
        graph,
        max_nodes=len(dag.nodes) + 1,
        max_edges=400,
        max_tokens=12_000,
    )
    assert _size(more) > 2_000
    few_edges = build_dag(
        [CHANGE], triage, (), (), graph, max_nodes=200, max_edges=20, max_tokens=2_000
    )
    assert _size(few_edges) <= 2_000 and len(few_edges.edges) == 20
    assert len(few_edges.nodes) > len(dag.nodes)  # capped edges leave room for more nodes
    tiny = build_dag([CHANGE], triage, (), (), graph, max_nodes=200, max_edges=400, max_tokens=10)
    assert [n.entity for n in tiny.nodes] == [SEED] and tiny.edges == () and tiny.truncated
