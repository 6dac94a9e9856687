"""The method-body escape gate: which body edits a caller can observe, and the one-line reason."""

from __future__ import annotations

import ast

import pytest

from impact_ls.analysis.classify._escape import (
    DOCSTRING_ONLY,
    LOCAL_ONLY,
    RENAMED_ONLY,
    compare_bodies,
)


def _diff(before: str, after: str):
    old, new = ast.parse(before).body[0], ast.parse(after).body[0]
    assert isinstance(old, ast.FunctionDef) and isinstance(new, ast.FunctionDef)
    return compare_bodies(before=old, after=new)


@pytest.mark.parametrize(
    ("before", "after", "reason"),
    [
        ("def f(a):\n    return a\n", "def f(a):\n    return a + 1\n", "return value changed"),
        ("def f(self):\n    x = 1\n", "def f(self):\n    self.x = 1\n", "writes self.x"),
        (
            "def f(a):\n    b = 1\n    return a\n",
            "def f(a):\n    a = 1\n    return a\n",
            "writes parameter a",
        ),
        (
            "def f():\n    pass\n",
            "def f():\n    global COUNT\n    COUNT = 1\n",
            "declares global COUNT",
        ),
        (
            "def f(items):\n    n = 1\n",
            "def f(items):\n    items.append(1)\n",
            "mutates items via .append()",
        ),
        (
            "def f(self):\n    pass\n",
            "def f(self):\n    self.save()\n",
            "calls self.save() for its side effects",
        ),
        (
            "def f(a):\n    return a\n",
            "def f(a):\n    if a:\n        raise ValueError(a)\n    return a\n",
            "raised exception changed",
        ),
        ("def f(a):\n    yield a\n", "def f(a):\n    print(a)\n", "yielded value changed"),
        (
            "def f(a):\n    assert a > 0\n",
            "def f(a):\n    assert a > 1\n",
            "assertion changed",
        ),
    ],
    ids=[
        "return",
        "self-attr",
        "param",
        "global",
        "mutator",
        "side-effect",
        "raise",
        "yield",
        "assert",
    ],
)
def test_edits_a_caller_can_observe_escape_with_their_reason(before, after, reason):
    diff = _diff(before, after)
    assert (diff.changed, diff.escapes, diff.reason) == (True, True, reason)


def test_a_changed_local_that_feeds_the_return_escapes_through_data_flow():
    diff = _diff("def f(a):\n    t = 1\n    return t\n", "def f(a):\n    t = 2\n    return t\n")
    assert (diff.escapes, diff.reason) == (True, "return value depends on changed t")


def test_a_removed_write_is_reported_as_no_longer_writing():
    diff = _diff("def f(self):\n    self.x = 1\n", "def f(self):\n    pass\n")
    assert (diff.escapes, diff.reason) == (True, "no longer writes self.x")


def test_local_only_and_docstring_only_edits_do_not_escape():
    moved = _diff(
        "def f(a):\n    x = 1\n    if a:\n        y = 2\n",
        "def f(a):\n    if a:\n        y = 2\n        x = 1\n",
    )
    assert (moved.changed, moved.escapes, moved.reason) == (True, False, LOCAL_ONLY)
    doc = _diff(
        'def f():\n    """Old."""\n    return 1\n', 'def f():\n    """New."""\n    return 1\n'
    )
    assert (doc.changed, doc.escapes, doc.reason) == (True, False, DOCSTRING_ONLY)


def test_formatting_and_comments_are_no_change():
    diff = _diff("def f(a):\n    return a  # why\n", "def f(a):\n    return (a)\n")
    assert (diff.changed, diff.escapes) == (False, False)


def test_nested_definitions_are_their_own_changes_not_the_outer_body():
    before = "def f(a):\n    def g():\n        return 1\n    return g\n"
    after = "def f(a):\n    def g():\n        return 2\n    return g\n"
    assert _diff(before, after).changed is False


def test_renaming_a_local_temporary_is_only_a_rename():
    diff = _diff(
        "def f(a):\n    t = a + 1\n    for i in range(t):\n        a += i\n    return t\n",
        "def f(a):\n    n = a + 1\n    for k in range(n):\n        a += k\n    return n\n",
    )
    assert (diff.changed, diff.escapes, diff.reason) == (True, False, RENAMED_ONLY)


def test_a_rename_that_changes_what_is_returned_is_not_only_a_rename():
    diff = _diff(
        "def f(a):\n    t = a\n    u = 2\n    return t\n",
        "def f(a):\n    u = a\n    t = 2\n    return t\n",
    )
    assert (diff.escapes, diff.reason) == (True, "return value depends on changed t")


def test_renamed_parameters_globals_and_imports_are_not_local_renames():
    param = _diff("def f(a, b):\n    return a\n", "def f(a, b):\n    return b\n")
    assert param.escapes
    imported = _diff(
        "def f():\n    import json as j\n    return j\n",
        "def f():\n    import pickle as j\n    return j\n",
    )
    assert imported.reason != RENAMED_ONLY
