"""Test impact: execution paths, their weights, the floor, the search budget, test_map.txt."""

from __future__ import annotations

from impact_ls.analysis.testmap import format_test_map, map_tests
from impact_ls.analysis.testmap._naming import own_test_files
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.graph.collection import Collection
from impact_ls.model import (
    Change,
    ChangeType,
    Edge,
    EdgeKind,
    Evidence,
    Member,
    Node,
    NodeKind,
    QualName,
    Relation,
    Span,
    TestHit,
    TestId,
)

Q = QualName
K = EdgeKind


def _change(entity: str, file: str = "pkg/auth.py", kind=ChangeType.METHOD_SIGNATURE) -> Change:
    return Change(change_type=kind, entity=Q(entity), file=file, line_range=(5, 9))


def _node(qid: str, kind: NodeKind, file: str, line: int, test_id: str | None = None) -> Node:
    return Node(
        id=Q(qid),
        kind=kind,
        file=file,
        span=Span(line=line, end_line=line + 2),
        test_id=TestId(test_id) if test_id else None,
    )


def _test(qid: str, file: str, line: int) -> Node:
    name = qid.rpartition(".")[2]
    return _node(qid, NodeKind.TEST, file, line, f"{file}::{name}")


def _edge(source: str, target: str, kind: EdgeKind, file: str, line: int, **kw) -> Edge:
    return Edge(
        source=Q(source), target=Q(target), kind=kind, file=file, span=Span(line=line), **kw
    )


def _hit(file: str, test: str, conf: float, entity: str) -> TestHit:
    return TestHit(file=file, test=TestId(test), conf=conf, entity=Q(entity))


def _graph() -> CodeGraph:
    nodes = [
        _node("pkg.auth.login", NodeKind.FUNCTION, "pkg/auth.py", 5),
        _node("pkg.helpers.sign_in", NodeKind.FUNCTION, "pkg/helpers.py", 3),
        _node("pkg.api.handle", NodeKind.FUNCTION, "pkg/api.py", 3),
        _node("tests.test_auth", NodeKind.MODULE, "tests/test_auth.py", 1),
        _test("tests.test_auth.test_login", "tests/test_auth.py", 4),
        _test("tests.test_flow.test_sign_in", "tests/test_flow.py", 4),
        _node("tests.test_smoke", NodeKind.MODULE, "tests/test_smoke.py", 1),
        _test("tests.test_smoke.test_imports", "tests/test_smoke.py", 3),
        _test("tests.test_types.test_annotations", "tests/test_types.py", 3),
        _test("tests.test_api.test_handle", "tests/test_api.py", 3),
        _node("tests.conftest.user", NodeKind.FIXTURE, "tests/conftest.py", 3),
        _test("tests.test_fix.test_with_user", "tests/test_fix.py", 3),
    ]
    edges = [
        # direct: the test calls the changed function
        _edge("tests.test_auth.test_login", "pkg.auth.login", K.TESTS, "tests/test_auth.py", 5),
        _edge("tests.test_auth", "pkg.auth.login", K.IMPORT, "tests/test_auth.py", 1),
        _edge("tests.test_auth", "tests.test_auth.test_login", K.CONTAINS, "tests/test_auth.py", 4),
        # two hops: the test calls a helper, the helper calls the changed function
        _edge(
            "tests.test_flow.test_sign_in", "pkg.helpers.sign_in", K.TESTS, "tests/test_flow.py", 5
        ),
        _edge("pkg.helpers.sign_in", "pkg.auth.login", K.CALL, "pkg/helpers.py", 4),
        # import only: the test module imports the function, the test never calls it
        _edge("tests.test_smoke", "pkg.auth.login", K.IMPORT, "tests/test_smoke.py", 1),
        _edge(
            "tests.test_smoke",
            "tests.test_smoke.test_imports",
            K.CONTAINS,
            "tests/test_smoke.py",
            3,
        ),
        # an annotation is no test path
        _edge(
            "tests.test_types.test_annotations",
            "pkg.auth.login",
            K.TYPE_REF,
            "tests/test_types.py",
            3,
        ),
        # a test of a walk member (the caller pkg.api.handle)
        _edge("tests.test_api.test_handle", "pkg.api.handle", K.TESTS, "tests/test_api.py", 4),
        # fixture chain: the test requests a fixture that calls the function
        _edge(
            "tests.test_fix.test_with_user",
            "tests.conftest.user",
            K.FIXTURE,
            "tests/test_fix.py",
            3,
        ),
        _edge("tests.conftest.user", "pkg.auth.login", K.FIXTURE, "tests/conftest.py", 4),
    ]
    return CodeGraph.of(nodes, edges)


def _member(entity: str, seed: str) -> Member:
    return Member(
        entity=Q(entity),
        file="pkg/api.py",
        line=4,
        distance=1,
        relations=(Relation.CALLED_BY,),
        via=Q(seed),
        seed=Q(seed),
    )


def test_weights_follow_the_widest_path():
    hits = map_tests(
        [_change("pkg.auth.login")],
        [_member("pkg.api.handle", "pkg.auth.login")],
        _graph(),
        min_conf=0.45,
    ).hits
    assert hits == (
        _hit("pkg/auth.py", "tests/test_api.py::test_handle", 1.0, "tests.test_api.test_handle"),
        _hit("pkg/auth.py", "tests/test_auth.py::test_login", 1.0, "tests.test_auth.test_login"),
        _hit(
            "pkg/auth.py", "tests/test_fix.py::test_with_user", 1.0, "tests.test_fix.test_with_user"
        ),
        _hit(
            "pkg/auth.py", "tests/test_flow.py::test_sign_in", 0.56, "tests.test_flow.test_sign_in"
        ),
    )
    # importing a name runs none of its code, an annotation neither: no path
    assert all("test_smoke" not in h.test and "test_types" not in h.test for h in hits)


def test_floor_excludes_weaker_paths():
    hits = map_tests([_change("pkg.auth.login")], [], _graph(), min_conf=0.6).hits
    assert [(h.test, h.conf) for h in hits] == [
        ("tests/test_auth.py::test_login", 1.0),
        ("tests/test_fix.py::test_with_user", 1.0),
    ]


def test_the_selection_is_never_capped():
    graph = CodeGraph.of(
        [_node("pkg.auth.login", NodeKind.FUNCTION, "pkg/auth.py", 5)]
        + [_test(f"tests.test_many.test_{i:03}", "tests/test_many.py", 3 + i) for i in range(300)],
        [
            _edge(f"tests.test_many.test_{i:03}", "pkg.auth.login", K.TESTS, "t.py", 4 + i)
            for i in range(300)
        ],
    )
    found = map_tests([_change("pkg.auth.login")], [], graph, min_conf=0.45)
    assert len(found.hits) == 300
    assert not found.truncated and found.notes == ()


def test_a_long_call_chain_is_followed_to_its_test():
    # eight hops: no hop count cuts a real path
    chain = [f"pkg.m{i}.f" for i in range(8)]
    nodes = [_node(q, NodeKind.FUNCTION, f"pkg/m{i}.py", 3) for i, q in enumerate(chain)]
    nodes.append(_test("tests.test_deep.test_top", "tests/test_deep.py", 3))
    edges = [_edge(chain[i + 1], chain[i], K.CALL, f"pkg/m{i + 1}.py", 4) for i in range(7)]
    edges.append(_edge("tests.test_deep.test_top", chain[-1], K.TESTS, "tests/test_deep.py", 4))
    found = map_tests(
        [_change(chain[0], file="pkg/m0.py")], [], CodeGraph.of(nodes, edges), min_conf=0.45
    )
    assert [(h.test, h.conf) for h in found.hits] == [("tests/test_deep.py::test_top", 0.56)]


def test_the_search_budget_cuts_with_a_note():
    found = map_tests([_change("pkg.auth.login")], [], _graph(), min_conf=0.45, max_nodes=1)
    assert found.truncated
    assert found.notes == (
        "pkg/auth.py: the test search stopped after 1 entities (max-test-nodes, or "
        "max-test-nodes-live in the editor); tests farther from the change may be missing",
    )
    # what was queued when the budget ran out still counts as reached
    assert "tests/test_auth.py::test_login" in {h.test for h in found.hits}


def test_hits_are_grouped_per_changed_file_and_formatted_exactly():
    graph = _graph()
    hits = map_tests(
        [_change("pkg.helpers.sign_in", file="pkg/helpers.py"), _change("pkg.auth.login")],
        [],
        graph,
        min_conf=0.45,
    ).hits
    assert format_test_map(hits) == (
        "pkg/auth.py tests/test_auth.py::test_login 1.0\n"
        "pkg/auth.py tests/test_fix.py::test_with_user 1.0\n"
        "pkg/auth.py tests/test_flow.py::test_sign_in 0.56\n"
        "pkg/helpers.py tests/test_flow.py::test_sign_in 1.0\n"
    )
    assert format_test_map(()) == ""


def test_reexported_name_reaches_tests_importing_the_package():
    nodes = [
        _node("pkg.impl.f", NodeKind.FUNCTION, "pkg/impl.py", 3),
        _node("tests.test_pkg", NodeKind.MODULE, "tests/test_pkg.py", 1),
        _test("tests.test_pkg.test_f", "tests/test_pkg.py", 3),
    ]
    edges = [
        _edge("pkg", "pkg.impl.f", K.REEXPORT, "pkg/__init__.py", 1, member="f"),
        _edge("tests.test_pkg", "pkg.f", K.IMPORT, "tests/test_pkg.py", 1),
        _edge("tests.test_pkg", "tests.test_pkg.test_f", K.CONTAINS, "tests/test_pkg.py", 3),
        # the test calls the package's name for the function: the same object
        _edge("tests.test_pkg.test_f", "pkg.f", K.TESTS, "tests/test_pkg.py", 4),
    ]
    hits = map_tests(
        [_change("pkg.impl.f", file="pkg/impl.py")],
        [],
        CodeGraph.of(nodes, edges),
        min_conf=0.45,
    ).hits
    assert hits == (_hit("pkg/impl.py", "tests/test_pkg.py::test_f", 1.0, "tests.test_pkg.test_f"),)


def _collected_graph() -> CodeGraph:
    """A base test class in one module, run again by a subclass in another; a unittest method."""
    return CodeGraph.of(
        [
            _node("pkg.auth.login", NodeKind.FUNCTION, "pkg/auth.py", 5),
            _node(
                "tests.test_base.TestBase.test_login",
                NodeKind.TEST,
                "tests/test_base.py",
                3,
                "tests/test_base.py::TestBase::test_login",
            ),
            _node(
                "tests.test_base.TestBase.test_other",
                NodeKind.TEST,
                "tests/test_base.py",
                9,
                "tests/test_base.py::TestBase::test_other",
            ),
            _node("tests.test_case.LoginCase.test_login", NodeKind.METHOD, "tests/test_case.py", 4),
        ],
        [
            _edge(
                "tests.test_base.TestBase.test_login",
                "pkg.auth.login",
                K.TESTS,
                "tests/test_base.py",
                4,
            ),
            _edge(
                "tests.test_base.TestBase.test_other",
                "pkg.auth.login",
                K.TESTS,
                "tests/test_base.py",
                10,
            ),
            _edge(
                "tests.test_case.LoginCase.test_login",
                "pkg.auth.login",
                K.CALL,
                "tests/test_case.py",
                5,
            ),
        ],
    )


COLLECTED = Collection(
    {
        TestId("tests/test_base.py::TestBase::test_login"): Q(
            "tests.test_base.TestBase.test_login"
        ),
        TestId("tests/test_sub.py::TestSub::test_login"): Q("tests.test_base.TestBase.test_login"),
        TestId("tests/test_case.py::LoginCase::test_login"): Q(
            "tests.test_case.LoginCase.test_login"
        ),
    }
)


def test_every_collected_id_of_a_reached_definition_is_reported():
    hits = map_tests(
        [_change("pkg.auth.login")],
        [],
        _collected_graph(),
        min_conf=0.45,
        collection=COLLECTED,
    ).hits
    assert hits == (
        _hit(
            "pkg/auth.py",
            "tests/test_base.py::TestBase::test_login",
            1.0,
            "tests.test_base.TestBase.test_login",
        ),
        # a unittest method is a plain method to the extractor; its direct call is a tests edge
        _hit(
            "pkg/auth.py",
            "tests/test_case.py::LoginCase::test_login",
            1.0,
            "tests.test_case.LoginCase.test_login",
        ),
        _hit(
            "pkg/auth.py",
            "tests/test_sub.py::TestSub::test_login",
            1.0,
            "tests.test_base.TestBase.test_login",
        ),
    )
    # ``test_other`` is a test node the collection lacks (say ``__test__ = False``): not reported
    assert all("test_other" not in h.test for h in hits)


def test_without_a_collection_each_test_node_is_its_defining_id():
    hits = map_tests([_change("pkg.auth.login")], [], _collected_graph(), min_conf=0.45).hits
    assert [h.test for h in hits] == [
        "tests/test_base.py::TestBase::test_login",
        "tests/test_base.py::TestBase::test_other",
    ]


class _Recorded:
    """Recorded coverage as a plain table: entity → the tests that executed it."""

    def __init__(self, table: dict[str, set[str]]) -> None:
        self.table = {Q(e): frozenset(TestId(t) for t in tests) for e, tests in table.items()}
        self.asked: list[set[str]] = []

    def tests_of(self, entities):  # type: ignore[no-untyped-def]
        self.asked.append(set(entities))
        return {e: self.table[e] for e in entities if e in self.table}


def test_recorded_tests_join_the_static_ones_and_say_so():
    recorded = _Recorded(
        {
            "pkg.auth.login": {"tests/test_auth.py::test_login", "tests/test_e2e.py::test_app"},
            "pkg.api.handle": {
                "tests/test_e2e.py::test_client",
                "tests/test_flow.py::test_sign_in",
            },
            "pkg.other.unrelated": {"tests/test_other.py::test_x"},
        }
    )
    hits = map_tests(
        [_change("pkg.auth.login")],
        [_member("pkg.api.handle", "pkg.auth.login")],
        _graph(),
        min_conf=0.45,
        recorded=recorded,
    ).hits
    assert recorded.asked == [{"pkg.auth.login", "pkg.api.handle"}]
    assert [(h.test, h.conf, h.evidence) for h in hits] == [
        ("tests/test_api.py::test_handle", 1.0, Evidence.STATIC),
        ("tests/test_auth.py::test_login", 1.0, Evidence.BOTH),
        # executed the changed entity itself: as strong as a direct test
        ("tests/test_e2e.py::test_app", 1.0, Evidence.RECORDED),
        ("tests/test_fix.py::test_with_user", 1.0, Evidence.STATIC),
        # executed a caller the walk reached: as strong as a call path
        ("tests/test_e2e.py::test_client", 0.56, Evidence.RECORDED),
        ("tests/test_flow.py::test_sign_in", 0.56, Evidence.BOTH),
    ]


def test_recorded_tests_of_reached_entities_respect_the_floor():
    recorded = _Recorded({"pkg.api.handle": {"tests/test_e2e.py::test_client"}})
    hits = map_tests(
        [_change("pkg.auth.login")],
        [_member("pkg.api.handle", "pkg.auth.login")],
        _graph(),
        min_conf=0.6,
        recorded=recorded,
    ).hits
    assert "tests/test_e2e.py::test_client" not in {h.test for h in hits}


def test_a_modules_own_test_files_are_named_for_it_and_nearest_by_folder():
    tests = [
        "tests/backends/mysql/test_operations.py",
        "tests/backends/base/test_operations.py",
        "tests/postgres_tests/test_operations.py",
        "tests/migrations/test_operations.py",
        "tests/utils_tests/test_text.py",
        "tests/test_text_utils.py",
        "tests/cache/cache_test.py",
        "tests/test_base.py",
        "tests/forms_tests/test_base.py",
    ]
    own = own_test_files
    assert own("django/db/backends/mysql/operations.py", tests) == [
        "tests/backends/mysql/test_operations.py"
    ]
    # a test folder is spelled as what it tests: postgres_tests tests postgres
    assert own("django/contrib/postgres/operations.py", tests) == [
        "tests/postgres_tests/test_operations.py"
    ]
    # one file named for the module is its own wherever it sits; the name must match exactly
    assert own("django/utils/text.py", tests) == ["tests/utils_tests/test_text.py"]
    assert own("pkg/_cache.py", tests) == ["tests/cache/cache_test.py"]
    assert own("pkg/cache/__init__.py", tests) == ["tests/cache/cache_test.py"]
    # several, and none shares a folder with the module: the name alone does not tell
    assert own("django/db/models/base.py", tests) == []
    assert own("pkg/migrations.py", tests) == []
