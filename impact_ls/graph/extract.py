"""Turn one file's text into ``FileFacts`` with a single walk over the stdlib ``ast``.

Contract: ``extract_facts`` never raises and never executes project code. Text that does not
parse goes to ``recover.py`` (parso error recovery), so a half-typed file still yields every
definition it can, with ``parse_error`` set. The walk keeps only small tuples per node — no jedi,
no per-node objects beyond the facts themselves — so cold indexing stays within a small factor
of ``ast.parse`` alone.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import logging
import re
import warnings
from collections.abc import Callable
from typing import Any

from impact_ls.graph.facts import (
    CALL,
    SUPER,
    UNKNOWN,
    AccessFact,
    AccessKind,
    AssignFact,
    CallFact,
    Chain,
    DefFact,
    DynamicFact,
    FileFacts,
    FixtureInfo,
    ImportFact,
    Request,
    TypeHint,
    TypeRefFact,
    gc_paused,
)
from impact_ls.graph.fastinit import fast_init
from impact_ls.model import ArgShape, DynamicKind, NodeKind, Param, ParamKind, Span

logger = logging.getLogger(__name__)

_BUILTINS = frozenset(dir(builtins))
_SHAPES: dict[tuple[int, tuple[str, ...], bool, bool], ArgShape] = {}
# facts are made by the hundred thousand: skip the frozen dataclasses' slow __init__
_new_span = fast_init(Span)
_new_call = fast_init(CallFact)
_new_access = fast_init(AccessFact)
_new_assign = fast_init(AssignFact)
_new_type_ref = fast_init(TypeRefFact)
_new_dynamic = fast_init(DynamicFact)
_MAX_SHAPES = 4096
MAX_NODE_STRINGS = 32
MAX_DOC_CHARS = 200
_MAX_STRING_SCAN = 200

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")
_MULTILINE_TRAILING_COMMA = re.compile(r",\s*\)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
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
_OPTIONAL_WRAPPERS = {"Optional", "Annotated", "ClassVar", "Final", "Type", "type", "Required"}


def extract_facts(text: str, *, file: str, module: str, is_package: bool) -> FileFacts:
    """Extract the facts of one file; never raises, whatever ``text`` holds."""
    with gc_paused():
        return _extract(text, file=file, module=module, is_package=is_package)


def _extract(text: str, *, file: str, module: str, is_package: bool) -> FileFacts:
    try:
        tree = parse_quietly(text, file)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        from impact_ls.graph.recover import recover_facts  # parso only on the slow path

        try:
            return recover_facts(text, file=file, module=module, is_package=is_package, error=exc)
        except Exception as inner:  # the contract is "never raises": an empty module, logged
            logger.debug("%s: recovery failed: %r", file, inner)
            return FileFacts(file=file, module=module, is_package=is_package, parse_error=str(exc))
    try:
        return extract_from_tree(tree, text, file=file, module=module, is_package=is_package)
    except RecursionError as exc:
        logger.debug("%s: tree too deep to walk: %s", file, exc)
        return FileFacts(
            file=file, module=module, is_package=is_package, parse_error=f"too deep: {exc}"
        )


def parse_quietly(text: str, file: str = "<unknown>", mode: str = "exec") -> Any:
    """``ast.parse`` with the compiler's warnings silenced.

    An invalid escape sequence in a user's file is not ours to report, and under ``-W error``
    the warning would turn valid code into a ``SyntaxError``.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text, filename=file, mode=mode)


def extract_from_tree(
    tree: ast.Module,
    text: str,
    *,
    file: str,
    module: str,
    is_package: bool,
    parse_error: str | None = None,
) -> FileFacts:
    """Extract facts from an already parsed module (``recover.py`` feeds it a repaired tree)."""
    walker = _Walker(text, file)
    walker.run(tree)
    return walker.result(module=module, is_package=is_package, parse_error=parse_error)


# --------------------------------------------------------------------------- helpers


_object_new = object.__new__
_set_line, _set_col, _set_end_line, _set_end_col = (
    getattr(Span, name).__set__ for name in ("line", "col", "end_line", "end_col")
)
_CONSTANT = ast.Constant
_NAME = ast.Name
_LOAD = ast.Load


def _span(node: Any) -> Span:
    # half a million spans on django: the slot setters inline, without fast_init's keyword call
    span: Span = _object_new(Span)
    line = node.lineno
    _set_line(span, line)
    _set_col(span, node.col_offset)
    _set_end_line(span, node.end_lineno or line)
    _set_end_col(span, node.end_col_offset or 0)
    return span


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
        else:
            if inner is not None:
                inner.append(node)
            parts.append(UNKNOWN)
            break
    parts.reverse()
    return tuple(parts)


def _first_sentence(doc: str) -> str:
    text = inspect.cleandoc(doc).strip()
    para = text.split("\n\n", 1)[0].replace("\n", " ")
    sentence = _SENTENCE_END.split(para, 1)[0].strip()
    return sentence[:MAX_DOC_CHARS]


def _docstring(body: list[ast.stmt]) -> str:
    if body:
        first = body[0]
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            return _first_sentence(first.value.value)
    return ""


def _dotted(expr: ast.expr) -> str:
    chain = chain_of(expr)
    return ".".join(p for p in chain if p != CALL)


def _main_type(ann: ast.expr | None, depth: int = 0) -> Chain:
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
        return _main_type(parsed, depth + 1)
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return _main_type(ann.left, depth + 1) or _main_type(ann.right, depth + 1)
    if isinstance(ann, ast.Subscript):
        head = chain_of(ann.value)
        name = head[-1] if head else ""
        inner = ann.slice
        if name == "Union" and isinstance(inner, ast.Tuple):
            for elt in inner.elts:
                found = _main_type(elt, depth + 1)
                if found:
                    return found
            return ()
        if name in _OPTIONAL_WRAPPERS:
            if isinstance(inner, ast.Tuple) and inner.elts:
                inner = inner.elts[0]
            return _main_type(inner, depth + 1)
    return ()


def _annotation_chains(ann: ast.expr, out: list[tuple[Chain, Span]], depth: int = 0) -> None:
    """Every class named anywhere in an annotation, with its span (string annotations parsed)."""
    if depth > 4:
        return
    stack: list[ast.AST] = [ann]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Name, ast.Attribute)):
            chain = chain_of(node)
            if UNKNOWN not in chain and CALL not in chain:
                out.append((chain, _span(node)))
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                parsed = parse_quietly(node.value.strip(), mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            found: list[tuple[Chain, Span]] = []
            _annotation_chains(parsed, found, depth + 1)
            # a string annotation's inner positions are relative to the string: use the string's
            out.extend((chain, _span(node)) for chain, _ in found)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _arg_shape(call: ast.Call) -> ArgShape:
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


def _params(args: ast.arguments) -> list[tuple[Param, ast.arg]]:
    out: list[tuple[Param, ast.arg]] = []
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    for i, arg in enumerate(positional):
        kind = (
            ParamKind.POSITIONAL_ONLY
            if i < len(args.posonlyargs)
            else ParamKind.POSITIONAL_OR_KEYWORD
        )
        out.append((Param(name=arg.arg, kind=kind, has_default=i >= first_default), arg))
    if args.vararg is not None:
        out.append((Param(name=args.vararg.arg, kind=ParamKind.VAR_POSITIONAL), args.vararg))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=False):
        out.append(
            (
                Param(name=arg.arg, kind=ParamKind.KEYWORD_ONLY, has_default=default is not None),
                arg,
            )
        )
    if args.kwarg is not None:
        out.append((Param(name=args.kwarg.arg, kind=ParamKind.VAR_KEYWORD), args.kwarg))
    return out


def _is_type_checking(test: ast.expr) -> bool:
    chain = chain_of(test) if isinstance(test, (ast.Name, ast.Attribute)) else ()
    return bool(chain) and chain[-1] == "TYPE_CHECKING"


def _string_list(node: ast.expr | None) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        out = []
        for elt in node.elts:
            if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                out.append(elt.value)
            else:
                return None
        return out
    return None


def _param_names(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [n.strip() for n in node.value.split(",") if n.strip()]
    found = _string_list(node)
    return found or []


def _pytest_decorators(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
) -> tuple[list[str], FixtureInfo | None, set[str], list[Request]]:
    """Decorator names, the fixture marker, parametrized argument names and ``usefixtures``."""
    decorators: list[str] = []
    fixture: FixtureInfo | None = None
    parametrized: set[str] = set()
    requests: list[Request] = []
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        dotted = _dotted(target)
        decorators.append(dotted)
        last = dotted.rsplit(".", 1)[-1]
        if last == "fixture":
            name, autouse = node.name, False
            if isinstance(deco, ast.Call):
                for kw in deco.keywords:
                    if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                        name = str(kw.value.value)
                    elif kw.arg == "autouse" and isinstance(kw.value, ast.Constant):
                        autouse = bool(kw.value.value)
            fixture = FixtureInfo(name=name, autouse=autouse)
        elif last == "parametrize" and isinstance(deco, ast.Call) and deco.args:
            parametrized.update(_param_names(deco.args[0]))
        elif last == "usefixtures" and isinstance(deco, ast.Call):
            for arg in deco.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    requests.append(Request(name=arg.value, span=_span(arg)))
    return decorators, fixture, parametrized, requests


def _agreed_return(scope: _Scope) -> Chain:
    """The one chain every ``return`` of the function gives, if it starts from no local."""
    if not scope.returns:
        return ()
    first = scope.returns[0]
    if first is None or any(r != first for r in scope.returns):
        return ()
    head = first[0]
    if head not in ("self", "cls") and head in scope.bound and head not in scope.globals:
        return ()  # ``s = Session(); return s``: the local's type lives in the body, not here
    return first


def _requested(
    params: list[tuple[Param, ast.arg]], parametrized: set[str], *, skip_first: bool
) -> list[Request]:
    """The fixtures a test or fixture asks for through its parameters."""
    out: list[Request] = []
    for i, (param, arg) in enumerate(params):
        if skip_first and i == 0:
            continue
        if param.has_default or param.kind in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD):
            continue  # pytest never fills these
        if param.name not in parametrized:
            out.append(Request(name=param.name, span=_span(arg)))
    return out


# --------------------------------------------------------------------------- the walk

# fields that never hold child nodes; skipping them makes the generic walk much cheaper
_LEAF_FIELDS = frozenset(
    {
        "ctx",
        "id",
        "attr",
        "name",
        "arg",
        "op",
        "kind",
        "type_comment",
        "level",
        "module",
        "conversion",
        "is_async",
        "names",
        "asname",
        "ops",
    }
)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(kind: type) -> tuple[str, ...]:
    names = tuple(f for f in getattr(kind, "_fields", ()) if f not in _LEAF_FIELDS)
    _CHILD_FIELDS[kind] = names
    return names


class _Scope:
    """Per-definition state while its body is walked."""

    __slots__ = (
        "attributes",
        "bound",
        "class_fixtures",
        "globals",
        "is_class",
        "is_function",
        "kind",
        "pending",
        "qualname",
        "returns",
        "self_kind",
        "self_name",
        "string_set",
        "strings",
    )

    def __init__(self, qualname: str, *, is_class: bool, is_function: bool) -> None:
        self.qualname = qualname
        self.is_class = is_class
        self.is_function = is_function
        self.bound: set[str] = set()
        self.globals: set[str] = set()
        # items whose head name may be local: [head, list-holding-the-flag]
        self.pending: list[list[Any]] = []
        self.strings: list[str] = []
        self.string_set: set[str] = set()
        self.self_name: str | None = None
        self.self_kind = "self"
        # chains of the values returned; None for one we cannot follow (or a yield)
        self.returns: list[Chain | None] = []
        self.attributes: list[str] = []
        self.class_fixtures: list[Request] = []
        self.kind = NodeKind.FUNCTION


class _Walker:
    """One pass over a module tree that fills the fact lists."""

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        base = file.rsplit("/", 1)[-1]
        self.is_test_file = base.startswith("test_") or base.endswith("_test.py")
        self.lines: list[str] | None = None
        self.defs: list[DefFact] = []
        # mutable rows, frozen in result(): [scope, chain, span, args, head_local]
        self.calls: list[list[Any]] = []
        self.accesses: list[list[Any]] = []
        self.assigns: list[list[Any]] = []
        self.type_refs: list[TypeRefFact] = []
        self.imports: list[ImportFact] = []
        self.dynamic: list[DynamicFact] = []
        self.constants: list[str] = []
        self.constant_set: set[str] = set()
        self.all_names: list[str] | None = None
        self.skip_strings: set[int] = set()
        self.type_checking = 0
        self.doc = ""
        self.scopes: list[_Scope] = []
        self.test_classes: list[bool] = []
        self.class_usefixtures: list[list[Request]] = []
        self.line_count = text.count("\n") + (0 if text.endswith("\n") or not text else 1)

    # ------------------------------------------------------------------ driving

    def run(self, tree: ast.Module) -> None:
        self.doc = _docstring(tree.body)
        if self.doc:
            self.skip_strings.add(id(tree.body[0].value))  # type: ignore[attr-defined]
        module = _Scope("", is_class=False, is_function=False)
        self.scopes.append(module)
        for stmt in tree.body:
            self.visit(stmt)
        self._close_scope(module)
        self.scopes.pop()

    def visit(self, node: ast.AST) -> None:
        # the three commonest node kinds (over half of django's 911k) are handled inline, and a
        # number, ``None`` or a bool never costs a call: a generic dispatch per node was the
        # walk's largest single cost
        kind = type(node)
        if kind is _CONSTANT:
            value = node.value  # type: ignore[attr-defined]
            if type(value) is str and id(node) not in self.skip_strings:
                self._string_literal(node, value)  # type: ignore[arg-type]
            return
        if kind is _NAME:
            name = node.id  # type: ignore[attr-defined]
            if type(node.ctx) is not _LOAD:  # type: ignore[attr-defined]
                self._bind(name)
                return
            scope = self.scopes[-1]
            if scope.is_function and name in scope.bound and name not in scope.globals:
                return  # a local already bound here: never a reference to a definition
            if name in _BUILTINS and name not in self.constant_set and name not in scope.bound:
                return  # a builtin (unless the module rebinds it): nothing to point at
            if scope.is_function and self._is_self_name(name):
                return  # the method's own ``self``/``cls``
            self._visit_name_load(name, _span(node))
            return
        handler = _DISPATCH.get(kind)
        if handler is not None:
            handler(self, node)
            return
        names = _CHILD_FIELDS.get(kind)
        if names is None:
            names = _child_fields(kind)
        visit = self.visit
        for name in names:
            value = getattr(node, name, None)
            if value is None:
                continue
            if type(value) is list:
                for child in value:
                    if isinstance(child, ast.AST) and not (
                        type(child) is _CONSTANT and type(child.value) is not str
                    ):
                        visit(child)
            elif isinstance(value, ast.AST) and not (
                type(value) is _CONSTANT and type(value.value) is not str
            ):
                visit(value)

    def visit_all(self, nodes: list[Any]) -> None:
        visit = self.visit
        for node in nodes:
            if node is not None:
                visit(node)

    @property
    def scope(self) -> _Scope:
        return self.scopes[-1]

    def _bind(self, name: str) -> None:
        """Record an assignment-like binding: a local, a class attribute or a module constant."""
        scope = self.scope
        if name in scope.globals:
            if name not in self.constant_set:
                self.constant_set.add(name)
                self.constants.append(name)
            return
        scope.bound.add(name)
        if scope.is_class:
            scope.attributes.append(name)
        elif not scope.is_function and name not in self.constant_set:
            self.constant_set.add(name)
            self.constants.append(name)

    def _bind_target(self, target: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self._bind(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._bind_target(elt)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value)

    def _rewrite_self(self, chain: Chain) -> Chain:
        """Spell a method's first parameter ``self`` (``cls`` for classmethods), in closures too."""
        for scope in reversed(self.scopes):
            if scope.is_class or not scope.is_function:
                return chain
            if scope.self_name is not None:
                if chain[0] == scope.self_name:
                    return (scope.self_kind, *chain[1:])
                return chain
            if chain[0] in scope.bound:
                return chain
        return chain

    def _is_self_name(self, name: str) -> bool:
        for scope in reversed(self.scopes):
            if scope.is_class or not scope.is_function:
                return False
            if scope.self_name is not None:
                return name == scope.self_name
            if name in scope.bound:
                return False
        return False

    def _enclosing_class(self) -> _Scope | None:
        for scope in reversed(self.scopes):
            if scope.self_name is not None:
                idx = self.scopes.index(scope)
                parent = self.scopes[idx - 1] if idx > 0 else None
                return parent if parent is not None and parent.is_class else None
            if not scope.is_function:
                return None
        return None

    def _pend(self, row: list[Any]) -> None:
        """Queue a row whose chain head may be a local; scopes decide when they close."""
        head = row[1][0]
        if head == UNKNOWN:
            row[4] = True  # an arbitrary expression: its type is as unknown as a local's
            return
        if head in (SUPER, "self", "cls"):
            return
        scope = self.scope
        if scope.is_function or scope.is_class:
            scope.pending.append(row)

    def _close_scope(self, scope: _Scope) -> None:
        """Decide which queued heads are local here; pass the rest to the enclosing function."""
        if not scope.pending:
            return
        outer: _Scope | None = None
        for candidate in reversed(self.scopes[:-1]):
            if candidate.is_function:
                outer = candidate
                break
            if not candidate.is_class:
                break
        for row in scope.pending:
            head = row[1][0]
            if head in scope.bound and head not in scope.globals:
                row[4] = True
            elif outer is not None:
                outer.pending.append(row)
        scope.pending = []

    @staticmethod
    def _add_string(scope: _Scope, value: str) -> None:
        for word in _WORD.findall(value[:_MAX_STRING_SCAN]):
            if word not in scope.string_set:
                scope.string_set.add(word)
                scope.strings.append(word)
                if len(scope.strings) >= MAX_NODE_STRINGS:
                    return

    # ------------------------------------------------------------------ source text

    def _line(self, lineno: int) -> str:
        if self.lines is None:
            self.lines = self.text.splitlines()
        if 0 < lineno <= len(self.lines):
            return self.lines[lineno - 1]
        return ""

    def _char_col(self, line: str, col: int) -> int:
        if line.isascii():
            return col
        return len(line.encode("utf-8")[:col].decode("utf-8", errors="ignore"))

    def _header(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
        """The one-line signature: the def/class header as written, whitespace collapsed."""
        first = node.body[0] if node.body else None
        last = first.lineno if first is not None else node.lineno
        pieces: list[str] = []
        for lineno in range(node.lineno, last + 1):
            line = self._line(lineno)
            end = len(line)
            if first is not None and lineno == first.lineno:
                if lineno != node.lineno:
                    break
                end = self._char_col(line, first.col_offset)
            begin = self._char_col(line, node.col_offset) if lineno == node.lineno else 0
            piece = line[begin:end]
            if "#" in piece and "'" not in piece and '"' not in piece:
                piece = piece.split("#", 1)[0]
            pieces.append(piece)
        text = " ".join(" ".join(pieces).split())
        cut = text.rfind(":")
        if cut > 0:
            text = text[: cut + 1]
        if len(pieces) > 1:
            text = _MULTILINE_TRAILING_COMMA.sub(")", text)  # black's magic trailing comma
        text = text.replace("( ", "(").replace(" )", ")")
        return text[:400]

    def _name_span(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> Span:
        line = self._line(node.lineno)
        start = self._char_col(line, node.col_offset)
        idx = line.find(node.name, start)
        if idx < 0:
            return _new_span(line=node.lineno, col=node.col_offset, end_line=node.lineno, end_col=0)
        if not line.isascii():
            idx = len(line[:idx].encode("utf-8"))
        return _new_span(
            line=node.lineno, col=idx, end_line=node.lineno, end_col=idx + len(node.name.encode())
        )

    # ------------------------------------------------------------------ definitions

    def _qual(self, name: str) -> str:
        parent = self.scope.qualname
        return f"{parent}.{name}" if parent else name

    def _test_id(self, qualname: str) -> str:
        return f"{self.file}::{qualname.replace('.', '::')}"

    def _visit_def(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        outer = self.scope
        qualname = self._qual(node.name)
        in_class = outer.is_class
        for deco in node.decorator_list:
            self._visit_decorator(deco)
        decorators, fixture, parametrized, requests = _pytest_decorators(node)
        is_static = "staticmethod" in decorators
        is_classmethod = "classmethod" in decorators
        params = _params(node.args)
        self.visit_all(node.args.defaults)
        self.visit_all(node.args.kw_defaults)

        is_test = (
            fixture is None
            and self.is_test_file
            and node.name.startswith("test")
            and (
                (not in_class and not outer.is_function)
                or (in_class and bool(self.test_classes) and self.test_classes[-1])
            )
        )
        if is_test or fixture is not None:
            inherited = self.class_usefixtures[-1] if in_class and self.class_usefixtures else []
            requests = [
                *inherited,
                *requests,
                *_requested(params, parametrized, skip_first=in_class and not is_static),
            ]
        if is_test:
            kind = NodeKind.TEST
        elif fixture is not None:
            kind = NodeKind.FIXTURE
        else:
            kind = NodeKind.METHOD if in_class else NodeKind.FUNCTION
        param_types, returns = self._annotations(node, params, qualname)

        outer.bound.add(node.name)
        if not in_class and not outer.is_function and node.name == "__getattr__":
            self.dynamic.append(
                _new_dynamic(
                    scope="",
                    name="__getattr__",
                    kind=DynamicKind.MODULE_GETATTR,
                    span=self._name_span(node),
                )
            )

        scope = _Scope(qualname, is_class=False, is_function=True)
        for param, _ in params:
            scope.bound.add(param.name)
        if in_class and not is_static and params:
            scope.self_name = params[0][0].name
            scope.self_kind = "cls" if is_classmethod or node.name == "__new__" else "self"
            scope.bound.discard(scope.self_name)
        doc = _docstring(node.body)
        if doc:
            self.skip_strings.add(id(node.body[0].value))  # type: ignore[attr-defined]
        self.scopes.append(scope)
        self.test_classes.append(False)
        for stmt in node.body:
            self.visit(stmt)
        self.test_classes.pop()
        self._close_scope(scope)
        self.scopes.pop()
        returns_value: Chain = ()
        # a coroutine, or a context-manager decorator, gives something else than the body returns
        wrapped = isinstance(node, ast.AsyncFunctionDef) or any(
            d.rsplit(".", 1)[-1].endswith("contextmanager") for d in decorators
        )
        if not returns and not wrapped:
            returns_value = _agreed_return(scope)

        self.defs.append(
            DefFact(
                qualname=qualname,
                kind=kind,
                span=_span(node),
                name_span=self._name_span(node),
                in_class=in_class,
                is_async=isinstance(node, ast.AsyncFunctionDef),
                signature=self._header(node),
                doc=doc,
                params=tuple(p for p, _ in params),
                param_types=tuple(param_types),
                returns=returns,
                returns_value=returns_value,
                decorators=tuple(decorators),
                strings=tuple(scope.strings),
                test_id=self._test_id(qualname) if is_test else None,
                fixture=fixture,
                requests=tuple(requests),
            )
        )

    def _annotations(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef,
        params: list[tuple[Param, ast.arg]],
        qualname: str,
    ) -> tuple[list[TypeHint], Chain]:
        """Record the annotations as type refs of the function; return param and return types."""
        param_types: list[TypeHint] = []
        refs: list[tuple[Chain, Span]] = []
        for param, arg in params:
            if arg.annotation is not None:
                _annotation_chains(arg.annotation, refs)
                main = _main_type(arg.annotation)
                if main:
                    param_types.append(TypeHint(name=param.name, chain=main))
        returns: Chain = ()
        if node.returns is not None:
            _annotation_chains(node.returns, refs)
            returns = _main_type(node.returns)
        for chain, span in refs:
            self.type_refs.append(_new_type_ref(scope=qualname, chain=chain, span=span))
        return param_types, returns

    def _visit_decorator(self, deco: ast.expr) -> None:
        if isinstance(deco, ast.Call):
            self.visit(deco)
            return
        if isinstance(deco, (ast.Name, ast.Attribute)):
            chain = chain_of(deco)
            if UNKNOWN in chain or CALL in chain:
                self.visit(deco)
                return
            if self.scope.is_class and chain[0] in self.scope.bound:
                return  # ``@prop.setter``: a class-local helper, not a call we can resolve
            # a bare decorator is a call of the decorator with the function as its argument
            row = [self.scope.qualname, chain, _span(deco), ArgShape(positional=1), False]
            self._pend(row)
            self.calls.append(row)
            return
        self.visit(deco)

    def _visit_class(self, node: ast.ClassDef) -> None:
        outer = self.scope
        qualname = self._qual(node.name)
        decorators: list[str] = []
        usefixtures: list[Request] = []
        for deco in node.decorator_list:
            self._visit_decorator(deco)
            target = deco.func if isinstance(deco, ast.Call) else deco
            dotted = _dotted(target)
            decorators.append(dotted)
            if dotted.endswith("usefixtures") and isinstance(deco, ast.Call):
                for arg in deco.args:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        usefixtures.append(Request(name=arg.value, span=_span(arg)))
        bases: list[Chain] = []
        base_spans: list[Span] = []
        for base in node.bases:
            chain = chain_of(base)
            if UNKNOWN in chain or CALL in chain:
                self.visit(base)
                continue
            bases.append(chain)
            base_spans.append(_span(base))
        for kw in node.keywords:
            self.visit(kw.value)
        outer.bound.add(node.name)
        is_test_class = (
            self.is_test_file
            and node.name.startswith("Test")
            and (
                (not outer.is_function and not outer.is_class)
                or (outer.is_class and bool(self.test_classes) and self.test_classes[-1])
            )
            and not any(
                isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "__init__"
                for s in node.body
            )
        )
        scope = _Scope(qualname, is_class=True, is_function=False)
        doc = _docstring(node.body)
        if doc:
            self.skip_strings.add(id(node.body[0].value))  # type: ignore[attr-defined]
        self.scopes.append(scope)
        self.test_classes.append(is_test_class)
        inherited = self.class_usefixtures[-1] if self.class_usefixtures else []
        self.class_usefixtures.append([*inherited, *usefixtures])
        for stmt in node.body:
            self.visit(stmt)
        self.class_usefixtures.pop()
        self.test_classes.pop()
        self.scopes.pop()
        # a class body's names are not visible in its methods: unresolved heads go outward
        for row in scope.pending:
            if row[1][0] in scope.bound:
                row[4] = True
            elif self.scope.is_function:
                self.scope.pending.append(row)
        self.defs.append(
            DefFact(
                qualname=qualname,
                kind=NodeKind.CLASS,
                span=_span(node),
                name_span=self._name_span(node),
                in_class=outer.is_class,
                signature=self._header(node),
                doc=doc,
                decorators=tuple(decorators),
                bases=tuple(bases),
                base_spans=tuple(base_spans),
                attributes=tuple(dict.fromkeys(scope.attributes)),
                strings=tuple(scope.strings),
            )
        )

    # ------------------------------------------------------------------ imports

    def _visit_import(self, node: ast.Import) -> None:
        for alias in node.names:
            fact = ImportFact(
                scope=self.scope.qualname,
                module=alias.name,
                level=0,
                name=None,
                asname=alias.asname,
                span=_span(node),
                type_checking=self.type_checking > 0,
            )
            self.imports.append(fact)
            self._bind_import(fact.bound)

    def _visit_import_from(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            fact = ImportFact(
                scope=self.scope.qualname,
                module=node.module or "",
                level=node.level or 0,
                name=alias.name,
                asname=alias.asname,
                span=_span(alias) if hasattr(alias, "lineno") else _span(node),
                type_checking=self.type_checking > 0,
            )
            self.imports.append(fact)
            if alias.name != "*":
                self._bind_import(fact.bound)

    def _bind_import(self, name: str) -> None:
        self.scope.bound.add(name)

    # ------------------------------------------------------------------ assignments

    def _visit_assign(self, node: ast.Assign) -> None:
        value = node.value
        for target in node.targets:
            self._assign_target(target, value, _span(node), annotated=None)
        self.visit(value)

    def _visit_ann_assign(self, node: ast.AnnAssign) -> None:
        refs: list[tuple[Chain, Span]] = []
        _annotation_chains(node.annotation, refs)
        for chain, span in refs:
            self.type_refs.append(_new_type_ref(scope=self.scope.qualname, chain=chain, span=span))
        self._assign_target(node.target, node.value, _span(node), annotated=node.annotation)
        if node.value is not None:
            self.visit(node.value)

    def _visit_aug_assign(self, node: ast.AugAssign) -> None:
        target = node.target
        if (
            isinstance(target, ast.Name)
            and target.id == "__all__"
            and not self.scope.is_function
            and not self.scope.is_class
        ):
            names = _string_list(node.value)
            if names is not None:
                self.all_names = [*(self.all_names or []), *names]
                for elt in node.value.elts:  # type: ignore[attr-defined]
                    self.skip_strings.add(id(elt))
        if isinstance(target, ast.Name):
            self._visit_name_load(target.id, _span(target))
        self._assign_target(target, None, _span(node), annotated=None)
        self.visit(node.value)

    def _assign_target(
        self, target: ast.expr, value: ast.expr | None, span: Span, annotated: ast.expr | None
    ) -> None:
        scope = self.scope
        if isinstance(target, ast.Name):
            self._bind(target.id)
            if target.id == "__all__" and not scope.is_function and not scope.is_class:
                names = _string_list(value)
                if names is not None:
                    self.all_names = names
                    for elt in value.elts:  # type: ignore[union-attr]
                        self.skip_strings.add(id(elt))
            type_chain, alias = self._value_type(value, annotated)
            if type_chain:
                self.assigns.append(
                    [scope.qualname, (target.id,), span, type_chain, annotated is not None, alias]
                )
            if scope.is_class:
                scope.attributes.append(target.id)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._assign_target(elt, None, span, None)
            return
        if isinstance(target, ast.Starred):
            self._assign_target(target.value, None, span, None)
            return
        if isinstance(target, ast.Attribute):
            inner: list[ast.expr] = []
            chain = chain_of(target, inner)
            self.visit_all(inner)
            if UNKNOWN in chain or CALL in chain:
                return
            chain = self._rewrite_self(chain)
            if chain[0] in ("self", "cls") and len(chain) == 2:
                owner = self._enclosing_class()
                if owner is not None:
                    owner.attributes.append(chain[1])
            row = [scope.qualname, chain, _span(target), AccessKind.WRITE, False]
            self._pend(row)
            self.accesses.append(row)
            type_chain, alias = self._value_type(value, annotated)
            if type_chain and len(chain) == 2:
                self.assigns.append(
                    [scope.qualname, chain, span, type_chain, annotated is not None, alias]
                )
            return
        self.visit(target)

    def _value_type(self, value: ast.expr | None, annotated: ast.expr | None) -> tuple[Chain, bool]:
        """What gives a binding its type: ``(annotation or called chain, False)`` or
        ``(aliased chain, True)`` for ``x = y`` / ``self.repo = repo``."""
        if annotated is not None:
            return _main_type(annotated), False
        if isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute)):
            chain = chain_of(value.func)
            if UNKNOWN not in chain and SUPER not in chain:
                return self._rewrite_self(chain), False
        elif isinstance(value, (ast.Name, ast.Attribute)):
            chain = chain_of(value)
            if UNKNOWN not in chain and SUPER not in chain and CALL not in chain:
                return self._rewrite_self(chain), True
        return (), False

    # ------------------------------------------------------------------ expressions

    def _visit_call(self, node: ast.Call) -> None:
        # the commonest statement-level work (177k calls on django): helpers inlined
        scope = self.scopes[-1]
        func = node.func
        inner: list[ast.expr] = []
        if type(func) is _NAME:
            chain: Chain = (func.id,)
        else:
            chain = chain_of(func, inner)
        head = chain[0]
        if scope.is_function and head not in (UNKNOWN, SUPER):
            chain = self._rewrite_self(chain)
            head = chain[0]
        row = [scope.qualname, chain, _span(node), _arg_shape(node), head == UNKNOWN]
        if head not in _NEVER_LOCAL and (scope.is_function or scope.is_class):
            scope.pending.append(row)
        self.calls.append(row)
        if chain[-1] in _DYNAMIC_CALLEES:
            self._dynamic_call(chain, node)
        visit = self.visit
        for expr in inner:
            visit(expr)
        skip = self.skip_strings
        for arg in node.args:
            if type(arg) is _CONSTANT:
                value = arg.value
                if type(value) is str and id(arg) not in skip:
                    self._string_literal(arg, value)
            else:
                visit(arg)
        for kw in node.keywords:
            arg = kw.value
            if type(arg) is _CONSTANT:
                value = arg.value
                if type(value) is str and id(arg) not in skip:
                    self._string_literal(arg, value)
            else:
                visit(arg)

    def _dynamic_call(self, chain: Chain, node: ast.Call) -> None:
        if len(chain) == 1 and chain[0] in _DYNAMIC_ATTR and len(node.args) >= 2:
            arg = node.args[1]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                self.skip_strings.add(id(arg))
                self.dynamic.append(
                    _new_dynamic(
                        scope=self.scope.qualname,
                        name=arg.value,
                        kind=_DYNAMIC_ATTR[chain[0]],
                        span=_span(node),
                    )
                )
        elif chain in _IMPORT_MODULE and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                self.skip_strings.add(id(arg))
                self.dynamic.append(
                    _new_dynamic(
                        scope=self.scope.qualname,
                        name=arg.value,
                        kind=DynamicKind.IMPORT_MODULE,
                        span=_span(node),
                    )
                )

    def _visit_attribute(self, node: ast.Attribute) -> None:
        inner: list[ast.expr] = []
        chain = chain_of(node, inner)
        self.visit_all(inner)
        if chain[0] == UNKNOWN or CALL in chain:
            return
        if chain[0] != SUPER:
            chain = self._rewrite_self(chain)
        access = AccessKind.READ if isinstance(node.ctx, ast.Load) else AccessKind.WRITE
        row = [self.scope.qualname, chain, _span(node), access, False]
        self._pend(row)
        self.accesses.append(row)

    def _visit_name_load(self, name: str, span: Span) -> None:
        row = [self.scope.qualname, (name,), span, AccessKind.READ, False]
        self._pend(row)
        self.accesses.append(row)

    def _visit_arg(self, node: ast.arg) -> None:
        self.scope.bound.add(node.arg)

    def _visit_lambda(self, node: ast.Lambda) -> None:
        for param, _ in _params(node.args):
            self.scope.bound.add(param.name)
        self.visit_all(node.args.defaults)
        self.visit_all(node.args.kw_defaults)
        self.visit(node.body)

    def _visit_except(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self._bind(node.name)
        if node.type is not None:
            self.visit(node.type)
        self.visit_all(node.body)

    def _visit_global(self, node: ast.Global | ast.Nonlocal) -> None:
        self.scope.globals.update(node.names)

    def _string_literal(self, node: ast.Constant, value: str) -> None:
        scope = self.scopes[-1]
        if len(scope.strings) < MAX_NODE_STRINGS:
            self._add_string(scope, value)
        if len(value) > 1 and value.isidentifier():
            self.dynamic.append(
                _new_dynamic(
                    scope=scope.qualname,
                    name=value,
                    kind=DynamicKind.STRING_LITERAL,
                    span=_span(node),
                )
            )

    def _visit_expr_stmt(self, node: ast.Expr) -> None:
        value = node.value
        # ``__all__.extend([...])`` / ``__all__.append("x")`` at module level
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and isinstance(value.func.value, ast.Name)
            and value.func.value.id == "__all__"
            and not self.scope.is_function
            and value.args
        ):
            arg = value.args[0]
            names = (
                [arg.value]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                else _string_list(arg)
            )
            if names is not None:
                self.all_names = [*(self.all_names or []), *names]
                elts = arg.elts if isinstance(arg, (ast.List, ast.Tuple, ast.Set)) else [arg]
                for elt in elts:
                    self.skip_strings.add(id(elt))
        self.visit(value)

    def _visit_return(self, node: ast.Return) -> None:
        scope = self.scope
        if scope.is_function:
            value = node.value
            chain: Chain | None = None
            if isinstance(value, (ast.Call, ast.Name, ast.Attribute)):
                found = chain_of(value)
                if found[0] not in (UNKNOWN, SUPER):
                    chain = self._rewrite_self(found)
            scope.returns.append(chain)
        if node.value is not None:
            self.visit(node.value)

    def _visit_yield(self, node: ast.Yield | ast.YieldFrom) -> None:
        if self.scope.is_function:
            self.scope.returns.append(None)  # a generator or coroutine: not the value returned
        if node.value is not None:
            self.visit(node.value)

    def _visit_if(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            self.type_checking += 1
            self.visit_all(node.body)
            self.type_checking -= 1
            self.visit_all(node.orelse)
            return
        self.visit(node.test)
        self.visit_all(node.body)
        self.visit_all(node.orelse)

    # ------------------------------------------------------------------ result

    def result(self, *, module: str, is_package: bool, parse_error: str | None) -> FileFacts:
        module_scope = self.scopes[0] if self.scopes else None
        bound_here = self.constant_set | (module_scope.bound if module_scope else set())
        calls = tuple(
            _new_call(scope=r[0], callee=r[1], span=r[2], args=r[3], head_local=r[4])
            for r in self.calls
        )
        accesses = []
        for r in self.accesses:
            chain = r[1]
            if (
                len(chain) == 1
                and not r[4]
                and chain[0] not in bound_here
                and (chain[0] in _BUILTINS)
            ):
                continue  # a builtin: nothing in the project to point at
            if len(chain) == 1 and r[4]:
                continue  # a plain local variable
            accesses.append(
                _new_access(scope=r[0], chain=chain, access=r[3], span=r[2], head_local=r[4])
            )
        assigns = tuple(
            _new_assign(scope=r[0], target=r[1], value=r[3], span=r[2], annotated=r[4], alias=r[5])
            for r in self.assigns
        )
        defs = sorted(self.defs, key=lambda d: (d.span.line, d.span.col, d.qualname))
        return FileFacts(
            file=self.file,
            module=module,
            is_package=is_package,
            line_count=self.line_count,
            doc=self.doc,
            definitions=tuple(defs),
            calls=calls,
            accesses=tuple(accesses),
            type_refs=tuple(self.type_refs),
            imports=tuple(self.imports),
            assigns=assigns,
            constants=tuple(self.constants),
            all_names=tuple(self.all_names) if self.all_names is not None else None,
            dynamic=tuple(self.dynamic),
            strings=tuple(module_scope.strings) if module_scope else (),
            parse_error=parse_error,
        )


# a class-level table: bound methods in an instance dict would make every walker a GC cycle
_DISPATCH: dict[type, Callable[[_Walker, Any], None]] = {
    ast.FunctionDef: _Walker._visit_def,
    ast.AsyncFunctionDef: _Walker._visit_def,
    ast.ClassDef: _Walker._visit_class,
    ast.Import: _Walker._visit_import,
    ast.ImportFrom: _Walker._visit_import_from,
    ast.Assign: _Walker._visit_assign,
    ast.AnnAssign: _Walker._visit_ann_assign,
    ast.AugAssign: _Walker._visit_aug_assign,
    ast.Call: _Walker._visit_call,
    ast.Attribute: _Walker._visit_attribute,
    ast.If: _Walker._visit_if,
    ast.Global: _Walker._visit_global,
    ast.Nonlocal: _Walker._visit_global,
    ast.Lambda: _Walker._visit_lambda,
    ast.arg: _Walker._visit_arg,
    ast.ExceptHandler: _Walker._visit_except,
    ast.Expr: _Walker._visit_expr_stmt,
    ast.Return: _Walker._visit_return,
    ast.Yield: _Walker._visit_yield,
    ast.YieldFrom: _Walker._visit_yield,
}
