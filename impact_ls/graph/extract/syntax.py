"""Read values out of stdlib ``ast`` nodes: chains, spans, annotations, arguments, docstrings.

Pure functions of one node each; the walk (``walker.py``) decides what to record.
"""

from __future__ import annotations

import ast
import inspect
import re
import warnings
from typing import Any

from impact_ls.graph.facts import CALL, ITEM, SUPER, UNKNOWN, Chain
from impact_ls.graph.fastinit import fast_init, twin_of
from impact_ls.graph.kinds import (
    PARAM_KEYWORD_ONLY,
    PARAM_POSITIONAL_ONLY,
    PARAM_POSITIONAL_OR_KEYWORD,
    PARAM_VAR_KEYWORD,
    PARAM_VAR_POSITIONAL,
)
from impact_ls.model import ArgShape, Param, Span

MAX_DOC_CHARS = 200
_MAX_SHAPES = 4096
_SHAPES: dict[tuple[int, tuple[str, ...], bool, bool], ArgShape] = {}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_OPTIONAL_WRAPPERS = {"Optional", "Annotated", "ClassVar", "Final", "Type", "type", "Required"}
new_span = fast_init(Span)
_new_param = fast_init(Param)
_SMALL_INT = 256  # CPython shares the ints up to this one already
_INTS: dict[int, int] = {}
_SpanTwin = twin_of(Span)


def parse_quietly(text: str, file: str = "<unknown>", mode: str = "exec") -> Any:
    """``ast.parse`` with the compiler's warnings silenced.

    An invalid escape sequence in a user's file is not ours to report, and under ``-W error``
    the warning would turn valid code into a ``SyntaxError``.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text, filename=file, mode=mode)


def span_of(node: Any) -> Span:
    """The span ``ast`` gives ``node`` (a missing end is the start line, column 0)."""
    # half a million spans pass here on django: ``new_span`` and ``shared_int`` inline
    line = node.lineno
    end = node.end_lineno or line
    if line > _SMALL_INT:
        ints = _INTS
        line = ints.setdefault(line, line)
        end = ints.setdefault(end, end)
    span: Any = _SpanTwin()  # a Span once its fields are set (``twin_of``)
    span.line = line
    span.col = node.col_offset
    span.end_line = end
    span.end_col = node.end_col_offset or 0
    span.__class__ = Span
    return span  # type: ignore[no-any-return]


def shared_int(value: int) -> int:
    """One int object per value: ``ast`` makes a new one for every line number of every node
    past 256, and the spans kept in facts held half a million of them (django: 20 MB)."""
    return _INTS.setdefault(value, value)


def chain_of(expr: ast.expr, inner: list[ast.expr] | None = None) -> Chain:
    """The dotted chain of ``expr``; call nodes met inside are appended to ``inner``."""
    parts: list[str] = []
    node: ast.expr = expr
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Name):
            parts.append(node.id)
            break
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id == "super":
                parts.append(SUPER)
                break
            parts.append(CALL)
            if inner is not None:
                inner.append(node)
                # the call itself is recorded on its own; keep walking its callee for the chain
            node = func
        elif isinstance(node, ast.Subscript):
            parts.append(ITEM)
            if inner is not None:
                inner.append(node.slice)  # the index is an expression of its own
            node = node.value
        else:
            if inner is not None:
                inner.append(node)
            parts.append(UNKNOWN)
            break
    parts.reverse()
    return tuple(parts)


def lambda_local(node: ast.Lambda) -> str:
    """The name a lambda has while its file is walked: unique in the file, renamed by
    ``Walker.result`` once the lambdas beside it are known."""
    return f"<lambda:{node.lineno}:{node.col_offset}>"


def dotted(expr: ast.expr) -> str:
    """``expr`` as a dotted name without call marks (``a.b().c`` → ``a.b.c``)."""
    return ".".join(p for p in chain_of(expr) if p != CALL)


def docstring(body: list[ast.stmt]) -> str:
    """The first sentence of the docstring opening ``body``, or ``""``."""
    if body:
        first = body[0]
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            return _first_sentence(first.value.value)
    return ""


def _first_sentence(doc: str) -> str:
    text = inspect.cleandoc(doc).strip()
    para = text.split("\n\n", 1)[0].replace("\n", " ")
    sentence = _SENTENCE_END.split(para, 1)[0].strip()
    return sentence[:MAX_DOC_CHARS]


def main_type(ann: ast.expr | None, depth: int = 0) -> Chain:
    """The one class an annotation stands for (``Optional["Foo"]`` → ``("Foo",)``), or ``()``."""
    if ann is None or depth > 4:
        return ()
    if isinstance(ann, (ast.Name, ast.Attribute)):
        chain = chain_of(ann)
        return () if UNKNOWN in chain or CALL in chain or chain == ("None",) else chain
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            parsed = parse_quietly(ann.value.strip(), mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return ()
        return main_type(parsed, depth + 1)
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return main_type(ann.left, depth + 1) or main_type(ann.right, depth + 1)
    if isinstance(ann, ast.Subscript):
        head = chain_of(ann.value)
        name = head[-1] if head else ""
        inner = ann.slice
        if name == "Union" and isinstance(inner, ast.Tuple):
            for elt in inner.elts:
                found = main_type(elt, depth + 1)
                if found:
                    return found
            return ()
        if name in _OPTIONAL_WRAPPERS:
            if isinstance(inner, ast.Tuple) and inner.elts:
                inner = inner.elts[0]
            return main_type(inner, depth + 1)
    return ()


def annotation_chains(ann: ast.expr, out: list[tuple[Chain, Span]], depth: int = 0) -> None:
    """Every class named anywhere in an annotation, with its span (string annotations parsed)."""
    if depth > 4:
        return
    stack: list[ast.AST] = [ann]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Name, ast.Attribute)):
            chain = chain_of(node)
            if UNKNOWN not in chain and CALL not in chain:
                out.append((chain, span_of(node)))
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                parsed = parse_quietly(node.value.strip(), mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            found: list[tuple[Chain, Span]] = []
            annotation_chains(parsed, found, depth + 1)
            # a string annotation's inner positions are relative to the string: use the string's
            out.extend((chain, span_of(node)) for chain, _ in found)
            continue
        stack.extend(ast.iter_child_nodes(node))


def arg_shape(call: ast.Call) -> ArgShape:
    """The argument shape of a call site (positional count, keyword names, ``*``/``**``)."""
    positional = 0
    star = False
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            star = True
        else:
            positional += 1
    keywords: list[str] = []
    double_star = False
    for kw in call.keywords:
        if kw.arg is None:
            double_star = True
        else:
            keywords.append(kw.arg)
    key = (positional, tuple(keywords), star, double_star)
    shape = _SHAPES.get(key)
    if shape is None:
        shape = ArgShape(positional=positional, keywords=key[1], star=star, double_star=double_star)
        if len(_SHAPES) < _MAX_SHAPES:
            _SHAPES[key] = shape  # shared: most call sites have one of a few hundred shapes
    return shape


def params_of(args: ast.arguments) -> list[tuple[Param, ast.arg]]:
    """The parameters of a signature in order, each with the node that declares it."""
    out: list[tuple[Param, ast.arg]] = []
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    for i, arg in enumerate(positional):
        kind = PARAM_POSITIONAL_ONLY if i < len(args.posonlyargs) else PARAM_POSITIONAL_OR_KEYWORD
        out.append((_new_param(name=arg.arg, kind=kind, has_default=i >= first_default), arg))
    if args.vararg is not None:
        out.append((_new_param(name=args.vararg.arg, kind=PARAM_VAR_POSITIONAL), args.vararg))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=False):
        out.append(
            (
                _new_param(name=arg.arg, kind=PARAM_KEYWORD_ONLY, has_default=default is not None),
                arg,
            )
        )
    if args.kwarg is not None:
        out.append((_new_param(name=args.kwarg.arg, kind=PARAM_VAR_KEYWORD), args.kwarg))
    return out


def is_type_checking(test: ast.expr) -> bool:
    """Whether an ``if`` test is ``TYPE_CHECKING`` (bare or dotted)."""
    chain = chain_of(test) if isinstance(test, (ast.Name, ast.Attribute)) else ()
    return bool(chain) and chain[-1] == "TYPE_CHECKING"


def string_list(node: ast.expr | None) -> list[str] | None:
    """The strings of a list, tuple or set display of string literals only, else ``None``."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        out = []
        for elt in node.elts:
            if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                out.append(elt.value)
            else:
                return None
        return out
    return None


# calls through which a module ``__getattr__`` hands its name on: it may serve any name
_FORWARDERS = frozenset({"getattr", "import_module", "__import__", "globals", "vars", "locals"})


def served_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...] | None:
    """The names a module-level ``__getattr__`` can serve: the string literals its parameter is
    compared with (``name == "X"``, ``name in ("A", "B")``) — the deprecation shims most
    packages keep. ``None`` when it may serve any name: it forwards (``getattr``,
    ``import_module``, a lookup or a call with the name), compares it otherwise, or never."""
    params = [*node.args.posonlyargs, *node.args.args]
    if not params:
        return None
    param = params[0].arg
    served: list[str] = []
    # ``raise AttributeError(name)`` reports the name, it does not hand it on
    raised = {id(n) for r in ast.walk(node) if isinstance(r, ast.Raise) for n in ast.walk(r)}
    for sub in ast.walk(node):
        if id(sub) in raised:
            continue
        if isinstance(sub, ast.Call):
            callee = sub.func
            last = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
            if (
                last in _FORWARDERS
                or any(_is_name(a, param) for a in sub.args)
                or any(_is_name(k.value, param) for k in sub.keywords)
            ):
                return None
            if isinstance(callee, ast.Attribute) and _is_name(callee.value, param):
                return None  # ``name.startswith("get_")``
        elif isinstance(sub, ast.Subscript) and any(
            _is_name(n, param) for n in ast.walk(sub.slice)
        ):
            return None  # ``_LAZY[name]``, ``sys.modules[name]``
        elif isinstance(sub, ast.Match):
            return None
        elif isinstance(sub, ast.Compare) and _is_name(sub.left, param):
            for op, right in zip(sub.ops, sub.comparators, strict=True):
                if isinstance(op, ast.Eq) and isinstance(right, ast.Constant):
                    if not isinstance(right.value, str):
                        return None
                    served.append(right.value)
                elif isinstance(op, ast.In) and (found := string_list(right)) is not None:
                    served.extend(found)
                else:
                    return None
    return tuple(dict.fromkeys(served)) or None


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name
