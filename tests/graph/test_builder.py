"""GraphBuilder: incremental patching, dangling targets, re-rooting, and update ≡ fresh build."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from impact_ls.graph.builder import GraphBuilder
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.graph.extract import extract_facts
from impact_ls.graph.modules import module_for, source_roots
from impact_ls.model import Edge, EdgeKind

AUTH = "shop.accounts.auth"
MODELS = "shop.accounts.models"


def snapshot(graph: CodeGraph) -> tuple[list[str], list[str], list[str]]:
    """Nodes, edges and dynamic refs as sorted lists: equal snapshots mean equal graphs."""
    return (
        sorted(repr(n) for n in graph.nodes()),
        sorted(repr(e) for e in graph.edges()),
        sorted(repr(d) for d in graph.dynamic_refs()),
    )


def fresh(texts: dict[str, str]) -> GraphBuilder:
    """A cold ``load`` of ``texts``, modules named under the roots of exactly these files."""
    roots = source_roots(texts)
    facts = []
    for path, text in texts.items():
        module, is_package = module_for(path, roots)
        facts.append(extract_facts(text, file=path, module=module, is_package=is_package))
    builder = GraphBuilder()
    builder.load(facts)
    return builder


def test_incremental_build_equals_load(build_fixture, fixture_texts) -> None:
    incremental = build_fixture("graph_flat")
    assert snapshot(incremental.graph) == snapshot(fresh(fixture_texts("graph_flat")).graph)
    assert incremental.files() == sorted(fixture_texts("graph_flat"))
    facts = incremental.facts("shop/pricing.py")
    assert facts is not None and facts.module == "shop.pricing"
    assert incremental.facts("nope.py") is None


def test_deleted_function_keeps_its_callers_through_dangling_edges(build_fixture, fixture_texts):
    builder = build_fixture("graph_flat")
    text = fixture_texts("graph_flat")["shop/accounts/auth.py"]
    cut = text.index("def login(name")
    builder.update("shop/accounts/auth.py", text[:cut])
    graph = builder.graph
    assert graph.node(f"{AUTH}.login") is None
    assert {
        (e.source, e.kind.value, e.file, e.span.line) for e in graph.dependents(f"{AUTH}.login")
    } == {
        ("shop", "reexport", "shop/__init__.py", 2),
        ("shop.accounts", "reexport", "shop/accounts/__init__.py", 1),
        ("shop.checkout", "import", "shop/checkout.py", 3),
        ("shop.checkout.checkout", "call", "shop/checkout.py", 8),
        ("tests.unit.test_auth", "import", "tests/unit/test_auth.py", 3),
        ("tests.unit.test_auth.test_login", "call", "tests/unit/test_auth.py", 8),
        ("tests.unit.test_auth.test_login", "tests", "tests/unit/test_auth.py", 8),
    }
    # restoring the text restores the graph exactly
    builder.update("shop/accounts/auth.py", text)
    assert snapshot(builder.graph) == snapshot(fresh(fixture_texts("graph_flat")).graph)


def test_call_on_known_class_without_the_method_is_dangling(build_fixture) -> None:
    builder = build_fixture("graph_flat")
    builder.update(
        "shop/logout.py",
        "from shop.accounts.auth import LoginService\n\n"
        "def bye(svc: LoginService):\n    svc.logout()\n",
    )
    assert {
        (e.source, e.kind.value, e.span.line, e.name_matched)
        for e in builder.graph.callers_of(f"{AUTH}.LoginService.logout")
    } == {("shop.logout.bye", "call", 4, False)}


def test_a_change_reresolves_dependent_files(build_fixture, fixture_texts) -> None:
    builder = build_fixture("graph_flat")
    models = fixture_texts("graph_flat")["shop/accounts/models.py"]
    moved = models.replace(
        "class Repo:\n    def save(self, user):\n        return user\n",
        "class BaseRepo:\n    def save(self, user):\n        return user\n\n\n"
        "class Repo(BaseRepo):\n    pass\n",
    )
    builder.update("shop/accounts/models.py", moved)
    # auth.py did not change, but its `self.repo.save(user)` now resolves through Repo's MRO
    callers = builder.graph.callers_of(f"{MODELS}.BaseRepo.save")
    assert [(e.source, e.span.line, e.name_matched) for e in callers] == [
        (f"{AUTH}.LoginService.login", 29, False),
        ("tests.unit.conftest.db", 6, False),  # `db.save(None)`, db being the fixture's Repo()
    ]
    assert builder.graph.callers_of(f"{MODELS}.Repo.save") == []
    assert "shop/accounts/auth.py" in builder.last_resolved
    texts = dict(fixture_texts("graph_flat"), **{"shop/accounts/models.py": moved})
    assert snapshot(builder.graph) == snapshot(fresh(texts).graph)


def test_a_body_only_edit_reresolves_only_that_file(build_fixture, fixture_texts) -> None:
    builder = build_fixture("graph_flat")
    text = fixture_texts("graph_flat")["shop/accounts/models.py"]
    builder.update("shop/accounts/models.py", text.replace("return user", "return [user]"))
    assert builder.last_resolved == ("shop/accounts/models.py",)
    # a signature-free edit of a fixture body is visible to tests elsewhere: they re-resolve
    conftest = fixture_texts("graph_flat")["tests/conftest.py"]
    builder.update("tests/conftest.py", conftest.replace("return Repo()", "return None"))
    assert "tests/test_top.py" in builder.last_resolved
    assert [
        e.target
        for e in builder.graph.dependencies("tests.test_top.test_db", kinds=[EdgeKind.TESTS])
    ] == []


def test_an_interface_edit_reresolves_only_files_whose_answers_changed() -> None:
    texts = {
        "store.py": "class Store:\n    def get(self, key):\n        return key\n",
        "uses.py": "from store import Store\n\n\ndef make():\n    return Store()\n",
        # reads "the methods named get" (an unknown receiver), never the module store
        "guess.py": "def fetch(thing):\n    return thing.get(1)\n",
    }
    builder = fresh(texts)
    # a new method: store's interface changed, and so did "the methods named put"
    added = texts["store.py"] + "\n    def put(self, key):\n        return key\n"
    builder.update("store.py", added)
    assert builder.last_resolved == ("store.py", "uses.py")
    # a method named get appears elsewhere: guess.py's answer changed, so it re-resolves
    other = "class Cache:\n    def get(self, key):\n        return None\n"
    builder.update("cache.py", other)
    assert "guess.py" in builder.last_resolved
    assert sorted(e.target for e in builder.graph.dependencies("guess.fetch")) == [
        "cache.Cache.get",
        "store.Store.get",
    ]
    final = dict(texts, **{"store.py": added, "cache.py": other})
    assert snapshot(builder.graph) == snapshot(fresh(final).graph)


def test_remove_forgets_the_file_and_dangles_its_users(build_fixture, fixture_texts) -> None:
    builder = build_fixture("graph_flat")
    builder.remove("shop/pricing.py")
    builder.remove("shop/pricing.py")  # removing twice is a no-op
    graph = builder.graph
    assert graph.node("shop.pricing.price") is None
    assert "shop/pricing.py" not in builder.files()
    # `from shop.pricing import price`, `shop.pricing.price()`, `pr.price()`: the package `shop`
    # is ours, so its missing module is a dangling target, not a library
    assert [(e.source, e.span.line) for e in graph.callers_of("shop.pricing.price")] == [
        ("shop.checkout.checkout", 10),
        ("shop.checkout.checkout", 11),
        ("tests.auto.conftest.reset", 8),
        ("tests.unit.test_auth.test_price", 13),
    ]
    texts = {k: v for k, v in fixture_texts("graph_flat").items() if k != "shop/pricing.py"}
    assert snapshot(graph) == snapshot(fresh(texts).graph)


def test_first_src_file_reroots_every_module() -> None:
    builder = GraphBuilder()
    builder.update("tests/test_lib.py", "from lib.core import f\n\ndef test_f():\n    f()\n")
    # lib is not in the project yet: the call ends at an installed package's dotted name
    assert builder.graph.node("lib.core.f") is None
    assert [e.source for e in builder.graph.callers_of("lib.core.f")] == ["tests.test_lib.test_f"]
    builder.update("src/lib/core.py", "def f():\n    return 1\n")
    assert builder.roots == ("src", "")
    assert [(e.source, e.span.line) for e in builder.graph.callers_of("lib.core.f")] == [
        ("tests.test_lib.test_f", 4)
    ]
    builder.remove("src/lib/core.py")
    assert builder.roots == ("",)
    # an installed package again: a call edge to its name, and no ``tests`` edge (not our unit)
    assert [(e.target, e.kind) for e in builder.graph.dependencies("tests.test_lib.test_f")] == [
        ("lib.core.f", EdgeKind.CALL)
    ]


def test_set_facts_accepts_facts_from_a_cache() -> None:
    builder = GraphBuilder()
    facts = extract_facts(
        "def f():\n    g()\n\ndef g():\n    pass\n", file="m.py", module="m", is_package=False
    )
    builder.set_facts(facts)
    assert [(e.source, e.target) for e in builder.graph.callers_of("m.g")] == [("m.f", "m.g")]
    assert builder.facts("m.py") is facts


def test_load_starts_from_nothing_and_keeps_the_confirmer() -> None:
    def confirm(edge: Edge) -> bool:
        return edge.source != "old.f"

    builder = GraphBuilder(confirmer=confirm)
    builder.update("old.py", "def f():\n    g()\n\ndef g():\n    pass\n")
    builder.load(
        [extract_facts("def h():\n    pass\n", file="new.py", module="new", is_package=False)]
    )
    assert builder.files() == ["new.py"]
    assert builder.facts("old.py") is None
    assert [n.id for n in builder.graph.nodes()] == ["new", "new.h"]
    assert builder.graph.callers_of("old.g") == []
    assert builder.graph.confirmer is confirm
    # nothing of the first file lingers in the project indexes: ``old`` is now an installed
    # (external) module, so ``g()`` ends at its dotted name, while ``h()`` finds the loaded file
    builder.update(
        "user.py", "from new import h\nfrom old import g\n\ndef u():\n    h()\n    g()\n"
    )
    assert [(e.target, e.kind) for e in builder.graph.dependencies("user.u")] == [
        ("new.h", EdgeKind.CALL),
        ("old.g", EdgeKind.CALL),
    ]
    assert builder.graph.node("old.g") is None


VARIANTS: dict[str, list[str]] = {
    "pkg/__init__.py": [
        "from .a import Base, helper\n__all__ = ['Base', 'helper']\n",
        "from .b import *\n",
        "",
    ],
    "pkg/a.py": [
        "class Base:\n    def run(self):\n        return 1\n\n"
        "def helper(x):\n    return Base().run()\n",
        "from .b import Child as Base\n\ndef helper(x, y=1):\n    return x\n",
        "def helper(:\n",
        "from pkg.b import Child\n\ndef helper(x):\n    return Child()\n\n"
        "class Base:\n    def run(self):\n        return self\n",
    ],
    "pkg/b.py": [
        "from pkg.a import Base, helper\n\nclass Child(Base):\n    def run(self):\n"
        "        return helper(self)\n\n    def go(self, other):\n        other.run()\n"
        "        return super().run()\n",
        "from pkg import helper\nfrom ns.x import y\nCONST = 3\n\ndef use():\n"
        "    y.f()\n    return helper(CONST)\n",
        "__all__ = ['Child']\nclass Child:\n    pass\n",
    ],
    "ns/x/y.py": ["def f():\n    return 1\n", ""],
    "tests/conftest.py": [
        "import pytest\nfrom pkg.a import helper\n\n@pytest.fixture\ndef thing():\n"
        "    return helper(1)\n",
        "import pytest\n\n@pytest.fixture\ndef thing(other):\n    return other\n\n"
        "@pytest.fixture\ndef other():\n    from pkg.b import use\n    return use()\n",
        "import pytest\nfrom pkg.a import helper\n\n@pytest.fixture\ndef thing():\n"
        "    return helper(2)\n",
    ],
    "tests/test_a.py": [
        "from pkg import helper\n\ndef test_one(thing):\n    assert helper(thing)\n",
        "import pkg.b as b\n\nclass TestX:\n    def test_two(self, thing):\n"
        "        b.Child().go(thing)\n",
        "def test_three(thing):\n    thing.run().run()\n    thing.go(1)\n",
    ],
    "tests/sub/conftest.py": [
        "import pytest\nfrom pkg.a import helper\n\n@pytest.fixture(autouse=True)\n"
        "def auto():\n    return helper(0)\n",
        "import pytest\n\n@pytest.fixture\ndef thing(thing):\n    return thing\n",
    ],
    "tests/sub/test_b.py": ["def test_b(thing):\n    assert thing\n"],
    # the value-flow facts that cross files: lambdas, class attributes holding functions,
    # fields given bound methods, properties, disagreeing returns, parameter defaults
    "pkg/c.py": [
        "from pkg.a import helper\n\nclass Holder:\n    hook = staticmethod(helper)\n"
        "    key = lambda self: helper(1)\n\n    def __init__(self, flag):\n"
        "        self.cb = self.run if flag else self.key\n\n    def run(self):\n"
        "        return self.hook(1)\n\n    @property\n    def value(self):\n"
        "        return self.cb()\n\ndef make(flag, fn=lambda: helper(2)):\n"
        "    return helper if flag else fn\n",
        "from pkg.b import Child\n\nclass Holder(Child):\n    hook = Child\n\n"
        "    @property\n    def value(self):\n        return self.hook()\n\n"
        "def make(flag):\n    if flag:\n        return None\n    return Child\n",
        "",
    ],
    "pkg/d.py": [
        "from pkg.c import Holder, make\n\nclass Sub(Holder):\n    hook = staticmethod(make)\n\n"
        "def go():\n    h = Sub(1)\n    h.value\n    h.cb()\n    h.key()\n    return make(0)()\n",
        "from pkg.c import make\nHOOKS = [make]\n\ndef add(f=make):\n    HOOKS.append(f)\n\n"
        "def go():\n    for f in HOOKS:\n        f(1)()\n",
    ],
    "src/lib/m.py": [
        "from pkg.a import Base\n\nclass M(Base):\n    def run(self):\n        return 2\n",
        "def run():\n    return 0\n",
    ],
}

_OPS = st.lists(
    st.tuples(
        st.sampled_from(sorted(VARIANTS)),
        st.integers(min_value=-1, max_value=3),  # -1 = remove
        st.booleans(),  # set extracted facts, as a refresh does, where the roots stay
    ),
    min_size=1,
    max_size=14,
)


def _apply(
    builder: GraphBuilder, texts: dict[str, str], ops: list[tuple[str, int, bool]]
) -> dict[str, str]:
    """Run ``ops`` on ``builder``; the texts it then holds."""
    texts = dict(texts)
    for path, choice, as_facts in ops:
        if choice < 0:
            builder.remove(path)
            texts.pop(path, None)
            continue
        text = VARIANTS[path][choice % len(VARIANTS[path])]
        roots = source_roots([*texts, path])
        if as_facts and roots == builder.roots:
            module, is_package = module_for(path, roots)
            builder.set_facts(extract_facts(text, file=path, module=module, is_package=is_package))
        else:
            builder.update(path, text)
        texts[path] = text
    return texts


@settings(max_examples=30, deadline=None, database=None)
@given(ops=_OPS)
def test_any_update_remove_sequence_equals_a_fresh_build(ops: list[tuple[str, int, bool]]) -> None:
    builder = GraphBuilder()
    texts = _apply(builder, {}, ops)
    assert builder.files() == sorted(texts)
    assert snapshot(builder.graph) == snapshot(fresh(texts).graph)


def _reads_of(builder: GraphBuilder) -> tuple[dict[str, frozenset[object]], dict[object, set[str]]]:
    """What each file's resolution read, and who read each key (the builder's own books, which
    decide what an edit re-resolves)."""
    by_file = {f: frozenset(keys) for f, keys in builder._reads.items() if keys}
    by_key = {k: set(files) for k, files in builder._readers.items() if files}
    return by_file, by_key


@settings(max_examples=30, deadline=None, database=None)
@given(
    ops=_OPS,
    visit=st.tuples(st.sampled_from(sorted(VARIANTS)), st.integers(min_value=0, max_value=3)),
    later=_OPS,
)
def test_a_visit_shows_the_other_text_then_leaves_everything_as_it_was(
    ops: list[tuple[str, int, bool]],
    visit: tuple[str, int],
    later: list[tuple[str, int, bool]],
) -> None:
    builder = GraphBuilder()
    texts = _apply(builder, {}, ops)
    path, choice = visit
    text = VARIANTS[path][choice % len(VARIANTS[path])]
    before = snapshot(builder.graph)
    reads = _reads_of(builder)
    with builder.visit(path, text) as facts:
        assert facts is not None
        assert facts.file == path
        assert snapshot(builder.graph) == snapshot(fresh({**texts, path: text}).graph)
    assert snapshot(builder.graph) == before
    assert builder.files() == sorted(texts)
    # the later edits below reach only some of the reads: every one is checked here
    assert _reads_of(builder) == reads
    # what each file read came back too: later edits re-resolve every file they must
    texts = _apply(builder, texts, later)
    assert snapshot(builder.graph) == snapshot(fresh(texts).graph)
