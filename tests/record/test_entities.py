"""Executed lines map to the innermost definition that holds them."""

from __future__ import annotations

from impact_ls.model import Node, NodeKind, QualName, Span
from impact_ls.record.entities import LineOwners


def _node(qid: str, kind: NodeKind, line: int, end: int) -> Node:
    return Node(id=QualName(qid), kind=kind, file="m.py", span=Span(line=line, end_line=end))


NODES = [
    _node("m", NodeKind.MODULE, 1, 20),
    _node("m.Cart", NodeKind.CLASS, 3, 12),
    _node("m.Cart.total", NodeKind.METHOD, 6, 10),
    _node("m.Cart.total.inner", NodeKind.FUNCTION, 8, 9),
    _node("m.helper", NodeKind.FUNCTION, 14, 15),
    _node("m.one_liner", NodeKind.FUNCTION, 17, 17),
]


def test_each_line_belongs_to_its_innermost_definition() -> None:
    owners = LineOwners(NODES)
    assert [owners.owner(line) for line in (1, 4, 6, 7, 8, 9, 10, 12, 13, 15, 17, 20)] == [
        "m",
        "m.Cart",
        "m.Cart.total",
        "m.Cart.total",
        "m.Cart.total.inner",
        "m.Cart.total.inner",
        "m.Cart.total",
        "m.Cart",
        "m",
        "m.helper",
        "m.one_liner",
        "m",
    ]
    assert owners.owners([4, 9, 0, 21, 99]) == {"m.Cart", "m.Cart.total.inner"}
    assert owners.kind(QualName("m.Cart.total")) is NodeKind.METHOD


def test_a_single_definition_spanning_the_file_wins_over_the_module() -> None:
    owners = LineOwners([_node("m", NodeKind.MODULE, 1, 3), _node("m.f", NodeKind.FUNCTION, 1, 3)])
    assert owners.owner(2) == "m.f"
    assert LineOwners([]).owner(1) is None
