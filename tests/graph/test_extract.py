"""Per-file extraction: definitions, calls, accesses, imports, pytest, dynamic refs, bad input."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from impact_ls.graph.extract import extract_facts
from impact_ls.graph.facts import (
    AccessKind,
    FileFacts,
    FixtureInfo,
)
from impact_ls.graph.modules import module_for, source_roots
from impact_ls.model import ArgShape, DynamicKind, NodeKind, ParamKind, Span


def facts_of(code: str, file: str = "pkg/mod.py") -> FileFacts:
    return extract_facts(textwrap.dedent(code), file=file, module="pkg.mod", is_package=False)


SERVICE = '''\
"""Services. Second sentence."""
import os
from . import repo as r
from ..core.base import Base as B, helper
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from pkg.models import User

LIMIT = 10
__all__ = ["Service"]


class Service(B, r.Mixin):
    """Log users in. Twice."""

    retries = 3

    def __init__(self, store: r.Store | None = None) -> None:
        self.store = store
        self.cache = r.Cache()

    @staticmethod
    def make(*args, key: "User", **kw) -> "Service":
        return Service()

    async def login(self, user, /, mfa=None, *, remember=False):
        token = helper(user, mfa, remember=remember, *extra)
        self.cache.put(token)
        super().login(user)
        Service.make(**kw).login(user)
        user.name
        self.retries += LIMIT
        return os.path.join(token)
'''


def test_definitions_carry_signature_doc_params_decorators_and_spans() -> None:
    facts = facts_of(SERVICE)
    assert facts.doc == "Services."
    assert facts.line_count == 33
    by_name = {d.qualname: d for d in facts.definitions}
    assert list(by_name) == ["Service", "Service.__init__", "Service.make", "Service.login"]
    cls = by_name["Service"]
    assert cls.kind is NodeKind.CLASS
    assert cls.signature == "class Service(B, r.Mixin):"
    assert cls.doc == "Log users in."
    assert cls.bases == (("B",), ("r", "Mixin"))
    assert cls.base_spans[1] == Span(line=13, col=17, end_line=13, end_col=24)
    assert cls.attributes == ("retries", "store", "cache")
    assert (cls.span.line, cls.span.end_line) == (13, 33)
    assert cls.name_span == Span(line=13, col=6, end_line=13, end_col=13)
    init = by_name["Service.__init__"]
    assert init.kind is NodeKind.METHOD and init.in_class
    assert init.signature == "def __init__(self, store: r.Store | None = None) -> None:"
    assert [(t.name, t.chain) for t in init.param_types] == [("store", ("r", "Store"))]
    make = by_name["Service.make"]
    assert make.decorators == ("staticmethod",)
    assert [(p.name, p.kind, p.has_default) for p in make.params] == [
        ("args", ParamKind.VAR_POSITIONAL, False),
        ("key", ParamKind.KEYWORD_ONLY, False),
        ("kw", ParamKind.VAR_KEYWORD, False),
    ]
    assert make.returns == ("Service",)
    assert [(t.name, t.chain) for t in make.param_types] == [("key", ("User",))]
    login = by_name["Service.login"]
    assert login.is_async
    assert [(p.name, p.kind, p.has_default) for p in login.params] == [
        ("self", ParamKind.POSITIONAL_ONLY, False),
        ("user", ParamKind.POSITIONAL_ONLY, False),
        ("mfa", ParamKind.POSITIONAL_OR_KEYWORD, True),
        ("remember", ParamKind.KEYWORD_ONLY, True),
    ]
    assert login.signature == "async def login(self, user, /, mfa=None, *, remember=False):"


def test_multiline_headers_collapse_to_one_line() -> None:
    facts = facts_of(
        """\
        def f(
            a,  # the first
            b: int = 2,
        ) -> dict[str, int]:
            return {}
        """
    )
    assert facts.definitions[0].signature == "def f(a, b: int = 2) -> dict[str, int]:"


def test_calls_record_callee_chain_arg_shape_scope_and_locality() -> None:
    facts = facts_of(SERVICE)
    calls = [(c.scope, c.callee, c.span.line, c.args, c.head_local) for c in facts.calls]
    assert calls == [
        ("Service.__init__", ("r", "Cache"), 20, ArgShape(), False),
        ("Service", ("staticmethod",), 22, ArgShape(positional=1), False),  # bare decorator
        ("Service.make", ("Service",), 24, ArgShape(), False),
        (
            "Service.login",
            ("helper",),
            27,
            ArgShape(positional=2, keywords=("remember",), star=True),
            False,
        ),
        ("Service.login", ("self", "cache", "put"), 28, ArgShape(positional=1), False),
        ("Service.login", ("super()", "login"), 29, ArgShape(positional=1), False),
        ("Service.login", ("Service", "make", "()", "login"), 30, ArgShape(positional=1), False),
        ("Service.login", ("Service", "make"), 30, ArgShape(double_star=True), False),
        # ``+=`` calls ``__iadd__``: an implicit call, spelled out as one
        ("Service.login", ("self", "retries", "__iadd__"), 32, ArgShape(positional=1), False),
        ("Service.login", ("os", "path", "join"), 33, ArgShape(positional=1), False),
    ]


def test_accesses_cover_self_fields_params_and_module_constants() -> None:
    facts = facts_of(SERVICE)
    rows = [(a.scope, a.chain, a.access, a.span.line, a.head_local) for a in facts.accesses]
    assert rows == [
        ("Service.__init__", ("self", "store"), AccessKind.WRITE, 19, False),
        ("Service.__init__", ("self", "cache"), AccessKind.WRITE, 20, False),
        # names bound nowhere in the file are kept: a deleted global still finds its users
        ("Service.login", ("extra",), AccessKind.READ, 27, False),
        ("Service.login", ("kw",), AccessKind.READ, 30, False),
        ("Service.login", ("user", "name"), AccessKind.READ, 31, True),
        ("Service.login", ("self", "retries"), AccessKind.WRITE, 32, False),
        ("Service.login", ("LIMIT",), AccessKind.READ, 32, False),
    ]
    assert facts.constants == ("LIMIT", "__all__")


def test_self_is_spelled_self_whatever_the_parameter_is_called() -> None:
    facts = facts_of(
        """\
        class A:
            def m(this):
                this.x = 1
                def inner():
                    return this.go()
                return inner

            @classmethod
            def build(klass):
                return klass.make()
        """
    )
    assert [(c.scope, c.callee) for c in facts.calls] == [
        ("A.m.inner", ("self", "go")),
        ("A", ("classmethod",)),
        ("A.build", ("cls", "make")),
    ]
    assert [(a.scope, a.chain) for a in facts.accesses] == [("A.m", ("self", "x"))]


def test_imports_keep_alias_level_scope_and_type_checking() -> None:
    facts = facts_of(SERVICE + "\ndef late():\n    import json as j\n")
    rows = [
        (i.scope, i.module, i.level, i.name, i.asname, i.bound, i.type_checking)
        for i in facts.imports
    ]
    assert rows == [
        ("", "os", 0, None, None, "os", False),
        ("", "", 1, "repo", "r", "r", False),
        ("", "core.base", 2, "Base", "B", "B", False),
        ("", "core.base", 2, "helper", None, "helper", False),
        ("", "typing", 0, "TYPE_CHECKING", None, "TYPE_CHECKING", False),
        ("", "pkg.models", 0, "User", None, "User", True),
        ("late", "json", 0, None, "j", "j", False),
    ]
    assert facts.imports[2].span == Span(line=4, col=24, end_line=4, end_col=33)


def test_assignments_that_type_a_binding() -> None:
    facts = facts_of(
        """\
        svc = Service()
        class C:
            repo: Repo
            def m(self, other):
                x = mod.Cls(1)
                y: "Thing" = make()
                self.z = other
                self.w = x
                n = 3
        """
    )
    rows = [(a.scope, a.target, a.value, a.annotated, a.alias, a.span.line) for a in facts.assigns]
    assert rows == [
        ("", ("svc",), ("Service",), False, False, 1),
        ("C", ("repo",), ("Repo",), True, False, 3),
        ("C.m", ("x",), ("mod", "Cls"), False, False, 5),
        ("C.m", ("y",), ("Thing",), True, False, 6),
        ("C.m", ("self", "z"), ("other",), False, True, 7),
        ("C.m", ("self", "w"), ("x",), False, True, 8),
    ]


def test_all_in_its_three_spellings() -> None:
    assert facts_of('__all__ = ["a", "b"]\n').all_names == ("a", "b")
    assert facts_of('__all__ = ("a",)\n__all__ += ["b"]\n__all__.append("c")\n').all_names == (
        "a",
        "b",
        "c",
    )
    assert facts_of('__all__ = ["a"]\n__all__.extend(["d"])\n').all_names == ("a", "d")
    assert facts_of("x = 1\n").all_names is None
    # names in __all__ are re-exports, not string-keyed references
    assert facts_of('__all__ = ["a"]\n').dynamic == ()


TESTS = """\
import pytest

@pytest.fixture(name="db_conn", autouse=True)
def make_db(tmp_path, request, value=3):
    return tmp_path

@pytest.fixture
def user(db_conn):
    return db_conn

def helper():
    pass

@pytest.mark.parametrize("a, b", [(1, 2)])
@pytest.mark.usefixtures("clean")
def test_sum(a, b, user):
    assert a + b

@pytest.mark.usefixtures("clean_all")
class TestThing:
    def test_x(self, user):
        pass

    @pytest.fixture
    def local(self):
        return 1

    def not_a_test(self):
        pass

    class TestInner:
        def test_deep(self):
            pass

class Helper:
    def test_ignored(self):
        pass
"""


def test_pytest_tests_and_fixtures_with_requests() -> None:
    facts = facts_of(TESTS, file="tests/test_thing.py")
    rows = [
        (d.qualname, d.kind, d.test_id, d.fixture, [r.name for r in d.requests])
        for d in facts.definitions
    ]
    assert rows == [
        (
            "make_db",
            NodeKind.FIXTURE,
            None,
            FixtureInfo(name="db_conn", autouse=True),
            ["tmp_path", "request"],
        ),
        ("user", NodeKind.FIXTURE, None, FixtureInfo(name="user"), ["db_conn"]),
        ("helper", NodeKind.FUNCTION, None, None, []),
        ("test_sum", NodeKind.TEST, "tests/test_thing.py::test_sum", None, ["clean", "user"]),
        ("TestThing", NodeKind.CLASS, None, None, []),
        (
            "TestThing.test_x",
            NodeKind.TEST,
            "tests/test_thing.py::TestThing::test_x",
            None,
            ["clean_all", "user"],
        ),
        ("TestThing.local", NodeKind.FIXTURE, None, FixtureInfo(name="local"), ["clean_all"]),
        ("TestThing.not_a_test", NodeKind.METHOD, None, None, []),
        ("TestThing.TestInner", NodeKind.CLASS, None, None, []),
        (
            "TestThing.TestInner.test_deep",
            NodeKind.TEST,
            "tests/test_thing.py::TestThing::TestInner::test_deep",
            None,
            ["clean_all"],
        ),
        ("Helper", NodeKind.CLASS, None, None, []),
        ("Helper.test_ignored", NodeKind.METHOD, None, None, []),
    ]
    test_sum = facts.definitions[3]
    assert [r.span for r in test_sum.requests] == [
        Span(line=15, col=25, end_line=15, end_col=32),  # "clean" in usefixtures
        Span(line=16, col=19, end_line=16, end_col=23),  # the `user` parameter
    ]


@pytest.mark.parametrize(
    ("file", "is_test"),
    [
        ("tests/test_a.py", True),
        ("tests/a_test.py", True),
        ("tests/conftest.py", False),
        ("pkg/testing.py", False),
    ],
)
def test_only_pytest_file_names_hold_tests(file: str, is_test: bool) -> None:
    facts = facts_of("def test_a():\n    pass\n", file=file)
    assert (facts.definitions[0].kind is NodeKind.TEST) == is_test
    assert facts.is_test_file == is_test


def test_conftest_fixtures_are_fixtures() -> None:
    facts = facts_of(
        "from pytest import fixture\n\n@fixture\ndef db():\n    pass\n", file="tests/conftest.py"
    )
    assert facts.is_conftest
    assert [(d.kind, d.fixture) for d in facts.definitions] == [
        (NodeKind.FIXTURE, FixtureInfo(name="db"))
    ]


def test_dynamic_references_and_identifier_strings() -> None:
    facts = facts_of(
        '''\
        """Docstrings are not references."""
        import importlib
        from importlib import import_module

        def __getattr__(name):
            return getattr(REGISTRY, "login")

        def plug(obj):
            """Nor here."""
            setattr(obj, "token", 1)
            hasattr(obj, "has_it")
            importlib.import_module("pkg.plugins")
            import_module("pkg.other")
            return {"handler": "not an identifier", "x": 1}
        '''
    )
    rows = [(d.scope, d.name, d.kind, d.span.line) for d in facts.dynamic]
    assert rows == [
        ("", "__getattr__", DynamicKind.MODULE_GETATTR, 5),
        ("__getattr__", "login", DynamicKind.GETATTR, 6),
        ("plug", "token", DynamicKind.SETATTR, 10),
        ("plug", "has_it", DynamicKind.HASATTR, 11),
        ("plug", "pkg.plugins", DynamicKind.IMPORT_MODULE, 12),
        ("plug", "pkg.other", DynamicKind.IMPORT_MODULE, 13),
        ("plug", "handler", DynamicKind.STRING_LITERAL, 14),
    ]
    plug = next(d for d in facts.definitions if d.qualname == "plug")
    assert plug.strings == ("handler", "not", "an", "identifier")


def test_strings_shaped_like_dotted_paths_are_references_by_path() -> None:
    facts = facts_of(
        "TASKS = {'welcome': 'tasks.mail:send_welcome', 'bye': 'a.b:C.m'}\n"
        "MIDDLEWARE = ['app.middleware.Audit', 'e.g.', '1.2', 'a b.c', 'http://x.y', 'x:']\n"
    )
    paths = [(d.name, d.span.line) for d in facts.dynamic if d.kind is DynamicKind.DOTTED_PATH]
    assert paths == [
        ("tasks.mail.send_welcome", 1),
        ("a.b.C.m", 1),
        ("app.middleware.Audit", 2),
    ]


def test_names_computed_below_a_package_path_and_lookups_in_imported_names() -> None:
    facts = facts_of(
        """\
        import importlib
        from orm import models

        def load(payload, kind, name, module):
            importlib.import_module("drivers." + kind)
            importlib.import_module(f"plugins.{name}.hooks")
            importlib.import_module("backends.%s" % name)
            importlib.import_module("." + name)
            importlib.import_module(name)
            importlib.import_module(f"{name}.x")
            importlib.import_module("drivers.%d" % kind)
            importlib.import_module(f"app.plugins.{kind}_export")
            importlib.import_module(f"app.{kind} plugins")
            getattr(models, payload["type"])
            getattr(models.User, name)
            getattr(module, name)
            getattr(payload["x"], name)
            getattr(make(), name)
            return getattr(models, "User")
        """
    )
    rows = [(d.name, d.kind, d.span.line) for d in facts.dynamic if d.scope == "load"]
    assert rows == [
        ("drivers.*", DynamicKind.IMPORT_MODULE, 5),
        ("plugins.*.hooks", DynamicKind.IMPORT_MODULE, 6),
        ("backends.*", DynamicKind.IMPORT_MODULE, 7),
        ("app.plugins.*_export", DynamicKind.IMPORT_MODULE, 12),
        ("_export", DynamicKind.STRING_LITERAL, 12),
        ("models", DynamicKind.COMPUTED_LOOKUP, 14),
        ("type", DynamicKind.STRING_LITERAL, 14),
        ("models.User", DynamicKind.COMPUTED_LOOKUP, 15),
        ("User", DynamicKind.GETATTR, 19),
    ]


def test_a_function_storing_what_it_is_given_in_a_module_container_records_the_registry() -> None:
    facts = facts_of(
        """\
        ENCODERS = {}
        HOOKS = []
        ENCODERS["text"] = str

        def register(name):
            def wrap(function):
                ENCODERS[name] = function
                return function
            return wrap

        def hook(cls, helper):
            HOOKS.append(cls)
            ENCODERS["x"] = len
            seen = {}
            seen["k"] = cls
            return cls

        class App:
            def route(self, handler):
                self.handlers[handler.__name__] = handler

        class Shape:
            def __init_subclass__(cls):
                ENCODERS[cls.kind] = cls

            def __init__(self):
                HOOKS.append(self)
        """
    )
    rows = [(d.scope, d.name, d.span.line) for d in facts.dynamic if d.kind is DynamicKind.REGISTRY]
    assert rows == [
        ("register.wrap", "ENCODERS", 7),
        ("hook", "HOOKS", 12),
        ("Shape.__init_subclass__", "ENCODERS", 24),
        ("Shape.__init__", "HOOKS", 27),
    ]


def test_node_strings_are_capped_at_32_tokens() -> None:
    words = " ".join(f"w{i}" for i in range(50))
    facts = facts_of(f'def f():\n    return "{words}"\n')
    assert facts.definitions[0].strings == tuple(f"w{i}" for i in range(32))


def test_half_typed_file_still_yields_its_definitions() -> None:
    facts = facts_of(
        """\
        import os

        class Service:
            def login(self, user
                return 1

            def logout(self):
                self.store.drop()

        def helper(a, b=1):
            return os.getcwd()
        """
    )
    assert facts.parse_error == "'(' was never closed (line 4)"
    rows = [
        (d.qualname, d.kind, d.span.line, [p.name for p in d.params]) for d in facts.definitions
    ]
    assert rows == [
        ("Service", NodeKind.CLASS, 3, []),
        ("Service.login", NodeKind.METHOD, 4, ["self", "user"]),  # from parso
        ("Service.logout", NodeKind.METHOD, 7, ["self"]),
        ("helper", NodeKind.FUNCTION, 10, ["a", "b"]),
    ]
    # the intact parts keep their calls at their real lines
    assert [(c.scope, c.callee, c.span.line) for c in facts.calls] == [
        ("Service.logout", ("self", "store", "drop"), 8),
        ("helper", ("os", "getcwd"), 11),
    ]
    assert [i.module for i in facts.imports] == ["os"]


def test_unfinished_block_keeps_the_definition() -> None:
    facts = facts_of("def f(x):\n\ndef g():\n    return f(1)\n")
    assert facts.parse_error is not None
    assert [d.qualname for d in facts.definitions] == ["f", "g"]
    assert [(c.scope, c.callee) for c in facts.calls] == [("g", ("f",))]


@pytest.mark.parametrize(
    "text",
    ["", "# just a comment\n# and another\n", "\n\n\n", '"""only a docstring"""\n'],
)
def test_empty_and_comment_only_files_yield_only_a_module(text: str) -> None:
    facts = facts_of(text)
    assert facts.parse_error is None
    assert (facts.definitions, facts.calls, facts.imports, facts.accesses) == ((), (), (), ())


@pytest.mark.parametrize(
    "text",
    [
        "\x00\x01",
        "def (:",
        "class",
        '"""never closed',
        "x = (" * 200,
        "a" + "[0]" * 5000,
        "if x:\n" + "".join("    " * i + "if x:\n" for i in range(1, 120)),
        "\ufeffdef f():\n    pass\n",
    ],
)
def test_hostile_text_never_raises(text: str) -> None:
    facts = facts_of(text)
    assert isinstance(facts, FileFacts)
    assert facts.module == "pkg.mod"


def test_compiler_warnings_do_not_break_valid_code() -> None:
    # pytest runs with warnings as errors; a SyntaxWarning must not make this file "broken"
    facts = facts_of('PATTERN = "\\d+"\nx = 1if True else 2\n\ndef f():\n    return PATTERN\n')
    assert facts.parse_error is None
    assert [d.qualname for d in facts.definitions] == ["f"]


@settings(max_examples=50, deadline=None, database=None)
@given(st.text(alphabet=st.sampled_from(list("def class (): \n\t=,.'\"#@xyz0_*[]")), max_size=80))
def test_extraction_never_raises_on_arbitrary_text(text: str) -> None:
    facts = extract_facts(text, file="m.py", module="m", is_package=False)
    assert isinstance(facts, FileFacts)
    assert facts.module == "m"


def test_source_roots_and_module_names() -> None:
    flat = ["pkg/__init__.py", "pkg/a.py", "tests/test_a.py", "setup.py"]
    assert source_roots(flat) == ("",)
    assert module_for("pkg/__init__.py", ("",)) == ("pkg", True)
    assert module_for("pkg/a.py", ("",)) == ("pkg.a", False)
    assert module_for("tests/test_a.py", ("",)) == ("tests.test_a", False)  # namespace package
    src = ["src/lib/__init__.py", "src/lib/core.py", "tests/test_core.py", "src/other/src/x.py"]
    roots = source_roots(src)
    assert roots == ("src", "")
    assert module_for("src/lib/core.py", roots) == ("lib.core", False)
    assert module_for("src/lib/__init__.py", roots) == ("lib", True)
    assert module_for("tests/test_core.py", roots) == ("tests.test_core", False)
    mono = [
        "packages/a/src/a/__init__.py",
        "packages/b/src/b.py",
        "pkg/src/__init__.py",
        "pkg/src/m.py",
    ]
    roots = source_roots(mono)
    assert roots == ("packages/a/src", "packages/b/src", "")  # pkg/src is a package, not a root
    assert module_for("packages/b/src/b.py", roots) == ("b", False)
    assert module_for("pkg/src/m.py", roots) == ("pkg.src.m", False)
    assert module_for("__init__.py", ("",)) == ("__init__", False)
    assert source_roots(["README.md"]) == ("",)


def test_agreed_return_values_of_unannotated_functions() -> None:
    facts = facts_of(
        """\
        import contextlib

        def make():
            return Session()

        def chained(flag):
            if flag:
                return self_helper.build()
            return self_helper.build()

        def mixed(flag):
            if flag:
                return Session()
            return Door()

        def local():
            s = Session()
            return s

        def gen():
            yield Session()

        @contextlib.contextmanager
        def ctx():
            return Session()

        async def coro():
            return Session()

        def annotated() -> "Door":
            return Session()

        class Fluent:
            def where(self):
                return self

        def nothing():
            pass
        """
    )
    values = {d.qualname: (d.returns, d.returns_value) for d in facts.definitions}
    assert values == {
        "make": ((), ("Session", "()")),
        "chained": ((), ("self_helper", "build", "()")),
        "mixed": ((), ()),
        "local": ((), ()),
        "gen": ((), ()),
        "ctx": ((), ()),
        "coro": ((), ()),
        "annotated": (("Door",), ()),
        "Fluent": ((), ()),
        "Fluent.where": ((), ("self",)),
        "nothing": ((), ()),
    }


def test_class_attributes_come_from_the_body_self_and_cls() -> None:
    facts = facts_of(
        """\
        class Registry:
            kinds: dict
            default = None

            def __init__(self):
                self.items = []
                other.x = 1

            @classmethod
            def reset(cls):
                cls.instances = 0
        """
    )
    assert facts.definitions[0].attributes == ("kinds", "default", "items", "instances")


@pytest.mark.parametrize(
    ("body", "served"),
    [
        # deprecation shims: the literals the name is compared with
        ('if name == "Old":\n        return New\n    raise AttributeError(f"no {name}")', ["Old"]),
        (
            'if name in ("A", "B"):\n        return 1\n    elif name == "C":\n        return 2\n'
            "    raise AttributeError(name)",
            ["A", "B", "C"],  # raising with the name reports it, it does not hand it on
        ),
        ("return _make(name)", None),  # the name handed to a call: a forwarder for all it tells
        ('if name in ("A", "B"):\n        return 1\n    raise AttributeError', ["A", "B"]),
        # forwarders serve any name
        ("return getattr(_impl, name)", None),
        ('return importlib.import_module(f".{name}", __name__)', None),
        ("return _LAZY[name]()", None),
        ('if name.startswith("get_"):\n        return 1', None),
        ("if name in _NAMES:\n        return 1", None),
        ("raise AttributeError", None),
    ],
)
def test_a_module_getattr_serves_the_literals_it_compares_its_name_with(
    body: str, served: list[str] | None
) -> None:
    facts = facts_of(f"def __getattr__(name):\n    {body}\n")
    refs = [d.name for d in facts.dynamic if d.kind is DynamicKind.MODULE_GETATTR]
    assert refs == (served or ["__getattr__"])


def test_strings_of_type_expressions_are_forward_references_not_identifier_strings() -> None:
    facts = facts_of(
        """\
        import typing
        from typing import Callable, Literal, Optional, TypeVar, cast

        Handler = Callable[["Request"], typing.Awaitable["Response"]]
        T = TypeVar("T", bound="Session")
        MODE = Literal["strict"]

        def run(s):
            session = cast("Session", s)
            return Optional["pkg.models.User"], {"Request": 1}
        """
    )
    refs = sorted((r.scope, r.chain, r.span.line) for r in facts.type_refs)
    assert refs == [
        ("", ("Request",), 4),
        ("", ("Response",), 4),
        ("", ("Session",), 5),
        ("run", ("Session",), 9),
        ("run", ("pkg", "models", "User"), 10),
    ]
    # a Literal's strings are values, a dict key is data: both stay identifier strings
    strings = sorted((d.scope, d.name) for d in facts.dynamic)
    assert strings == [("", "strict"), ("run", "Request")]


@pytest.mark.parametrize(
    ("lookup", "recorded"),
    [
        ('getattr(widget, "on_" + kind, None)', ("on_*", DynamicKind.GETATTR)),
        ('getattr(self, f"visit_{type(node).__name__}")', ("visit_*", DynamicKind.GETATTR)),
        ('hasattr(obj, name + "_handler")', ("*_handler", DynamicKind.HASATTR)),
        ('setattr(obj, f"{field}_cache", 1)', ("*_cache", DynamicKind.SETATTR)),
        # a literal part this short could begin any private name: nothing to match
        ('getattr(obj, "_" + name)', None),
        ('getattr(obj, f"x{name}")', None),
        # no literal part, or more than one computed part
        ("getattr(obj, prefix + name)", None),
        ('getattr(obj, f"do_{a}_{b}")', None),
        # a module computed below a package path: a pattern of module names
        ('importlib.import_module("pkg." + name)', ("pkg.*", DynamicKind.IMPORT_MODULE)),
    ],
)
def test_a_lookup_of_a_name_computed_around_a_literal_records_its_pattern(
    lookup: str, recorded: tuple[str, DynamicKind] | None
) -> None:
    facts = facts_of(
        f"import importlib\n\n\ndef f(obj, widget, kind, name, node, field):\n    {lookup}\n"
    )
    patterns = [(d.name, d.kind) for d in facts.dynamic if "*" in d.name]
    assert patterns == ([recorded] if recorded else [])
    assert all(d.scope == "f" and d.span.line == 5 for d in facts.dynamic if "*" in d.name)
