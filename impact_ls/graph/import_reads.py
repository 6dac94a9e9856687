"""Names a dirty file still reads after the edit removed them: at import time, and in functions.

The extractor records calls and attribute chains, not every bare name a class body reads:
``softspace = property(_get_softspace, _set_softspace)``, ``variance = _Prop(_calc_variance)``,
``_defaults.update(_argspec_defaults)`` name class-local definitions that a rename or a delete
at the definition leaves unbound — a ``NameError`` when the module is imported. For the dirty
file only (its current text is at hand), ``unbound_reads(text, module, file, gone)`` finds them:
each read at import time (module statements, class bodies, decorators, bases, default values;
not function bodies or annotations) of a name whose definition in that class or module is in
``gone`` and that nothing else binds there (the class body, the module, a builtin), as a
``class-member`` edge from the reading class or module to the removed qualname. Likewise each
read, in a function body, of a removed module-level name that the function (and the functions
around it) does not bind locally — ``_INTEGER_RE.fullmatch(raw)``, which the graph records as a
call into ``re`` and not as a use of ``_INTEGER_RE``: a ``NameError`` when the function runs —
as an edge from the function.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator, Set

from impact_ls.model import Edge, EdgeKind, QualName, Span

_BUILTINS = frozenset(dir(builtins))
_Scope = ast.Module | ast.ClassDef


def unbound_reads(text: str, *, module: str, file: str, gone: Set[str]) -> list[Edge]:
    """``class-member`` edges for the import-time reads of removed names (see the module doc)."""
    if not gone:
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []  # a module that does not parse fails to import anyway (an incomplete change)
    module_bound = _bound(tree.body)
    out: list[Edge] = []
    for qualname, scope in _scopes(tree, module):
        own = _bound(scope.body) if isinstance(scope, ast.ClassDef) else set()
        for node in _import_time_names(scope):
            name = node.id
            target = f"{qualname}.{name}" if isinstance(scope, ast.ClassDef) else None
            if target is None or target not in gone:
                target = f"{module}.{name}"
                if target not in gone:
                    continue
            if name in own or name in module_bound or name in _BUILTINS:
                continue
            out.append(_edge(qualname, target, file, node))
    out.extend(_function_reads(tree, module=module, file=file, gone=gone, bound=module_bound))
    return out


def _function_reads(
    tree: ast.Module, *, module: str, file: str, gone: Set[str], bound: set[str]
) -> Iterator[Edge]:
    """Edges from each function to a removed module-level name its body reads unbound."""
    removed = {q.rpartition(".")[2] for q in gone if q.rpartition(".")[0] == module}
    removed -= bound
    removed -= _BUILTINS
    if not removed:
        return
    stack: list[tuple[str, ast.AST, frozenset[str]]] = [(module, tree, frozenset())]
    while stack:
        prefix, scope, enclosing = stack.pop()
        for child in ast.iter_child_nodes(scope):
            for node in _defs_in(child):
                qualname = f"{prefix}.{node.name}"
                if isinstance(node, ast.ClassDef):
                    # a class body's names are no enclosing scope of its methods
                    stack.append((qualname, node, enclosing))
                    continue
                local = _locals(node) | enclosing
                for name in _reads(node):
                    if name.id in removed and name.id not in local:
                        yield _edge(qualname, f"{module}.{name.id}", file, name)
                stack.append((qualname, node, local))


def _defs_in(node: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    """The defs and classes directly in ``node``'s body, through blocks (not into other defs)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node
        return
    if isinstance(node, (ast.expr, ast.Lambda)):
        return
    for child in ast.iter_child_nodes(node):
        yield from _defs_in(child)


def _locals(function: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """Names ``function`` binds in its own scope: parameters, stores, imports, nested defs."""
    args = function.args
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    names.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    declared: set[str] = set()
    for node in _own_nodes(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            declared.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return frozenset(names - declared)


def _reads(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.Name]:
    """Bare names ``function``'s own body (not nested defs) loads."""
    for node in _own_nodes(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            yield node


def _own_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """Every node of ``function``'s body in its own scope: nested defs and classes are yielded
    themselves but not entered (their decorators and defaults run here, their bodies do not)."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack.extend(node.decorator_list)
            stack.extend(node.args.defaults)
            stack.extend(d for d in node.args.kw_defaults if d is not None)
            continue
        if isinstance(node, ast.ClassDef):
            stack.extend(node.decorator_list)
            stack.extend(node.bases)
            continue
        if isinstance(node, ast.Lambda):
            continue  # its parameters shadow; a removed name read in it is rare and deferred
        stack.extend(ast.iter_child_nodes(node))


def _edge(source: str, target: str, file: str, node: ast.Name) -> Edge:
    return Edge(
        source=QualName(source),
        target=QualName(target),
        kind=EdgeKind.CLASS_MEMBER,
        file=file,
        span=Span(
            line=node.lineno,
            col=node.col_offset,
            end_line=node.end_lineno or node.lineno,
            end_col=node.end_col_offset or node.col_offset,
        ),
    )


def _scopes(tree: ast.Module, module: str) -> Iterator[tuple[str, _Scope]]:
    """The module and every class nested in it or in classes, with their qualnames."""
    yield module, tree
    stack: list[tuple[str, list[ast.stmt]]] = [(module, tree.body)]
    while stack:
        prefix, body = stack.pop()
        for statement in _statements(body):
            if isinstance(statement, ast.ClassDef):
                qualname = f"{prefix}.{statement.name}"
                yield qualname, statement
                stack.append((qualname, statement.body))


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements of a body, through ``if``/``try``/``with``/``for`` blocks (they run too)."""
    for statement in body:
        yield statement
        if isinstance(statement, (ast.If, ast.For, ast.While, ast.With, ast.AsyncFor)):
            yield from _statements([*statement.body, *getattr(statement, "orelse", [])])
        elif isinstance(statement, ast.Try):
            blocks = [statement.body, statement.orelse, statement.finalbody]
            blocks += [h.body for h in statement.handlers]
            for block in blocks:
                yield from _statements(block)


def _import_time_names(scope: _Scope) -> Iterator[ast.Name]:
    """Bare names read while ``scope``'s body runs (not inside functions or nested classes'
    bodies, which are scopes of their own)."""
    stack: list[ast.AST] = []
    for statement in scope.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack.extend(statement.decorator_list)
            stack.extend(statement.args.defaults)
            stack.extend(d for d in statement.args.kw_defaults if d is not None)
        elif isinstance(statement, ast.ClassDef):
            stack.extend(statement.decorator_list)
            stack.extend(statement.bases)
            stack.extend(k.value for k in statement.keywords)
        else:
            stack.append(statement)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            yield node
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue  # their bodies run later, or are scopes of their own
        if isinstance(node, (ast.AnnAssign, ast.arg)):
            # annotations may never be evaluated (``from __future__ import annotations``)
            if isinstance(node, ast.AnnAssign) and node.value is not None:
                stack.append(node.value)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _bound(body: list[ast.stmt]) -> set[str]:
    """Names a body binds anywhere at its own level (assignments, defs, imports, loops…)."""
    names: set[str] = set()
    for statement in _statements(body):
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(statement.name)
            continue
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            for alias in statement.names:
                names.add((alias.asname or alias.name).split(".")[0])
            continue
        # a name stored in a nested function counts too: bound names only silence a report
        names.update(
            node.id
            for node in ast.walk(statement)
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del))
        )
    return names
