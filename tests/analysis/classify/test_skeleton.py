"""The classifier's parso input: untouched functions hollowed out, results as with full bodies.

A method edit keeps its whole class for parso; the bodies of the class's untouched functions
that define nothing inside are replaced by ``pass`` on their last line, since ``ast`` reads them.
"""

from __future__ import annotations

import ast

from impact_ls.analysis.classify import classify_changes
from impact_ls.analysis.classify._outline import leaf_functions, untouched_methods
from impact_ls.analysis.classify._outline import skeleton as _skeleton
from impact_ls.model import ChangeType

BASE = '''\
class Store:
    """Many methods; one is edited."""

    def get(self, key):
        # a comment
        value = self.data[key]
        return value

    @property
    def size(self):
        return len(self.data)

    @size.setter
    def size(self, value):
        self.limit = value

    def put(self, key, value):
        def check(v):
            return v is not None

        if check(value):
            self.data[key] = value

    async def fetch(self, key): return key

    def text(self):
        return """
first
last"""


def helper(a):
    return a + 1
'''


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def test_skeleton_hollows_untouched_leaf_functions_and_keeps_line_numbers() -> None:
    lines = _lines(BASE)
    keep = set(range(1, len(lines) + 1))
    touched = {21, 22}  # the if statement of put
    skeleton = _skeleton(lines, keep, leaf_functions(ast.parse(BASE)), touched).text
    out = _lines(skeleton)
    assert len(out) == len(lines)
    ast.parse(skeleton)  # still valid Python
    # get: body blanked from its first statement, `pass` on its last line at its indentation
    assert out[3:7] == [
        "    def get(self, key):\n",
        "        # a comment\n",
        "\n",
        "        pass\n",
    ]
    # decorated property and setter keep decorators and headers
    assert out[8:11] == ["    @property\n", "    def size(self):\n", "        pass\n"]
    assert out[12:15] == ["    @size.setter\n", "    def size(self, value):\n", "        pass\n"]
    # put defines check(), so put keeps its body; the untouched leaf check() is hollowed
    assert out[16:22] == [lines[16], lines[17], "            pass\n", *lines[19:22]]
    # a body on the header line stays; a multi-line string body ends in `pass` on its last line
    assert out[23] == lines[23]
    assert out[25:29] == ["    def text(self):\n", "\n", "\n", "        pass\n"]
    assert out[31:33] == ["def helper(a):\n", "    pass\n"]
    assert out[29:31] == ["\n", "\n"]


def test_skeleton_keeps_lines_outside_keep_blank_and_skips_functions_partly_outside() -> None:
    lines = _lines(BASE)
    keep = set(range(32, 34))  # helper only
    skeleton = _lines(_skeleton(lines, keep, leaf_functions(ast.parse(BASE)), set()).text)
    assert all(line == "\n" for line in skeleton[:31])
    assert skeleton[31:33] == ["def helper(a):\n", "    pass\n"]
    # a function whose lines are not all kept is left as it is
    partial = _lines(
        _skeleton(lines, set(range(4, 6)), leaf_functions(ast.parse(BASE)), set()).text
    )
    assert partial[3:5] == lines[3:5]


def test_an_edit_among_hollowed_methods_classifies_as_with_full_bodies() -> None:
    after = BASE.replace("def get(self, key):", "def get(self, key, default):")
    after = after.replace("self.limit = value", "self.limit = value * 2")
    changes = classify_changes(file="pkg/store.py", module="pkg.store", before=BASE, after=after)
    assert [(c.change_type, c.entity, c.line_range) for c in changes] == [
        (ChangeType.METHOD_SIGNATURE, "pkg.store.Store.get", (4, 7)),
        (ChangeType.METHOD_BODY, "pkg.store.Store.size", (13, 15)),
    ]
    assert changes[0].what == "added param default"
    assert changes[1].escapes is True  # writes self.limit
    # the untouched getter of the same name (occurrence 0) yields nothing
    assert sum(c.entity == "pkg.store.Store.size" for c in changes) == 1


def test_one_baseline_edited_in_turn_in_different_places_classifies_each_edit() -> None:
    # The baseline's parse and outline are kept across calls; each edit touches other lines.
    edits = [
        (BASE.replace("def helper(a):", "def helper(a, b):"), "pkg.store.helper"),
        (BASE.replace("return a + 1", "return a + 2"), "pkg.store.helper"),
        (
            BASE.replace("def get(self, key):", "def get(self, key, default):"),
            "pkg.store.Store.get",
        ),
        (BASE.replace("def helper(a):", "def helper(a, b):"), "pkg.store.helper"),
    ]
    seen = []
    for after, entity in edits:
        changes = classify_changes(
            file="pkg/store.py", module="pkg.store", before=BASE, after=after
        )
        assert [c.entity for c in changes] == [entity]
        seen.append(changes[0].change_type)
    assert seen == [
        ChangeType.METHOD_SIGNATURE,
        ChangeType.METHOD_BODY,
        ChangeType.METHOD_SIGNATURE,
        ChangeType.METHOD_SIGNATURE,
    ]


def test_skeleton_leaves_out_untouched_methods_not_pinned_but_keeps_constructors() -> None:
    text = BASE.replace(
        "class Store:", "class Store:\n    def __init__(self):\n        self.data = {}\n"
    )
    lines = _lines(text)
    keep = set(range(1, len(lines) + 1))
    leaves = leaf_functions(ast.parse(text))
    left_out = untouched_methods(leaves, lines, keep, set(), {"get"})
    assert left_out == {(("Store",), name) for name in ("size", "fetch", "text")}
    out = _lines(_skeleton(lines, keep, leaves, set(), left_out).text)
    assert len(out) == len(lines)
    tree = ast.parse("".join(out))
    store = tree.body[0]
    assert isinstance(store, ast.ClassDef)
    defs = [(n.name, n.lineno) for n in store.body if isinstance(n, ast.FunctionDef)]
    # get is pinned (hollowed), __init__ is a constructor (hollowed), put defines check() (kept
    # whole); size, its setter, fetch and text are left out: emptied, decorators included, and
    # only text(), which ends the class, leaves a ``pass`` on its last line to end it there
    assert defs == [("__init__", 2), ("get", 7), ("put", 20)]
    assert out[11:18] == ["\n"] * 7  # the getter and the setter
    assert out[26] == "\n"  # fetch, on one line
    assert out[28:32] == ["\n", "\n", "\n", "    pass\n"]  # text(), to its last line
    assert store.end_lineno == 32
    assert out[-2:] == ["def helper(a):\n", "    pass\n"]  # module level: hollowed only


LAYERED = """\
class Outer:
    def a(self):
        return 1

    class Inner:
        def b(self):
            return 2
# a comment at column 0 does not end the block
        def c(self):
            return 3

    def d(self):
        return 4
X = 1
"""


def test_left_out_methods_leave_a_pass_only_where_they_ended_their_block() -> None:
    lines = _lines(LAYERED)
    keep = set(range(1, len(lines) + 1))
    leaves = leaf_functions(ast.parse(LAYERED))
    left_out = untouched_methods(leaves, lines, keep, set(), set())
    assert left_out == {leaf.key for leaf in leaves}
    shape = _skeleton(lines, keep, leaves, set(), left_out)
    out = _lines(shape.text)
    # a() goes on into Inner, b() into c(); c() ends Inner and d() ends Outer: a pass each
    assert [n for n, line in enumerate(out, 1) if line.strip() == "pass"] == [10, 13]
    assert shape.stand_ins == {10, 13}
    assert out[-1] == "X = 1\n"
    pinned = untouched_methods(leaves, lines, keep, set(), {"d"})
    assert pinned == left_out - {(("Outer",), "d")}
    hollowed = _skeleton(lines, keep, leaves, set(), pinned)
    assert _lines(hollowed.text)[11:13] == ["    def d(self):\n", "        pass\n"]
    assert hollowed.stand_ins == {10}  # d()'s pass is its hollowed body, no stand-in
    tree = ast.parse(shape.text)
    outer = tree.body[0]
    assert isinstance(outer, ast.ClassDef) and outer.end_lineno == 13
    inner = outer.body[0]
    assert isinstance(inner, ast.ClassDef) and (inner.lineno, inner.end_lineno) == (5, 10)


def test_an_edit_beside_left_out_methods_classifies_as_the_edit_alone() -> None:
    # c() is deleted: b() now ends Inner and stands in with a pass the baseline did not have
    after = LAYERED.replace("        def c(self):\n            return 3\n", "")
    changes = classify_changes(file="pkg/n.py", module="pkg.n", before=LAYERED, after=after)
    assert [(c.change_type, c.entity) for c in changes] == [
        (ChangeType.DELETE, "pkg.n.Outer.Inner.c")
    ]
    edited = LAYERED.replace("return 4", "return 5")
    changes = classify_changes(file="pkg/n.py", module="pkg.n", before=LAYERED, after=edited)
    assert [(c.change_type, c.entity) for c in changes] == [
        (ChangeType.METHOD_BODY, "pkg.n.Outer.d")
    ]


def test_a_method_inserted_right_after_another_leaves_the_neighbour_unchanged() -> None:
    # The insertion point touches the baseline's line above it (get's last line) but no line of
    # get in the new text: get is pinned by name, so no text leaves it out and it is not deleted.
    after = BASE.replace(
        "        return value\n",
        "        return value\n    def peek(self, key):\n        return self.data.get(key)\n",
    )
    changes = classify_changes(file="pkg/store.py", module="pkg.store", before=BASE, after=after)
    assert [(c.change_type, c.entity) for c in changes] == [
        (ChangeType.ADD, "pkg.store.Store.peek")
    ]


def test_a_setter_added_beside_an_untouched_getter_is_the_second_occurrence() -> None:
    text = (
        "class P:\n    @property\n    def x(self):\n        return 1\n\n"
        "    def y(self):\n        pass\n"
    )
    after = text.replace(
        "\n    def y", "\n    @x.setter\n    def x(self, v):\n        self.v = v\n\n    def y"
    )
    changes = classify_changes(file="pkg/p.py", module="pkg.p", before=text, after=after)
    assert [(c.change_type, c.entity, c.line_range) for c in changes] == [
        (ChangeType.ADD, "pkg.p.P.x", (6, 8))
    ]


NESTED = """\
class A:
    try:
        def t1(self): pass
    except ValueError:
        def t2(self): pass
    else:
        class T3:
            def t4(self): pass
    finally:
        t5 = lambda self: None
    match X:
        case 1:
            def m1(self):
                def m2(): pass
        case _:
            pass
    if Y:
        async def a1(self): pass
    while Z:
        with W:
            def w1(self): pass
"""


def test_all_definitions_finds_what_ast_walk_finds_in_the_same_order() -> None:
    from impact_ls.analysis.classify._outline import _all_definitions

    stmt = ast.parse(NESTED).body[0]
    walked = [
        (n.lineno, n.name)
        for n in ast.walk(stmt)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    assert [(n.lineno, n.name) for n in _all_definitions(stmt)] == walked
    assert [name for _, name in walked] == ["A", "t1", "T3", "a1", "t2", "t4", "m1", "w1", "m2"]


STORED = """\
class Box:
    def __init__(self, size, mode="r"):
        self.size = size
        self.mode = mode

    def reset(self):
        self.mode = "r"

    def describe(self):
        return self.size
"""


def _fields(after: str) -> list[tuple[str, tuple[int, int]]]:
    changes = classify_changes(file="pkg/box.py", module="pkg.box", before=STORED, after=after)
    return [(c.entity, c.line_range) for c in changes if c.change_type is ChangeType.FIELD]


def test_an_attribute_dropped_by_an_edited_method_is_removed_unless_an_untouched_one_binds_it():
    # size is bound by __init__ alone: gone; mode is still bound by reset, which no hunk touches
    after = STORED.replace("        self.size = size\n        self.mode = mode\n", "        pass\n")
    assert _fields(after) == [("pkg.box.Box.size", (3, 3))]


def test_a_method_inserted_right_after_init_removes_none_of_its_attributes():
    # The insertion point touches __init__'s last baseline line, not its lines in the new text.
    after = STORED.replace(
        "        self.mode = mode\n",
        "        self.mode = mode\n    def peek(self):\n        return 1\n",
    )
    assert _fields(after) == []


def test_methods_that_change_class_are_compared_though_no_hunk_touches_them():
    # A class header inserted mid-class moves the methods below it into the new class with no
    # line of theirs touched: each text leaves out only the methods untouched in both, in the
    # same class, so the baseline still shows them in A and A.g's removal is reported.
    before = "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n"
    after = before.replace("\n    def g", "class B:\n    def g")
    changes = classify_changes(file="pkg/m.py", module="pkg.m", before=before, after=after)
    assert [(c.change_type, c.entity) for c in changes] == [
        (ChangeType.ADD, "pkg.m.B"),
        (ChangeType.DELETE, "pkg.m.A.g"),
    ]
