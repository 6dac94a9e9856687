"""The edited text's ``ast`` from the baseline's: equal to parsing the whole text, or no answer.

Classification reads the current text's tree on every keystroke; ``reparse`` parses only the
edited definition again. Whatever it returns must be exactly ``ast.parse`` of the whole text,
positions included; when it cannot tell, it returns None and the whole text is parsed.
"""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from impact_ls.analysis.classify import classify_changes
from impact_ls.analysis.classify._reparse import reparse
from impact_ls.analysis.classify._settle import split_lines
from impact_ls.model import ChangeType

BASE = """\
import os


def top(a, b=1):
    return a + b


class Store:
    limit = 10

    @property
    def size(self):
        return len(self.data)

    def put(self, key, value):
        def check(v):
            return v is not None

        if check(value):
            self.data[key] = value
        else:
            raise ValueError(key)

    class Inner:
        def deep(self):
            try:
                return 1
            except KeyError:
                return 2

    def last(self, x):
        match x:
            case 1:
                return "one"
            case _:
                return "other"


if os.name == "nt":

    def windows():
        return "nt"
"""

LINES = split_lines(BASE)
TREE = ast.parse(BASE)


def _dump(tree: ast.AST) -> str:
    return ast.dump(tree, include_attributes=True)


def _edited(number: int, new: str) -> list[str]:
    lines = list(LINES)
    lines[number - 1] = new
    return lines


def _line(text: str) -> int:
    return next(i for i, line in enumerate(LINES, 1) if text in line)


@pytest.mark.parametrize(
    ("where", "new"),
    [
        ("return a + b", "    return a * b + top(a, b)\n"),  # a function at column 0
        ("def put(", "    def put(self, key, value, *, force=False):\n"),  # a method's header
        ("return v is not None", "            return v\n"),  # a nested function
        ("@property", "    @staticmethod\n"),  # a decorator
        ("return 1\n", "                return 1 + len(self.names)\n"),  # a nested class's try
        ("except KeyError", "            except (KeyError, IndexError):\n"),  # a handler
        ('return "one"', '                return "the one and only"\n'),  # a case clause
        ('return "other"', "                return []\n"),  # the class's last line: its end
        ('return "nt"', '        return "windows"\n'),  # a function inside an ``if``
    ],
)
def test_an_edited_definition_gives_the_tree_of_the_whole_text(where: str, new: str) -> None:
    after = _edited(_line(where), new)

    got = reparse(TREE, LINES, after)

    assert got is not None
    assert _dump(got) == _dump(ast.parse("".join(after)))


def test_the_baseline_tree_is_left_as_it_was() -> None:
    before = _dump(TREE)

    reparse(TREE, LINES, _edited(_line('return "other"'), "                return []\n"))

    assert _dump(TREE) == before


@pytest.mark.parametrize(
    ("where", "new"),
    [
        ("limit = 10", "    limit = 20\n"),  # a class statement outside any method: the class
        ("import os", "import sys\n"),  # a module statement outside any definition
    ],
)
def test_an_edit_outside_a_method_parses_the_definition_or_module_around_it(
    where: str, new: str
) -> None:
    after = _edited(_line(where), new)

    got = reparse(TREE, LINES, after)

    if got is not None:
        assert _dump(got) == _dump(ast.parse("".join(after)))
    assert (got is None) == (where == "import os")


@pytest.mark.parametrize(
    ("where", "new"),
    [
        # the first line moves off its block's indentation
        ("def put(", "     def put(self, key, value):\n"),
        ("def put(", "\tdef put(self, key, value):\n"),
        # the header emptied: the body's first line would go on the method above
        ("def put(", "    \n"),
        ("def put(", "    # def put(self, key, value):\n"),
        # a line at column 0 ends the class: here an ``else`` that parsed alone would pair with
        # the text's wrapper, and a statement that would end the class in the file
        ("        else:", "else:\n"),
        ("raise ValueError", "x = 1\n"),
        # the definition no longer parses alone
        ("return v is not None", "            return (v\n"),
        ('return "other"', '                return """\n'),
        # a carriage return is a line break the line list may not count
        ("return a + b", "    return a\r+ b\n"),
    ],
)
def test_no_tree_when_only_the_whole_text_can_tell(where: str, new: str) -> None:
    assert reparse(TREE, LINES, _edited(_line(where), new)) is None


def test_no_tree_when_lines_come_or_go_before_the_last_statement() -> None:
    number = _line("return a + b")
    after = [*LINES[:number], "    pass\n", *LINES[number:]]

    assert reparse(TREE, LINES, after) is None


@pytest.mark.parametrize(
    "added",
    [
        ["        print(1)\n"],  # a new line in the last function's body
        ["\n", "    def later():\n", "        return windows()\n"],  # a new function after it
        ["\n", "    # a comment\n"],
    ],
)
def test_lines_typed_at_the_end_of_the_text_give_its_tree(added: list[str]) -> None:
    after = [*LINES, *added]

    got = reparse(TREE, LINES, after)

    assert got is not None
    assert _dump(got) == _dump(ast.parse("".join(after)))


def test_a_line_removed_from_the_last_definition_gives_the_texts_tree() -> None:
    before = [*LINES, "        print(1)\n"]
    tree = ast.parse("".join(before))

    got = reparse(tree, before, LINES)

    assert got is not None
    assert _dump(got) == _dump(TREE)


_FRAGMENTS = st.sampled_from(
    [
        "\n",
        "pass\n",
        "return self\n",
        "else:\n",
        "elif x:\n",
        "x = (\n",
        ")\n",
        '"""\n',
        "def f():\n",
        "@dec\n",
        "case 2:\n",
        "except:\n",
        "# comment\n",
        "yield\n",
        "\\\n",
    ]
)


@settings(max_examples=400, deadline=None)
@given(
    number=st.integers(min_value=1, max_value=len(LINES)),
    indent=st.sampled_from(["", "    ", "        ", "            ", "\t", "  "]),
    fragment=_FRAGMENTS,
    how=st.sampled_from(["replace", "insert", "delete"]),
)
def test_any_one_line_edit_gives_the_whole_texts_tree_or_none(
    number: int, indent: str, fragment: str, how: str
) -> None:
    # a line as the line list holds it: one line, its break at its end
    line = indent + fragment
    if how == "replace":
        after = _edited(number, line)
    elif how == "insert":
        after = [*LINES[: number - 1], line, *LINES[number - 1 :]]
    else:
        after = [*LINES[: number - 1], *LINES[number:]]
    text = "".join(after)

    got = reparse(TREE, LINES, after)

    if got is None:
        return
    assert _dump(got) == _dump(ast.parse(text))


def test_classification_reads_the_edited_method_through_the_rebuilt_tree() -> None:
    after = "".join(_edited(_line("def put("), "    def put(self, key):\n"))

    changes = classify_changes(file="store.py", module="store", before=BASE, after=after)

    assert [(c.entity, c.change_type) for c in changes] == [
        ("store.Store.put", ChangeType.METHOD_SIGNATURE)
    ]
