"""Handlers for what uses a name: calls, attribute chains, and references made through strings.

A call records its callee chain and argument shape; ``getattr(obj, "name")``-like calls and
``importlib.import_module("mod")`` also record a dynamic reference to the string they name, or
to the pattern of a name computed around a literal (``"on_" + kind``, ``"drivers." + name``),
and ``getattr(models, payload["type"])`` one to the module or class it looks a computed name up
in (a plain name read and a string literal are recorded by the walker itself: they are the
commonest nodes). Chains spell a method's first parameter ``self`` and wait for their scope to
close to learn whether their head is a local.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from impact_ls.graph.extract import bindings, implicit
from impact_ls.graph.extract.scopes import CallUse
from impact_ls.graph.extract.syntax import arg_shape, chain_of, lambda_local, span_of
from impact_ls.graph.extract.walker import BUILTINS, new_dynamic
from impact_ls.graph.facts import CALL, ITEM, SUPER, UNKNOWN, Chain
from impact_ls.graph.kinds import (
    ACCESS_READ,
    ACCESS_WRITE,
    DYNAMIC_COMPUTED_LOOKUP,
    DYNAMIC_GETATTR,
    DYNAMIC_IMPORT_MODULE,
)
from impact_ls.model import COMPUTED, DynamicKind

if TYPE_CHECKING:
    from impact_ls.graph.extract.walker import Walker


_DYNAMIC_ATTR = {
    "getattr": DynamicKind.GETATTR,
    "setattr": DynamicKind.SETATTR,
    "hasattr": DynamicKind.HASATTR,
    "delattr": DynamicKind.SETATTR,
}
_IMPORT_MODULE = {("importlib", "import_module"), ("import_module",), ("__import__",)}
# the last names of every chain ``_dynamic_call`` acts on: a cheap test before the full one
_DYNAMIC_CALLEES = frozenset({*_DYNAMIC_ATTR, *(c[-1] for c in _IMPORT_MODULE)})
_NEVER_LOCAL = frozenset({UNKNOWN, SUPER, "self", "cls"})
# a chain part that is no plain name (an attribute of a call's result, an item, ``super()``)
_NOT_NAMES = frozenset({UNKNOWN, SUPER, CALL, ITEM, "self", "cls"})
# a module below a package, once its computed part is filled in
_MODULE_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
# the shortest literal part of a computed attribute name that is matched against changed names
_MIN_LITERAL = 3
_TYPE_TAKERS = frozenset({"cast", "TypeVar"})
_DUNDER_BUILTINS = frozenset({*implicit.BUILTIN_DUNDERS, "print"})
_ADDERS = frozenset({"append", "add", "insert", "setdefault"})
_CONSTANT = ast.Constant
_NAME = ast.Name
# the argument expressions that may name a function or class (``_value_chain`` reads no other)
_NAMING = frozenset({ast.Name, ast.Attribute, ast.Lambda})


def visit_call(walk: Walker, node: ast.Call) -> None:
    """A call site; then its callee's inner calls and its arguments."""
    # the commonest statement-level work (177k calls on django): helpers inlined
    scope = walk.scopes[-1]
    func = node.func
    inner: list[ast.expr] = []
    if type(func) is _NAME:
        chain: Chain = (func.id,)
    elif type(func) is ast.Lambda:  # ``(lambda: x)()``: a call of the lambda defined here
        chain = (lambda_local(func),)
        inner.append(func)
    else:
        chain = chain_of(func, inner)
    head = chain[0]
    if scope.is_function and head not in (UNKNOWN, SUPER):
        chain = walk.rewrite_self(chain)
        head = chain[0]
    use = CallUse(
        scope.qualname,
        chain,
        span_of(node),
        arg_shape(node),
        head == UNKNOWN,
        values=values_of(walk, node) if node.args or node.keywords else (),
    )
    if head not in _NEVER_LOCAL and (scope.is_function or scope.is_class):
        scope.pending.append(use)
    walk.calls.append(use)
    if chain[-1] in _DYNAMIC_CALLEES:
        _dynamic_call(walk, chain, node)
    elif chain[-1] in _TYPE_TAKERS:
        _type_arguments(walk, chain[-1], node)
    if len(chain) == 1 and head in _DUNDER_BUILTINS and head not in scope.bound:
        implicit.builtin_call(walk, head, node)
    elif len(chain) > 1 and chain[-1] in _ADDERS and head != UNKNOWN:
        bindings.record_added(walk, chain, node)
    visit = walk.visit
    for expr in inner:
        visit(expr)
    skip = walk.skip_strings
    for arg in node.args:
        if type(arg) is _CONSTANT:
            value = arg.value
            if type(value) is str and id(arg) not in skip:
                walk.record_string(arg, value)
        else:
            visit(arg)
    for kw in node.keywords:
        arg = kw.value
        if type(arg) is _CONSTANT:
            value = arg.value
            if type(value) is str and id(arg) not in skip:
                walk.record_string(arg, value)
        else:
            visit(arg)


def values_of(walk: Walker, node: ast.Call) -> tuple[tuple[str, Chain], ...]:
    """The arguments of a call that may name a function or class (keyed by position or keyword).

    A plain local variable is left out (what it holds is data, as a rule, and it is the most
    common argument); a function defined in the scope, a parameter's attribute, a module name
    or ``self.method`` are kept.
    """
    out: list[tuple[str, Chain]] = []
    for i, arg in enumerate(node.args):
        kind = type(arg)
        if kind in _NAMING:
            chain = _value_chain(walk, arg)
            if chain is not None:
                out.append((str(i), chain))
        elif kind is ast.Starred:
            break  # positions after a ``*`` unpacking are unknown
    for kw in node.keywords:
        if kw.arg is not None and type(kw.value) in _NAMING:
            chain = _value_chain(walk, kw.value)
            if chain is not None:
                out.append((kw.arg, chain))
    return tuple(out) if out else ()


def _value_chain(walk: Walker, arg: ast.expr) -> Chain | None:
    if type(arg) is _NAME:
        name = arg.id
        scope = walk.scopes[-1]
        if scope.is_function and name in scope.bound and name not in scope.defined:
            return None
        if name in BUILTINS:
            return None
        return walk.rewrite_self((name,)) if scope.is_function else (name,)
    if type(arg) is ast.Attribute:
        chain = chain_of(arg)
        if chain[0] in (UNKNOWN, SUPER):
            return None
        return walk.rewrite_self(chain) if walk.scopes[-1].is_function else chain
    if type(arg) is ast.Lambda:
        return (lambda_local(arg),)
    return None


def visit_attribute(walk: Walker, node: ast.Attribute) -> None:
    """An attribute chain read or written outside an assignment target (``obj.a.b``)."""
    inner: list[ast.expr] = []
    chain = chain_of(node, inner)
    walk.visit_all(inner)
    if chain[0] == UNKNOWN or CALL in chain or ITEM in chain:
        return
    if chain[0] != SUPER:
        chain = walk.rewrite_self(chain)
    access = ACCESS_READ if isinstance(node.ctx, ast.Load) else ACCESS_WRITE
    walk.record_access(chain, span_of(node), access)


def _type_arguments(walk: Walker, callee: str, node: ast.Call) -> None:
    """``cast("Session", s)``'s first argument and ``TypeVar("T", bound="Base")``'s bound are
    type expressions: their strings are forward references."""
    if callee == "cast" and node.args:
        implicit.forward_references(walk, node.args[0])
    for kw in node.keywords:
        if kw.arg == "bound":
            implicit.forward_references(walk, kw.value)


def _dynamic_call(walk: Walker, chain: Chain, node: ast.Call) -> None:
    """``getattr(obj, "name")`` and friends, ``import_module("mod")``: a name in a string."""
    if len(chain) == 1 and chain[0] in _DYNAMIC_ATTR and len(node.args) >= 2:
        arg = node.args[1]
        kind = _DYNAMIC_ATTR[chain[0]]
    elif chain in _IMPORT_MODULE and node.args:
        arg = node.args[0]
        kind = DYNAMIC_IMPORT_MODULE
    else:
        return
    name = _text(arg)
    if name is not None:
        walk.skip_strings.add(id(arg))
        walk.dynamic.append(new_dynamic(walk.scope.qualname, name, kind, span_of(node)))
        return
    pattern = computed_module(arg) if kind is DYNAMIC_IMPORT_MODULE else computed_name(arg)
    if pattern is not None:
        walk.dynamic.append(new_dynamic(walk.scope.qualname, pattern, kind, span_of(node)))
    elif kind is DYNAMIC_GETATTR:
        owner = _global_chain(walk, node.args[0])
        if owner is not None:
            walk.dynamic.append(
                new_dynamic(walk.scope.qualname, owner, DYNAMIC_COMPUTED_LOOKUP, span_of(node))
            )


def _global_chain(walk: Walker, expr: ast.expr) -> str | None:
    """``models`` or ``pkg.models`` as written, when its head is no local of a function (a
    module-level name, as resolution checks: ``nodes.file_dynamic``); ``None`` otherwise."""
    if type(expr) is not _NAME and type(expr) is not ast.Attribute:
        return None
    chain = chain_of(expr)
    if any(part in _NOT_NAMES for part in chain):
        return None
    return None if walk.is_function_local(chain[0]) else ".".join(chain)


def computed_name(arg: ast.expr) -> str | None:
    """The names an attribute name built around a literal may take, as a pattern with one
    ``COMPUTED`` part: ``"on_" + kind`` and ``f"visit_{name}"`` are ``on_*`` and ``visit_*``,
    ``name + "_handler"`` is ``*_handler``. ``None`` for any other expression, or a literal part
    too short to tell names apart (``"_" + name`` could be any private name)."""
    if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Add):
        first, last = arg.left, arg.right
    elif isinstance(arg, ast.JoinedStr) and len(arg.values) == 2:
        first, last = arg.values
    else:
        return None
    prefix = _text(first)
    suffix = _text(last) if prefix is None else None
    literal = prefix or suffix or ""
    if len(literal) < _MIN_LITERAL or not (literal.replace("_", "a")).isidentifier():
        return None
    return f"{prefix or ''}{COMPUTED}{suffix or ''}"


def computed_module(arg: ast.expr) -> str | None:
    """The modules an ``import_module`` argument built around a package path may name, as a
    pattern with one ``COMPUTED`` part: ``"drivers." + name``, ``f"drivers.{name}"`` and
    ``"drivers.%s" % name`` are ``drivers.*``, ``f"plugins.{name}.hooks"`` is
    ``plugins.*.hooks``, ``f"app.plugins.{fmt}_export"`` is ``app.plugins.*_export``. ``None``
    without a literal package path in front (a relative or fully computed name could be any
    module), or for what no module name fits."""
    prefix: str | None
    suffix: str | None = ""
    if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Add):
        prefix = _text(arg.left)
    elif isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Mod):
        template = _text(arg.left)
        if template is None or template.count("%") != 1 or "%s" not in template:
            return None
        prefix, _, suffix = template.partition("%s")
    elif isinstance(arg, ast.JoinedStr) and len(arg.values) in (2, 3):
        prefix = _text(arg.values[0])
        if len(arg.values) == 3:
            suffix = _text(arg.values[2])
    else:
        return None
    if prefix is None or suffix is None or "." not in prefix:
        return None
    if not _MODULE_NAME.fullmatch(f"{prefix}x{suffix}"):
        return None
    return f"{prefix}{COMPUTED}{suffix}"


def _text(node: ast.expr) -> str | None:
    """The value of a string constant, else ``None``."""
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
