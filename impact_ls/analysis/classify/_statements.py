"""What classification reads of ``ast`` statements: definitions, statement blocks, first lines.

Private to ``analysis/classify/``; shared by ``_outline.py``, ``_reparse.py`` and ``_shape.py``.
"""

from __future__ import annotations

import ast

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
DEFINITIONS = (*FUNCTIONS, ast.ClassDef)
# Statement blocks in the order ast.iter_child_nodes visits them (try: body, handlers, else…).
BLOCKS = ("body", "handlers", "orelse", "finalbody", "cases")


def first_line(stmt: ast.stmt) -> int:
    """A statement's first line, its decorators included."""
    decorators: list[ast.expr] = getattr(stmt, "decorator_list", [])
    return min([stmt.lineno, *(d.lineno for d in decorators)])
