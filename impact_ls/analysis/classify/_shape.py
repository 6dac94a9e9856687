"""How a definition is used, beyond its parameter list: call shapes, attributes and bases.

Private to ``analysis/classify/``; used by ``_ladder.py`` (issue 11, items 2 to 4).

- ``call_shape(old, new)``: the ``CallShape`` flips between two signatures of one function —
  ``def`` ↔ ``async def``, function ↔ generator, method ↔ ``@property``. An ``async`` or
  generator flip counts only for a function whose decorators cannot change how it is called
  (none, or ``staticmethod``/``classmethod``/``abstractmethod``/``override``): a decorated
  function (``@pytest.fixture``, ``@contextmanager``, ``@app.route``) is called through its
  decorator, which may absorb the change.
- ``instance_attributes(cls)``: every ``self.<name>`` a method of the class binds, with the
  first binding statement; ``own_names(cls)``: what the class body itself binds (methods,
  nested classes, class-level assignments).
- ``bases_of(cls)``: the bases a class lists, as written.
- ``export_lines(tree, name)``: the lines where the module's ``__all__`` names ``name``
  (``__all__ = [...]``, ``+=``, ``.append``/``.extend``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from collections.abc import Set as AbstractSet

from impact_ls.analysis.classify._signatures import Signature
from impact_ls.analysis.classify._statements import first_line
from impact_ls.model import CallShape

_PROPERTY = frozenset({"property", "cached_property", "functools.cached_property"})
# Decorators that leave a function's call shape to the function itself.
_TRANSPARENT = frozenset(
    {
        "staticmethod",
        "classmethod",
        "abstractmethod",
        "abc.abstractmethod",
        "override",
        "typing.override",
        "typing_extensions.override",
    }
)
# A class that serves attributes dynamically has no attribute whose removal can be proved.
_DYNAMIC_ATTRS = frozenset({"__getattr__", "__getattribute__"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def decorator_name(text: str) -> str:
    """``"@functools.lru_cache(maxsize=2)"`` → ``"functools.lru_cache"``."""
    return "".join(text.strip().lstrip("@").split("(", 1)[0].split())


def call_shape(old: Signature, new: Signature) -> tuple[CallShape, ...]:
    """The call-shape flips from ``old`` to ``new`` (both signatures of one function)."""
    flips: list[CallShape] = []
    old_names = {decorator_name(d) for d in old.decorators}
    new_names = {decorator_name(d) for d in new.decorators}
    was_property, is_property = bool(old_names & _PROPERTY), bool(new_names & _PROPERTY)
    if was_property != is_property:
        flips.append(CallShape.NOW_PROPERTY if is_property else CallShape.NO_LONGER_PROPERTY)
    if not (old_names <= _TRANSPARENT and new_names <= _TRANSPARENT):
        return tuple(flips)
    if old.is_async != new.is_async:
        flips.append(CallShape.NOW_ASYNC if new.is_async else CallShape.NO_LONGER_ASYNC)
    old_gen, new_gen = is_generator(old.node), is_generator(new.node)
    if old_gen is not None and new_gen is not None and old_gen != new_gen:
        flips.append(CallShape.NOW_GENERATOR if new_gen else CallShape.NO_LONGER_GENERATOR)
    return tuple(flips)


def is_generator(node: ast.AST | None) -> bool | None:
    """Whether a function's own body yields (nested scopes excluded); None without its ast."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    return any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(node.body))


def _own_nodes(body: list[ast.stmt]) -> Iterator[ast.AST]:
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, _SCOPES))


def own_names(cls: ast.ClassDef) -> set[str]:
    """Names the class body binds itself: methods, nested classes, class-level assignments."""
    names: set[str] = set()
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in stmt.names)
    return names


def serves_any_attribute(cls: ast.ClassDef) -> bool:
    """Whether the class defines ``__getattr__``/``__getattribute__`` (any name may resolve)."""
    return any(
        isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in _DYNAMIC_ATTRS
        for stmt in cls.body
    )


def instance_attributes(
    cls: ast.ClassDef, skip: AbstractSet[tuple[int, int]] = frozenset(), *, inside: bool = False
) -> dict[str, ast.stmt]:
    """``self.<name>`` bound by the class's methods → the first statement binding it.

    Methods whose (first, last) lines are in ``skip`` are left out — or, ``inside``, only they
    are read.
    """
    found: dict[str, tuple[int, ast.stmt]] = {}
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if (_span(method) in skip) is not inside:
            continue
        args = [*method.args.posonlyargs, *method.args.args]
        if not args or _is_static(method):
            continue
        receiver = args[0].arg
        for stmt in _statements(method.body):
            for name in _bound_attributes(stmt, receiver):
                if name not in found or stmt.lineno < found[name][0]:
                    found[name] = (stmt.lineno, stmt)
    return {name: stmt for name, (_, stmt) in found.items()}


def method_spans(cls: ast.ClassDef) -> Iterator[tuple[int, int]]:
    """(first line with decorators, last line) of each method directly in the class body."""
    for method in cls.body:
        if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield _span(method)


def _span(method: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    return first_line(method), method.end_lineno or method.lineno


def _is_static(method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(
        ast.unparse(d).rsplit(".", 1)[-1] in ("staticmethod", "classmethod")
        for d in method.decorator_list
    )


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of a function body, nested blocks included, nested scopes excluded."""
    stack: list[ast.stmt] = list(body)
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, _SCOPES):
            continue
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.stmt):
                stack.append(child)
            elif isinstance(child, (ast.ExceptHandler, ast.match_case)):
                stack.extend(child.body)


def _bound_attributes(stmt: ast.stmt, receiver: str) -> Iterator[str]:
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    for target in targets:
        for node in ast.walk(target):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id == receiver
            ):
                yield node.attr


def bases_of(node: ast.AST | None) -> tuple[str, ...] | None:
    """The bases a class lists, as written; None without its ast."""
    if not isinstance(node, ast.ClassDef):
        return None
    return tuple(ast.unparse(b) for b in node.bases)


def export_lines(tree: ast.Module | None, name: str) -> tuple[int, ...]:
    """Lines of the module-level ``__all__`` entries that name ``name``."""
    if tree is None:
        return ()
    lines: set[int] = set()
    for stmt in tree.body:
        values: list[ast.expr] = []
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                values = [stmt.value]
        elif (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute)
            and isinstance(stmt.value.func.value, ast.Name)
            and stmt.value.func.value.id == "__all__"
        ):
            values = list(stmt.value.args)
        for value in values:
            for node in ast.walk(value):
                if isinstance(node, ast.Constant) and node.value == name:
                    lines.add(node.lineno)
    return tuple(sorted(lines))
