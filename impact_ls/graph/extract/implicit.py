"""Handlers for the calls the syntax makes without a call: operators, subscripts, ``with``,
``for``, f-strings, ``raise Cls`` and the builtins that call a special method.

Each becomes an ordinary call fact whose callee chain ends in the special method
(``a + b`` → ``("a", "__add__")``, ``for x in self.rows`` → ``("self", "rows", "__iter__")``)
with the argument shape Python passes, so resolution and binding treat it like any call. A
receiver that is not a plain chain (``(a + b)[0]``) is skipped: nothing could type it.
Resolution links a special method only when the receiver's class defines it, and never by name
alone, so the many operators on builtin values cost a fact each and no edge.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from impact_ls.graph.extract.scopes import CallUse
from impact_ls.graph.extract.syntax import annotation_chains, arg_shape, chain_of, span_of
from impact_ls.graph.extract.walker import new_assign
from impact_ls.graph.facts import CALL, ITEM, SUPER, UNKNOWN, Chain
from impact_ls.model import ArgShape, Span

if TYPE_CHECKING:
    from impact_ls.graph.extract.walker import Walker

# The typing generics whose arguments are types (``Literal``'s are values, ``Annotated``'s
# metadata too): a string among them names a class, as in an annotation.
TYPE_GENERICS = frozenset(
    {
        "Optional",
        "Union",
        "List",
        "Dict",
        "Set",
        "FrozenSet",
        "Tuple",
        "Type",
        "Callable",
        "Sequence",
        "MutableSequence",
        "Mapping",
        "MutableMapping",
        "Iterable",
        "Iterator",
        "Collection",
        "Awaitable",
        "Coroutine",
        "AsyncIterator",
        "AsyncIterable",
        "Generator",
        "AsyncGenerator",
        "ClassVar",
        "Final",
        "DefaultDict",
        "OrderedDict",
        "Deque",
        "ContextManager",
        "AsyncContextManager",
    }
)
_NONE = ArgShape()
_ONE = ArgShape(positional=1)
_TWO = ArgShape(positional=2)
_THREE = ArgShape(positional=3)

_BINARY: dict[type, tuple[str, str]] = {
    ast.Add: ("__add__", "__radd__"),
    ast.Sub: ("__sub__", "__rsub__"),
    ast.Mult: ("__mul__", "__rmul__"),
    ast.MatMult: ("__matmul__", "__rmatmul__"),
    ast.Div: ("__truediv__", "__rtruediv__"),
    ast.FloorDiv: ("__floordiv__", "__rfloordiv__"),
    ast.Mod: ("__mod__", "__rmod__"),
    ast.Pow: ("__pow__", "__rpow__"),
    ast.LShift: ("__lshift__", "__rlshift__"),
    ast.RShift: ("__rshift__", "__rrshift__"),
    ast.BitOr: ("__or__", "__ror__"),
    ast.BitXor: ("__xor__", "__rxor__"),
    ast.BitAnd: ("__and__", "__rand__"),
}
_COMPARE: dict[type, str] = {
    ast.Eq: "__eq__",
    ast.NotEq: "__ne__",
    ast.Lt: "__lt__",
    ast.LtE: "__le__",
    ast.Gt: "__gt__",
    ast.GtE: "__ge__",
}
_UNARY: dict[type, str] = {ast.USub: "__neg__", ast.UAdd: "__pos__", ast.Invert: "__invert__"}
_SUBSCRIPT: dict[type, tuple[str, ArgShape]] = {
    ast.Load: ("__getitem__", _ONE),
    ast.Store: ("__setitem__", _TWO),
    ast.Del: ("__delitem__", _ONE),
}
# builtins that call a special method of their first argument
BUILTIN_DUNDERS: dict[str, str] = {
    "len": "__len__",
    "str": "__str__",
    "repr": "__repr__",
    "format": "__format__",
    "iter": "__iter__",
    "next": "__next__",
    "bool": "__bool__",
    "hash": "__hash__",
    "abs": "__abs__",
    "int": "__int__",
    "float": "__float__",
    "reversed": "__reversed__",
    "dir": "__dir__",
}


def operator_method(node: ast.BinOp | ast.UnaryOp) -> str:
    """The special method of the left (or only) operand that an operator calls first."""
    if type(node) is ast.BinOp:
        return _BINARY[type(node.op)][0]
    return _UNARY.get(type(node.op), "")  # ``not x`` gives a bool: no method of x's


def record(walk: Walker, expr: ast.expr, dunder: str, span: Span, args: ArgShape) -> None:
    """An implicit call of ``expr.<dunder>(…)`` in the current scope."""
    chain = chain_of(expr)
    head = chain[0]
    if head == UNKNOWN:
        return
    _record_chain(walk, chain, dunder, span, args)


def _record_chain(walk: Walker, chain: Chain, dunder: str, span: Span, args: ArgShape) -> None:
    scope = walk.scopes[-1]
    head = chain[0]
    if scope.is_function and head != SUPER:
        chain = walk.rewrite_self(chain)
        head = chain[0]
    use = CallUse(scope.qualname, (*chain, dunder), span, args, False)
    use.implicit = True
    if head not in (SUPER, "self", "cls") and (scope.is_function or scope.is_class):
        scope.pending.append(use)
    walk.calls.append(use)


def visit_binop(walk: Walker, node: ast.BinOp) -> None:
    """``a + b``: ``a.__add__(b)``, and ``b.__radd__(a)`` for when ``a`` does not know ``b``."""
    names = _BINARY.get(type(node.op))
    if names is not None:
        span = span_of(node)
        record(walk, node.left, names[0], span, _ONE)
        record(walk, node.right, names[1], span, _ONE)
    walk.walk_children(node)


def visit_aug_assign(walk: Walker, node: ast.AugAssign) -> None:
    """``a += b``: ``a.__iadd__(b)`` (``__add__`` when the class has no in-place form)."""
    names = _BINARY.get(type(node.op))
    if names is not None and isinstance(node.target, (ast.Name, ast.Attribute, ast.Subscript)):
        record(walk, node.target, "__i" + names[0][2:], span_of(node), _ONE)


def visit_compare(walk: Walker, node: ast.Compare) -> None:
    """``a < b``, ``a == b``: ``a.__lt__(b)``…; ``x in c``: ``c.__contains__(x)``."""
    left: ast.expr = node.left
    span = span_of(node)
    for op, right in zip(node.ops, node.comparators, strict=False):
        kind = type(op)
        if kind in (ast.In, ast.NotIn):
            record(walk, right, "__contains__", span, _ONE)
        else:
            name = _COMPARE.get(kind)
            if name is not None:
                record(walk, left, name, span, _ONE)
        left = right
    walk.walk_children(node)


def visit_unary(walk: Walker, node: ast.UnaryOp) -> None:
    """``-a``: ``a.__neg__()`` (``not a`` is a truth test, left out)."""
    name = _UNARY.get(type(node.op))
    if name is not None:
        record(walk, node.operand, name, span_of(node), _NONE)
    walk.walk_children(node)


def visit_subscript(walk: Walker, node: ast.Subscript) -> None:
    """``a[k]``: ``__getitem__``, ``__setitem__`` or ``__delitem__`` by context; a typing generic
    (``Optional["Session"]``, ``Callable[["Request"], …]`` in a type alias) is a type expression,
    its strings forward references."""
    found = _SUBSCRIPT.get(type(node.ctx))
    if found is not None:
        record(walk, node.value, found[0], span_of(node), found[1])
    value = node.value
    name = value.id if type(value) is ast.Name else getattr(value, "attr", None)
    if name in TYPE_GENERICS:
        forward_references(walk, node.slice)
    walk.walk_children(node)


def visit_with(walk: Walker, node: ast.With | ast.AsyncWith) -> None:
    """``with cm as x``: ``cm.__enter__()`` then ``cm.__exit__(…)`` (async: ``__aenter__``)."""
    enter, exit_ = (
        ("__aenter__", "__aexit__")
        if isinstance(node, ast.AsyncWith)
        else ("__enter__", "__exit__")
    )
    for item in node.items:
        span = span_of(item.context_expr)
        record(walk, item.context_expr, enter, span, _NONE)
        record(walk, item.context_expr, exit_, span, _THREE)
    walk.walk_children(node)


def visit_for(walk: Walker, node: ast.For | ast.AsyncFor) -> None:
    """``for x in it``: ``it.__iter__()`` and the ``__next__`` of what it returns; ``x`` is one
    of ``it``'s elements."""
    _iteration(walk, node.iter, isinstance(node, ast.AsyncFor))
    _loop_variable(walk, node.target, node.iter)
    walk.walk_children(node)


def visit_comprehension(walk: Walker, node: ast.comprehension) -> None:
    """A comprehension's ``for``: iterates like a ``for`` statement."""
    _iteration(walk, node.iter, bool(node.is_async))
    _loop_variable(walk, node.target, node.iter)
    walk.walk_children(node)


def _loop_variable(walk: Walker, target: ast.expr, iterable: ast.expr) -> None:
    if not isinstance(target, ast.Name):
        return
    chain = chain_of(iterable)
    if chain[0] in (UNKNOWN, SUPER) or CALL in chain:
        return
    scope = walk.scopes[-1]
    chain = walk.rewrite_self(chain) if scope.is_function else chain
    scope.typed.add(target.id)
    walk.assigns.append(
        new_assign(scope.qualname, (target.id,), (*chain, ITEM), span_of(target), False, True)
    )


def _iteration(walk: Walker, iterable: ast.expr, is_async: bool) -> None:
    chain = chain_of(iterable)
    if chain[0] == UNKNOWN:
        return
    iter_, next_ = ("__aiter__", "__anext__") if is_async else ("__iter__", "__next__")
    span = span_of(iterable)
    _record_chain(walk, chain, iter_, span, _NONE)
    _record_chain(walk, (*chain, iter_, CALL), next_, span, _NONE)


def visit_formatted(walk: Walker, node: ast.FormattedValue) -> None:
    """``f"{x}"``: ``x.__format__(spec)`` (``__str__`` when the class defines no format)."""
    if node.conversion == ord("r"):
        record(walk, node.value, "__repr__", span_of(node), _NONE)
    elif node.conversion == ord("s"):
        record(walk, node.value, "__str__", span_of(node), _NONE)
    else:
        record(walk, node.value, "__format__", span_of(node), _ONE)
    walk.walk_children(node)


def visit_raise(walk: Walker, node: ast.Raise) -> None:
    """``raise Cls``: raising a class constructs it (``raise Cls(...)`` is a call already)."""
    exc = node.exc
    if isinstance(exc, (ast.Name, ast.Attribute)):
        chain = chain_of(exc)
        if UNKNOWN not in chain and CALL not in chain:
            scope = walk.scopes[-1]
            use = CallUse(scope.qualname, chain, span_of(exc), _NONE, False)
            if scope.is_function or scope.is_class:
                scope.pending.append(use)
            walk.calls.append(use)
    walk.walk_children(node)


def builtin_call(walk: Walker, name: str, node: ast.Call) -> None:
    """``len(x)``, ``str(x)``…: the special method the builtin calls; ``print`` formats all."""
    if name == "print":
        for arg in node.args:
            if not isinstance(arg, ast.Starred):
                record(walk, arg, "__str__", span_of(arg), _NONE)
        return
    dunder = BUILTIN_DUNDERS.get(name)
    if dunder is not None and node.args and not isinstance(node.args[0], ast.Starred):
        shape = _ONE if dunder == "__format__" else _NONE
        record(walk, node.args[0], dunder, span_of(node), shape)


def callable_instance(args: ast.Call) -> ArgShape:
    """The argument shape an instance's ``__call__`` gets (the call's own)."""
    return arg_shape(args)


def forward_references(walk: Walker, expr: ast.expr) -> None:
    """The strings of a type expression outside an annotation (``cast("Session", s)``, a type
    alias): type refs of the classes they name, not identifier strings (they are no lookup)."""
    refs: list[tuple[Chain, Span]] = []
    skip = walk.skip_strings  # a nested generic's strings were read with the outer one
    for node in ast.walk(expr):
        if type(node) is ast.Constant and type(node.value) is str and id(node) not in skip:
            annotation_chains(node, refs)
            skip.add(id(node))
    walk.record_type_refs(walk.scope.qualname, refs)
