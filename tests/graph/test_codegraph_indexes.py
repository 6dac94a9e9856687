"""CodeGraph's small indexes (tests, module ``__getattr__``, adjacency) follow patching."""

from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import (
    DynamicKind,
    DynamicRef,
    Edge,
    EdgeKind,
    Node,
    NodeKind,
    QualName,
    Span,
    TestId,
)


def _node(qid: str, kind: NodeKind, file: str, line: int = 1) -> Node:
    test_id = TestId(f"{file}::{qid.rsplit('.', 1)[-1]}") if kind is NodeKind.TEST else None
    return Node(
        id=QualName(qid),
        kind=kind,
        file=file,
        span=Span(line=line, end_line=line + 1),
        test_id=test_id,
    )


def _getattr_ref(module: str, file: str, line: int) -> DynamicRef:
    return DynamicRef(
        source=QualName(module),
        name="__getattr__",
        kind=DynamicKind.MODULE_GETATTR,
        file=file,
        span=Span(line=line),
    )


def _call(source: str, target: str, file: str, line: int) -> Edge:
    return Edge(
        source=QualName(source),
        target=QualName(target),
        kind=EdgeKind.CALL,
        file=file,
        span=Span(line=line),
    )


def test_tests_follow_replace_and_remove():
    graph = CodeGraph.of(
        [
            _node("tests.test_a.test_one", NodeKind.TEST, "tests/test_a.py", 3),
            _node("tests.test_a.helper", NodeKind.FUNCTION, "tests/test_a.py", 1),
            _node("tests.test_b.test_two", NodeKind.TEST, "tests/test_b.py", 1),
        ]
    )
    assert [n.test_id for n in graph.tests()] == [
        "tests/test_a.py::test_one",
        "tests/test_b.py::test_two",
    ]
    # The same id redefined as a plain function is no longer a test.
    graph.replace_file(
        "tests/test_a.py",
        [_node("tests.test_a.test_one", NodeKind.FUNCTION, "tests/test_a.py")],
        [],
    )
    assert [n.id for n in graph.tests()] == ["tests.test_b.test_two"]
    graph.replace_file(
        "tests/test_a.py",
        [_node("tests.test_a.test_three", NodeKind.TEST, "tests/test_a.py", 9)],
        [],
    )
    assert [n.id for n in graph.tests()] == ["tests.test_a.test_three", "tests.test_b.test_two"]
    graph.remove_file("tests/test_b.py")
    assert [n.id for n in graph.tests()] == ["tests.test_a.test_three"]


def test_module_getattr_refs_follow_replace_and_remove():
    other = DynamicRef(
        source=QualName("pkg.b"),
        name="thing",
        kind=DynamicKind.GETATTR,
        file="pkg/b.py",
        span=Span(line=2),
    )
    graph = CodeGraph.of(
        [_node("pkg.a", NodeKind.MODULE, "pkg/a.py"), _node("pkg.b", NodeKind.MODULE, "pkg/b.py")],
        dynamic=[_getattr_ref("pkg.b", "pkg/b.py", 5), other, _getattr_ref("pkg.a", "pkg/a.py", 8)],
    )
    assert [(r.file, r.span.line) for r in graph.module_getattr_refs()] == [
        ("pkg/a.py", 8),
        ("pkg/b.py", 5),
    ]
    graph.replace_file("pkg/b.py", [_node("pkg.b", NodeKind.MODULE, "pkg/b.py")], [], [other])
    assert [(r.file, r.span.line) for r in graph.module_getattr_refs()] == [("pkg/a.py", 8)]
    assert graph.dynamic_refs_named("thing") == [other]
    graph.remove_file("pkg/a.py")
    assert graph.module_getattr_refs() == []


def test_unordered_adjacency_holds_every_edge_until_its_file_is_replaced():
    first = _call("pkg.a.f", "pkg.c.target", "pkg/a.py", 3)
    second = _call("pkg.b.g", "pkg.c.target", "pkg/b.py", 7)
    graph = CodeGraph.of([], [second, first])
    assert sorted(graph.dependents_unordered("pkg.c.target"), key=lambda e: e.file) == [
        first,
        second,
    ]
    assert graph.dependencies_unordered("pkg.a.f") == (first,)
    graph.replace_file("pkg/a.py", [], [])
    assert graph.dependents_unordered("pkg.c.target") == (second,)
    assert graph.dependencies_unordered("pkg.a.f") == ()
    assert graph.dependents_unordered("pkg.nowhere") == ()
