"""Handlers for what binds a name: imports, assignments, ``__all__``, parameters, ``global``.

An import becomes an ``ImportFact`` (inside ``if TYPE_CHECKING:`` it is marked so). An
assignment binds its targets in the current scope and, when the value says what type the target
gets (a constructor call, an annotation, another name), becomes an ``AssignFact``; a write to
``self.x`` is also an access and makes ``x`` an attribute of the enclosing class. ``__all__`` is
read in its three spellings: ``=``, ``+=`` and ``.extend``/``.append``. A function that puts
what it is given into a module-level container (``ENCODERS[name] = function``, ``HOOKS.append(
hook)``: a registering decorator) records a dynamic reference to that registry.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from impact_ls.graph.extract import implicit
from impact_ls.graph.extract.syntax import (
    annotation_chains,
    chain_of,
    is_type_checking,
    lambda_local,
    main_type,
    span_of,
    string_list,
)
from impact_ls.graph.extract.walker import new_assign, new_dynamic
from impact_ls.graph.facts import CALL, ITEM, SUPER, UNKNOWN, Chain, ImportFact
from impact_ls.graph.kinds import ACCESS_WRITE, DYNAMIC_REGISTRY
from impact_ls.model import Span

if TYPE_CHECKING:
    from impact_ls.graph.extract.walker import Walker


_SELF = frozenset({"self", "cls"})


def visit_import(walk: Walker, node: ast.Import) -> None:
    """``import a.b as c``: one fact per name; binds ``c`` (or ``a``)."""
    for alias in node.names:
        fact = ImportFact(
            scope=walk.scope.qualname,
            module=alias.name,
            level=0,
            name=None,
            asname=alias.asname,
            span=span_of(node),
            type_checking=walk.type_checking > 0,
        )
        walk.imports.append(fact)
        walk.scope.bound.add(fact.bound)


def visit_import_from(walk: Walker, node: ast.ImportFrom) -> None:
    """``from ..a import b as c``: one fact per name, ``*`` included; binds each name."""
    for alias in node.names:
        fact = ImportFact(
            scope=walk.scope.qualname,
            module=node.module or "",
            level=node.level or 0,
            name=alias.name,
            asname=alias.asname,
            span=span_of(alias) if hasattr(alias, "lineno") else span_of(node),
            type_checking=walk.type_checking > 0,
        )
        walk.imports.append(fact)
        if alias.name != "*":
            walk.scope.bound.add(fact.bound)


def visit_if(walk: Walker, node: ast.If) -> None:
    """``if``: the body of ``if TYPE_CHECKING:`` imports for annotations only."""
    if is_type_checking(node.test):
        walk.type_checking += 1
        walk.visit_all(node.body)
        walk.type_checking -= 1
        walk.visit_all(node.orelse)
        return
    walk.visit(node.test)
    walk.visit_all(node.body)
    walk.visit_all(node.orelse)


def visit_assign(walk: Walker, node: ast.Assign) -> None:
    """``a = b = value``: each target bound, typed by the value where it can be."""
    value = node.value
    for target in node.targets:
        _assign_target(walk, target, value, span_of(node), annotated=None)
    walk.visit(value)


def visit_ann_assign(walk: Walker, node: ast.AnnAssign) -> None:
    """``x: T = value``: the annotation's classes are type refs; ``x`` has type ``T``."""
    refs: list[tuple[Chain, Span]] = []
    annotation_chains(node.annotation, refs)
    walk.record_type_refs(walk.scope.qualname, refs)
    _assign_target(walk, node.target, node.value, span_of(node), annotated=node.annotation)
    if node.value is not None:
        walk.visit(node.value)


def visit_aug_assign(walk: Walker, node: ast.AugAssign) -> None:
    """``x += value`` reads and rebinds ``x``; ``__all__ += [...]`` extends the exports."""
    target = node.target
    if isinstance(target, ast.Name) and target.id == "__all__" and _at_module_level(walk):
        _extend_all(walk, node.value, string_list(node.value))
    if isinstance(target, ast.Name):
        walk.record_name(target.id, target)
    implicit.visit_aug_assign(walk, node)
    _assign_target(walk, target, None, span_of(node), annotated=None)
    walk.visit(node.value)


def visit_expr_stmt(walk: Walker, node: ast.Expr) -> None:
    """An expression statement; ``__all__.extend([...])``/``.append("x")`` extends exports."""
    value = node.value
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == "__all__"
        and not walk.scope.is_function
        and value.args
    ):
        arg = value.args[0]
        one = isinstance(arg, ast.Constant) and isinstance(arg.value, str)
        _extend_all(walk, arg, [arg.value] if one else string_list(arg))  # type: ignore[attr-defined]
    walk.visit(value)


def visit_global(walk: Walker, node: ast.Global | ast.Nonlocal) -> None:
    """``global``/``nonlocal``: assignments to these names are not locals of the scope."""
    walk.scope.globals.update(node.names)


def visit_arg(walk: Walker, node: ast.arg) -> None:
    """A parameter met in the generic walk: bound in the current scope."""
    walk.scope.bound.add(node.arg)


def visit_except(walk: Walker, node: ast.ExceptHandler) -> None:
    """``except E as name``: binds ``name``."""
    if node.name:
        walk.bind(node.name)
    if node.type is not None:
        walk.visit(node.type)
    walk.visit_all(node.body)


def _at_module_level(walk: Walker) -> bool:
    scope = walk.scope
    return not scope.is_function and not scope.is_class


def _extend_all(walk: Walker, value: ast.expr, names: list[str] | None) -> None:
    """Add ``names``, the string literal(s) of ``value``, to ``__all__`` (``None``: not all are)."""
    if names is None:
        return
    walk.all_names = [*(walk.all_names or []), *names]
    elts = value.elts if isinstance(value, (ast.List, ast.Tuple, ast.Set)) else [value]
    for elt in elts:
        walk.skip_strings.add(id(elt))


def _assign_target(
    walk: Walker, target: ast.expr, value: ast.expr | None, span: Span, annotated: ast.expr | None
) -> None:
    scope = walk.scopes[-1]
    if isinstance(target, ast.Name):
        walk.bind(target.id)
        if target.id == "__all__" and _at_module_level(walk):
            names = string_list(value)
            if names is not None:
                walk.all_names = names
                for elt in value.elts:  # type: ignore[union-attr]
                    walk.skip_strings.add(id(elt))
        typed = False
        for option in _options(value) if type(value) is ast.IfExp else (value,):
            type_chain, alias = value_type(walk, option, annotated)
            if type_chain:
                typed = True
                walk.assigns.append(
                    new_assign(
                        scope.qualname, (target.id,), type_chain, span, annotated is not None, alias
                    )
                )
        if typed:
            scope.typed.add(target.id)
        elif annotated is None:
            record_elements(walk, (target.id,), value, span)
        if scope.is_class:
            scope.attributes.append(target.id)
        return
    if isinstance(target, (ast.Tuple, ast.List)):
        pairs = (
            value.elts
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
            else [None] * len(target.elts)
        )
        for elt, given in zip(target.elts, pairs, strict=True):
            _assign_target(walk, elt, given, span, None)  # ``a, b = f, g``: pairwise
        return
    if isinstance(target, ast.Subscript):
        container = chain_of(target.value)
        if UNKNOWN not in container and CALL not in container and value is not None:
            container = walk.rewrite_self(container) if scope.is_function else container
            _record_element(walk, container, value, span)  # ``handlers["x"] = f``
        walk.visit(target)
        return
    if isinstance(target, ast.Starred):
        _assign_target(walk, target.value, None, span, None)
        return
    if isinstance(target, ast.Attribute):
        _assign_attribute(walk, target, value, span, annotated)
        return
    walk.visit(target)


def _assign_attribute(
    walk: Walker,
    target: ast.Attribute,
    value: ast.expr | None,
    span: Span,
    annotated: ast.expr | None,
) -> None:
    """``obj.a.b = value``: a write access; ``self.x = value`` also types ``x`` of the class."""
    inner: list[ast.expr] = []
    chain = chain_of(target, inner)
    walk.visit_all(inner)
    if UNKNOWN in chain or CALL in chain or ITEM in chain:
        return
    chain = walk.rewrite_self(chain)
    if chain[0] in ("self", "cls") and len(chain) == 2:
        owner = walk.enclosing_class()
        if owner is not None:
            owner.attributes.append(chain[1])
    walk.record_access(chain, span_of(target), ACCESS_WRITE)
    if len(chain) != 2:
        return
    for option in _options(value) if type(value) is ast.IfExp else (value,):
        type_chain, alias = value_type(walk, option, annotated)
        if type_chain:
            walk.assigns.append(
                new_assign(
                    walk.scope.qualname, chain, type_chain, span, annotated is not None, alias
                )
            )


def _options(value: ast.expr | None) -> list[ast.expr | None]:
    """The values an assignment may store: both arms of ``a if c else b``."""
    if type(value) is not ast.IfExp:
        return [value]
    return [*_options(value.body), *_options(value.orelse)]


def record_elements(walk: Walker, container: Chain, value: ast.expr | None, span: Span) -> None:
    """``fns = [f, g]``, ``{"k": f}``: what the container's elements may be, one fact each."""
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        elements: list[ast.expr | None] = list(value.elts)
    elif isinstance(value, ast.Dict):
        elements = list(value.values)
    else:
        return
    for element in elements:
        if element is not None and not isinstance(element, ast.Starred):
            _record_element(walk, container, element, span)


def _record_element(walk: Walker, container: Chain, element: ast.expr, span: Span) -> None:
    type_chain, alias = value_type(walk, element, None)
    if type_chain:
        walk.assigns.append(
            new_assign(walk.scope.qualname, (*container, ITEM), type_chain, span, False, alias)
        )
        if alias and len(container) == 1 and len(type_chain) == 1:
            _registry_store(walk, container[0], type_chain[0], span)


def _registry_store(walk: Walker, container: str, element: str, span: Span) -> None:
    """``ENCODERS[name] = function`` where ``function`` is a parameter and ``ENCODERS`` no
    local: a registration (in a decorator, as a rule), its readers dispatch to what it holds."""
    if not walk.scope.is_function or walk.is_function_local(container):
        return
    # a method's first parameter is spelled ``self``/``cls`` by now: given too (``__init__``
    # storing the instance, ``__init_subclass__`` the class)
    if element in _SELF or any(
        scope.is_function and element in scope.params for scope in walk.scopes
    ):
        walk.dynamic.append(new_dynamic(walk.scope.qualname, container, DYNAMIC_REGISTRY, span))


def record_added(walk: Walker, chain: Chain, node: ast.Call) -> None:
    """``fns.append(f)``, ``seen.add(x)``, ``d.setdefault(k, f)``: an element of ``chain[:-1]``."""
    method = chain[-1]
    args = node.args
    element = (
        args[0]
        if method in ("append", "add") and len(args) == 1
        else args[1]
        if method in ("insert", "setdefault") and len(args) == 2
        else None
    )
    if element is not None and ITEM not in chain and CALL not in chain:
        _record_element(walk, chain[:-1], element, span_of(node))


def _is_method_wrapper(call: ast.Call) -> bool:
    func = call.func
    return (
        type(func) is ast.Name
        and func.id in ("staticmethod", "classmethod")
        and len(call.args) == 1
        and not call.keywords
        and type(call.args[0]) in (ast.Name, ast.Attribute, ast.Lambda)
    )


def value_type(
    walk: Walker, value: ast.expr | None, annotated: ast.expr | None
) -> tuple[Chain, bool]:
    """What gives a binding its type: ``(annotation or called chain, False)`` or
    ``(aliased chain, True)`` for ``x = y`` / ``self.repo = repo``."""
    if annotated is not None:
        return main_type(annotated), False
    if isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute)):
        if type(value.func) is ast.Name and _is_method_wrapper(value):
            # ``parse = staticmethod(parse_int)``: the function
            return value_type(walk, value.args[0], None)
        chain = chain_of(value.func)
        if UNKNOWN not in chain and SUPER not in chain:
            return walk.rewrite_self(chain), False
    elif isinstance(value, (ast.Name, ast.Attribute)):
        chain = chain_of(value)
        if UNKNOWN not in chain and SUPER not in chain and CALL not in chain:
            return walk.rewrite_self(chain), True
    elif isinstance(value, ast.Lambda):
        return (lambda_local(value),), True  # the lambda itself, a definition of this scope
    elif isinstance(value, (ast.BinOp, ast.UnaryOp)):
        # ``c = a + b``: what ``a.__add__`` returns (nothing, unless a's class defines it)
        operand = value.left if isinstance(value, ast.BinOp) else value.operand
        method = implicit.operator_method(value)
        if method and type(operand) in (ast.Name, ast.Attribute):
            chain = chain_of(operand)
            if UNKNOWN not in chain and SUPER not in chain and CALL not in chain:
                return (*walk.rewrite_self(chain), method), False
    return (), False
