"""CodeGraph.memo: values derived from the graph live until it changes; overlays share them only
when their extra edges cannot change them — and the test search built on it never goes stale."""

from impact_ls.analysis.testmap._search import widest_paths
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import EdgeKind, NodeKind, QualName
from tests.builders import edge, node

_INHERIT = frozenset({EdgeKind.INHERIT})


def _classes() -> CodeGraph:
    return CodeGraph.of(
        [
            node("pkg.m.Base", NodeKind.CLASS, file="pkg/m.py", line=1, end_line=4),
            node("pkg.m.Base.run", NodeKind.METHOD, file="pkg/m.py", line=2, end_line=3),
        ]
    )


def _subclasses(graph: CodeGraph) -> list[str]:
    return sorted(
        e.source for e in graph.dependents_unordered("pkg.m.Base") if e.kind.value == "inherit"
    )


def test_a_value_is_built_once_per_version_and_again_after_a_change():
    graph = _classes()
    built: list[CodeGraph] = []

    def build(owner: CodeGraph) -> list[str]:
        built.append(owner)
        return _subclasses(owner)

    assert graph.memo("subs", build, kinds=_INHERIT) == []
    assert graph.memo("subs", build, kinds=_INHERIT) == []
    assert built == [graph]
    graph.replace_file(
        "pkg/sub.py",
        [node("pkg.sub.Sub", NodeKind.CLASS, file="pkg/sub.py")],
        [edge("pkg.sub.Sub", "pkg.m.Base", EdgeKind.INHERIT, file="pkg/sub.py")],
    )
    assert graph.memo("subs", build, kinds=_INHERIT) == ["pkg.sub.Sub"]
    assert len(built) == 2


def test_an_overlay_shares_the_value_unless_its_extra_edges_are_of_the_kinds_read():
    graph = _classes()
    calls = graph.overlaid([edge("pkg.api.go", "pkg.m.Base.run", file="pkg/api.py")])
    assert calls is not graph
    built: list[CodeGraph] = []

    def build(owner: CodeGraph) -> list[str]:
        built.append(owner)
        return _subclasses(owner)

    assert calls.memo("subs", build, kinds=_INHERIT) == []
    assert built == [graph]  # built on the viewed graph, kept there
    assert graph.memo("subs", build, kinds=_INHERIT) == []
    assert len(built) == 1

    inherits = graph.overlaid(
        [edge("pkg.old.Old", "pkg.m.Base", EdgeKind.INHERIT, file="pkg/old.py")]
    )
    assert inherits.memo("subs", build, kinds=_INHERIT) == ["pkg.old.Old"]
    assert built[-1] is inherits
    # the view's own value never leaks into the graph it views
    assert graph.memo("subs", build, kinds=_INHERIT) == []


def test_the_test_search_sees_a_fixture_added_after_a_first_search():
    graph = CodeGraph.of(
        [
            node("pkg.m.Cart", NodeKind.CLASS, file="pkg/m.py", line=1, end_line=5),
            node("pkg.m.Cart.total", NodeKind.METHOD, file="pkg/m.py", line=2, end_line=4),
        ]
    )
    start = {QualName("pkg.m.Cart.total"): 1.0}
    before = widest_paths(start, graph, tests={}, min_conf=0.1, budget=100)
    assert "tests.conftest.cart" not in before.best
    graph.replace_file(
        "tests/conftest.py",
        [node("tests.conftest.cart", NodeKind.FIXTURE, file="tests/conftest.py", line=4)],
        [edge("tests.conftest.cart", "pkg.m.Cart", EdgeKind.INSTANTIATE, file="tests/conftest.py")],
    )
    after = widest_paths(start, graph, tests={}, min_conf=0.1, budget=100)
    assert "tests.conftest.cart" in after.best


def test_an_overlay_adds_only_the_edges_the_graph_lacks_once_each_in_order():
    held = edge("pkg.api.go", "pkg.m.Base.run", file="pkg/api.py")
    graph = CodeGraph.of(list(_classes().nodes()), [held])
    equal = edge("pkg.api.go", "pkg.m.Base.run", file="pkg/api.py")  # an equal copy, not `held`
    new_b = edge("pkg.b.two", "pkg.m.Base.run", file="pkg/b.py")
    new_a = edge("pkg.a.one", "pkg.m.Base", EdgeKind.INSTANTIATE, file="pkg/a.py")
    assert equal == held and equal is not held
    assert graph.overlaid([held, equal]) is graph
    view = graph.overlaid([new_b, held, new_a, equal, new_b])
    assert [e.source for e in view.edges() if e not in set(graph.edges())] == [
        "pkg.b.two",
        "pkg.a.one",
    ]
    assert sorted(e.source for e in view.callers_of("pkg.m.Base.run")) == [
        "pkg.api.go",
        "pkg.b.two",
    ]
