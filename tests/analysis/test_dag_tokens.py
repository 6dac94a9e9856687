"""The DAG's token estimate equals the estimate of its serialized JSON, summed item by item."""

import json

import pytest

from impact_ls.analysis.dag import _json_length, _tokens, estimate_tokens
from impact_ls.analysis.dag import _tokens_of_length as estimate_tokens_of_length
from impact_ls.model import Dag, DagEdge, DagNode, QualName


def _payload_tokens(dag: Dag) -> int:
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


def _node(entity: str, signature: str, batch_id: int | None = 0) -> DagNode:
    return DagNode(
        entity=QualName(entity),
        kind="function",
        file="pkg/mod.py",
        line=12,
        signature=signature,
        batch_id=batch_id,
    )


NODES = (
    _node("pkg.mod.plain", "def plain(a, b=1):"),
    _node("pkg.mod.quoted", 'def quoted(a="x\\"y", b=\'\\n\'):', None),
    _node("pkg.mod.unicode", "def unicode(café: str = '→ ü') -> str:  # ✓"),
    _node("pkg.mod.control", "def control(a='\t\x01'):"),
)
EDGES = (
    DagEdge(source=QualName("pkg.mod.plain"), target=QualName("pkg.mod.quoted"), cause="a → b"),
    DagEdge(
        source=QualName("pkg.mod.plain"),
        target=QualName("pkg.mod.unicode"),
        cause='signature changed (added param "x") → café must re-bind via CalledBy',
    ),
)


@pytest.mark.parametrize(
    "dag",
    [
        Dag(),
        Dag(nodes=NODES[:1]),
        Dag(edges=EDGES[:1]),
        Dag(nodes=NODES, edges=EDGES),
        Dag(nodes=NODES * 3, edges=EDGES * 2),
    ],
)
def test_tokens_match_the_serialized_payload(dag):
    assert _tokens(dag) == _payload_tokens(dag)


def test_estimate_of_a_length_is_the_estimate_of_a_text_of_that_length():
    for length in (0, 1, 3, 4, 5, 8, 12_001):
        assert estimate_tokens_of_length(length) == estimate_tokens("x" * length)
    assert estimate_tokens_of_length(5) == 2


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"entity": "pkg.mod.f", "line": 12, "batch_id": None},
        {"signature": 'def quoted(a="x\\"y", b=\'\\n\'):', "kind": "function"},
        {"signature": "def control(a='\t\x01'):", "line": -3, "flag": True},
        {"cause": "café → ü ✓", "from": QualName("pkg.a"), "to": ""},
        {"line": 0, "nested": [1, "x"], "float": 0.5},
    ],
)
def test_a_payload_length_is_that_of_its_json(payload):
    assert _json_length(payload) == len(json.dumps(payload, ensure_ascii=False))
