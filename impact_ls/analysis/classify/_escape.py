"""The conservative escape gate for method-body changes (spec §3.2, Round-1 form).

Contract: ``compare_bodies(before=, after=)`` takes the ``ast`` nodes of one function in the
baseline and the current text and answers whether the body changed and, if it did, whether the
change can be observed by a caller (``escapes``) with a one-line reason.

A body is flattened into statement units: each simple statement, and the header of each compound
statement (``if``/``for``/``while``/``with``/``try``/``except``/``match``/``case``), keyed by its
normalised code plus the headers that enclose it — so moving a statement under another condition
counts as a change. Nested ``def``/``class`` bodies are not part of the unit list: they are
classified as their own changes. A unit is *changed* when it is in one body and not the other
(multiset difference, both directions).

A change escapes iff a changed unit (or a statement fed by a local that a changed unit rebinds):
writes a parameter (``p = …``, augmented, walrus), writes an attribute or item of ``self``/a
parameter or of a module-level name, writes a ``global``/``nonlocal`` name, changes a
``return``/``yield`` (added and removed ones included), raises or asserts, mutates a parameter or a
module-level object through a known mutator method (``items.append``), or calls a method of a
parameter for its side effects (``self.save()``). Everything else is "only local temporaries
changed". Aliasing (``d = self; d.x = 1``) is not followed: the interprocedural points-to
analysis is deferred (spec §2 row 11).
"""

from __future__ import annotations

import ast
import copy
import logging
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

logger = logging.getLogger(__name__)

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

LOCAL_ONLY = "only local temporaries changed"
DOCSTRING_ONLY = "only the docstring changed"
RENAMED_ONLY = "only local names renamed"

# Methods that mutate their receiver in the standard containers and file-likes: calling one on a
# caller-visible object is a write even without an assignment.
_MUTATORS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "popleft",
        "appendleft",
        "remove",
        "clear",
        "update",
        "setdefault",
        "popitem",
        "add",
        "discard",
        "sort",
        "reverse",
        "write",
        "writelines",
        "__setitem__",
        "__delitem__",
        "__setattr__",
    }
)
_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_REASON_CHARS = 60


@dataclass(frozen=True, slots=True, kw_only=True)
class BodyDiff:
    """What changed between two bodies of one function."""

    changed: bool
    escapes: bool
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class _Unit:
    context: tuple[str, ...]
    key: str
    node: ast.AST
    header: bool

    @property
    def ident(self) -> tuple[tuple[str, ...], str]:
        return (self.context, self.key)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Scope:
    params: frozenset[str]
    globals: frozenset[str]
    nonlocals: frozenset[str]
    locals: frozenset[str]


def compare_bodies(*, before: FunctionNode, after: FunctionNode) -> BodyDiff:
    """Compare two versions of a function body and decide whether the change escapes."""
    before_units = _units(before.body, ())
    after_units = _units(after.body, ())
    if Counter(u.ident for u in before_units) == Counter(u.ident for u in after_units):
        return BodyDiff(changed=False, escapes=False, reason="")
    after_scope = _scope_of(after)
    before_scope = _scope_of(before)
    if _canonical(before, before_scope) == _canonical(after, after_scope):
        return BodyDiff(changed=True, escapes=False, reason=RENAMED_ONLY)
    added = _difference(after_units, before_units)
    removed = _difference(before_units, after_units)
    for unit in added:
        reason = _direct_reason(unit, after_scope)
        if reason:
            return BodyDiff(changed=True, escapes=True, reason=reason)
    for unit in removed:
        reason = _direct_reason(unit, before_scope)
        if reason:
            return BodyDiff(changed=True, escapes=True, reason=_no_longer(reason))
    tainted = _tainted_locals(added, removed, after_units, after_scope)
    for unit in after_units:
        reason = _flow_reason(unit, after_scope, tainted)
        if reason:
            return BodyDiff(changed=True, escapes=True, reason=reason)
    if all(_is_docstring(u.node) for u in (*added, *removed)):
        return BodyDiff(changed=True, escapes=False, reason=DOCSTRING_ONLY)
    return BodyDiff(changed=True, escapes=False, reason=LOCAL_ONLY)


def _canonical(fn: FunctionNode, scope: _Scope) -> list[str]:
    """The body with each plain local renamed by order of first appearance (``t`` → ``_0``).

    Only names the body binds by assignment, loop, ``with``, ``except`` or ``match`` are renamed:
    a parameter, global, nonlocal, import or nested definition keeps its name, since renaming it
    is visible outside (or changes what is bound).
    """
    fixed = scope.params | scope.globals | scope.nonlocals
    for node in _own_scope(fn.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            fixed |= {node.name}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            fixed |= {(a.asname or a.name).split(".")[0] for a in node.names}
    order: dict[str, str] = {}
    for node in _own_scope(fn.body):
        name = _bound_name(node)
        if name is not None and name in scope.locals and name not in fixed:
            order.setdefault(name, f"_{len(order)}")
    renamer = _Renamer(order)
    return [
        ast.dump(renamer.visit(copy.deepcopy(stmt)))
        for stmt in fn.body
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]


def _bound_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.ExceptHandler):
        return node.name
    if isinstance(node, (ast.MatchAs, ast.MatchStar)):
        return node.name
    return None


class _Renamer(ast.NodeTransformer):
    """Rename locals by a fixed map, outside nested scopes (they are changes of their own)."""

    def __init__(self, names: dict[str, str]) -> None:
        self._names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self._names.get(node.id, node.id)
        return node

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.ExceptHandler:
        if node.name is not None:
            node.name = self._names.get(node.name, node.name)
        self.generic_visit(node)
        return node

    def visit_MatchAs(self, node: ast.MatchAs) -> ast.MatchAs:
        if node.name is not None:
            node.name = self._names.get(node.name, node.name)
        self.generic_visit(node)
        return node

    def visit_MatchStar(self, node: ast.MatchStar) -> ast.MatchStar:
        if node.name is not None:
            node.name = self._names.get(node.name, node.name)
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.Lambda:
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        return node

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AsyncFunctionDef:
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        return node


def _no_longer(reason: str) -> str:
    if reason.startswith(("return", "yield", "raised")):
        return reason
    return f"no longer {reason}"


def _units(body: list[ast.stmt], context: tuple[str, ...]) -> list[_Unit]:
    out: list[_Unit] = []
    for stmt in body:
        out.extend(_units_of(stmt, context))
    return out


def _units_of(stmt: ast.stmt, ctx: tuple[str, ...]) -> Iterator[_Unit]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return
    if isinstance(stmt, ast.If):
        key = f"if {ast.dump(stmt.test)}"
        yield _Unit(context=ctx, key=key, node=stmt, header=True)
        yield from _units(stmt.body, (*ctx, key))
        yield from _units(stmt.orelse, (*ctx, f"else of {key}"))
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        kind = "async for" if isinstance(stmt, ast.AsyncFor) else "for"
        key = f"{kind} {ast.dump(stmt.target)} in {ast.dump(stmt.iter)}"
        yield _Unit(context=ctx, key=key, node=stmt, header=True)
        yield from _units(stmt.body, (*ctx, key))
        yield from _units(stmt.orelse, (*ctx, f"else of {key}"))
    elif isinstance(stmt, ast.While):
        key = f"while {ast.dump(stmt.test)}"
        yield _Unit(context=ctx, key=key, node=stmt, header=True)
        yield from _units(stmt.body, (*ctx, key))
        yield from _units(stmt.orelse, (*ctx, f"else of {key}"))
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        kind = "async with" if isinstance(stmt, ast.AsyncWith) else "with"
        key = f"{kind} {' '.join(ast.dump(item) for item in stmt.items)}"
        yield _Unit(context=ctx, key=key, node=stmt, header=True)
        yield from _units(stmt.body, (*ctx, key))
    elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
        try_stmt: ast.Try = stmt  # type: ignore[assignment]  # TryStar has the same fields
        key = f"try@{len(ctx)}"
        yield _Unit(context=ctx, key=key, node=stmt, header=True)
        yield from _units(try_stmt.body, (*ctx, key))
        for handler in try_stmt.handlers:
            hkey = f"except {ast.dump(handler.type) if handler.type else ''} as {handler.name}"
            yield _Unit(context=(*ctx, key), key=hkey, node=handler, header=True)
            yield from _units(handler.body, (*ctx, key, hkey))
        yield from _units(try_stmt.orelse, (*ctx, f"else of {key}"))
        yield from _units(try_stmt.finalbody, (*ctx, f"finally of {key}"))
    elif isinstance(stmt, ast.Match):
        key = f"match {ast.dump(stmt.subject)}"
        yield _Unit(context=ctx, key=key, node=stmt, header=True)
        for case in stmt.cases:
            guard = ast.dump(case.guard) if case.guard else ""
            ckey = f"case {ast.dump(case.pattern)} if {guard}"
            yield _Unit(context=(*ctx, key), key=ckey, node=case, header=True)
            yield from _units(case.body, (*ctx, key, ckey))
    else:
        yield _Unit(context=ctx, key=ast.dump(stmt), node=stmt, header=False)


def _difference(left: list[_Unit], right: list[_Unit]) -> list[_Unit]:
    """Units of ``left`` not matched by an equal unit of ``right`` (multiset, order kept)."""
    remaining = Counter(u.ident for u in right)
    out: list[_Unit] = []
    for unit in left:
        if remaining[unit.ident] > 0:
            remaining[unit.ident] -= 1
        else:
            out.append(unit)
    return out


def _header_exprs(unit: _Unit) -> list[ast.AST]:
    """The expressions a unit evaluates itself (a header's, not its nested statements')."""
    node = unit.node
    if not unit.header:
        return [node]
    if isinstance(node, (ast.If, ast.While)):
        return [node.test]
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return [node.iter]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [item.context_expr for item in node.items]
    if isinstance(node, ast.ExceptHandler):
        return [node.type] if node.type else []
    if isinstance(node, ast.Match):
        return [node.subject]
    if isinstance(node, ast.match_case):
        return [node.guard] if node.guard else []
    return []


def _header_targets(unit: _Unit) -> list[ast.expr]:
    node = unit.node
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return [node.target]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in node.items if item.optional_vars is not None]
    return []


def _walk_expr(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` that does not enter nested function, class or lambda bodies."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in ast.iter_child_nodes(current):
            if not isinstance(child, _SCOPE_NODES):
                stack.append(child)


def _own_scope(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of a function's own scope; nested definitions are yielded, not entered."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, (*_SCOPE_NODES,)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(current))))


def _scope_of(fn: FunctionNode) -> _Scope:
    args = fn.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    params.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    globals_: set[str] = set()
    nonlocals: set[str] = set()
    bound: set[str] = set()
    for node in _own_scope(fn.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.Global):
            globals_.update(node.names)
        elif isinstance(node, ast.Nonlocal):
            nonlocals.update(node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    locals_ = (bound | params) - globals_ - nonlocals
    return _Scope(
        params=frozenset(params),
        globals=frozenset(globals_),
        nonlocals=frozenset(nonlocals),
        locals=frozenset(locals_),
    )


def _root(node: ast.AST) -> str | None:
    """The name an attribute/subscript/call chain starts from (``self`` in ``self.a[0].b``)."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return None


def _text(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 1] + "…"


def _visible(root: str | None, scope: _Scope) -> bool:
    """Whether an object reached from ``root`` can be seen outside this call."""
    return root is None or root in scope.params or root not in scope.locals


def _write_reason(target: ast.AST, scope: _Scope) -> str | None:
    if isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            reason = _write_reason(elt, scope)
            if reason:
                return reason
        return None
    if isinstance(target, ast.Starred):
        return _write_reason(target.value, scope)
    if isinstance(target, ast.Name):
        if target.id in scope.params:
            return f"writes parameter {target.id}"
        if target.id in scope.globals:
            return f"writes global {target.id}"
        if target.id in scope.nonlocals:
            return f"writes nonlocal {target.id}"
        return None
    if isinstance(target, (ast.Attribute, ast.Subscript)):
        root = _root(target)
        if root is not None and root in scope.globals:
            return f"writes global {_text(target)}"
        if root is not None and root not in scope.params and root not in scope.locals:
            return f"writes module-level {_text(target)}"
        if _visible(root, scope):
            return f"writes {_text(target)}"
    return None


def _targets_of(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, ast.AugAssign):
        return [node.target]
    if isinstance(node, ast.AnnAssign):
        return [node.target] if node.value is not None else []
    if isinstance(node, ast.Delete):
        return list(node.targets)
    if isinstance(node, ast.NamedExpr):
        return [node.target]
    return []


def _call_reason(call: ast.Call, scope: _Scope, *, statement: bool) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        root = _root(func.value)
        if func.attr in _MUTATORS and _visible(root, scope):
            return f"mutates {_text(func.value)} via .{func.attr}()"
        # ``self.save()`` called for its effect may write self; ``self.log.info(…)`` is noise
        if statement and isinstance(func.value, ast.Name) and func.value.id in scope.params:
            return f"calls {_text(func)}() for its side effects"
    return None


def _direct_reason(unit: _Unit, scope: _Scope) -> str | None:
    node = unit.node
    if isinstance(node, ast.Return):
        return "return value changed"
    if isinstance(node, ast.Raise):
        return "raised exception changed"
    if isinstance(node, ast.Assert):
        return "assertion changed"  # a failing assert raises to the caller
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return f"declares {'global' if isinstance(node, ast.Global) else 'nonlocal'} " + ", ".join(
            node.names
        )
    targets = _header_targets(unit) if unit.header else _targets_of(node)
    for target in targets:
        reason = _write_reason(target, scope)
        if reason:
            return reason
    statement_call = (
        node.value if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) else None
    )
    for expr in _header_exprs(unit):
        for sub in _walk_expr(expr):
            if isinstance(sub, (ast.Yield, ast.YieldFrom)):
                return "yielded value changed"
            if isinstance(sub, ast.NamedExpr):
                reason = _write_reason(sub.target, scope)
                if reason:
                    return reason
            if isinstance(sub, ast.Call):
                reason = _call_reason(sub, scope, statement=sub is statement_call)
                if reason:
                    return reason
    return None


def _local_names(targets: list[ast.expr], scope: _Scope) -> set[str]:
    """Locals rebound or mutated by writing ``targets`` (``x``, ``x.a``, ``x[i]``)."""
    out: set[str] = set()
    for target in targets:
        for node in ast.walk(target):
            if (
                isinstance(node, ast.Name)
                and node.id in scope.locals
                and node.id not in scope.params
            ):
                out.add(node.id)
    return out


def _unit_targets(unit: _Unit) -> list[ast.expr]:
    targets = _header_targets(unit) if unit.header else _targets_of(unit.node)
    for expr in _header_exprs(unit):
        targets.extend(n.target for n in _walk_expr(expr) if isinstance(n, ast.NamedExpr))
    return targets


def _reads(unit: _Unit) -> set[str]:
    names: set[str] = set()
    for expr in _header_exprs(unit):
        if isinstance(expr, (ast.Assign, ast.AnnAssign)):
            expr = expr.value if expr.value is not None else expr  # noqa: PLW2901 - read the RHS only
        names.update(
            n.id
            for n in _walk_expr(expr)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        )
        if isinstance(unit.node, ast.AugAssign):
            names.update(_names_in(unit.node.target))
    return names


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _tainted_locals(
    added: list[_Unit], removed: list[_Unit], after_units: list[_Unit], scope: _Scope
) -> set[str]:
    """Locals whose value the change may have altered, closed over local assignments."""
    tainted: set[str] = set()
    for unit in (*added, *removed):
        tainted |= _local_names(_unit_targets(unit), scope)
    grew = True
    while grew:
        grew = False
        for unit in after_units:
            if _reads(unit) & tainted:
                new = _local_names(_unit_targets(unit), scope) - tainted
                if new:
                    tainted |= new
                    grew = True
    return tainted


def _flow_reason(unit: _Unit, scope: _Scope, tainted: set[str]) -> str | None:
    """Why an unchanged statement carries a changed local out of the function, if it does."""
    if not tainted:
        return None
    node = unit.node
    used = sorted(_reads(unit) & tainted)
    if isinstance(node, ast.Return) and node.value is not None:
        hit = sorted(_names_in(node.value) & tainted)
        return f"return value depends on changed {hit[0]}" if hit else None
    if not used:
        return None
    for expr in _header_exprs(unit):
        for sub in _walk_expr(expr):
            if isinstance(sub, (ast.Yield, ast.YieldFrom)) and sub.value is not None:
                hit = sorted(_names_in(sub.value) & tainted)
                if hit:
                    return f"yielded value depends on changed {hit[0]}"
    targets = _unit_targets(unit)
    for target in targets:
        reason = _write_reason(target, scope)
        if reason:
            return f"{reason} from changed {used[0]}"
    if isinstance(node, (ast.Raise, ast.Assert)):
        return f"raised exception depends on changed {used[0]}"
    for expr in _header_exprs(unit):
        statement_call = (
            node.value if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) else None
        )
        for sub in _walk_expr(expr):
            if isinstance(sub, ast.Call) and _names_in(sub) & tainted:
                reason = _call_reason(sub, scope, statement=sub is statement_call)
                if reason:
                    return f"{reason} with changed {used[0]}"
    return None


def _is_docstring(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )
