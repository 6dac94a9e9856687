"""Handlers for ``def``, ``class`` and what a definition's body says about it (``return``).

Each definition gets its ``DefFact`` once its body has been walked: the header as written, the
parameters and their annotated types, decorators, bases, attributes, the strings of its body,
its pytest role, and for an unannotated function the value every ``return`` agrees on.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from impact_ls.graph.extract.bindings import value_type
from impact_ls.graph.extract.pytest_items import (
    class_usefixtures,
    function_kind,
    is_test_class,
    pytest_marks,
    test_id,
)
from impact_ls.graph.extract.scopes import CallUse, Scope
from impact_ls.graph.extract.syntax import (
    annotation_chains,
    chain_of,
    docstring,
    dotted,
    lambda_local,
    main_type,
    params_of,
    served_names,
    span_of,
)
from impact_ls.graph.extract.walker import new_assign, new_dynamic
from impact_ls.graph.facts import (
    CALL,
    DECORATED,
    DEFAULT,
    ITEM,
    SUPER,
    UNKNOWN,
    Chain,
    DefFact,
    Request,
    TypeHint,
)
from impact_ls.graph.fastinit import fast_init
from impact_ls.graph.kinds import (
    DYNAMIC_MODULE_GETATTR,
    NODE_CLASS,
    NODE_FUNCTION,
    NODE_TEST,
    PARAM_VAR_KEYWORD,
    PARAM_VAR_POSITIONAL,
)
from impact_ls.model import ANY_NAME, ArgShape, Param, Span

_ONE = ArgShape(positional=1)
_new_def = fast_init(DefFact)
MAX_RETURN_OPTIONS = 4

if TYPE_CHECKING:
    from impact_ls.graph.extract.walker import Walker

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def visit_def(walk: Walker, node: _Function) -> None:
    """A function or method: its ``DefFact``, its signature's type refs, then its body."""
    outer = walk.scope
    in_class = outer.is_class
    for deco in node.decorator_list:
        visit_decorator(walk, deco, node.name)
    marks = pytest_marks(node)
    params = params_of(node.args)
    walk.visit_all(node.args.defaults)
    walk.visit_all(node.args.kw_defaults)
    _record_defaults(walk, node)
    qualname = walk.qual(node.name)
    kind, requests = function_kind(walk, node, marks, params)
    param_types, returns = _annotations(walk, node, params, qualname)
    outer.bound.add(node.name)
    outer.defined.add(node.name)
    if not in_class and not outer.is_function and node.name == "__getattr__":
        name_span = walk.source.name_span(node)
        for served in served_names(node) or (ANY_NAME,):
            walk.dynamic.append(new_dynamic("", served, DYNAMIC_MODULE_GETATTR, name_span))
    scope = _function_scope(qualname, node, params, in_class=in_class, marks=marks.decorators)
    doc = _walk_body(walk, node, scope, test_class=False)
    walk.close_scope(scope)
    walk.scopes.pop()
    # a coroutine, or a context-manager decorator, gives something else than the body returns
    wrapped = isinstance(node, ast.AsyncFunctionDef) or any(
        d.rsplit(".", 1)[-1].endswith("contextmanager") for d in marks.decorators
    )
    options = () if returns or wrapped else _return_options(scope)
    walk.defs.append(
        _new_def(
            qualname=qualname,
            kind=kind,
            span=span_of(node),
            name_span=walk.source.name_span(node),
            in_class=in_class,
            is_async=isinstance(node, ast.AsyncFunctionDef),
            signature=walk.source.header(node),
            doc=doc,
            params=tuple(p for p, _ in params),
            param_types=tuple(param_types),
            returns=returns,
            returns_value=options[0] if len(options) == 1 else (),
            returns_options=options if len(options) > 1 else (),
            decorators=tuple(marks.decorators),
            strings=tuple(scope.strings),
            test_id=test_id(walk.file, qualname) if kind is NODE_TEST else None,
            fixture=marks.fixture,
            requests=tuple(requests),
            decorated_by=_decorated_by(walk, node),
        )
    )


def visit_class(walk: Walker, node: ast.ClassDef) -> None:
    """A class: its bases and decorators, then its body; its ``DefFact`` once walked."""
    outer = walk.scope
    qualname = walk.qual(node.name)
    decorators: list[str] = []
    usefixtures: list[Request] = []
    for deco in node.decorator_list:
        visit_decorator(walk, deco, node.name)
        name = dotted(deco.func if isinstance(deco, ast.Call) else deco)
        decorators.append(name)
        usefixtures.extend(class_usefixtures(deco, name))
    outer.defined.add(node.name)
    bases: list[Chain] = []
    base_spans: list[Span] = []
    for base in node.bases:
        chain = chain_of(base)
        if chain[-1] == ITEM and isinstance(base, ast.Subscript):  # ``Generic[T]``: the class
            walk.visit(base.slice)
            chain = chain[:-1]
        if UNKNOWN in chain or CALL in chain or ITEM in chain:
            walk.visit(base)
            continue
        bases.append(chain)
        base_spans.append(span_of(base))
    for kw in node.keywords:
        walk.visit(kw.value)
    outer.bound.add(node.name)
    scope = Scope(qualname, is_class=True, is_function=False)
    inherited = walk.class_usefixtures[-1] if walk.class_usefixtures else []
    walk.class_usefixtures.append([*inherited, *usefixtures])
    doc = _walk_body(walk, node, scope, test_class=is_test_class(walk, node, outer))
    walk.class_usefixtures.pop()
    walk.scopes.pop()
    # a class body's names are not visible in its methods: unresolved heads go outward
    for use in scope.pending:
        if use.chain[0] in scope.bound:
            use.head_local = True
        elif walk.scope.is_function:
            walk.scope.pending.append(use)
    walk.defs.append(
        _new_def(
            qualname=qualname,
            kind=NODE_CLASS,
            span=span_of(node),
            name_span=walk.source.name_span(node),
            in_class=outer.is_class,
            signature=walk.source.header(node),
            doc=doc,
            decorators=tuple(decorators),
            bases=tuple(bases),
            base_spans=tuple(base_spans),
            attributes=tuple(dict.fromkeys(scope.attributes)),
            strings=tuple(scope.strings),
        )
    )


def visit_decorator(walk: Walker, deco: ast.expr, decorated: str) -> None:
    """A decorator: a bare one is a call of it with the decorated function (``decorated``, a
    name of the enclosing scope) as its argument; a factory's (``@route("/")``) call returns the
    decorator that is called so."""
    given = ((DECORATED, (decorated,)),)
    if isinstance(deco, ast.Call):
        walk.visit(deco)
        chain = chain_of(deco.func)
        if UNKNOWN not in chain and CALL not in chain:
            scope = walk.scope
            applied = (*walk.rewrite_self(chain), CALL)
            use = CallUse(scope.qualname, applied, span_of(deco), _ONE, False, values=given)
            walk.pend(use)
            walk.calls.append(use)
        return
    if isinstance(deco, (ast.Name, ast.Attribute)):
        chain = chain_of(deco)
        if UNKNOWN in chain or CALL in chain:
            walk.visit(deco)
            return
        scope = walk.scope
        if scope.is_class and chain[0] in scope.bound:
            return  # ``@prop.setter``: a class-local helper, not a call we can resolve
        use = CallUse(scope.qualname, chain, span_of(deco), _ONE, False, values=given)
        walk.pend(use)
        walk.calls.append(use)
        return
    walk.visit(deco)


def visit_lambda(walk: Walker, node: ast.Lambda) -> None:
    """``lambda``: a function of its own (a node), its body's calls its own; its defaults are
    evaluated by the enclosing scope. Named ``<lambda:LINE:COL>`` until the walk ends
    (``Walker.result`` renames it ``<lambda>`` or ``<lambda:LINE>`` once its siblings are known)."""
    walk.visit_all(node.args.defaults)
    walk.visit_all(node.args.kw_defaults)
    params = params_of(node.args)
    outer = walk.scope
    local = lambda_local(node)
    outer.bound.add(local)  # so that a use of it here is of this definition
    outer.defined.add(local)
    qualname = walk.qual(local)
    scope = Scope(qualname, is_class=False, is_function=True)
    for param, _ in params:
        scope.bound.add(param.name)
        scope.params.add(param.name)
    walk.scopes.append(scope)
    body = node.body
    if isinstance(body, (ast.Call, ast.Name, ast.Attribute)):
        found = chain_of(body)
        scope.returns.append(None if found[0] in (UNKNOWN, SUPER) else walk.rewrite_self(found))
    walk.visit(body)
    walk.close_scope(scope)
    walk.scopes.pop()
    walk.lambdas.append((outer.qualname, local))
    span = span_of(node)
    options = _return_options(scope)
    walk.defs.append(
        _new_def(
            qualname=qualname,
            kind=NODE_FUNCTION,
            span=span,
            name_span=span,
            signature=_lambda_header(params),
            params=tuple(p for p, _ in params),
            returns_value=options[0] if len(options) == 1 else (),
            returns_options=options if len(options) > 1 else (),
            strings=tuple(scope.strings),
        )
    )


def _lambda_header(params: list[tuple[Param, ast.arg]]) -> str:
    names = []
    for param, _ in params:
        prefix = "**" if param.kind is PARAM_VAR_KEYWORD else ""
        prefix = "*" if param.kind is PARAM_VAR_POSITIONAL else prefix
        names.append(f"{prefix}{param.name}")
    return f"lambda {', '.join(names)}:" if names else "lambda:"


def _record_defaults(walk: Walker, node: _Function) -> None:
    """The defaults that may be code or typed objects (``key=identity``, ``log=Console()``,
    ``on_error=lambda e: ...``), assigned in the enclosing scope, which evaluates them."""
    args = node.args
    if not args.defaults and not args.kw_defaults:
        return
    positional = [*args.posonlyargs, *args.args]
    pairs: list[tuple[ast.arg, ast.expr | None]] = list(
        zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
    )
    pairs.extend(zip(args.kwonlyargs, args.kw_defaults, strict=True))
    scope = walk.scope
    for arg, default in pairs:
        if default is None or type(default) is ast.Constant:
            continue
        chain, alias = value_type(walk, default, None)
        if chain:
            target = (node.name, DEFAULT, arg.arg)
            walk.assigns.append(
                new_assign(scope.qualname, target, chain, span_of(default), False, alias)
            )


def _decorated_by(walk: Walker, node: _Function) -> Chain:
    chain = decorated_by(node)
    return walk.rewrite_self(chain) if chain else ()


def decorated_by(node: _Function | ast.ClassDef) -> Chain:
    """The outermost decorator as a chain, ``()``-ended when it is a factory call; ``()``
    when there is none or it is not a plain name."""
    if not node.decorator_list:
        return ()
    deco = node.decorator_list[0]
    target = deco.func if isinstance(deco, ast.Call) else deco
    if not isinstance(target, (ast.Name, ast.Attribute)):
        return ()
    chain = chain_of(target)
    if UNKNOWN in chain or CALL in chain or ITEM in chain:
        return ()
    return (*chain, CALL) if isinstance(deco, ast.Call) else chain


def visit_return(walk: Walker, node: ast.Return) -> None:
    """``return``: the chain a function gives, when it is one that can be followed."""
    scope = walk.scope
    if scope.is_function:
        _returned(walk, scope, node.value)
    if node.value is not None:
        walk.visit(node.value)


def _returned(walk: Walker, scope: Scope, value: ast.expr | None) -> None:
    """What one ``return`` gives, into ``scope.returns``: a chain, ``()`` for ``None``, or
    ``None`` when it cannot be followed; both arms of ``a if c else b``."""
    if type(value) is ast.IfExp:
        _returned(walk, scope, value.body)
        _returned(walk, scope, value.orelse)
        return
    chain: Chain | None = None
    if value is None or (type(value) is ast.Constant and value.value is None):
        chain = ()
    elif isinstance(value, (ast.Call, ast.Name, ast.Attribute)):
        found = chain_of(value)
        if found[0] not in (UNKNOWN, SUPER):
            chain = walk.rewrite_self(found)
    elif type(value) is ast.Lambda:
        chain = (lambda_local(value),)
    scope.returns.append(chain)


def visit_yield(walk: Walker, node: ast.Yield | ast.YieldFrom) -> None:
    """``yield``: a generator (or coroutine) returns something else than what it yields."""
    if walk.scope.is_function:
        walk.scope.returns.append(None)
    if node.value is not None:
        walk.visit(node.value)


def _function_scope(
    qualname: str,
    node: _Function,
    params: list[tuple[Param, ast.arg]],
    *,
    in_class: bool,
    marks: list[str],
) -> Scope:
    """The scope of a function's body: its parameters bound, a method's first one as ``self``."""
    scope = Scope(qualname, is_class=False, is_function=True)
    for param, _ in params:
        scope.bound.add(param.name)
        scope.params.add(param.name)
    if in_class and "staticmethod" not in marks and params:
        scope.self_name = params[0][0].name
        is_cls = "classmethod" in marks or node.name == "__new__"
        scope.self_kind = "cls" if is_cls else "self"
        scope.bound.discard(scope.self_name)
    return scope


def _walk_body(
    walk: Walker, node: _Function | ast.ClassDef, scope: Scope, *, test_class: bool
) -> str:
    """Walk a definition's body inside ``scope`` (left open for the caller); its docstring."""
    doc = docstring(node.body)
    if doc:
        walk.skip_strings.add(id(node.body[0].value))  # type: ignore[attr-defined]
    walk.scopes.append(scope)
    walk.test_classes.append(test_class)
    for stmt in node.body:
        walk.visit(stmt)
    walk.test_classes.pop()
    return doc


def _annotations(
    walk: Walker, node: _Function, params: list[tuple[Param, ast.arg]], qualname: str
) -> tuple[list[TypeHint], Chain]:
    """Record the annotations as type refs of the function; return param and return types."""
    param_types: list[TypeHint] = []
    refs: list[tuple[Chain, Span]] = []
    for param, arg in params:
        if arg.annotation is not None:
            annotation_chains(arg.annotation, refs)
            main = main_type(arg.annotation)
            if main:
                param_types.append(TypeHint(name=param.name, chain=main))
    returns: Chain = ()
    if node.returns is not None:
        annotation_chains(node.returns, refs)
        returns = main_type(node.returns)
    walk.record_type_refs(qualname, refs)
    return param_types, returns


def _return_options(scope: Scope) -> tuple[Chain, ...]:
    """The chains the ``return``s give (``return None`` left out), when each can be followed
    and starts from no local other than a function or class defined in the function."""
    options: list[Chain] = []
    for chain in scope.returns:
        if chain is None:
            return ()
        if not chain or chain in options:
            continue
        head = chain[0]
        local = head in scope.bound and head not in scope.globals and head not in scope.defined
        if head not in ("self", "cls") and local:
            return ()  # ``s = Session(); return s``: the local's type lives in the body
        options.append(chain)
        if len(options) > MAX_RETURN_OPTIONS:
            return ()
    return tuple(options)
