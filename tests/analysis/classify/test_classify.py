"""The change classifier (§3.1): before/after pairs for every change type, decomposition, caps,
text that does not parse yet, and the method-body escape gate (§3.2)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from impact_ls.analysis.classify import classify_changes
from impact_ls.model import Change, ChangeType, Param, ParamKind, QualName

FILE = "pkg/auth.py"
MODULE = "pkg.auth"

# Line numbers matter: the assertions below quote them.
BASE = '''\
"""Auth services."""
from pkg.db import Session, connect
import os

TIMEOUT = 30


class LoginService(Base):
    retries = 3

    def __init__(self, db):
        self.db = db

    def login(self, user):
        tmp = user.strip()
        return self.db.find(tmp)

    @staticmethod
    def normalize(name):
        return name.lower()


def helper(a, b=1):
    total = a + b
    print(total)
    return a
'''


def _classify(after: str, before: str = BASE, **kw: object) -> tuple[Change, ...]:
    return classify_changes(file=FILE, module=MODULE, before=before, after=after, **kw)  # type: ignore[arg-type]


def _edit(old: str, new: str, text: str = BASE) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def _p(
    name: str, kind: ParamKind = ParamKind.POSITIONAL_OR_KEYWORD, default: bool = False
) -> Param:
    return Param(name=name, kind=kind, has_default=default)


def _kinds(changes: tuple[Change, ...]) -> list[tuple[str, str, tuple[int, int]]]:
    return [(c.change_type.value, c.entity, c.line_range) for c in changes]


def test_param_list_change_is_method_signature_not_method_body() -> None:
    after = _edit("def login(self, user):", "def login(self, user, mfa_code):")
    assert _classify(after) == (
        Change(
            change_type=ChangeType.METHOD_SIGNATURE,
            entity=QualName("pkg.auth.LoginService.login"),
            file=FILE,
            line_range=(14, 16),
            before_sig="def login(self, user):",
            after_sig="def login(self, user, mfa_code):",
            before_params=(_p("self"), _p("user")),
            after_params=(_p("self"), _p("user"), _p("mfa_code")),
            binds_first_param=True,
            what="added param mfa_code",
        ),
    )


def test_signature_and_body_change_together_is_one_method_signature() -> None:
    after = _edit(
        "    def login(self, user):\n        tmp = user.strip()\n",
        "    def login(self, user, mfa_code):\n        tmp = user.strip() + mfa_code\n",
    )
    assert _kinds(_classify(after)) == [
        ("method-signature", "pkg.auth.LoginService.login", (14, 16))
    ]


def test_body_only_change_is_method_body() -> None:
    after = _edit("total = a + b", "total = a * b")
    assert _classify(after) == (
        Change(
            change_type=ChangeType.METHOD_BODY,
            entity=QualName("pkg.auth.helper"),
            file=FILE,
            line_range=(23, 26),
            before_sig="def helper(a, b=1):",
            after_sig="def helper(a, b=1):",
            before_params=(_p("a"), _p("b", default=True)),
            after_params=(_p("a"), _p("b", default=True)),
            binds_first_param=False,
            escapes=False,
            escape_reason="only local temporaries changed",
            what="body changed",
        ),
    )


def test_init_param_change_is_constructor() -> None:
    after = _edit("def __init__(self, db):", "def __init__(self, db, cache):")
    (change,) = _classify(after)
    assert change.change_type is ChangeType.CONSTRUCTOR
    assert change.entity == "pkg.auth.LoginService.__init__"
    assert change.line_range == (11, 12)
    assert change.after_sig == "def __init__(self, db, cache):"
    assert change.after_params == (_p("self"), _p("db"), _p("cache"))
    assert change.binds_first_param is True
    assert change.what == "added param cache"


def test_class_bases_change_is_class_decl() -> None:
    after = _edit("class LoginService(Base):", "class LoginService(Base, AuditMixin):")
    assert _classify(after) == (
        Change(
            change_type=ChangeType.CLASS_DECL,
            entity=QualName("pkg.auth.LoginService"),
            file=FILE,
            line_range=(8, 8),
            before_sig="class LoginService(Base):",
            after_sig="class LoginService(Base, AuditMixin):",
            before_params=(_p("self"), _p("db")),
            after_params=(_p("self"), _p("db")),
            binds_first_param=True,
            what="bases changed",
            bases_before=("Base",),
            bases_after=("Base", "AuditMixin"),
            own_members=("__init__", "db", "login", "normalize", "retries"),
        ),
    )
    assert _classify(after)[0].added_bases == ("AuditMixin",)


def test_import_change_is_import_with_the_removed_names() -> None:
    after = _edit("from pkg.db import Session, connect", "from pkg.db import connect")
    assert _classify(after) == (
        Change(
            change_type=ChangeType.IMPORT,
            entity=QualName("pkg.auth"),
            file=FILE,
            line_range=(2, 2),
            removed_names=("pkg.db.Session as Session",),
            what="removed import pkg.db.Session",
        ),
    )


def test_added_import_and_reordered_imports() -> None:
    added = _edit("import os\n", "import os\nimport numpy as np\n")
    (change,) = _classify(added)
    assert (change.change_type, change.line_range, change.removed_names, change.what) == (
        ChangeType.IMPORT,
        (4, 4),
        (),
        "added import numpy",
    )
    reordered = _edit(
        "from pkg.db import Session, connect\nimport os\n",
        "import os\nfrom pkg.db import connect, Session\n",
    )
    assert _classify(reordered) == ()


def test_relative_import_removal_names_the_resolved_target() -> None:
    before = "from ..auth import login\nfrom . import views as v\n\nX = 1\n"
    after = "\nX = 1\n"
    (change,) = classify_changes(
        file="pkg/sub/mod.py", module="pkg.sub.mod", before=before, after=after
    )
    assert change.change_type is ChangeType.IMPORT
    assert change.entity == "pkg.sub.mod"
    assert change.removed_names == ("pkg.auth.login as login", "pkg.sub.views as v")
    # in a package's __init__.py the package is the module itself
    (init_change,) = classify_changes(
        file="pkg/sub/__init__.py", module="pkg.sub", before="from .core import run\n", after=""
    )
    assert init_change.removed_names == ("pkg.sub.core.run as run",)


def test_import_replaced_by_a_local_definition_removes_no_name() -> None:
    after = _edit("from pkg.db import Session, connect", "from pkg.db import Session") + (
        "\n\ndef connect():\n    return None\n"
    )
    changes = _classify(after)
    assert _kinds(changes) == [
        ("import", "pkg.auth", (2, 2)),
        ("add", "pkg.auth.connect", (29, 30)),
    ]
    assert changes[0].removed_names == ()


def test_module_constant_and_class_attribute_value_changes_are_field() -> None:
    after = _edit("TIMEOUT = 30", "TIMEOUT = 60", _edit("retries = 3", "retries = 5"))
    assert _classify(after) == (
        Change(
            change_type=ChangeType.FIELD,
            entity=QualName("pkg.auth.TIMEOUT"),
            file=FILE,
            line_range=(5, 5),
            before_sig="TIMEOUT = 30",
            after_sig="TIMEOUT = 60",
            what="value changed",
        ),
        Change(
            change_type=ChangeType.FIELD,
            entity=QualName("pkg.auth.LoginService.retries"),
            file=FILE,
            line_range=(9, 9),
            before_sig="retries = 3",
            after_sig="retries = 5",
            what="value changed",
        ),
    )


def test_annotation_only_change_and_removed_field() -> None:
    annotated = _edit("TIMEOUT = 30", "TIMEOUT: int = 30")
    (change,) = _classify(annotated)
    assert (change.change_type, change.what) == (ChangeType.FIELD, "annotation changed")
    removed = _edit("    retries = 3\n\n", "")
    assert _classify(removed) == (
        Change(
            change_type=ChangeType.FIELD,
            entity=QualName("pkg.auth.LoginService.retries"),
            file=FILE,
            line_range=(9, 9),
            before_sig="retries = 3",
            removed_names=("pkg.auth.LoginService.retries",),
            what="removed field retries",
        ),
    )


def test_node_only_in_after_is_add() -> None:
    after = BASE + "\n\ndef logout(session):\n    session.close()\n"
    assert _classify(after) == (
        Change(
            change_type=ChangeType.ADD,
            entity=QualName("pkg.auth.logout"),
            file=FILE,
            line_range=(29, 30),
            after_sig="def logout(session):",
            after_params=(_p("session"),),
            what="added function logout",
        ),
    )


def test_node_only_in_before_is_delete_with_before_lines() -> None:
    after = _edit(
        "    @staticmethod\n    def normalize(name):\n        return name.lower()\n\n", ""
    )
    assert _classify(after) == (
        Change(
            change_type=ChangeType.DELETE,
            entity=QualName("pkg.auth.LoginService.normalize"),
            file=FILE,
            line_range=(18, 20),
            before_sig="def normalize(name):",
            before_params=(_p("name"),),
            binds_first_param=False,
            removed_names=("pkg.auth.LoginService.normalize",),
            what="removed method normalize",
            # the class as it is now: whether its instances still have the name
            bases_after=("Base",),
            own_members=("__init__", "db", "login", "retries"),
        ),
    )


def test_deleting_a_class_is_one_change_not_one_per_member() -> None:
    start = BASE.index("class LoginService")
    end = BASE.index("def helper")
    after = BASE[:start] + BASE[end:]
    assert _kinds(_classify(after)) == [("delete", "pkg.auth.LoginService", (8, 20))]


def test_rename_is_delete_plus_add() -> None:
    after = _edit("def helper(a, b=1):", "def assist(a, b=1):")
    assert _kinds(_classify(after)) == [
        ("add", "pkg.auth.assist", (23, 26)),
        ("delete", "pkg.auth.helper", (23, 26)),
    ]


def test_multi_node_edit_decomposes_into_atomic_changes() -> None:
    after = _edit("TIMEOUT = 30", "TIMEOUT = 60")
    after = _edit("def login(self, user):", "def login(self, user, mfa_code):", after)
    after = _edit("    print(total)\n", "    print(total)\n    log(total)\n", after)
    assert _kinds(_classify(after)) == [
        ("field", "pkg.auth.TIMEOUT", (5, 5)),
        ("method-signature", "pkg.auth.LoginService.login", (14, 16)),
        ("method-body", "pkg.auth.helper", (23, 27)),
    ]


def test_decorator_change_counts_as_signature() -> None:
    after = _edit("    def login(self, user):", "    @cached\n    def login(self, user):")
    (change,) = _classify(after)
    assert (change.change_type, change.line_range, change.what) == (
        ChangeType.METHOD_SIGNATURE,
        (14, 17),
        "added decorator @cached",
    )


def test_signature_what_phrases() -> None:
    def what(old: str, new: str) -> str:
        (change,) = _classify(_edit(old, new))
        return change.what

    assert what("def helper(a, b=1):", "def helper(a, b):") == "param b now required"
    assert what("def helper(a, b=1):", "def helper(a):") == "removed param b"
    assert what("def helper(a, b=1):", "def helper(x, b=1):") == "renamed param a to x"
    assert what("def helper(a, b=1):", "def helper(a, *, b=1):") == "param b now keyword-only"
    assert what("def helper(a, b=1):", "def helper(a, b=2):") == "default of b changed"
    assert what("def helper(a, b=1):", "async def helper(a, b=1):") == "now async"
    assert what("def helper(a, b=1):", "def helper(a, b=1) -> int:") == "return annotation changed"


def test_dataclass_field_change_is_a_constructor_change_of_the_generated_init() -> None:
    before = textwrap.dedent(
        """\
        from dataclasses import dataclass, field


        @dataclass(frozen=True)
        class Config:
            host: str
            port: int = 80
            tags: list[str] = field(default_factory=list)
            LIMIT: ClassVar[int] = 3
        """
    )
    after = before.replace("    host: str\n", "    host: str\n    user: str\n")
    changes = classify_changes(file=FILE, module=MODULE, before=before, after=after)
    assert _kinds(changes) == [
        ("constructor", "pkg.auth.Config.__init__", (6, 10)),
        ("add", "pkg.auth.Config.user", (7, 7)),
    ]
    constructor = changes[0]
    assert constructor.before_sig == (
        "def __init__(self, host: str, port: int = ..., tags: list[str] = ...):"
    )
    assert constructor.after_params == (
        _p("self"),
        _p("host"),
        _p("user"),
        _p("port", default=True),
        _p("tags", default=True),
    )
    assert constructor.what == "added param user"
    kw_only = before.replace("@dataclass(frozen=True)", "@dataclass(kw_only=True)")
    decl, init = classify_changes(file=FILE, module=MODULE, before=before, after=kw_only)
    assert (decl.change_type, decl.what) == (
        ChangeType.CLASS_DECL,
        "added decorator @dataclass(kw_only=True), removed decorator @dataclass(frozen=True)",
    )
    assert init.change_type is ChangeType.CONSTRUCTOR
    assert init.after_sig == (
        "def __init__(self, *, host: str, port: int = ..., tags: list[str] = ...):"
    )
    assert init.what == (
        "param host now keyword-only, param port now keyword-only, param tags now keyword-only"
    )


def test_nested_functions_get_their_own_entity() -> None:
    before = "def outer(x):\n    def inner(y):\n        return y\n    return inner(x)\n"
    after = "def outer(x):\n    def inner(y):\n        return y + 1\n    return inner(x)\n"
    changes = classify_changes(file=FILE, module=MODULE, before=before, after=after)
    assert [(c.change_type.value, c.entity, c.line_range, c.escape_reason) for c in changes] == [
        ("method-body", "pkg.auth.outer.inner", (2, 3), "return value changed")
    ]


def test_same_named_definitions_match_by_occurrence() -> None:
    before = textwrap.dedent(
        """\
        class C:
            @property
            def x(self):
                return self._x

            @x.setter
            def x(self, value):
                self._x = value
        """
    )
    after = before.replace("self._x = value", "self._x = int(value)")
    (change,) = classify_changes(file=FILE, module=MODULE, before=before, after=after)
    assert (change.change_type, change.entity, change.line_range) == (
        ChangeType.METHOD_BODY,
        "pkg.auth.C.x",
        (6, 8),
    )


def test_moved_function_is_no_change() -> None:
    block = "def helper(a, b=1):\n    total = a + b\n    print(total)\n    return a\n"
    start = BASE.index("class LoginService")
    after = BASE.replace(block, "").rstrip("\n") + "\n"
    after = after[:start] + block + "\n\n" + after[start:]
    assert after != BASE
    assert _classify(after) == ()


def test_type_checking_import_removal_is_an_import_change() -> None:
    before = (
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from pkg.db import Session\n"
    )
    after = "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    pass\n"
    changes = classify_changes(file=FILE, module=MODULE, before=before, after=after)
    assert [(c.change_type.value, c.entity, c.line_range, c.removed_names) for c in changes] == [
        ("import", "pkg.auth", (4, 4), ("pkg.db.Session as Session",)),
        ("method-body", "pkg.auth", (4, 4), ()),
    ]
    assert (changes[1].escapes, changes[1].escape_reason) == (
        False,
        "only no-op statements changed",
    )


def test_formatting_and_comment_changes_are_no_change() -> None:
    after = _edit("def helper(a, b=1):", "def helper(a,  b = 1):  # tidy")
    after = _edit(
        "    total = a + b\n", "    # sum them\n    total = (\n        a + b\n    )\n", after
    )
    assert _classify(after) == ()
    assert _classify(BASE) == ()


def test_class_docstring_and_module_level_statements_default_to_method_body() -> None:
    before = 'class C:\n    """Old."""\n\n    x = 1\n\n\nregister(C)\n'
    after = 'class C:\n    """New."""\n\n    x = 1\n\n\nregister(C, name="c")\n'
    changes = classify_changes(file=FILE, module=MODULE, before=before, after=after)
    assert [
        (c.change_type.value, c.entity, c.line_range, c.escapes, c.escape_reason) for c in changes
    ] == [
        ("method-body", "pkg.auth.C", (2, 2), False, "only the docstring changed"),
        ("method-body", "pkg.auth", (7, 7), True, "module-level statement changed"),
    ]


def test_half_typed_signature_is_incomplete_and_other_changes_still_classified() -> None:
    after = _edit("def login(self, user):", "def login(self, user,")
    after = _edit("TIMEOUT = 30", "TIMEOUT = 60", after)
    after = _edit("total = a + b", "total = a * b", after)
    changes = _classify(after)
    assert _kinds(changes) == [
        ("field", "pkg.auth.TIMEOUT", (5, 5)),
        ("incomplete", "pkg.auth.LoginService.login", (14, 14)),
        ("method-body", "pkg.auth.helper", (23, 26)),
    ]
    incomplete = changes[1]
    assert incomplete.before_sig == "def login(self, user):"
    assert incomplete.what == "does not parse yet"


def test_half_typed_new_method_is_incomplete_for_its_class() -> None:
    after = _edit(
        "        return name.lower()\n",
        "        return name.lower()\n\n    def logout(self\n",
    )
    after = _edit("retries = 3", "retries = 4", after)
    assert _kinds(_classify(after)) == [
        ("field", "pkg.auth.LoginService.retries", (9, 9)),
        ("incomplete", "pkg.auth.LoginService", (21, 22)),
    ]


def test_unclosed_bracket_at_module_level_is_incomplete_for_the_module() -> None:
    after = BASE + "\nCONFIG = dict(\n"
    assert _kinds(_classify(after)) == [("incomplete", "pkg.auth", (27, 28))]


def test_broken_baseline_does_not_hide_clean_changes() -> None:
    before = _edit("total = a + b", "total = a +")
    after = _edit("TIMEOUT = 30", "TIMEOUT = 60", before)
    assert _kinds(_classify(after, before=before)) == [("field", "pkg.auth.TIMEOUT", (5, 5))]
    still_broken = _edit("print(total)", "print(total, a)", before)
    assert _kinds(_classify(still_broken, before=before)) == [
        ("incomplete", "pkg.auth.helper", (23, 26))
    ]


def test_match_statement_is_valid_code_not_incomplete() -> None:
    before = "def f(x):\n    match x:\n        case 1:\n            return 2\n    return 0\n"
    after = before.replace("return 2", "return 3")
    (change,) = classify_changes(file=FILE, module=MODULE, before=before, after=after)
    assert (change.change_type, change.entity, change.escape_reason) == (
        ChangeType.METHOD_BODY,
        "pkg.auth.f",
        "return value changed",
    )


def test_at_most_max_changes_and_the_rest_fold_into_the_nearest_same_type() -> None:
    before = "".join(f"C{i} = {i}\n" for i in range(70))
    after = "".join(f"C{i} = {i + 1}\n" for i in range(70))
    changes = classify_changes(file=FILE, module=MODULE, before=before, after=after)
    assert len(changes) == 64
    assert [c.entity for c in changes[:2]] == ["pkg.auth.C0", "pkg.auth.C1"]
    assert (changes[-1].entity, changes[-1].line_range) == ("pkg.auth.C63", (64, 70))
    assert {c.change_type for c in changes} == {ChangeType.FIELD}
    few = classify_changes(file=FILE, module=MODULE, before=before, after=after, max_changes=3)
    assert [(c.entity, c.line_range) for c in few] == [
        ("pkg.auth.C0", (1, 1)),
        ("pkg.auth.C1", (2, 2)),
        ("pkg.auth.C2", (3, 70)),
    ]


def test_entity_is_capped_at_200_chars() -> None:
    name = "Service" + "X" * 250
    before = f"class {name}:\n    def run(self):\n        return 1\n"
    after = before.replace("return 1", "return 2")
    (change,) = classify_changes(file=FILE, module=MODULE, before=before, after=after)
    assert len(change.entity) == 200
    assert change.entity == f"pkg.auth.{name}.run"[:200]


def test_output_is_sorted_and_deterministic() -> None:
    after = _edit("TIMEOUT = 30", "TIMEOUT = 60")
    after = _edit("def helper(a, b=1):", "def helper(a, b=2):", after)
    after = _edit("import os\n", "", after)
    first = _classify(after)
    assert first == _classify(after)
    keys = [(c.file, c.line_range, c.entity) for c in first]
    assert keys == sorted(keys)


def _body(before_body: str, after_body: str, sig: str = "def f(self, p, items):") -> Change:
    prefix = f"COUNTER = 0\nCACHE = {{}}\n\n\nclass K:\n    {sig}\n"
    before = prefix + textwrap.indent(textwrap.dedent(before_body), " " * 8)
    after = prefix + textwrap.indent(textwrap.dedent(after_body), " " * 8)
    changes = classify_changes(file=FILE, module=MODULE, before=before, after=after)
    # a write of self.<name> that is gone is also a removed attribute (its own change)
    (change,) = [c for c in changes if c.change_type is not ChangeType.FIELD]
    assert change.change_type is ChangeType.METHOD_BODY
    return change


def _gate(before_body: str, after_body: str) -> tuple[bool, str]:
    change = _body(before_body, after_body)
    return change.escapes, change.escape_reason


def test_local_temporary_change_does_not_escape() -> None:
    assert _gate(
        "tmp = p * 2\nprint(tmp)\nreturn p\n",
        "tmp = p * 3\nprint(tmp)\nreturn p\n",
    ) == (False, "only local temporaries changed")


def test_self_attribute_write_escapes() -> None:
    assert _gate("x = p\nreturn x\n", "x = p\nself.last = x\nreturn x\n") == (
        True,
        "writes self.last",
    )


def test_parameter_writes_escape() -> None:
    assert _gate("return 1\n", "p = p.strip()\nreturn 1\n") == (True, "writes parameter p")
    assert _gate("return 1\n", "p += 1\nreturn 1\n") == (True, "writes parameter p")
    assert _gate("return 1\n", "p.name = 'x'\nreturn 1\n") == (True, "writes p.name")
    assert _gate("return 1\n", "items[0] = None\nreturn 1\n") == (True, "writes items[0]")
    assert _gate("return 1\n", "items.append(1)\nreturn 1\n") == (
        True,
        "mutates items via .append()",
    )


def test_return_change_escapes() -> None:
    assert _gate("return p\n", "return p + 1\n") == (True, "return value changed")
    assert _gate("x = 1\nreturn\n", "x = 1\n") == (True, "return value changed")
    assert _gate("total = p\nreturn total\n", "total = p * 2\nreturn total\n") == (
        True,
        "return value depends on changed total",
    )


def test_global_and_module_level_writes_escape() -> None:
    assert _gate(
        "global COUNTER\nCOUNTER = 1\n",
        "global COUNTER\nCOUNTER = 2\n",
    ) == (True, "writes global COUNTER")
    assert _gate("CACHE['a'] = 1\n", "CACHE['a'] = 2\n") == (True, "writes module-level CACHE['a']")


def test_removed_write_and_yield_escape() -> None:
    assert _gate("self.db = p\nx = 1\n", "x = 1\n") == (True, "no longer writes self.db")
    prefix = "class K:\n    def f(self, p):\n"
    removed = classify_changes(
        file=FILE,
        module=MODULE,
        before=prefix + "        self.db = p\n",
        after=prefix + "        x = p\n",
    )
    assert [(c.change_type, c.entity, c.line_range) for c in removed] == [
        (ChangeType.METHOD_BODY, "pkg.auth.K.f", (2, 3)),
        (ChangeType.FIELD, "pkg.auth.K.db", (3, 3)),
    ]
    assert _gate("yield p\n", "yield p + 1\n") == (True, "yielded value changed")


def test_local_that_feeds_an_escaping_write_escapes() -> None:
    assert _gate(
        "n = len(items)\nself.count = n\n",
        "n = len(items) + 1\nself.count = n\n",
    ) == (True, "writes self.count from changed n")


def test_docstring_only_body_change_does_not_escape() -> None:
    assert _gate('"""Old."""\nreturn p\n', '"""New."""\nreturn p\n') == (
        False,
        "only the docstring changed",
    )


def test_escape_is_set_only_on_method_body_changes() -> None:
    after = _edit("def login(self, user):", "def login(self, user, mfa_code):")
    (change,) = _classify(after)
    assert (change.escapes, change.escape_reason) == (True, "")


def test_classifier_never_touches_the_llm_client() -> None:
    """Spec §5 phase 1: probe the LLM client to raise; classification must not reach it."""
    probe = textwrap.dedent(
        """
        import sys, types

        class Probe(types.ModuleType):
            def __getattr__(self, name):
                raise AssertionError(f"classifier touched the LLM client: {self.__name__}.{name}")

        from impact_ls.analysis.classify import classify_changes

        llm = ("httpx", "impact_ls.analysis.nextedit")
        assert not [name for name in llm if name in sys.modules], "classify imported an LLM client"
        for name in llm:
            sys.modules[name] = Probe(name)

        changes = classify_changes(
            file="a.py", module="a",
            before="def f(a):\\n    return a\\n",
            after="def f(a, b):\\n    return a + b\\n",
        )
        print(changes[0].change_type)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "method-signature"


def test_side_effect_calls_on_parameters_escape_but_logging_does_not() -> None:
    assert _gate("x = 1\n", "x = 1\nself.save()\n") == (
        True,
        "calls self.save() for its side effects",
    )
    assert _gate("x = 1\n", "x = 1\nself.log.info(p)\n") == (
        False,
        "only local temporaries changed",
    )
    assert _gate("x = 1\n", "x = 1\nraise ValueError(p)\n") == (True, "raised exception changed")


def test_broken_baseline_decorated_definition_unchanged_is_no_change() -> None:
    before = "@cache\ndef f(a):\n    return a +\n\n\nX = 1\n"
    after = "@cache\ndef f(a):\n    return a +\n\n\nX = 2\n"
    assert _kinds(_classify(after, before=before)) == [("field", "pkg.auth.X", (6, 6))]


OVERLOADED = """\
from typing import overload


class Manager:
    @overload
    def parse(self, node_or_obj: None = ..., *, holder: object, node: object) -> None: ...

    @overload
    def parse(self, node_or_obj: object, nodeid: str = ...) -> None: ...

    def parse(self, node_or_obj=None, nodeid=None, *, holder=None, node=None):
        return node_or_obj
"""


def test_the_implementation_of_an_overloaded_function_is_what_is_compared() -> None:
    # the stubs used to take the implementation's place: with a stub added, the old
    # implementation was compared with a stub, and every call of it looked broken
    before = """\
from typing import overload


class Manager:
    @overload
    def parse(self, node_or_obj: object, nodeid: str = ...) -> None: ...

    def parse(self, node_or_obj, nodeid=None):
        return node_or_obj
"""
    changes = classify_changes(file=FILE, module=MODULE, before=before, after=OVERLOADED)
    signature = [c for c in changes if c.change_type is ChangeType.METHOD_SIGNATURE]
    assert [(c.entity, c.before_sig, c.after_sig) for c in signature] == [
        (
            QualName("pkg.auth.Manager.parse"),
            "def parse(self, node_or_obj, nodeid=None):",
            "def parse(self, node_or_obj=None, nodeid=None, *, holder=None, node=None):",
        )
    ]
    assert all(p.has_default for p in signature[0].after_params[1:])


def test_an_edit_of_overload_stubs_alone_changes_nothing_that_runs() -> None:
    after = _edit("nodeid: str = ...", "nodeid: str | None = ...", OVERLOADED)
    changes = classify_changes(file=FILE, module=MODULE, before=OVERLOADED, after=after)
    assert [(c.change_type, c.entity, c.escapes, c.what) for c in changes] == [
        (
            ChangeType.METHOD_BODY,
            QualName("pkg.auth.Manager"),
            False,
            "@overload declarations changed",
        )
    ]
