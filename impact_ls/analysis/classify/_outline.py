"""Collect a text's definitions, fields, imports and other statements, keyed for matching.

Private to ``analysis/classify/``; used by ``_ladder.py``. parso reads each text; when
``ast`` parses it, only the top-level statements the edit touches, with the bodies of untouched
leaf functions hollowed out and untouched methods left out (``touched_statements``, ``skeleton``,
``touched_bindings``). ``outline_of`` keys every
definition by (kind, enclosing path, name, occurrence) so that the baseline and the current one
can be matched, and ``ast_of`` finds the ``ast`` node of a parso definition.
"""

from __future__ import annotations

import ast
import bisect
import logging
import re
from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from impact_ls.analysis.classify._settle import Check, Settled, hunk_lines, parso
from impact_ls.analysis.classify._statements import BLOCKS, DEFINITIONS, FUNCTIONS, first_line
from impact_ls.graph.extract import parse_quietly

logger = logging.getLogger(__name__)


_OVERLOADS = frozenset({"overload", "typing.overload", "typing_extensions.overload"})
_COMPOUND = frozenset({"if_stmt", "while_stmt", "for_stmt", "try_stmt", "with_stmt"})
_SKIP_LEAVES = frozenset({"newline", "endmarker"})


DefinitionKey = tuple[str, tuple[str, ...], str, int]


@dataclass(frozen=True, slots=True, kw_only=True)
class Parsed:
    module: Any  # parso Module (of the text, or of its touched statements only)
    tree: ast.Module | None  # of the whole text
    errors: tuple[int, ...]
    stand_ins: frozenset[int] = frozenset()  # a skeleton's lines holding a ``pass`` of its own

    @classmethod
    def of(cls, source: str, check: Check) -> Parsed:
        return cls(module=parso(source), tree=check.tree, errors=check.errors)

    @classmethod
    def of_skeleton(cls, shape: Skeleton, check: Check) -> Parsed:
        module = parse_skeleton(shape)
        return cls(module=module, tree=check.tree, errors=check.errors, stand_ins=shape.stand_ins)


def norm(node: Any) -> str:
    """Code of a node with formatting and comments dropped: its token values, space-joined."""
    return " ".join(leaf.value for leaf in _leaves(node) if leaf.type not in _SKIP_LEAVES)


def _leaves(node: Any) -> Iterator[Any]:
    stack = [node]
    while stack:
        current = stack.pop()
        children = getattr(current, "children", None)
        if children is None:
            yield current
        else:
            stack.extend(reversed(children))


def compact(node: Any) -> str:
    """The node's source on one line, whitespace collapsed."""
    return " ".join(node.get_code(include_prefix=False).split())


def _end_line(node: Any) -> int:
    leaf = node.get_last_leaf()
    first = int(node.start_pos[0])
    while leaf is not None and (leaf.type in _SKIP_LEAVES or not leaf.value):
        leaf = leaf.get_previous_leaf()
    return max(first, int(leaf.end_pos[0])) if leaf is not None else first


@dataclass(frozen=True, slots=True, kw_only=True)
class _TopStatement:
    start: int
    end: int
    names: frozenset[str]
    imports: bool


def _top_statements(tree: ast.Module) -> list[_TopStatement]:
    out: list[_TopStatement] = []
    for stmt in tree.body:
        names: set[str] = set()
        imports = False
        stack: list[ast.AST] = [stmt]
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                imports = True
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            stack.extend(ast.iter_child_nodes(node))
        out.append(
            _TopStatement(
                start=first_line(stmt),
                end=stmt.end_lineno or stmt.lineno,
                names=frozenset(names),
                imports=imports,
            )
        )
    return out


def _hits(statements: list[_TopStatement], lines: set[int]) -> set[int]:
    ordered = sorted(lines)
    out: set[int] = set()
    for index, stmt in enumerate(statements):
        pos = bisect.bisect_left(ordered, stmt.start)
        if pos < len(ordered) and ordered[pos] <= stmt.end:
            out.add(index)
    return out


def touched_statements(
    before: ast.Module, patched: ast.Module, settled: Settled
) -> tuple[set[int], set[int]]:
    """Lines of the top-level statements worth parsing with parso, in each text.

    A statement is kept when a hunk touches it, when its counterpart in the other text is kept,
    when it binds a name a kept statement binds (duplicates keep their occurrence order), and
    always when it imports (the import comparison needs every binding of the module).
    """
    old_stmts = _top_statements(before)
    new_stmts = _top_statements(patched)
    old_touched, new_touched = hunk_lines(settled)
    old_keep = _hits(old_stmts, old_touched)
    new_keep = _hits(new_stmts, new_touched)
    to_new = {b: p for p, b in enumerate(settled.p2b, start=1) if b is not None}
    for _ in range(2):
        while True:
            old_image = {
                b
                for i in new_keep
                for line in range(new_stmts[i].start, new_stmts[i].end + 1)
                if (b := settled.p2b[line - 1]) is not None
            }
            new_image = {
                to_new[line]
                for i in old_keep
                for line in range(old_stmts[i].start, old_stmts[i].end + 1)
                if line in to_new
            }
            grown_old = old_keep | _hits(old_stmts, old_image)
            grown_new = new_keep | _hits(new_stmts, new_image)
            if grown_old == old_keep and grown_new == new_keep:
                break
            old_keep, new_keep = grown_old, grown_new
        names = {n for i in old_keep for n in old_stmts[i].names}
        names |= {n for i in new_keep for n in new_stmts[i].names}
        old_keep |= {i for i, s in enumerate(old_stmts) if s.imports or s.names & names}
        new_keep |= {i for i, s in enumerate(new_stmts) if s.imports or s.names & names}
    return _lines_of(old_stmts, old_keep), _lines_of(new_stmts, new_keep)


def _lines_of(statements: list[_TopStatement], keep: set[int]) -> set[int]:
    return {line for i in keep for line in range(statements[i].start, statements[i].end + 1)}


def _blank_except(lines: list[str], keep: set[int]) -> str:
    """The text with every line outside ``keep`` emptied, so line numbers stay as they were."""
    return "".join(line if number in keep else "\n" for number, line in enumerate(lines, 1))


MethodKey = tuple[tuple[str, ...], str]  # (names of the definitions around it, name)


@dataclass(frozen=True, slots=True)
class LeafFunction:
    """A function that defines nothing inside: its node, the names of the definitions around
    it, and whether it sits in a class block (a method)."""

    node: ast.FunctionDef | ast.AsyncFunctionDef
    path: tuple[str, ...]
    method: bool

    @property
    def key(self) -> MethodKey:
        return (self.path, self.node.name)


def leaf_functions(
    tree: ast.Module, known: Mapping[int, LeafFunction] | None = None
) -> list[LeafFunction]:
    """Every function of the module that defines nothing inside (the skeleton may empty it).

    ``known`` holds the leaves of a tree this one shares nodes with, by ``id`` of their node
    (the edited text's tree is the baseline's but for the edited definition, ``_reparse.py``):
    a shared node is the same leaf at the same path, and its body is not read again.
    """
    out: list[LeafFunction] = []
    stack: list[tuple[ast.stmt, tuple[str, ...], bool]] = [(s, (), False) for s in tree.body]
    while stack:
        node, path, in_class = stack.pop()
        leaf = known.get(id(node)) if known else None
        if leaf is not None:
            out.append(leaf)
            continue
        if isinstance(node, FUNCTIONS) and not any(
            isinstance(stmt, DEFINITIONS) for stmt in _inner_statements(node)
        ):
            out.append(LeafFunction(node=node, path=path, method=in_class))
            continue
        if isinstance(node, DEFINITIONS):
            # a class's blocks hold its members; a function's, its locals
            path, in_class = (*path, node.name), isinstance(node, ast.ClassDef)
        stack.extend((child, path, in_class) for child in _block_statements(node))
    return out


def untouched_methods(
    leaves: list[LeafFunction],
    lines: list[str],
    keep: set[int],
    touched: set[int],
    pinned: AbstractSet[str],
) -> frozenset[MethodKey]:
    """(path, name) of the methods ``skeleton`` may leave out of this text: kept, untouched,
    not named in ``pinned`` and no constructor (a class's signature reads its ``__init__``)."""
    return frozenset(
        leaf.key
        for leaf in leaves
        if leaf.method
        and leaf.node.name not in pinned
        and leaf.node.name not in _CONSTRUCTORS
        and _bare_definition(leaf.node, lines, keep, touched) is not None
    )


def skeleton(
    lines: list[str],
    keep: set[int],
    leaves: list[LeafFunction],
    touched: set[int],
    left_out: AbstractSet[MethodKey] = frozenset(),
) -> Skeleton:
    """What parso must read of a text that ``ast`` parses: the kept statements, with the body of
    every untouched function that defines nothing inside replaced by ``pass`` on its last line,
    and the untouched methods named in ``left_out`` emptied whole (a ``pass`` stands in on the
    last line of one that ended its block, so the block still ends there).

    When both texts parse, a function body is compared through ``ast`` (signatures, body units,
    escapes) and parso contributes only the definition itself: its decorators and header, its
    first and last line, and the definitions nested in it, which such a function has none of.
    A method edit keeps its whole class, and parsing a 2,000-line class twice dominated the
    analysis; its untouched methods cost parso a header and a ``pass`` each, or nothing when
    they may be left out of both outlines (the stand-ins' ``pass`` statements are no statements
    of the outline: which method ends a block changes with the edit). ``left_out`` holds the
    methods that are untouched in both texts (``untouched_methods`` of each, intersected), in
    the same class, and named by no edited statement (the occurrence numbers of same-named
    definitions stay aligned).
    """
    out = [line if number in keep else "\n" for number, line in enumerate(lines, 1)]
    blanked = {number for number in range(1, len(lines) + 1) if number not in keep}
    gone: list[tuple[int, str]] = []
    stand_ins: set[int] = set()
    for leaf in leaves:
        span = None
        if leaf.method and leaf.key in left_out:
            span = _bare_definition(leaf.node, lines, keep, touched)
            if span is not None:
                first, last, indent = span
                out[first - 1 : last] = ["\n"] * (last - first + 1)
                blanked.update(range(first, last + 1))
                gone.append((last, indent))
                continue
        span = _bare_body(leaf.node, lines, keep, touched)
        if span is not None:
            # ``pass`` on the last line: the enclosing definition still ends there
            first, last, indent = span
            out[first - 1 : last] = ["\n"] * (last - first) + [f"{indent}pass\n"]
            blanked.update(range(first, last))
    if gone:
        # A left-out method needs a stand-in only where it ended its block: where the next line
        # of code below it (a stand-in put there included) is indented less. One sweep upwards.
        ends = dict(gone)
        lowest = max(ends)
        below = _code_width(out[lowest:])
        for number in range(lowest, min(ends) - 1, -1):
            ended = ends.get(number)
            if ended is None:
                width = _code_width(out[number - 1 : number])
                below = below if width is None else width
            elif below is None or below < len(ended):
                out[number - 1] = f"{ended}pass\n"
                blanked.discard(number)
                stand_ins.add(number)
                below = len(ended)
    return Skeleton(lines=out, blanked=frozenset(blanked), stand_ins=frozenset(stand_ins))


def _code_width(lines: list[str]) -> int | None:
    """The indentation width of the first line of code among ``lines`` (None: there is none)."""
    for line in lines:
        code = line.lstrip()
        if code and not code.startswith("#"):
            return len(line) - len(code)
    return None


@dataclass(frozen=True, slots=True)
class Skeleton:
    """A skeleton's lines (numbered as in its text) and the numbers of those it emptied."""

    lines: list[str]
    blanked: frozenset[int]
    # the ``pass`` lines standing in for left-out methods that ended their block: whether one
    # is needed depends on what follows, which an edit can change, so the outline skips them
    stand_ins: frozenset[int] = frozenset()

    @property
    def text(self) -> str:
        return "".join(self.lines)


def parse_skeleton(shape: Skeleton) -> Any:
    """parso's tree of a skeleton, its positions those of the full text, without the lines the
    skeleton emptied: parso pays for every line (about 6 µs each), and the skeleton of a method
    edit in a 9,000-line module is nearly all empty lines. No token spans an emptied line (whole
    statements and bodies are emptied), so dropping them changes nothing but line numbers, which
    are then put back on every leaf."""
    numbers = [n for n in range(1, len(shape.lines) + 1) if n not in shape.blanked]
    module = parso("".join(shape.lines[n - 1] for n in numbers))
    extra = len(shape.lines) - len(numbers)
    count = len(numbers)
    stack = [module]
    while stack:  # every leaf, in no particular order
        node = stack.pop()
        children = getattr(node, "children", None)
        if children is not None:
            stack.extend(children)
            continue
        line = node.line
        # the end marker sits one line past the last one
        node.line = numbers[line - 1] if line <= count else line + extra
    return module


def touched_bindings(tree: ast.Module, touched: set[int]) -> set[str]:
    """Names bound in module and class blocks by the statements the edit touches, and the names
    of the touched definitions at any depth (a function's locals are no member of anything)."""
    ordered = sorted(touched)
    names: set[str] = set()
    stack: list[tuple[ast.stmt, bool]] = [(stmt, False) for stmt in tree.body]
    while stack:
        stmt, local = stack.pop()
        start = first_line(stmt)
        pos = bisect.bisect_left(ordered, start)
        if pos == len(ordered) or ordered[pos] > (stmt.end_lineno or stmt.lineno):
            continue
        if isinstance(stmt, DEFINITIONS):
            names.add(stmt.name)
            local = isinstance(stmt, FUNCTIONS)
        elif not local:
            names.update(_bound_by(stmt))
        stack.extend((child, local) for child in _block_statements(stmt))
    return names


def _bound_by(stmt: ast.stmt) -> Iterator[str]:
    """Names a statement binds outside its blocks (targets, ``as`` names, imports)."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        yield from ((a.asname or a.name).split(".")[0] for a in stmt.names)
        return
    for name, value in ast.iter_fields(stmt):
        if name in BLOCKS:
            continue
        for part in value if isinstance(value, list) else [value]:
            if isinstance(part, ast.AST):
                for node in ast.walk(part):
                    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                        yield node.id


_CONSTRUCTORS = frozenset({"__init__", "__new__"})


def _block_statements(node: ast.AST) -> Iterator[ast.stmt]:
    """The statements directly in ``node``'s blocks (except handlers and match cases opened)."""
    for name in BLOCKS:
        for child in getattr(node, name, ()):
            if isinstance(child, ast.stmt):
                yield child
            else:  # an except handler or a match case holds a block of its own
                yield from _block_statements(child)


def _inner_statements(node: ast.AST) -> Iterator[ast.stmt]:
    """Every statement in ``node``'s blocks at any depth. Definitions are statements, so only
    statement blocks can hold one; expressions are never entered."""
    stack = list(_block_statements(node))
    while stack:
        stmt = stack.pop()
        yield stmt
        stack.extend(_block_statements(stmt))


def _bare_body(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    lines: list[str],
    keep: set[int],
    touched: set[int],
) -> tuple[int, int, str] | None:
    """(first body line, last line, body indentation) of a function safe to hollow out, or None.

    Safe: kept, untouched by the edit, its body starting on a line of its own after the
    header, and ``def`` and its name on one line (parso locates the definition by its name).
    """
    span = _untouched(node, lines, keep, touched)
    first = node.body[0]
    if span is None or first.lineno <= node.lineno:
        return None
    indent = _indentation(lines[first.lineno - 1], first.col_offset)
    if indent is None:
        return None
    header = lines[node.lineno - 1]
    if not re.match(rf"\s*(?:async\s+)?def\s+{re.escape(node.name)}\b", header):
        return None
    return first.lineno, span[1], indent


def _bare_definition(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    lines: list[str],
    keep: set[int],
    touched: set[int],
) -> tuple[int, int, str] | None:
    """(first line with decorators, last line, indentation) of a function safe to leave out
    whole, or None: kept, untouched, and nothing but indentation before it on its first line."""
    span = _untouched(node, lines, keep, touched)
    if span is None:
        return None
    indent = _indentation(lines[span[0] - 1], node.col_offset)
    return None if indent is None else (*span, indent)


def _untouched(
    node: ast.stmt, lines: list[str], keep: set[int], touched: set[int]
) -> tuple[int, int] | None:
    """(first line with decorators, last line) of a statement kept whole and untouched."""
    start = first_line(node)
    end = node.end_lineno or node.lineno
    if end > len(lines) or any(
        line not in keep or line in touched for line in range(start, end + 1)
    ):
        return None
    return start, end


def _indentation(line: str, col: int) -> str | None:
    """The indentation before column ``col``; None when anything else comes first, or nothing."""
    indent = line[:col]
    return None if indent.strip() or not indent else indent


@dataclass(frozen=True, slots=True, kw_only=True)
class Definition:
    kind: str  # "def" | "class"
    path: tuple[str, ...]
    name: str
    occurrence: int
    core: Any  # parso funcdef / classdef
    decorators: tuple[Any, ...]
    is_async: bool
    in_class: bool
    start: int
    end: int
    col: int

    @property
    def key(self) -> DefinitionKey:
        return (self.kind, self.path, self.name, self.occurrence)

    @property
    def inner(self) -> tuple[str, ...]:
        return (*self.path, self.name)

    @property
    def header_end(self) -> int:
        for child in self.core.children:
            if child.type == "operator" and child.value == ":":
                return int(child.start_pos[0])
        return self.start

    @property
    def is_static(self) -> bool:
        return any(
            _decorator_name(d) in ("staticmethod", "builtins.staticmethod") for d in self.decorators
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Statement:
    node: Any
    norm: str
    start: int
    end: int
    trivial: bool = False
    # an ``@overload`` stub: type checkers read it, nothing runs it
    overload: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class _Import:
    stmt: Statement
    pairs: tuple[tuple[str, str], ...]  # (bound name, qualname it points at)


@dataclass(slots=True)
class Outline:
    """Everything one text defines, keyed for matching against the other text."""

    parse: Parsed
    defs: dict[DefinitionKey, Definition] = field(default_factory=dict)
    fields: dict[tuple[tuple[str, ...], str], list[Statement]] = field(
        default_factory=lambda: defaultdict(list)
    )
    imports: dict[tuple[str, ...], list[_Import]] = field(default_factory=lambda: defaultdict(list))
    residual: dict[tuple[str, ...], list[Statement]] = field(
        default_factory=lambda: defaultdict(list)
    )
    scopes: set[tuple[str, ...]] = field(default_factory=lambda: {()})
    ast_defs: dict[tuple[int, str], ast.AST] = field(default_factory=dict)
    ast_walked: set[int] = field(default_factory=set)
    counts: Counter[tuple[str, tuple[str, ...], str]] = field(default_factory=Counter)


def outline_of(parsed: Parsed, package: str) -> Outline:
    """Everything the parsed text defines, binds and imports, keyed for matching."""
    outline = Outline(parse=parsed)
    _scan(outline, parsed.module.children, (), "module", package)
    return outline


def statements(children: Iterable[Any]) -> Iterator[tuple[str, Any]]:
    """Statement-level nodes of a body, flattened through compound statements."""
    for child in children:
        kind = child.type
        if kind in _SKIP_LEAVES or (kind == "operator" and child.value == ";"):
            continue
        if kind in ("simple_stmt", "suite"):
            yield from statements(child.children)
        elif kind in ("funcdef", "classdef", "decorated"):
            yield "def", child
        elif kind in ("async_stmt", "async_funcdef"):
            inner = child.children[1] if len(child.children) > 1 else None
            if inner is not None and inner.type == "funcdef":
                yield "def", child
            else:
                yield "header", child
                yield from statements(bodies(inner) if inner is not None else ())
        elif kind in _COMPOUND:
            yield "header", child
            yield from statements(bodies(child))
        else:
            yield "small", child


def bodies(node: Any) -> list[Any]:
    """The statement blocks directly under ``node``."""
    return [c for c in getattr(node, "children", ()) if c.type in ("suite", "simple_stmt")]


def _header_norm(node: Any) -> str:
    parts: list[str] = []
    for child in node.children:
        if child.type in ("suite", "simple_stmt"):
            continue
        parts.append(_header_norm(child) if child.type in _COMPOUND else norm(child))
    return " ".join(parts)


def _scan(
    outline: Outline, children: Iterable[Any], path: tuple[str, ...], mode: str, package: str
) -> None:
    for kind, node in statements(children):
        if kind == "def":
            _scan_def(outline, node, path, mode, package)
        elif mode == "function":
            continue  # a function body is compared through ast; only nested defs matter here
        elif kind == "header":
            line = node.start_pos[0]
            outline.residual[path].append(
                Statement(node=node, norm=_header_norm(node), start=line, end=line)
            )
        else:
            _scan_small(outline, node, path, package)


def _scan_def(outline: Outline, node: Any, path: tuple[str, ...], mode: str, package: str) -> None:
    start = node.start_pos[0]
    col = node.start_pos[1]
    decorators: tuple[Any, ...] = ()
    core = node
    if core.type == "decorated":
        first = core.children[0]
        decorators = (
            (first,)
            if first.type == "decorator"
            else tuple(c for c in first.children if c.type == "decorator")
        )
        core = core.children[1]
    is_async = core.type in ("async_funcdef", "async_stmt")
    if is_async:
        core = core.children[1]
    if (
        core.type not in ("funcdef", "classdef")
        or len(core.children) < 2
        or core.children[1].type != "name"
    ):
        outline.residual[path].append(_stmt(node))
        return
    kind = "class" if core.type == "classdef" else "def"
    if kind == "def" and any(_decorator_name(d) in _OVERLOADS for d in decorators):
        # Not a definition at run time: the implementation that follows is what calls bind
        # to, so the stubs never take its place in the matching (nor count as occurrences).
        outline.residual[path].append(
            Statement(
                node=node,
                norm=norm(node),
                start=start,
                end=_end_line(node),
                trivial=True,
                overload=True,
            )
        )
        return
    name = core.children[1].value
    occurrence = outline.counts[(kind, path, name)]
    outline.counts[(kind, path, name)] += 1
    definition = Definition(
        kind=kind,
        path=path,
        name=name,
        occurrence=occurrence,
        core=core,
        decorators=decorators,
        is_async=is_async,
        in_class=mode == "class",
        start=start,
        end=_end_line(node),
        col=col,
    )
    outline.defs[definition.key] = definition
    inner = definition.inner
    if kind == "class":
        outline.scopes.add(inner)
    _scan(outline, bodies(core), inner, "class" if kind == "class" else "function", package)


def _stmt(node: Any) -> Statement:
    return Statement(
        node=node,
        norm=norm(node),
        start=node.start_pos[0],
        end=_end_line(node),
        trivial=node.type in ("string", "strings", "fstring")
        or (node.type in ("keyword", "operator") and node.value in ("pass", "...")),
    )


def _scan_small(outline: Outline, node: Any, path: tuple[str, ...], package: str) -> None:
    stmt = _stmt(node)
    if stmt.trivial and stmt.start in outline.parse.stand_ins:
        return
    if node.type in ("import_name", "import_from"):
        pairs = _import_pairs(node, package)
        if pairs is not None:
            outline.imports[path].append(_Import(stmt=stmt, pairs=pairs))
            return
    elif node.type == "expr_stmt":
        names = _assigned_names(node)
        if names:
            for name in names:
                outline.fields[(path, name)].append(stmt)
            return
    outline.residual[path].append(stmt)


def _assigned_names(stmt: Any) -> list[str] | None:
    """Names bound by a plain assignment statement; None if any target is not a bare name."""
    children = stmt.children
    if len(children) < 2:
        return None
    second = children[1]
    if second.type == "annassign" or (
        second.type == "operator" and second.value != "=" and second.value.endswith("=")
    ):
        targets = [children[0]]
    else:
        targets = [
            children[i]
            for i in range(0, len(children) - 1, 2)
            if children[i + 1].type == "operator" and children[i + 1].value == "="
        ]
    names: list[str] = []
    for target in targets:
        if not _collect_names(target, names):
            return None
    return names


def _collect_names(node: Any, out: list[str]) -> bool:
    if node.type == "name":
        out.append(node.value)
        return True
    if node.type in ("testlist_star_expr", "exprlist", "testlist", "testlist_comp"):
        return all(
            _collect_names(c, out)
            for c in node.children
            if not (c.type == "operator" and c.value == ",")
        )
    if (
        node.type == "atom"
        and node.children[0].type == "operator"
        and node.children[0].value in "(["
    ):
        return len(node.children) == 2 or _collect_names(node.children[1], out)
    if node.type == "star_expr":
        return _collect_names(node.children[1], out)
    return False


def package_of(module: str, file: str) -> str:
    """The package relative imports in ``file`` are resolved against."""
    if file.replace("\\", "/").rsplit("/", 1)[-1] == "__init__.py":
        return module
    return module.rpartition(".")[0]


def _import_pairs(node: Any, package: str) -> tuple[tuple[str, str], ...] | None:
    try:
        tree: ast.Module = parse_quietly(node.get_code(include_prefix=False))
    except (SyntaxError, ValueError):
        return None
    if len(tree.body) != 1:
        return None
    stmt = tree.body[0]
    if isinstance(stmt, ast.Import):
        return tuple((a.asname or a.name, a.name) for a in stmt.names)
    if not isinstance(stmt, ast.ImportFrom):
        return None
    base = stmt.module or ""
    if stmt.level:
        parts = package.split(".") if package else []
        keep = len(parts) - (stmt.level - 1)
        prefix = ".".join(parts[: max(0, keep)])
        base = ".".join(p for p in (prefix, base) if p)
    return tuple((a.asname or a.name, ".".join(p for p in (base, a.name) if p)) for a in stmt.names)


def _decorator_name(decorator: Any) -> str:
    text = decorator.get_code(include_prefix=False).strip().lstrip("@").strip()
    return "".join(text.split("(", 1)[0].split())


def ast_of(outline: Outline, definition: Definition) -> ast.AST | None:
    """The ``ast`` node of a parso definition, or None when ``ast`` cannot read it."""
    name_line = definition.core.children[1].start_pos[0]
    node = _ast_def(outline, name_line, definition.name)
    if node is not None:
        return node
    # the file as a whole does not parse (a broken baseline): try the definition on its own
    code = definition.core.get_code(include_prefix=False)
    if definition.is_async:
        code = "async " + code
    indent = definition.core.get_first_leaf().prefix.rsplit("\n", 1)[-1]
    if definition.is_async:
        indent = definition.core.parent.get_first_leaf().prefix.rsplit("\n", 1)[-1]
    source = f"if 1:\n{indent}{code}" if indent else code
    try:
        tree: ast.Module = parse_quietly(source)
    except (SyntaxError, ValueError, RecursionError):
        return None
    body = tree.body[0]
    if indent and isinstance(body, ast.If):
        body = body.body[0]
    return body if isinstance(body, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else None


def _ast_def(outline: Outline, line: int, name: str) -> ast.AST | None:
    """The ``ast`` definition named ``name`` on ``line``; top-level statements indexed lazily."""
    tree = outline.parse.tree
    if tree is None:
        return None
    starts = [stmt.lineno for stmt in tree.body]
    index = bisect.bisect_right(starts, line) - 1
    # a decorated definition starts before its ``def`` line, so look one statement further too
    for candidate in (index, index + 1):
        if 0 <= candidate < len(tree.body) and candidate not in outline.ast_walked:
            outline.ast_walked.add(candidate)
            for node in _all_definitions(tree.body[candidate]):
                outline.ast_defs[(node.lineno, node.name)] = node
    return outline.ast_defs.get((line, name))


def _all_definitions(
    stmt: ast.stmt,
) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    """``stmt`` and every definition inside it, in ``ast.walk`` order, through statement blocks
    only (a definition is a statement; walking every expression cost a big class milliseconds)."""
    queue: deque[ast.AST] = deque([stmt])
    while queue:
        node = queue.popleft()
        if isinstance(node, DEFINITIONS):
            yield node
        for name in BLOCKS:
            queue.extend(getattr(node, name, ()))
