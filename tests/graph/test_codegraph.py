"""CodeGraph queries on a hand-built graph: direction, re-export chains, patching."""

from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import DynamicKind, DynamicRef, Edge, EdgeKind, NodeKind, QualName, Span
from tests.builders import edge, node


def _graph() -> CodeGraph:
    nodes = [
        node("pkg.auth", NodeKind.MODULE, file="pkg/auth.py", line=1, end_line=30),
        node("pkg.auth.Login", NodeKind.CLASS, file="pkg/auth.py", line=3, end_line=20),
        node("pkg.auth.Login.login", NodeKind.METHOD, file="pkg/auth.py", line=5, end_line=9),
        node("pkg.admin.Admin.login", NodeKind.METHOD, file="pkg/admin.py", line=4, end_line=6),
        node("pkg.api.handle", NodeKind.FUNCTION, file="pkg/api.py", line=3, end_line=5),
    ]
    edges = [
        edge("pkg.api.handle", "pkg.auth.Login.login", EdgeKind.CALL, file="pkg/api.py", line=4),
        edge(
            "pkg.admin.Admin.login",
            "pkg.auth.Login.login",
            EdgeKind.OVERRIDE,
            file="pkg/admin.py",
            line=4,
        ),
        edge(
            "pkg",
            "pkg.auth.Login",
            EdgeKind.REEXPORT,
            file="pkg/__init__.py",
            line=1,
            member="Login",
        ),
        edge("pkg.api", "pkg.Login", EdgeKind.IMPORT, file="pkg/api.py", line=1),
        edge("pkg.api", "pkg.auth.gone", EdgeKind.IMPORT, file="pkg/api.py", line=2),
    ]
    dynamic = [
        DynamicRef(
            source=QualName("pkg.plugins"),
            name="login",
            kind=DynamicKind.GETATTR,
            file="pkg/plugins.py",
            span=Span(line=7),
        ),
    ]
    return CodeGraph.of(nodes, edges, dynamic)


def test_dependents_are_incoming_and_dependencies_outgoing():
    graph = _graph()
    assert [e.source for e in graph.callers_of("pkg.auth.Login.login")] == ["pkg.api.handle"]
    assert [e.source for e in graph.overriders_of("pkg.auth.Login.login")] == [
        "pkg.admin.Admin.login"
    ]
    assert [e.target for e in graph.methods_overridden_by("pkg.admin.Admin.login")] == [
        "pkg.auth.Login.login"
    ]
    assert graph.has_edge(
        source="pkg.api.handle", target="pkg.auth.Login.login", kind=EdgeKind.CALL
    )
    assert not graph.has_edge(source="pkg.auth.Login.login", target="pkg.api.handle")


def test_importers_follow_reexport_chains():
    importers = _graph().importers_of("pkg.auth.Login")
    assert [(e.source, e.kind.value, e.span.line) for e in importers] == [
        ("pkg", "reexport", 1),
        ("pkg.api", "import", 1),
    ]


def test_dangling_targets_keep_their_dependents():
    graph = _graph()
    assert graph.node("pkg.auth.gone") is None
    assert [e.source for e in graph.importers_of("pkg.auth.gone")] == ["pkg.api"]


def test_node_at_finds_the_innermost_definition():
    graph = _graph()
    assert graph.node_at("pkg/auth.py", 6).id == "pkg.auth.Login.login"
    assert graph.node_at("pkg/auth.py", 15).id == "pkg.auth.Login"
    assert graph.node_at("pkg/auth.py", 25).id == "pkg.auth"
    assert graph.node_at("pkg/other.py", 1) is None


def test_replace_file_drops_old_evidence():
    graph = _graph()
    graph.replace_file("pkg/api.py", [], [])
    assert graph.callers_of("pkg.auth.Login.login") == []
    assert graph.importers_of("pkg.auth.Login") == [graph.importers_of("pkg.auth.Login")[0]]
    graph.remove_file("pkg/plugins.py")
    assert graph.dynamic_refs_named("login") == []


def test_replacing_the_edges_of_several_files_at_once_is_replacing_them_one_by_one():
    def calls(file: str, *lines: int) -> list[Edge]:
        source = file.removesuffix(".py").replace("/", ".") + ".f"
        return [
            edge(source, "pkg.auth.Login.login", EdgeKind.CALL, file=file, line=n) for n in lines
        ]

    at_once, one_by_one = _graph(), _graph()
    for graph in (at_once, one_by_one):
        for file in ("pkg/a.py", "pkg/b.py", "pkg/c.py"):
            graph.replace_edges(file, calls(file, 1, 2))
    new = {"pkg/api.py": [], "pkg/a.py": calls("pkg/a.py", 7), "pkg/c.py": calls("pkg/c.py", 8)}
    at_once.replace_edges_of(new)
    for file, edges in new.items():
        one_by_one.replace_edges(file, edges)
    # the same edges in the same order, which unordered queries (and jedi's queue) follow
    assert at_once.dependents_unordered("pkg.auth.Login.login") == (
        one_by_one.dependents_unordered("pkg.auth.Login.login")
    )
    assert [
        (e.file, e.span.line) for e in at_once.dependents_unordered("pkg.auth.Login.login")
    ] == [("pkg/admin.py", 4), ("pkg/b.py", 1), ("pkg/b.py", 2), ("pkg/a.py", 7), ("pkg/c.py", 8)]
    assert list(at_once.edges()) == list(one_by_one.edges())
    assert at_once.importers_of("pkg.auth.gone") == []


def test_confirmer_filters_only_name_matched_edges():
    edges = [
        edge("a.f", "b.C.run", EdgeKind.CALL, file="a.py", line=3, name_matched=True),
        edge("a.g", "b.C.run", EdgeKind.CALL, file="a.py", line=9),
    ]
    graph = CodeGraph.of([], edges, confirmer=lambda edge: False)
    assert [e.source for e in graph.callers_of("b.C.run")] == ["a.f", "a.g"]
    assert [e.source for e in graph.callers_of("b.C.run", confirmed=True)] == ["a.g"]


def test_find_by_name_and_stats():
    graph = _graph()
    assert [n.id for n in graph.find_by_name("login")] == [
        "pkg.admin.Admin.login",
        "pkg.auth.Login.login",
    ]
    assert graph.stats() == {"files": 5, "nodes": 5, "edges": 5, "dynamic": 1}


def test_replacing_files_in_any_order_keeps_each_bucket_as_files_were_last_added():
    # ``len`` and the string ``"id"`` are in every file: the buckets the edited file shares
    def evidence(file: str, version: int) -> tuple[list[Edge], list[DynamicRef]]:
        source = QualName(file.removesuffix(".py"))
        lines = range(10 * version + 1, 10 * version + 1 + version % 3 + 1)
        edges = [edge(source, "builtins.len", file=file, line=n) for n in lines]
        edges.append(edge(source, f"{source}.own", file=file, line=9))
        refs = [
            DynamicRef(
                source=source,
                name="id",
                kind=DynamicKind.STRING_LITERAL,
                file=file,
                span=Span(line=n),
            )
            for n in lines
        ]
        return edges, refs

    graph = CodeGraph()
    added: list[str] = []  # files in the order their evidence went in last
    versions: dict[str, int] = {}
    # the last file again (its run ends each bucket), one in the middle, the first, all alone
    for file in ["a.py", "b.py", "c.py", "c.py", "c.py", "b.py", "a.py", "c.py", "b.py"]:
        versions[file] = versions.get(file, 0) + 1
        edges, refs = evidence(file, versions[file])
        graph.replace_file(file, [], edges, refs)
        added = [f for f in added if f != file] + [file]
        expected = [e for f in added for e in evidence(f, versions[f])[0][:-1]]
        assert list(graph.dependents_unordered("builtins.len")) == expected
        assert graph.dynamic_refs_named("id") == sorted(
            (r for f in added for r in evidence(f, versions[f])[1]),
            key=lambda r: (r.file, r.span.line),
        )
    for file in ["b.py", "a.py", "c.py"]:
        graph.remove_file(file)
    assert graph.dependents_unordered("builtins.len") == ()
    assert graph.dynamic_refs_named("id") == []
    assert graph.stats()["edges"] == 0
