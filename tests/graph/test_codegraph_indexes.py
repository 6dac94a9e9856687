"""CodeGraph's small indexes (tests, module ``__getattr__``, adjacency) follow patching."""

from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import DynamicKind, DynamicRef, NodeKind, QualName, Span
from tests.builders import edge, node


def _getattr_ref(module: str, file: str, line: int) -> DynamicRef:
    return DynamicRef(
        source=QualName(module),
        name="__getattr__",
        kind=DynamicKind.MODULE_GETATTR,
        file=file,
        span=Span(line=line),
    )


def test_tests_follow_replace_and_remove():
    graph = CodeGraph.of(
        [
            node(
                "tests.test_a.test_one",
                NodeKind.TEST,
                file="tests/test_a.py",
                line=3,
                end_line=4,
                test_id="tests/test_a.py::test_one",
            ),
            node(
                "tests.test_a.helper", NodeKind.FUNCTION, file="tests/test_a.py", line=1, end_line=2
            ),
            node(
                "tests.test_b.test_two",
                NodeKind.TEST,
                file="tests/test_b.py",
                line=1,
                end_line=2,
                test_id="tests/test_b.py::test_two",
            ),
        ]
    )
    assert [n.test_id for n in graph.tests()] == [
        "tests/test_a.py::test_one",
        "tests/test_b.py::test_two",
    ]
    # The same id redefined as a plain function is no longer a test.
    graph.replace_file(
        "tests/test_a.py",
        [node("tests.test_a.test_one", NodeKind.FUNCTION, file="tests/test_a.py", end_line=2)],
        [],
    )
    assert [n.id for n in graph.tests()] == ["tests.test_b.test_two"]
    graph.replace_file(
        "tests/test_a.py",
        [
            node(
                "tests.test_a.test_three",
                NodeKind.TEST,
                file="tests/test_a.py",
                line=9,
                end_line=10,
                test_id="tests/test_a.py::test_three",
            )
        ],
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
        [
            node("pkg.a", NodeKind.MODULE, file="pkg/a.py", end_line=2),
            node("pkg.b", NodeKind.MODULE, file="pkg/b.py", end_line=2),
        ],
        dynamic=[_getattr_ref("pkg.b", "pkg/b.py", 5), other, _getattr_ref("pkg.a", "pkg/a.py", 8)],
    )
    assert [(r.file, r.span.line) for r in graph.module_getattr_refs()] == [
        ("pkg/a.py", 8),
        ("pkg/b.py", 5),
    ]
    graph.replace_file(
        "pkg/b.py", [node("pkg.b", NodeKind.MODULE, file="pkg/b.py", end_line=2)], [], [other]
    )
    assert [(r.file, r.span.line) for r in graph.module_getattr_refs()] == [("pkg/a.py", 8)]
    assert graph.dynamic_refs_named("thing") == [other]
    graph.remove_file("pkg/a.py")
    assert graph.module_getattr_refs() == []


def test_unordered_adjacency_holds_every_edge_until_its_file_is_replaced():
    first = edge("pkg.a.f", "pkg.c.target", file="pkg/a.py", line=3)
    second = edge("pkg.b.g", "pkg.c.target", file="pkg/b.py", line=7)
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


def test_computed_name_refs_follow_replace_and_remove():
    def ref(name: str, kind: DynamicKind, file: str, line: int) -> DynamicRef:
        return DynamicRef(
            source=QualName(file[:-3].replace("/", ".")),
            name=name,
            kind=kind,
            file=file,
            span=Span(line=line),
        )

    bus = ref("on_*", DynamicKind.GETATTR, "pkg/b.py", 3)
    nodes = [
        node("pkg.a", NodeKind.MODULE, file="pkg/a.py", end_line=9),
        node("pkg.b", NodeKind.MODULE, file="pkg/b.py", end_line=9),
    ]
    graph = CodeGraph.of(
        nodes,
        dynamic=[
            bus,
            ref("*_cache", DynamicKind.SETATTR, "pkg/a.py", 7),
            ref("on_click", DynamicKind.GETATTR, "pkg/a.py", 2),
        ],
    )
    assert [(r.name, r.file) for r in graph.computed_name_refs()] == [
        ("*_cache", "pkg/a.py"),
        ("on_*", "pkg/b.py"),
    ]
    graph.replace_file("pkg/a.py", [nodes[0]], [], [])
    assert graph.computed_name_refs() == [bus]
    graph.remove_file("pkg/b.py")
    assert graph.computed_name_refs() == []
