"""The edited text's ``ast`` built from the baseline's: only the edited definition is parsed again.

Private to ``analysis/classify/``; used by ``_settle.py``. ``ast.parse`` of a big module costs a
keystroke more than the rest of classification (django's 2,764-line ``query.py``: ~27 ms), yet
an edit inside one method leaves every other statement of the tree as it was. ``reparse`` parses
the innermost baseline ``def`` or ``class`` that holds every changed line and puts its new
statements in place of the old one, copying only the nodes on the way down to it. The result
equals ``ast.parse`` of the whole text (positions included), or it is None and the caller parses
the whole text; the conditions that make the two equal are written where they are checked.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Sequence

from impact_ls.analysis.classify._statements import BLOCKS, DEFINITIONS, first_line
from impact_ls.graph.extract import parse_quietly

# Nodes that hold statement lists but are no statements themselves (their clauses start with a
# keyword that cannot begin a text, so they are descended through, never parsed alone).
_CLAUSES = (ast.ExceptHandler, ast.match_case)

# (node, field, index): ``getattr(node, field)[index]`` is the next node on the way down
_Step = tuple[ast.AST, str, int]


def reparse(tree: ast.Module, before: Sequence[str], after: Sequence[str]) -> ast.Module | None:
    """``ast.parse("".join(after))`` from ``tree`` (of ``"".join(before)``), or None when only
    a parse of the whole text can tell (an edit outside any definition, lines that come or go
    before the end of the text's last statement, an edited definition that no longer parses or
    no longer stays inside its block)."""
    head = 0
    limit = min(len(before), len(after))
    while head < limit and before[head] == after[head]:
        head += 1
    if head == len(before) == len(after):
        return tree
    tail = 0
    while tail < limit - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    # the changed baseline lines, 1-based: ``head + 1`` to ``len(before) - tail`` (one fewer
    # than the first when lines were only inserted, after line ``head``)
    path = _path_to_definition(tree, head + 1, len(before) - tail)
    if not path:
        return None
    node, field, index = path[-1]
    old: ast.stmt = getattr(node, field)[index]
    start, end = first_line(old), old.end_lineno or old.lineno
    moved = len(after) - len(before)
    if moved and tree.body and end != tree.body[-1].end_lineno:
        # lines came or went: every node after the definition would move (a definition that
        # ends the text, where new code is usually written, has none after it)
        return None
    region = after[start - 1 : end + moved]
    if any("\r" in line or "\f" in line for line in region):
        # line breaks and indentation the line list may count otherwise than the tokenizer
        return None
    indent = _indentation(before[start - 1])
    code = next((line for line in region if line.strip() and not line.lstrip().startswith("#")), "")
    if _indentation(code) != indent:
        # the tokenizer compares the first line of code with the enclosing block's indentation,
        # which a text of the definition alone does not have (indented deeper, it would go on
        # the statement before; blank and comment lines have no indentation to the tokenizer)
        return None
    new = _parse_region(region, indent)
    if new is None:
        return None
    for stmt in new:
        ast.increment_lineno(stmt, start - 1 - (1 if indent else 0))
    return _rebuilt(tree, path, new)


def _path_to_definition(tree: ast.Module, first: int, last: int) -> list[_Step]:
    """The steps down to the innermost definition whose lines (decorators included) hold
    ``first`` to ``last``; empty when no definition holds them all."""
    path: list[_Step] = []
    found = 0
    node: ast.AST = tree
    while True:
        step = _child_holding(node, first, last)
        if step is None:
            return path[:found]
        path.append(step)
        node = getattr(step[0], step[1])[step[2]]
        if isinstance(node, DEFINITIONS):
            found = len(path)


def _child_holding(node: ast.AST, first: int, last: int) -> _Step | None:
    for field in BLOCKS:
        children = getattr(node, field, None)
        if not isinstance(children, list):
            continue
        for index, child in enumerate(children):
            if isinstance(child, _CLAUSES):
                start = child.pattern.lineno if isinstance(child, ast.match_case) else child.lineno
            elif isinstance(child, ast.stmt):
                start = first_line(child)
            else:
                continue
            if start <= first and last <= _end(child)[0]:
                return (node, field, index)
    return None


def _end(node: ast.AST) -> tuple[int, int]:
    """Where a node ends; a ``case`` clause has no position of its own and ends with its body."""
    if isinstance(node, ast.match_case):
        return _end(node.body[-1])
    if isinstance(node, (ast.stmt, ast.excepthandler)):
        return (node.end_lineno or node.lineno, node.end_col_offset or 0)
    return (0, 0)  # the module


def _indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _parse_region(region: Sequence[str], indent: str) -> list[ast.stmt] | None:
    """The statements of the region's text, parsed alone. An indented block parses as the body
    of ``if 1:`` (columns stay as they are; lines move down one). It stands for the edited
    definition only while every line of it stays inside the block: a line indented less would
    end the block here and might be read otherwise in the file, so that falls back. A
    definition at column 0 parses alone as it does in the file: nothing before it is open."""
    text = "".join(region)
    if not text.endswith(("\n", "\r")):
        text += "\n"
    try:
        module: ast.Module = parse_quietly(("if 1:\n" if indent else "") + text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not indent:
        return list(module.body)
    wrapper = module.body[0] if len(module.body) == 1 else None
    if not isinstance(wrapper, ast.If) or wrapper.orelse:
        # a line at column 0 ended the block (an ``else:`` there would belong to the wrapper)
        return None
    return list(wrapper.body)


def _rebuilt(tree: ast.Module, path: list[_Step], new: list[ast.stmt]) -> ast.Module:
    """``tree`` with the node at the end of ``path`` replaced by ``new``: the nodes on the path
    are copied (the baseline's tree is cached and shared), the rest is the baseline's."""
    replacement: list[ast.AST] = list(new)
    for node, field, index in reversed(path):
        children = list(getattr(node, field))
        old = children[index]
        children[index : index + 1] = replacement
        copied = copy.copy(node)
        setattr(copied, field, children)
        # A block ends where its last statement ends; the edit may have moved that end.
        if (
            replacement
            and isinstance(copied, (ast.stmt, ast.excepthandler))
            and _end(node) == _end(old)
        ):
            copied.end_lineno, copied.end_col_offset = _end(replacement[-1])
        replacement = [copied]
    result = replacement[0]
    assert isinstance(result, ast.Module)
    return result
