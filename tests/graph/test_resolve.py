"""Resolution rules, checked edge by edge on the fixture projects ``graph_flat``/``graph_src``."""

from __future__ import annotations

import pytest

from impact_ls.graph.builder import GraphBuilder
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import ArgShape, DynamicKind, EdgeKind, NodeKind, Span

AUTH = "shop.accounts.auth"
MODELS = "shop.accounts.models"


def _build(texts: dict[str, str]) -> CodeGraph:
    builder = GraphBuilder()
    for path, text in texts.items():
        builder.update(path, text)
    return builder.graph


@pytest.fixture(scope="module")
def flat(fixture_texts) -> CodeGraph:
    return _build(fixture_texts("graph_flat"))


@pytest.fixture(scope="module")
def src(fixture_texts) -> CodeGraph:
    return _build(fixture_texts("graph_src"))


def edge_rows(
    graph: CodeGraph, *, kind: str | None = None, source: str | None = None
) -> set[tuple[str, str, str, int]]:
    """``(source, target, kind, line)`` of every edge, optionally of one kind or source."""
    return {
        (e.source, e.target, e.kind.value, e.span.line)
        for e in graph.edges()
        if (kind is None or e.kind.value == kind) and (source is None or e.source == source)
    }


def out(graph: CodeGraph, source: str, kind: str | None = None) -> set[tuple[str, str, int]]:
    """``(target, kind, line)`` of the edges leaving ``source``."""
    return {(t, k, line) for s, t, k, line in edge_rows(graph, kind=kind, source=source)}


def test_nodes_carry_kind_file_span_signature_doc_and_test_ids(flat: CodeGraph) -> None:
    user = flat.node(f"{MODELS}.User")
    assert user is not None
    assert (user.kind, user.file, user.span.line, user.span.end_line) == (
        NodeKind.CLASS,
        "shop/accounts/models.py",
        4,
        8,
    )
    assert user.signature == "class User:"
    assert user.doc == "A shop user."
    login = flat.node(f"{AUTH}.login")
    assert login is not None
    assert login.signature == "def login(name, *, remember=False):"
    assert [(p.name, p.kind.value, p.has_default) for p in login.params] == [
        ("name", "positional-or-keyword", False),
        ("remember", "keyword-only", True),
    ]
    module = flat.node("shop.accounts.models")
    assert (
        module is not None
        and module.kind is NodeKind.MODULE
        and module.doc == "Plain data classes."
    )
    method = flat.node("tests.unit.test_auth.TestService.test_method")
    assert method is not None and method.kind is NodeKind.TEST
    assert method.test_id == "tests/unit/test_auth.py::TestService::test_method"
    helper = flat.node("tests.unit.test_auth.TestService.helper")
    assert helper is not None and helper.kind is NodeKind.METHOD and helper.test_id is None
    fixture = flat.node("tests.conftest.service")
    assert fixture is not None and fixture.kind is NodeKind.FIXTURE
    assert fixture.decorators == ("pytest.fixture",)
    assert [t.test_id for t in flat.tests()] == [
        "tests/auto/test_auto.py::TestAuto::test_auto",
        "tests/other/test_other.py::test_other",
        "tests/test_top.py::test_db",
        "tests/unit/test_auth.py::TestService::test_method",
        "tests/unit/test_auth.py::test_login",
        "tests/unit/test_auth.py::test_price",
    ]


def test_namespace_package_modules_are_named_by_path(flat: CodeGraph) -> None:
    tool = flat.node("plugins_ns.extra.tool.run")
    assert tool is not None and tool.file == "plugins_ns/extra/tool.py"
    assert out(flat, "plugins_ns.user") >= {
        ("plugins_ns.extra.tool", "import", 1),
        ("plugins_ns.extra.tool.run", "import", 2),
    }
    assert out(flat, "plugins_ns.user.go", "call") == {
        ("plugins_ns.extra.tool.run", "call", 6),
        ("plugins_ns.extra.tool.run", "call", 7),
    }


def test_contains_edges_link_module_class_and_method(flat: CodeGraph) -> None:
    assert out(flat, MODELS, "contains") == {
        (f"{MODELS}.User", "contains", 4),
        (f"{MODELS}.Repo", "contains", 11),
        (f"{MODELS}.Profile", "contains", 16),
    }
    assert out(flat, f"{MODELS}.User", "contains") == {(f"{MODELS}.User.__init__", "contains", 7)}


def test_inherit_follows_bases_in_order_and_override_follows_the_mro(flat: CodeGraph) -> None:
    assert out(flat, f"{AUTH}.Audited", "inherit") == {
        (f"{AUTH}.Mixin", "inherit", 45),
        (f"{AUTH}.LoginService", "inherit", 45),
    }
    assert out(flat, f"{AUTH}.LoginService.login", "override") == {
        (f"{AUTH}.BaseService.login", "override", 27)
    }
    # Audited.login overrides the nearest login along the MRO (LoginService's), not the base's
    assert out(flat, f"{AUTH}.Audited.login", "override") == {
        (f"{AUTH}.LoginService.login", "override", 46)
    }
    assert [e.source for e in flat.overriders_of(f"{AUTH}.BaseService.login")] == [
        f"{AUTH}.LoginService.login"
    ]


def test_method_calls_resolve_through_self_super_mro_and_typed_attributes(flat: CodeGraph) -> None:
    assert out(flat, f"{AUTH}.LoginService.login") == {
        (f"{AUTH}.BaseService.login", "call", 28),  # super().login(user)
        (f"{MODELS}.Repo.save", "call", 29),  # self.repo = repo, repo: m.Repo
        (f"{AUTH}.LoginService.repo", "class-member", 29),
        (f"{AUTH}.Session.open", "call", 30),  # self.session = Session()
        (f"{AUTH}.LoginService.session", "class-member", 30),
        (f"{AUTH}.BaseService.audit", "call", 31),  # inherited through the MRO
        # and on an Audited(Mixin, LoginService), self.audit() is Mixin.audit: C3 puts it first
        (f"{AUTH}.Mixin.audit", "call", 31),
        ("shop.pricing.PRICE_CAP", "class-member", 32),  # relative import ..pricing
        ("shop.accounts.models.User", "type-ref", 27),  # TYPE_CHECKING-only import
        (f"{AUTH}.BaseService.login", "override", 27),
    }
    # C3: Audited(Mixin, LoginService) finds Mixin.audit before BaseService.audit
    assert (f"{AUTH}.Mixin.audit", "call", 47) in out(flat, f"{AUTH}.Audited.login")
    assert (f"{AUTH}.LoginService.login", "call", 48) in out(flat, f"{AUTH}.Audited.login")


def test_constructor_calls_instantiate_the_class_and_call_its_init(flat: CodeGraph) -> None:
    calls = [e for e in flat.edges() if e.source == f"{AUTH}.login"]
    rows = {(e.target, e.kind.value, e.span.line, e.args) for e in calls}
    one = ArgShape(positional=1)
    assert rows == {
        (f"{AUTH}.LoginService", "instantiate", 52, one),
        (f"{AUTH}.LoginService.__init__", "call", 52, one),
        (f"{MODELS}.Repo", "instantiate", 52, ArgShape()),  # no __init__ defined: no call edge
        (f"{AUTH}.LoginService.login", "call", 53, one),  # svc = LoginService(...); svc.login()
        (f"{MODELS}.User", "instantiate", 53, one),  # through the module alias `m`
        (f"{MODELS}.User.__init__", "call", 53, one),
    }
    edge = next(
        e for e in calls if e.kind is EdgeKind.INSTANTIATE and e.target.endswith("LoginService")
    )
    assert edge.span == Span(line=52, col=10, end_line=52, end_col=32)
    assert edge.file == "shop/accounts/auth.py"


def test_calls_through_reexports_aliases_and_module_attributes(flat: CodeGraph) -> None:
    assert out(flat, "shop.checkout.checkout") == {
        (f"{AUTH}.login", "call", 8),  # from shop import login: two __init__ re-exports
        (f"{MODELS}.User.name", "class-member", 8),  # user: Account (re-exported alias of User)
        (f"{AUTH}.Session.open", "call", 9),  # handler.open(): name-matched, see below
        ("shop.pricing.price", "call", 10),  # import shop.pricing; shop.pricing.price()
        ("shop.pricing.price", "call", 11),  # import shop.pricing as pr
        (f"{AUTH}.logout", "call", 12),  # dangling: auth has no logout
        ("shop.pricing.PRICE_CAP", "class-member", 13),
        (f"{MODELS}.User", "type-ref", 7),
    }


def test_unknown_receivers_link_to_every_same_named_callable_marked_name_matched(
    flat: CodeGraph,
) -> None:
    matched = sorted(
        (e.source, e.target, e.span.line)
        for e in flat.edges()
        if e.name_matched and e.kind is EdgeKind.CALL
    )
    # `handler` is an unannotated parameter: every method named `open` is a candidate
    assert matched == [("shop.checkout.checkout", f"{AUTH}.Session.open", 9)]
    resolved = [e for e in flat.callers_of(f"{AUTH}.Session.open") if not e.name_matched]
    assert [(e.source, e.span.line) for e in resolved] == [(f"{AUTH}.LoginService.login", 30)]


def test_properties_read_through_an_instance_have_their_getters_type(flat: CodeGraph) -> None:
    assert out(flat, f"{MODELS}.Profile.describe") == {
        (f"{MODELS}.Profile.owner", "class-member", 22),  # the property itself is used
        (f"{MODELS}.Profile.owner", "call", 22),  # and its getter runs
        (f"{MODELS}.User.name", "class-member", 22),  # owner -> User, by its annotation
    }


def test_return_values_and_fixture_values_type_their_receivers(flat: CodeGraph) -> None:
    # def make_cart(): return Cart(None)  →  make_cart().total() is Cart.total
    assert out(flat, "shop.checkout.cart_total") == {
        ("shop.checkout.make_cart", "call", 29),
        ("shop.checkout.Cart.total", "call", 29),
    }
    # `service` is the fixture returning LoginService(db): service.audit() goes through its MRO
    assert out(flat, "tests.unit.test_auth.TestService.test_method", "call") == {
        (f"{AUTH}.BaseService.audit", "call", 18)
    }
    # the overriding `db(db)` gets the parent fixture's Repo()
    assert [(e.target, e.name_matched) for e in flat.dependencies("tests.unit.conftest.db")] == [
        ("tests.conftest.db", False),
        (f"{MODELS}.Repo.save", False),
    ]


def test_dangling_targets_keep_imports_and_calls_of_a_missing_name(flat: CodeGraph) -> None:
    assert flat.node(f"{AUTH}.logout") is None
    assert {(e.source, e.kind.value, e.span.line) for e in flat.dependents(f"{AUTH}.logout")} == {
        ("shop.checkout", "import", 4),
        ("shop.checkout.checkout", "call", 12),
    }


def test_reexports_chain_through_two_inits_and_all(flat: CodeGraph) -> None:
    assert out(flat, "shop", "reexport") == {
        (f"{AUTH}.login", "reexport", 2),
        (f"{MODELS}.User", "reexport", 3),
        ("shop.pricing.PRICE_CAP", "reexport", 4),
    }
    members = {
        (e.source, e.member) for e in flat.dependents(f"{AUTH}.login", kinds=[EdgeKind.REEXPORT])
    }
    assert members == {("shop", "login"), ("shop.accounts", "login")}
    assert out(flat, "shop.accounts", "reexport") == {
        (f"{AUTH}.LoginService", "reexport", 1),
        (f"{AUTH}.login", "reexport", 1),
    }
    # a private name is imported, not re-exported
    assert out(flat, "shop", "import") == {("shop._private._helper", "import", 5)}
    importers = {(e.source, e.kind.value) for e in flat.importers_of(f"{AUTH}.login")}
    assert importers == {
        ("shop", "reexport"),
        ("shop.accounts", "reexport"),
        ("shop.checkout", "import"),
        ("tests.unit.test_auth", "import"),
    }


def test_import_edges_are_symbol_level_or_module_level(flat: CodeGraph) -> None:
    assert out(flat, "shop.checkout", "import") == {
        ("shop.pricing", "import", 1),
        ("shop.pricing", "import", 2),
        (f"{AUTH}.login", "import", 3),
        (f"{MODELS}.User", "import", 3),
        (f"{AUTH}.logout", "import", 4),
    }
    assert out(flat, AUTH, "import") == {
        ("shop.pricing.PRICE_CAP", "import", 5),
        (MODELS, "import", 6),  # from . import models as m
    }
    assert out(flat, AUTH, "type-ref") == {(f"{MODELS}.User", "type-ref", 9)}


def test_src_layout_maps_modules_under_src(src: CodeGraph) -> None:
    node = src.node("lib.core.compute")
    assert node is not None and node.file == "src/lib/core.py"
    assert edge_rows(src, source="lib.util.use") == {
        ("lib.util.use", "lib.core.compute", "call", 5)
    }
    assert edge_rows(src, source="lib") == {("lib", "lib.core.compute", "reexport", 1)}
    assert edge_rows(src, source="tests.test_core.test_compute") == {
        ("tests.test_core.test_compute", "conftest.data", "fixture", 4),
        ("tests.test_core.test_compute", "lib.core.helper", "tests", 4),
        ("tests.test_core.test_compute", "lib.core.compute", "call", 5),
        ("tests.test_core.test_compute", "lib.core.compute", "tests", 5),
    }


def test_class_member_edges_for_self_fields_typed_objects_and_constants(flat: CodeGraph) -> None:
    assert out(flat, f"{AUTH}.BaseService.audit") == {
        (f"{AUTH}.BaseService.retries", "class-member", 19)
    }
    assert out(flat, "shop.checkout.Cart.total") == {
        ("shop.checkout.Cart.owner", "class-member", 21),
        (f"{MODELS}.User.name", "class-member", 21),  # self.owner = owner; owner: Account
    }
    users = {(e.source, e.span.line) for e in flat.field_users_of("shop.pricing.PRICE_CAP")}
    assert users == {
        ("shop.pricing.price", 5),
        (f"{AUTH}.LoginService.login", 32),
        ("shop.checkout.checkout", 13),
    }


def test_fixtures_resolve_by_conftest_scope_and_override(flat: CodeGraph) -> None:
    fixture_edges = edge_rows(flat, kind="fixture")
    assert fixture_edges == {
        ("tests.conftest.service", "tests.conftest.db", "fixture", 13),
        ("tests.unit.conftest.db", "tests.conftest.db", "fixture", 5),  # overrides its parent
        ("tests.unit.test_auth.test_login", "tests.conftest.service", "fixture", 7),
        ("tests.unit.test_auth.test_price", "tests.unit.conftest.db", "fixture", 12),
        ("tests.unit.test_auth.TestService.test_method", "tests.conftest.service", "fixture", 17),
        ("tests.test_top.test_db", "tests.conftest.db", "fixture", 1),  # no unit conftest here
        ("tests.other.test_other.test_other", "tests.conftest.service", "fixture", 1),
        # autouse fixtures, from the class and from the folder's conftest, at the test's name
        (
            "tests.auto.test_auto.TestAuto.test_auto",
            "tests.auto.test_auto.TestAuto.local",
            "fixture",
            9,
        ),
        ("tests.auto.test_auto.TestAuto.test_auto", "tests.auto.conftest.reset", "fixture", 9),
    }


def test_tests_edges_follow_calls_and_requested_fixtures(flat: CodeGraph) -> None:
    assert out(flat, "tests.unit.test_auth.test_login", "tests") == {
        (f"{AUTH}.login", "tests", 8),
        # through `service` and, as seen from tests/unit, the overriding `db`
        (f"{AUTH}.LoginService", "tests", 7),
        (f"{AUTH}.LoginService.__init__", "tests", 7),
        (f"{MODELS}.Repo", "tests", 7),
        (f"{MODELS}.Repo.save", "tests", 7),
    }
    # from tests/other only the top-level db is visible
    assert out(flat, "tests.other.test_other.test_other", "tests") == {
        (f"{AUTH}.LoginService", "tests", 1),
        (f"{AUTH}.LoginService.__init__", "tests", 1),
        (f"{MODELS}.Repo", "tests", 1),
    }
    # a parametrized test is one node; its parametrize argument is not a fixture request
    assert out(flat, "tests.unit.test_auth.test_price", "tests") == {
        ("shop.pricing.price", "tests", 13),
        (f"{MODELS}.Repo", "tests", 12),
        (f"{MODELS}.Repo.save", "tests", 12),
    }
    assert [e.source for e in flat.tests_of("shop.pricing.price")] == [
        "tests.auto.test_auto.TestAuto.test_auto",  # through the autouse `reset`
        "tests.unit.test_auth.test_price",
    ]


def test_fixture_calls_are_ordinary_call_edges(flat: CodeGraph) -> None:
    assert out(flat, "tests.conftest.service", "call") == {
        (f"{AUTH}.LoginService.__init__", "call", 14)
    }
    assert out(flat, "tests.conftest.db", "instantiate") == {(f"{MODELS}.Repo", "instantiate", 9)}


def test_dynamic_references_become_dynamic_refs_with_their_source(flat: CodeGraph) -> None:
    refs = {(r.source, r.name, r.kind, r.file, r.span.line) for r in flat.dynamic_refs()}
    assert refs >= {
        ("shop.plugins.load", "login", DynamicKind.GETATTR, "shop/plugins.py", 8),
        ("shop.plugins.load", "shop.pricing", DynamicKind.IMPORT_MODULE, "shop/plugins.py", 7),
        ("shop.pricing", "__getattr__", DynamicKind.MODULE_GETATTR, "shop/pricing.py", 8),
        ("shop.plugins", "price", DynamicKind.STRING_LITERAL, "shop/plugins.py", 3),
    }
    assert [r.source for r in flat.module_getattr_refs()] == ["shop.pricing"]
    assert [r.reason for r in flat.dynamic_refs_named("login")] == [
        "string-keyed getattr of 'login'"
    ]
