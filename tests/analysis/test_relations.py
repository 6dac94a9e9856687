"""The §3.2 relation table, the escape gate, and how each relation reads the graph."""

from __future__ import annotations

import pytest

from impact_ls.analysis.relations import (
    RELATION_TABLE,
    dependents_via,
    select_relations,
    walk_seeds,
)
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import (
    Change,
    ChangeType,
    Edge,
    EdgeKind,
    Node,
    NodeKind,
    QualName,
    Relation,
    Span,
)

R = Relation


def _change(kind: ChangeType, entity: str, file: str = "pkg/auth.py", **kw) -> Change:
    return Change(change_type=kind, entity=QualName(entity), file=file, line_range=(5, 9), **kw)


def _node(qid: str, kind: NodeKind, file: str, line: int) -> Node:
    return Node(id=QualName(qid), kind=kind, file=file, span=Span(line=line, end_line=line + 3))


def _edge(source: str, target: str, kind: EdgeKind, file: str, line: int, **kw) -> Edge:
    return Edge(
        source=QualName(source),
        target=QualName(target),
        kind=kind,
        file=file,
        span=Span(line=line, col=4, end_line=line, end_col=30),
        **kw,
    )


def test_table_is_exactly_the_spec_rows():
    assert dict(RELATION_TABLE) == {
        # UsedBy and ImportedBy beyond the spec's rows (issue 11): gated in select_relations
        ChangeType.METHOD_SIGNATURE: (R.CALLED_BY, R.OVERRIDES, R.OVERRIDDEN_BY, R.USED_BY),
        ChangeType.METHOD_BODY: (R.CALLERS,),
        ChangeType.FIELD: (R.USED_BY, R.CONSTRUCTED_BY, R.SUBCLASS_OF, R.IMPORTED_BY),
        ChangeType.CLASS_DECL: (R.INSTANTIATED_BY, R.SUBCLASS_OF, R.SUPERCLASS_OF, R.USED_BY),
        ChangeType.CONSTRUCTOR: (R.INSTANTIATED_BY,),
        ChangeType.IMPORT: (R.IMPORTED_BY,),
        ChangeType.ADD: (),
        ChangeType.DELETE: (
            R.CALLED_BY,
            R.USED_BY,
            R.IMPORTED_BY,
            R.INSTANTIATED_BY,
            R.OVERRIDES,
            R.OVERRIDDEN_BY,
            R.SUBCLASS_OF,
        ),
        ChangeType.INCOMPLETE: (),
    }
    with pytest.raises(TypeError):
        RELATION_TABLE[ChangeType.ADD] = (R.CALLED_BY,)  # type: ignore[index]


def test_escape_gate_empties_a_local_body_change():
    local = _change(ChangeType.METHOD_BODY, "pkg.auth.f", escapes=False)
    escaping = _change(ChangeType.METHOD_BODY, "pkg.auth.f", escapes=True, escape_reason="self.x")
    assert select_relations(local) == ()
    assert select_relations(escaping) == (R.CALLERS,)
    assert select_relations(_change(ChangeType.ADD, "pkg.auth.g")) == ()


def _class_graph() -> CodeGraph:
    nodes = [
        _node("pkg.auth", NodeKind.MODULE, "pkg/auth.py", 1),
        _node("pkg.auth.Login", NodeKind.CLASS, "pkg/auth.py", 3),
        _node("pkg.auth.Login.__init__", NodeKind.METHOD, "pkg/auth.py", 4),
        _node("pkg.auth.Login.run", NodeKind.METHOD, "pkg/auth.py", 8),
        _node("pkg.auth.Base", NodeKind.CLASS, "pkg/auth.py", 20),
        _node("pkg.admin.Admin", NodeKind.CLASS, "pkg/admin.py", 2),
        _node("pkg.api.make", NodeKind.FUNCTION, "pkg/api.py", 5),
        _node("pkg.api.read", NodeKind.FUNCTION, "pkg/api.py", 9),
    ]
    edges = [
        _edge("pkg.api.make", "pkg.auth.Login", EdgeKind.INSTANTIATE, "pkg/api.py", 6),
        _edge("pkg.api.read", "pkg.auth.Login.timeout", EdgeKind.CLASS_MEMBER, "pkg/api.py", 10),
        _edge("pkg.admin.Admin", "pkg.auth.Login", EdgeKind.INHERIT, "pkg/admin.py", 2),
        _edge("pkg.auth.Login", "pkg.auth.Base", EdgeKind.INHERIT, "pkg/auth.py", 3),
        _edge("pkg.api.make", "pkg.auth.Login.run", EdgeKind.CALL, "pkg/api.py", 7),
        _edge("pkg.api.read", "pkg.auth.TIMEOUT", EdgeKind.CLASS_MEMBER, "pkg/api.py", 11),
    ]
    return CodeGraph.of(nodes, edges)


def _reached(relation: Relation, entity: str, change: Change, graph: CodeGraph) -> list[tuple]:
    hops = dependents_via(relation, QualName(entity), graph, change=change, at_seed=True)
    return [(h.entity, h.site.file, h.site.span.line, h.site.relation) for h in hops]


def test_constructor_change_asks_about_instantiations_of_its_class():
    graph = _class_graph()
    change = _change(ChangeType.CONSTRUCTOR, "pkg.auth.Login.__init__")
    assert _reached(R.INSTANTIATED_BY, "pkg.auth.Login.__init__", change, graph) == [
        ("pkg.api.make", "pkg/api.py", 6, R.INSTANTIATED_BY)
    ]


def test_field_change_reaches_users_constructors_and_subclasses_of_its_class():
    graph = _class_graph()
    change = _change(ChangeType.FIELD, "pkg.auth.Login.timeout")
    assert _reached(R.USED_BY, change.entity, change, graph) == [
        ("pkg.api.read", "pkg/api.py", 10, R.USED_BY)
    ]
    assert _reached(R.CONSTRUCTED_BY, change.entity, change, graph) == [
        ("pkg.api.make", "pkg/api.py", 6, R.CONSTRUCTED_BY)
    ]
    assert _reached(R.SUBCLASS_OF, change.entity, change, graph) == [
        ("pkg.admin.Admin", "pkg/admin.py", 2, R.SUBCLASS_OF)
    ]


def test_module_constant_has_no_class_relations():
    graph = _class_graph()
    change = _change(ChangeType.FIELD, "pkg.auth.TIMEOUT")
    assert _reached(R.USED_BY, change.entity, change, graph) == [
        ("pkg.api.read", "pkg/api.py", 11, R.USED_BY)
    ]
    assert _reached(R.CONSTRUCTED_BY, change.entity, change, graph) == []
    assert _reached(R.SUBCLASS_OF, change.entity, change, graph) == []


def test_superclass_of_is_forward_and_its_site_is_the_base_definition():
    graph = _class_graph()
    change = _change(ChangeType.CLASS_DECL, "pkg.auth.Login")
    assert _reached(R.SUPERCLASS_OF, change.entity, change, graph) == [
        ("pkg.auth.Base", "pkg/auth.py", 20, R.SUPERCLASS_OF)
    ]


def test_import_change_seeds_on_removed_names_of_its_module():
    graph = _class_graph()
    change = _change(ChangeType.IMPORT, "pkg.auth", removed_names=("helper", "util as u"))
    assert walk_seeds(change, graph) == ("pkg.auth", "pkg.auth.helper", "pkg.auth.u")
