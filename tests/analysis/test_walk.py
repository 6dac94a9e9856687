"""The reverse walk on hand-built graphs: relation sets, escape gate, depth and node caps."""

from __future__ import annotations

from impact_ls.analysis.walk import WalkResult, walk_dependents
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import (
    ArgShape,
    Change,
    ChangeType,
    Edge,
    EdgeKind,
    Member,
    Node,
    NodeKind,
    QualName,
    Relation,
    Site,
    Span,
)

Q = QualName


def _change(kind: ChangeType, entity: str, **kw) -> Change:
    return Change(change_type=kind, entity=Q(entity), file="pkg/auth.py", line_range=(5, 9), **kw)


def _node(qid: str, kind: NodeKind, file: str, line: int) -> Node:
    return Node(id=Q(qid), kind=kind, file=file, span=Span(line=line, end_line=line + 3))


def _span(line: int) -> Span:
    return Span(line=line, col=4, end_line=line, end_col=30)


def _edge(source: str, target: str, kind: EdgeKind, file: str, line: int, **kw) -> Edge:
    return Edge(source=Q(source), target=Q(target), kind=kind, file=file, span=_span(line), **kw)


def _auth_graph() -> CodeGraph:
    nodes = [
        _node("pkg.auth.Login", NodeKind.CLASS, "pkg/auth.py", 3),
        _node("pkg.auth.Login.login", NodeKind.METHOD, "pkg/auth.py", 5),
        _node("pkg.admin.Admin.login", NodeKind.METHOD, "pkg/admin.py", 4),
        _node("pkg.api.handle", NodeKind.FUNCTION, "pkg/api.py", 3),
        _node("pkg.api.route", NodeKind.FUNCTION, "pkg/api.py", 20),
        _node("pkg.views.page", NodeKind.FUNCTION, "pkg/views.py", 8),
        _node("pkg.stats.count", NodeKind.FUNCTION, "pkg/stats.py", 2),
    ]
    two_args = ArgShape(positional=1, keywords=("remember",))
    edges = [
        _edge(
            "pkg.api.handle", "pkg.auth.Login.login", EdgeKind.CALL, "pkg/api.py", 4, args=two_args
        ),
        _edge(
            "pkg.api.handle",
            "pkg.auth.Login.login",
            EdgeKind.CALL,
            "pkg/api.py",
            6,
            args=ArgShape(positional=1),
        ),
        _edge(
            "pkg.admin.Admin.login", "pkg.auth.Login.login", EdgeKind.OVERRIDE, "pkg/admin.py", 4
        ),
        _edge("pkg.api.route", "pkg.api.handle", EdgeKind.CALL, "pkg/api.py", 21, args=ArgShape()),
        _edge(
            "pkg.views.page",
            "pkg.auth.Login.login",
            EdgeKind.CALL,
            "pkg/views.py",
            9,
            args=ArgShape(positional=1),
            name_matched=True,
        ),
        # Edges a signature change must never follow: a field read and an import of the method.
        _edge("pkg.stats.count", "pkg.auth.Login.login", EdgeKind.CLASS_MEMBER, "pkg/stats.py", 3),
        _edge("pkg.stats", "pkg.auth.Login.login", EdgeKind.IMPORT, "pkg/stats.py", 1),
        # A recursive call: the seed is never its own member.
        _edge("pkg.auth.Login.login", "pkg.auth.Login.login", EdgeKind.CALL, "pkg/auth.py", 7),
    ]
    return CodeGraph.of(nodes, edges)


def _walk(change: Change, graph: CodeGraph, *, depth: int = 3, nodes: int = 200) -> WalkResult:
    return walk_dependents(change, graph, max_depth=depth, max_nodes=nodes)


def test_signature_change_reaches_caller_and_overrider_but_no_field_user():
    result = _walk(_change(ChangeType.METHOD_SIGNATURE, "pkg.auth.Login.login"), _auth_graph())
    assert not result.truncated
    assert result.omitted == 0
    assert [(m.entity, m.distance, m.relations, m.via) for m in result.members] == [
        ("pkg.admin.Admin.login", 1, (Relation.OVERRIDES,), "pkg.auth.Login.login"),
        ("pkg.api.handle", 1, (Relation.CALLED_BY,), "pkg.auth.Login.login"),
        ("pkg.views.page", 1, (Relation.CALLED_BY,), "pkg.auth.Login.login"),
        ("pkg.api.route", 2, (Relation.CALLED_BY,), "pkg.api.handle"),
    ]
    entities = {m.entity for m in result.members}
    assert "pkg.stats.count" not in entities and "pkg.stats" not in entities
    assert "pkg.auth.Login.login" not in entities


def test_member_carries_every_site_with_its_shape():
    result = _walk(_change(ChangeType.METHOD_SIGNATURE, "pkg.auth.Login.login"), _auth_graph())
    handle = next(m for m in result.members if m.entity == "pkg.api.handle")
    assert handle == Member(
        entity=Q("pkg.api.handle"),
        file="pkg/api.py",
        line=4,
        distance=1,
        relations=(Relation.CALLED_BY,),
        via=Q("pkg.auth.Login.login"),
        sites=(
            Site(
                file="pkg/api.py",
                span=_span(4),
                args=ArgShape(positional=1, keywords=("remember",)),
                relation=Relation.CALLED_BY,
                target=Q("pkg.auth.Login.login"),
            ),
            Site(
                file="pkg/api.py",
                span=_span(6),
                args=ArgShape(positional=1),
                relation=Relation.CALLED_BY,
                target=Q("pkg.auth.Login.login"),
            ),
        ),
        seed=Q("pkg.auth.Login.login"),
        name_matched=False,
    )
    page = next(m for m in result.members if m.entity == "pkg.views.page")
    assert page.name_matched is True
    assert [s.name_matched for s in page.sites] == [True]


def test_local_body_change_reaches_no_caller_but_a_self_write_does():
    graph = _auth_graph()
    local = _change(ChangeType.METHOD_BODY, "pkg.auth.Login.login", escapes=False)
    assert _walk(local, graph) == WalkResult()
    escaping = _change(
        ChangeType.METHOD_BODY, "pkg.auth.Login.login", escapes=True, escape_reason="writes self.x"
    )
    members = _walk(escaping, graph).members
    assert [(m.entity, m.distance, m.relations) for m in members] == [
        ("pkg.api.handle", 1, (Relation.CALLERS,)),
        ("pkg.views.page", 1, (Relation.CALLERS,)),
        ("pkg.api.route", 2, (Relation.CALLERS,)),
    ]


def test_add_has_no_members():
    result = _walk(_change(ChangeType.ADD, "pkg.auth.Login.login"), _auth_graph())
    assert result == WalkResult(members=(), truncated=False, omitted=0)


def _chain(length: int) -> CodeGraph:
    """f0 ← f1 ← f2 ← … : each f(i+1) calls f(i)."""
    nodes = [
        _node(f"pkg.chain.f{i}", NodeKind.FUNCTION, "pkg/chain.py", 10 * i + 1)
        for i in range(length + 1)
    ]
    edges = [
        _edge(f"pkg.chain.f{i + 1}", f"pkg.chain.f{i}", EdgeKind.CALL, "pkg/chain.py", 10 * i + 12)
        for i in range(length)
    ]
    return CodeGraph.of(nodes, edges)


def test_bfs_never_goes_beyond_depth_three():
    result = _walk(_change(ChangeType.METHOD_SIGNATURE, "pkg.chain.f0"), _chain(5))
    assert [(m.entity, m.distance, m.via) for m in result.members] == [
        ("pkg.chain.f1", 1, "pkg.chain.f0"),
        ("pkg.chain.f2", 2, "pkg.chain.f1"),
        ("pkg.chain.f3", 3, "pkg.chain.f2"),
    ]
    assert not result.truncated
    assert [
        m.entity
        for m in _walk(
            _change(ChangeType.METHOD_SIGNATURE, "pkg.chain.f0"), _chain(5), depth=1
        ).members
    ] == ["pkg.chain.f1"]


def _fan_in(callers: int) -> tuple[list[Node], list[Edge]]:
    """``pkg.core.f`` and ``callers`` direct callers ``pkg.near.g000``, ``g001``…"""
    nodes = [_node("pkg.core.f", NodeKind.FUNCTION, "pkg/core.py", 1)]
    edges = []
    for i in range(callers):
        nodes.append(_node(f"pkg.near.g{i:03}", NodeKind.FUNCTION, "pkg/near.py", 10 * i + 1))
        edges.append(
            _edge(f"pkg.near.g{i:03}", "pkg.core.f", EdgeKind.CALL, "pkg/near.py", 10 * i + 2)
        )
    return nodes, edges


def test_node_cap_keeps_the_nearest_and_counts_the_rest():
    nodes, edges = _fan_in(150)
    for i in range(100):
        nodes.append(_node(f"pkg.far.h{i:03}", NodeKind.FUNCTION, "pkg/far.py", 10 * i + 1))
        edges.append(
            _edge(f"pkg.far.h{i:03}", f"pkg.near.g{i:03}", EdgeKind.CALL, "pkg/far.py", 10 * i + 2)
        )
    result = _walk(_change(ChangeType.METHOD_SIGNATURE, "pkg.core.f"), CodeGraph.of(nodes, edges))
    assert result.truncated is True
    assert result.omitted == 50
    assert len(result.members) == 200
    assert [m.distance for m in result.members].count(1) == 150
    assert [m.entity for m in result.members if m.distance == 2] == [
        f"pkg.far.h{i:03}" for i in range(50)
    ]


def test_levels_beyond_a_full_cap_are_counted_once_per_entity():
    # 210 direct callers fill the cap of 200; their callers (distance 2) and theirs (distance 3)
    # are only counted: an entity reached twice, or reached again farther out, counts once.
    nodes, edges = _fan_in(210)
    for i in range(30):
        nodes.append(_node(f"pkg.far.h{i:03}", NodeKind.FUNCTION, "pkg/far.py", 10 * i + 1))
        for callee in (f"pkg.near.g{i:03}", f"pkg.near.g{i + 1:03}"):
            edges.append(_edge(f"pkg.far.h{i:03}", callee, EdgeKind.CALL, "pkg/far.py", 10 * i + 2))
    nodes.append(_node("pkg.top.k", NodeKind.FUNCTION, "pkg/top.py", 1))
    edges.append(_edge("pkg.top.k", "pkg.far.h000", EdgeKind.CALL, "pkg/top.py", 2))
    edges.append(_edge("pkg.near.g005", "pkg.far.h001", EdgeKind.CALL, "pkg/near.py", 999))
    result = _walk(_change(ChangeType.METHOD_SIGNATURE, "pkg.core.f"), CodeGraph.of(nodes, edges))
    assert [m.entity for m in result.members] == [f"pkg.near.g{i:03}" for i in range(200)]
    assert (result.truncated, result.omitted, result.omitted_direct) == (True, 10 + 30 + 1, 10)


def test_counted_levels_leave_out_refuted_name_matched_calls_only():
    nodes, edges = _fan_in(201)
    for name, matched in (("kept", False), ("unsure", True), ("wrong", True)):
        nodes.append(_node(f"pkg.far.{name}", NodeKind.FUNCTION, "pkg/far.py", 1))
        edges.append(
            _edge(
                f"pkg.far.{name}",
                "pkg.near.g000",
                EdgeKind.CALL,
                "pkg/far.py",
                2,
                name_matched=matched,
            )
        )
    asked: list[str] = []

    def confirmer(edge: Edge) -> bool | None:
        asked.append(edge.source)
        return False if edge.source == "pkg.far.wrong" else None

    graph = CodeGraph.of(nodes, edges, confirmer=confirmer)
    result = _walk(_change(ChangeType.METHOD_SIGNATURE, "pkg.core.f"), graph)
    # one direct caller past the cap of 200, and at distance 2 the sure and the undecided call
    assert (result.omitted, result.omitted_direct) == (1 + 2, 1)
    assert sorted(asked) == ["pkg.far.unsure", "pkg.far.wrong"]


def test_delete_walks_callers_and_importers_through_dangling_edges():
    nodes = [
        _node("pkg.api.handle", NodeKind.FUNCTION, "pkg/api.py", 3),
        _node("pkg.api", NodeKind.MODULE, "pkg/api.py", 1),
    ]
    edges = [
        _edge("pkg.api.handle", "pkg.auth.gone", EdgeKind.CALL, "pkg/api.py", 4, args=ArgShape()),
        _edge("pkg.api", "pkg.auth.gone", EdgeKind.IMPORT, "pkg/api.py", 1),
    ]
    graph = CodeGraph.of(nodes, edges)
    assert graph.node("pkg.auth.gone") is None
    members = _walk(_change(ChangeType.DELETE, "pkg.auth.gone"), graph).members
    assert [(m.entity, m.line, m.distance, m.relations) for m in members] == [
        ("pkg.api", 1, 1, (Relation.IMPORTED_BY,)),
        ("pkg.api.handle", 4, 1, (Relation.CALLED_BY,)),
    ]


def test_class_decl_walks_instantiations_and_hierarchy_not_calls():
    nodes = [
        _node("pkg.auth.Login", NodeKind.CLASS, "pkg/auth.py", 3),
        _node("pkg.auth.Base", NodeKind.CLASS, "pkg/auth.py", 30),
        _node("pkg.admin.Admin", NodeKind.CLASS, "pkg/admin.py", 2),
        _node("pkg.api.make", NodeKind.FUNCTION, "pkg/api.py", 5),
        _node("pkg.api.call", NodeKind.FUNCTION, "pkg/api.py", 9),
    ]
    edges = [
        _edge(
            "pkg.api.make", "pkg.auth.Login", EdgeKind.INSTANTIATE, "pkg/api.py", 6, args=ArgShape()
        ),
        _edge("pkg.api.call", "pkg.auth.Login", EdgeKind.CALL, "pkg/api.py", 10),
        _edge("pkg.admin.Admin", "pkg.auth.Login", EdgeKind.INHERIT, "pkg/admin.py", 2),
        _edge("pkg.auth.Login", "pkg.auth.Base", EdgeKind.INHERIT, "pkg/auth.py", 3),
    ]
    members = _walk(
        _change(ChangeType.CLASS_DECL, "pkg.auth.Login"), CodeGraph.of(nodes, edges)
    ).members
    assert [(m.entity, m.file, m.line, m.relations) for m in members] == [
        ("pkg.admin.Admin", "pkg/admin.py", 2, (Relation.SUBCLASS_OF,)),
        ("pkg.api.make", "pkg/api.py", 6, (Relation.INSTANTIATED_BY,)),
        ("pkg.auth.Base", "pkg/auth.py", 30, (Relation.SUPERCLASS_OF,)),
    ]


def test_import_change_walks_importers_of_the_removed_name():
    nodes = [_node("pkg.auth", NodeKind.MODULE, "pkg/auth.py", 1)]
    edges = [
        _edge("pkg.api", "pkg.auth.helper", EdgeKind.IMPORT, "pkg/api.py", 2),
        _edge("pkg.cli", "pkg.auth.other", EdgeKind.IMPORT, "pkg/cli.py", 2),
    ]
    change = _change(ChangeType.IMPORT, "pkg.auth", removed_names=("helper",))
    members = _walk(change, CodeGraph.of(nodes, edges)).members
    assert [(m.entity, m.via, m.seed, m.relations) for m in members] == [
        ("pkg.api", "pkg.auth.helper", "pkg.auth", (Relation.IMPORTED_BY,))
    ]
