"""Classify the edit between a file's baseline and current text into atomic changes (spec §3.1).

Contract: ``classify_changes(file=, module=, before=, after=)`` → ``tuple[Change, ...]``.

- Both texts are parsed with parso, which tolerates broken code. Definitions are matched by
  (kind, enclosing path, name, occurrence); every changed node yields one atomic change by the
  precedence ladder delete → add → class-decl → constructor → method-signature → method-body →
  import → field → method-body (default). Parameters and body statements are read from ``ast``;
  the method-body escape gate lives in ``escape.py``.
- Text that does not parse yet: the diff hunks the parse errors point at are put back to their
  baseline text until the file parses; each such region becomes one ``incomplete`` change for its
  enclosing definition (or the module) and the rest of the file is classified normally.
- ``line_range`` is 1-based and inclusive, in the current text (in the baseline text for
  ``delete`` and for a removed field). ``entity`` is ``module`` plus the dotted path, at most
  ``MAX_ENTITY_CHARS`` characters.
- At most ``max_changes`` changes; the rest are folded into the line range of the nearest change
  of the same type. Sorted by (file, line_range, entity, change_type).
- Pure: no file, network, clock or LLM access (spec §8.7: classification is deterministic).
"""

from __future__ import annotations

import ast
import bisect
import logging
import re
import warnings
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher
from typing import Any

from parso.grammar import load_grammar
from parso.utils import split_lines

from impact_ls import config
from impact_ls.analysis.escape import DOCSTRING_ONLY, FunctionNode, compare_bodies
from impact_ls.model import Change, ChangeType, Param, ParamKind, QualName

logger = logging.getLogger(__name__)

_COMPOUND = frozenset({"if_stmt", "while_stmt", "for_stmt", "try_stmt", "with_stmt"})
_SKIP_LEAVES = frozenset({"newline", "endmarker"})
_SIG_CHARS = 200
_WHAT_CHARS = 120
# decorators that write an ``__init__`` from the annotated class fields
_DATACLASS_DECORATORS = frozenset(
    {
        "dataclass",
        "dataclasses.dataclass",
        "define",
        "frozen",
        "mutable",
        "attrs.define",
        "attrs.frozen",
        "attrs.mutable",
        "attr.s",
        "attr.attrs",
        "attr.define",
        "attr.frozen",
        "attr.mutable",
        "attr.dataclass",
    }
)
_UNPARSED_BODY = "body does not parse as Python; assuming it escapes"

_DefKey = tuple[str, tuple[str, ...], str, int]


# ============================================================================ public


def classify_changes(
    *,
    file: str,
    module: str,
    before: str,
    after: str,
    max_changes: int = config.MAX_CHANGES,
) -> tuple[Change, ...]:
    """Turn the baseline and current text of one file into sorted, capped atomic changes."""
    if before == after:
        return ()
    before_lines = _split_lines(before)
    after_lines = _split_lines(after)
    opcodes = _opcodes(before_lines, after_lines)
    before_check = _check(before)
    settled = _settle(opcodes, before_lines, after_lines, before_check)
    lines = _LineMap(opcodes=opcodes, p2a=settled.p2a, after_count=len(after_lines))
    package = _package_of(module, file)
    before_source, patched_source = before, settled.text
    texts: tuple[list[str], list[str]] | None = None
    if before_check.tree is not None and settled.check.tree is not None:
        # parso is slow on big files: only the top-level statements the edit touches are parsed
        keep_before, keep_patched = _touched_statements(
            before_check.tree, settled.check.tree, settled
        )
        patched_lines = _split_lines(settled.text)
        old_touched, new_touched = _hunk_lines(settled)
        before_source = _skeleton(before_lines, keep_before, before_check.tree, old_touched)
        patched_source = _skeleton(patched_lines, keep_patched, settled.check.tree, new_touched)
        texts = (before_lines, patched_lines)
    old = _extract(_Parse.of(before_source, before_check), package)
    new = _extract(_Parse.of(patched_source, settled.check), package)
    ctx = _Context(file=file, module=module, old=old, new=new, lines=lines, texts=texts)
    changes = [
        *_compare_defs(ctx),
        *_compare_fields(ctx),
        *_compare_imports(ctx),
        *_compare_residual(ctx),
    ]
    incomplete = _incomplete_changes(ctx, settled, after_lines)
    incomplete_entities = {c.entity for c in incomplete} - {QualName(module)}
    changes = [c for c in changes if c.entity not in incomplete_entities]
    changes.extend(incomplete)
    result = _cap(changes, max(1, max_changes))
    logger.debug(
        "classified %s: %d changes (%d incomplete, %d reverted hunks)",
        file,
        len(result),
        len(incomplete),
        len(settled.reverted),
    )
    return result


# ============================================================================ parsing


@dataclass(frozen=True, slots=True, kw_only=True)
class _Check:
    tree: ast.Module | None
    errors: tuple[int, ...]  # lines with syntax errors; empty when ``ast`` accepts the text


@dataclass(frozen=True, slots=True, kw_only=True)
class _Parse:
    module: Any  # parso Module (of the text, or of its touched statements only)
    tree: ast.Module | None  # of the whole text
    errors: tuple[int, ...]

    @classmethod
    def of(cls, source: str, check: _Check) -> _Parse:
        return cls(module=_parso(source), tree=check.tree, errors=check.errors)


def _parso(text: str) -> Any:
    """parso's error-recovering tree (its grammars are cached by parso itself)."""
    return load_grammar().parse(text)


def _check(text: str, *, thorough: bool = True) -> _Check:
    """Parse with ``ast``; if that fails (and ``thorough``), add the error lines parso finds."""
    try:
        with warnings.catch_warnings():
            # invalid escape sequences warn at parse time; they are not our business here
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        lines = {max(1, getattr(exc, "lineno", None) or 1)}
        if thorough:
            lines.update(_parso_error_lines(_parso(text)))
        return _Check(tree=None, errors=tuple(sorted(lines)))
    # parso flags some valid syntax it does not know (``match``); ast is the judge of validity
    return _Check(tree=tree, errors=())


def _parso_error_lines(module: Any) -> set[int]:
    lines: set[int] = set()
    stack = [module]
    while stack:
        node = stack.pop()
        if node.type in ("error_node", "error_leaf"):
            lines.add(node.start_pos[0])
        stack.extend(getattr(node, "children", ()))
    return lines


def _split_lines(text: str) -> list[str]:
    """Lines as the tokenizer counts them (form feeds and other odd breaks are not newlines)."""
    lines: list[str] = split_lines(text, keepends=True)
    return lines[:-1] if lines and not lines[-1] else lines


def _norm(node: Any) -> str:
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


def _compact(node: Any) -> str:
    """The node's source on one line, whitespace collapsed."""
    return " ".join(node.get_code(include_prefix=False).split())


def _end_line(node: Any) -> int:
    leaf = node.get_last_leaf()
    first = int(node.start_pos[0])
    while leaf is not None and (leaf.type in _SKIP_LEAVES or not leaf.value):
        leaf = leaf.get_previous_leaf()
    return max(first, int(leaf.end_pos[0])) if leaf is not None else first


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ============================================================================ diff + settle


_Opcode = tuple[str, int, int, int, int]


def _opcodes(before: list[str], after: list[str]) -> list[_Opcode]:
    """Line opcodes of the diff; the common head and tail are cut first to keep it cheap."""
    head = 0
    limit = min(len(before), len(after))
    while head < limit and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < limit - head and before[len(before) - 1 - tail] == after[len(after) - 1 - tail]:
        tail += 1
    middle = SequenceMatcher(
        None, before[head : len(before) - tail], after[head : len(after) - tail]
    ).get_opcodes()
    out: list[_Opcode] = [("equal", 0, head, 0, head)] if head else []
    out.extend((tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in middle)
    if tail:
        out.append(("equal", len(before) - tail, len(before), len(after) - tail, len(after)))
    return [op for op in out if op[0] != "equal" or op[2] > op[1]]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Hunk:
    index: int
    i1: int
    i2: int
    j1: int
    j2: int
    p1: int  # 0-based start of the hunk in the patched text
    p2: int  # exclusive end


@dataclass(frozen=True, slots=True, kw_only=True)
class _Settled:
    text: str
    check: _Check
    p2a: tuple[int, ...]  # patched line (index + 1) → current-text line
    p2b: tuple[int | None, ...]
    hunks: tuple[_Hunk, ...]
    reverted: frozenset[int]


def _assemble(
    opcodes: list[_Opcode], before: list[str], after: list[str], reverted: frozenset[int]
) -> tuple[str, list[int], list[int | None], list[_Hunk]]:
    text: list[str] = []
    p2a: list[int] = []
    p2b: list[int | None] = []
    hunks: list[_Hunk] = []
    index = 0

    def extend(lines: list[str]) -> None:
        # a last line without its newline may stop being last once hunks are mixed
        if lines and text and not text[-1].endswith(("\n", "\r")):
            text[-1] += "\n"
        text.extend(lines)

    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            extend(after[j1:j2])
            p2a.extend(range(j1 + 1, j2 + 1))
            p2b.extend(range(i1 + 1, i2 + 1))
            continue
        start = len(text)
        if index in reverted:
            anchor = max(1, min(j1 + 1, len(after)))
            extend(before[i1:i2])
            p2a.extend([anchor] * (i2 - i1))
            p2b.extend(range(i1 + 1, i2 + 1))
        else:
            extend(after[j1:j2])
            p2a.extend(range(j1 + 1, j2 + 1))
            p2b.extend([None] * (j2 - j1))
        hunks.append(_Hunk(index=index, i1=i1, i2=i2, j1=j1, j2=j2, p1=start, p2=len(text)))
        index += 1
    return "".join(text), p2a, p2b, hunks


def _settle(
    opcodes: list[_Opcode], before: list[str], after: list[str], before_check: _Check
) -> _Settled:
    """Put back to the baseline the hunks that parse errors point at until the text parses.

    An error that sits on an unchanged line which was already broken in the baseline is not the
    edit's fault and reverts nothing.
    """
    baseline_errors = set(before_check.errors)
    reverted: frozenset[int] = frozenset()
    while True:
        text, p2a, p2b, hunks = _assemble(opcodes, before, after, reverted)
        # ast names the first error only, which is enough one hunk at a time; parso's full list
        # is needed to tell the baseline's own errors apart
        checked = _check(text, thorough=bool(baseline_errors))
        fresh = [
            line
            for line in checked.errors
            if not (line <= len(p2b) and p2b[line - 1] in baseline_errors)
        ]
        picked = _hunks_near(fresh, hunks, reverted) if fresh else set()
        if not picked:
            return _Settled(
                text=text,
                check=checked,
                p2a=tuple(p2a),
                p2b=tuple(p2b),
                hunks=tuple(hunks),
                reverted=reverted,
            )
        reverted = reverted | picked


def _hunks_near(errors: list[int], hunks: list[_Hunk], reverted: frozenset[int]) -> set[int]:
    """The open hunks that contain an error line, else the one nearest the first error."""
    open_hunks = [h for h in hunks if h.index not in reverted]
    inside = {
        h.index
        for h in open_hunks
        for line in errors
        if (h.p1 < line <= h.p2) or (h.p1 == h.p2 and h.p1 <= line <= h.p1 + 1)
    }
    if inside:
        return inside
    first = errors[0]
    # an error usually shows up after its cause (an unclosed bracket), so look back first
    preceding = [h for h in open_hunks if h.p2 < first]
    if preceding:
        return {max(preceding, key=lambda h: h.p2).index}
    following = [h for h in open_hunks if h.p1 >= first]
    if following:
        return {min(following, key=lambda h: h.p1).index}
    return set()


@dataclass(frozen=True, slots=True, kw_only=True)
class _TopStatement:
    start: int
    end: int
    names: frozenset[str]
    imports: bool


def _top_statements(tree: ast.Module) -> list[_TopStatement]:
    out: list[_TopStatement] = []
    for stmt in tree.body:
        decorators = getattr(stmt, "decorator_list", [])
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
                start=min([stmt.lineno, *(d.lineno for d in decorators)]),
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


def _touched_statements(
    before: ast.Module, patched: ast.Module, settled: _Settled
) -> tuple[set[int], set[int]]:
    """Lines of the top-level statements worth parsing with parso, in each text.

    A statement is kept when a hunk touches it, when its counterpart in the other text is kept,
    when it binds a name a kept statement binds (duplicates keep their occurrence order), and
    always when it imports (the import comparison needs every binding of the module).
    """
    old_stmts = _top_statements(before)
    new_stmts = _top_statements(patched)
    old_touched, new_touched = _hunk_lines(settled)
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


def _hunk_lines(settled: _Settled) -> tuple[set[int], set[int]]:
    """Lines the hunks touch in the baseline and in the patched text (both sides of an insertion
    or deletion point)."""
    old_touched: set[int] = set()
    new_touched: set[int] = set()
    for hunk in settled.hunks:
        old_touched |= (
            set(range(hunk.i1 + 1, hunk.i2 + 1)) if hunk.i2 > hunk.i1 else {hunk.i1, hunk.i1 + 1}
        )
        new_touched |= (
            set(range(hunk.p1 + 1, hunk.p2 + 1)) if hunk.p2 > hunk.p1 else {hunk.p1, hunk.p1 + 1}
        )
    return old_touched, new_touched


def _lines_of(statements: list[_TopStatement], keep: set[int]) -> set[int]:
    return {line for i in keep for line in range(statements[i].start, statements[i].end + 1)}


def _blank_except(lines: list[str], keep: set[int]) -> str:
    """The text with every line outside ``keep`` emptied, so line numbers stay as they were."""
    return "".join(line if number in keep else "\n" for number, line in enumerate(lines, 1))


def _skeleton(lines: list[str], keep: set[int], tree: ast.Module, touched: set[int]) -> str:
    """What parso must read of a text that ``ast`` parses: the kept statements, with the body of
    every untouched function that defines nothing inside replaced by ``pass`` on its last line.

    When both texts parse, a function body is compared through ``ast`` (signatures, body units,
    escapes) and parso contributes only the definition itself: its decorators and header, its
    first and last line, and the definitions nested in it, which such a function has none of.
    A method edit keeps its whole class, and parsing a 2,000-line class twice dominated the
    analysis; its untouched methods now cost parso a header and a ``pass`` each.
    """
    out = [line if number in keep else "\n" for number, line in enumerate(lines, 1)]
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not any(
            isinstance(stmt, _DEFINITIONS) for stmt in _inner_statements(node)
        ):
            body = _bare_body(node, lines, keep, touched)
            if body is not None:
                first, last, indent = body
                out[first - 1 : last] = ["\n"] * (last - first) + [f"{indent}pass\n"]
        else:
            stack.extend(_block_statements(node))
    return "".join(out)


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# Statement blocks in the order ast.iter_child_nodes visits them (try: body, handlers, else…).
_BLOCKS = ("body", "handlers", "orelse", "finalbody", "cases")


def _block_statements(node: ast.AST) -> Iterator[ast.stmt]:
    """The statements directly in ``node``'s blocks (except handlers and match cases opened)."""
    for name in _BLOCKS:
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
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    end = node.end_lineno or node.lineno
    first = node.body[0]
    if first.lineno <= node.lineno or end > len(lines):
        return None
    if any(line not in keep or line in touched for line in range(start, end + 1)):
        return None
    indent = lines[first.lineno - 1][: first.col_offset]
    if indent.strip() or not indent:
        return None
    header = lines[node.lineno - 1]
    if not re.match(rf"\s*(?:async\s+)?def\s+{re.escape(node.name)}\b", header):
        return None
    return first.lineno, end, indent


@dataclass(frozen=True, slots=True, kw_only=True)
class _LineMap:
    opcodes: list[_Opcode]
    p2a: tuple[int, ...]
    after_count: int

    def from_patched(self, line: int) -> int:
        if not self.p2a:
            return 1
        return self.p2a[max(0, min(line, len(self.p2a)) - 1)]

    def patched_range(self, start: int, end: int) -> tuple[int, int]:
        first = self.from_patched(start)
        return (first, max(first, self.from_patched(end)))

    def from_before(self, line: int) -> int:
        for tag, i1, i2, j1, j2 in self.opcodes:
            if i1 <= line - 1 < i2:
                if tag == "equal":
                    return j1 + (line - i1)
                return max(1, min(j1 + 1 if j2 > j1 else j1, max(self.after_count, 1)))
        return max(1, self.after_count)

    def before_range(self, start: int, end: int) -> tuple[int, int]:
        first = self.from_before(start)
        return (first, max(first, self.from_before(end)))


# ============================================================================ extraction


@dataclass(frozen=True, slots=True, kw_only=True)
class _Def:
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
    def key(self) -> _DefKey:
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
class _Stmt:
    node: Any
    norm: str
    start: int
    end: int
    trivial: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class _Import:
    stmt: _Stmt
    pairs: tuple[tuple[str, str], ...]  # (bound name, qualname it points at)


@dataclass(slots=True)
class _Facts:
    """Everything one text defines, keyed for matching against the other text."""

    parse: _Parse
    defs: dict[_DefKey, _Def] = field(default_factory=dict)
    fields: dict[tuple[tuple[str, ...], str], list[_Stmt]] = field(
        default_factory=lambda: defaultdict(list)
    )
    imports: dict[tuple[str, ...], list[_Import]] = field(default_factory=lambda: defaultdict(list))
    residual: dict[tuple[str, ...], list[_Stmt]] = field(default_factory=lambda: defaultdict(list))
    scopes: set[tuple[str, ...]] = field(default_factory=lambda: {()})
    ast_defs: dict[tuple[int, str], ast.AST] = field(default_factory=dict)
    ast_walked: set[int] = field(default_factory=set)
    counts: Counter[tuple[str, tuple[str, ...], str]] = field(default_factory=Counter)


def _extract(parsed: _Parse, package: str) -> _Facts:
    facts = _Facts(parse=parsed)
    _scan(facts, parsed.module.children, (), "module", package)
    return facts


def _statements(children: Iterable[Any]) -> Iterator[tuple[str, Any]]:
    """Statement-level nodes of a body, flattened through compound statements."""
    for child in children:
        kind = child.type
        if kind in _SKIP_LEAVES or (kind == "operator" and child.value == ";"):
            continue
        if kind in ("simple_stmt", "suite"):
            yield from _statements(child.children)
        elif kind in ("funcdef", "classdef", "decorated"):
            yield "def", child
        elif kind in ("async_stmt", "async_funcdef"):
            inner = child.children[1] if len(child.children) > 1 else None
            if inner is not None and inner.type == "funcdef":
                yield "def", child
            else:
                yield "header", child
                yield from _statements(_bodies(inner) if inner is not None else ())
        elif kind in _COMPOUND:
            yield "header", child
            yield from _statements(_bodies(child))
        else:
            yield "small", child


def _bodies(node: Any) -> list[Any]:
    return [c for c in getattr(node, "children", ()) if c.type in ("suite", "simple_stmt")]


def _header_norm(node: Any) -> str:
    parts: list[str] = []
    for child in node.children:
        if child.type in ("suite", "simple_stmt"):
            continue
        parts.append(_header_norm(child) if child.type in _COMPOUND else _norm(child))
    return " ".join(parts)


def _scan(
    facts: _Facts, children: Iterable[Any], path: tuple[str, ...], mode: str, package: str
) -> None:
    for kind, node in _statements(children):
        if kind == "def":
            _scan_def(facts, node, path, mode, package)
        elif mode == "function":
            continue  # a function body is compared through ast; only nested defs matter here
        elif kind == "header":
            line = node.start_pos[0]
            facts.residual[path].append(
                _Stmt(node=node, norm=_header_norm(node), start=line, end=line)
            )
        else:
            _scan_small(facts, node, path, package)


def _scan_def(facts: _Facts, node: Any, path: tuple[str, ...], mode: str, package: str) -> None:
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
        facts.residual[path].append(_stmt(node))
        return
    kind = "class" if core.type == "classdef" else "def"
    name = core.children[1].value
    occurrence = facts.counts[(kind, path, name)]
    facts.counts[(kind, path, name)] += 1
    definition = _Def(
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
    facts.defs[definition.key] = definition
    inner = definition.inner
    if kind == "class":
        facts.scopes.add(inner)
    _scan(facts, _bodies(core), inner, "class" if kind == "class" else "function", package)


def _stmt(node: Any) -> _Stmt:
    return _Stmt(
        node=node,
        norm=_norm(node),
        start=node.start_pos[0],
        end=_end_line(node),
        trivial=node.type in ("string", "strings", "fstring")
        or (node.type in ("keyword", "operator") and node.value in ("pass", "...")),
    )


def _scan_small(facts: _Facts, node: Any, path: tuple[str, ...], package: str) -> None:
    stmt = _stmt(node)
    if node.type in ("import_name", "import_from"):
        pairs = _import_pairs(node, package)
        if pairs is not None:
            facts.imports[path].append(_Import(stmt=stmt, pairs=pairs))
            return
    elif node.type == "expr_stmt":
        names = _assigned_names(node)
        if names:
            for name in names:
                facts.fields[(path, name)].append(stmt)
            return
    facts.residual[path].append(stmt)


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


def _package_of(module: str, file: str) -> str:
    if file.replace("\\", "/").rsplit("/", 1)[-1] == "__init__.py":
        return module
    return module.rpartition(".")[0]


def _import_pairs(node: Any, package: str) -> tuple[tuple[str, str], ...] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(node.get_code(include_prefix=False))
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


# ============================================================================ function facts


@dataclass(frozen=True, slots=True, kw_only=True)
class _Signature:
    text: str
    key: tuple[str, ...]
    params: tuple[Param, ...] | None
    details: tuple[tuple[str, str, str], ...]  # (name, annotation dump, default dump)
    returns: str
    decorators: tuple[str, ...]
    is_async: bool
    node: ast.AST | None


def _ast_of(facts: _Facts, definition: _Def) -> ast.AST | None:
    name_line = definition.core.children[1].start_pos[0]
    node = _ast_def(facts, name_line, definition.name)
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
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None
    body = tree.body[0]
    if indent and isinstance(body, ast.If):
        body = body.body[0]
    return body if isinstance(body, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else None


def _ast_def(facts: _Facts, line: int, name: str) -> ast.AST | None:
    """The ``ast`` definition named ``name`` on ``line``; top-level statements indexed lazily."""
    tree = facts.parse.tree
    if tree is None:
        return None
    starts = [stmt.lineno for stmt in tree.body]
    index = bisect.bisect_right(starts, line) - 1
    # a decorated definition starts before its ``def`` line, so look one statement further too
    for candidate in (index, index + 1):
        if 0 <= candidate < len(tree.body) and candidate not in facts.ast_walked:
            facts.ast_walked.add(candidate)
            for node in _all_definitions(tree.body[candidate]):
                facts.ast_defs[(node.lineno, node.name)] = node
    return facts.ast_defs.get((line, name))


def _all_definitions(
    stmt: ast.stmt,
) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    """``stmt`` and every definition inside it, in ``ast.walk`` order, through statement blocks
    only (a definition is a statement; walking every expression cost a big class milliseconds)."""
    queue: deque[ast.AST] = deque([stmt])
    while queue:
        node = queue.popleft()
        if isinstance(node, _DEFINITIONS):
            yield node
        for name in _BLOCKS:
            queue.extend(getattr(node, name, ()))


def _signature(facts: _Facts, definition: _Def) -> _Signature:
    decorators = tuple(_compact(d) for d in definition.decorators)
    decorator_norms = tuple(_norm(d) for d in definition.decorators)
    node = _ast_of(facts, definition)
    if definition.kind == "class":
        return _class_signature(definition, node, decorators, decorator_norms)
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        header = " ".join(_norm(c) for c in definition.core.children[:-1])
        text = " ".join("".join(c.get_code() for c in definition.core.children[:-1]).split()) + ":"
        prefix = "async " if definition.is_async else ""
        return _Signature(
            text=_clip(prefix + text, _SIG_CHARS),
            key=(header, str(definition.is_async), *decorator_norms),
            params=None,
            details=(),
            returns="",
            decorators=decorators,
            is_async=definition.is_async,
            node=None,
        )
    params, details = _params(node.args)
    returns = ast.dump(node.returns) if node.returns is not None else ""
    prefix = "async def" if definition.is_async else "def"
    text = f"{prefix} {definition.name}({ast.unparse(node.args)})"
    if node.returns is not None:
        text += f" -> {ast.unparse(node.returns)}"
    return _Signature(
        text=_clip(text + ":", _SIG_CHARS),
        key=(ast.dump(node.args), returns, str(definition.is_async), *decorator_norms),
        params=params,
        details=details,
        returns=returns,
        decorators=decorators,
        is_async=definition.is_async,
        node=node,
    )


def _class_signature(
    definition: _Def, node: ast.AST | None, decorators: tuple[str, ...], norms: tuple[str, ...]
) -> _Signature:
    if isinstance(node, ast.ClassDef):
        args = [ast.unparse(b) for b in node.bases] + [ast.unparse(k) for k in node.keywords]
        text = (
            f"class {definition.name}({', '.join(args)}):" if args else f"class {definition.name}:"
        )
        bases = "|".join(ast.dump(b) for b in node.bases)
        keywords = "|".join(ast.dump(k) for k in node.keywords)
        return _Signature(
            text=_clip(text, _SIG_CHARS),
            key=(bases, keywords, *norms),
            params=None,
            details=(),
            returns="",
            decorators=decorators,
            is_async=False,
            node=node,
        )
    header = [c for c in definition.core.children if c.type != "suite"]
    text = " ".join("".join(c.get_code() for c in header).split())
    return _Signature(
        text=_clip(text, _SIG_CHARS),
        key=(" ".join(_norm(c) for c in header), "", *norms),
        params=None,
        details=(),
        returns="",
        decorators=decorators,
        is_async=False,
        node=None,
    )


def _params(args: ast.arguments) -> tuple[tuple[Param, ...], tuple[tuple[str, str, str], ...]]:
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults.extend(args.defaults)
    params: list[Param] = []
    details: list[tuple[str, str, str]] = []

    def add(arg: ast.arg, kind: ParamKind, default: ast.expr | None) -> None:
        params.append(Param(name=arg.arg, kind=kind, has_default=default is not None))
        details.append(
            (
                arg.arg,
                ast.dump(arg.annotation) if arg.annotation is not None else "",
                ast.dump(default) if default is not None else "",
            )
        )

    for index, arg in enumerate(positional):
        kind = (
            ParamKind.POSITIONAL_ONLY
            if index < len(args.posonlyargs)
            else ParamKind.POSITIONAL_OR_KEYWORD
        )
        add(arg, kind, defaults[index])
    if args.vararg is not None:
        add(args.vararg, ParamKind.VAR_POSITIONAL, None)
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        add(arg, ParamKind.KEYWORD_ONLY, default)
    if args.kwarg is not None:
        add(args.kwarg, ParamKind.VAR_KEYWORD, None)
    return tuple(params), tuple(details)


def _signature_what(old: _Signature, new: _Signature) -> str:
    parts: list[str] = []
    if old.params is not None and new.params is not None:
        parts.extend(_params_what(old, new))
    if old.returns != new.returns:
        parts.append("return annotation changed")
    if old.is_async != new.is_async:
        parts.append("now async" if new.is_async else "no longer async")
    parts.extend(_decorators_what(old.decorators, new.decorators))
    return _clip(", ".join(parts) or "signature changed", _WHAT_CHARS)


def _params_what(old: _Signature, new: _Signature) -> list[str]:
    assert old.params is not None and new.params is not None
    parts: list[str] = []
    old_names = [p.name for p in old.params]
    new_names = [p.name for p in new.params]
    added = [n for n in new_names if n not in old_names]
    removed = [n for n in old_names if n not in new_names]
    if (
        len(added) == 1
        and len(removed) == 1
        and old_names.index(removed[0]) == new_names.index(added[0])
    ):
        parts.append(f"renamed param {removed[0]} to {added[0]}")
    else:
        if added:
            parts.append(f"added param{'s' if len(added) > 1 else ''} {', '.join(added)}")
        if removed:
            parts.append(f"removed param{'s' if len(removed) > 1 else ''} {', '.join(removed)}")
    old_by_name = {p.name: p for p in old.params}
    old_details = {d[0]: d for d in old.details}
    annotations_changed = False
    for param, detail in zip(new.params, new.details, strict=True):
        before = old_by_name.get(param.name)
        if before is None:
            continue
        if before.has_default and not param.has_default:
            parts.append(f"param {param.name} now required")
        elif param.has_default and not before.has_default:
            parts.append(f"param {param.name} now optional")
        elif param.has_default and old_details[param.name][2] != detail[2]:
            parts.append(f"default of {param.name} changed")
        if before.kind != param.kind:
            parts.append(f"param {param.name} now {param.kind}")
        annotations_changed |= old_details[param.name][1] != detail[1]
    common_old = [n for n in old_names if n in new_names]
    common_new = [n for n in new_names if n in old_names]
    if common_old != common_new:
        parts.append("params reordered")
    if annotations_changed:
        parts.append("param annotations changed")
    return parts


def _decorators_what(old: tuple[str, ...], new: tuple[str, ...]) -> list[str]:
    if old == new:
        return []
    added = [d for d in new if d not in old]
    removed = [d for d in old if d not in new]
    parts = [f"added decorator {d}" for d in added] + [f"removed decorator {d}" for d in removed]
    return parts or ["decorators reordered"]


def _class_what(old: _Signature, new: _Signature) -> str:
    parts: list[str] = []
    if old.key[0] != new.key[0]:
        parts.append("bases changed")
    if old.key[1] != new.key[1]:
        parts.append("class keywords changed")
    parts.extend(_decorators_what(old.decorators, new.decorators))
    return _clip(", ".join(parts) or "declaration changed", _WHAT_CHARS)


# ============================================================================ comparison


@dataclass(frozen=True, slots=True, kw_only=True)
class _Context:
    file: str
    module: str
    old: _Facts
    new: _Facts
    lines: _LineMap
    # The baseline and patched lines, when both texts parse with ``ast`` (else None).
    texts: tuple[list[str], list[str]] | None = None

    def qual(self, parts: Iterable[str]) -> QualName:
        return QualName(".".join(p for p in (self.module, *parts) if p))

    def change(self, **values: Any) -> Change:
        return Change(file=self.file, **values)


def _tainted(facts: _Facts) -> tuple[set[_DefKey], set[tuple[str, ...]]]:
    """Definitions and scopes that hold a syntax error the settling could not remove."""
    keys: set[_DefKey] = set()
    scopes: set[tuple[str, ...]] = set()
    for line in facts.parse.errors:
        holders = [d for d in facts.defs.values() if d.start <= line <= d.end]
        if holders:
            innermost = max(holders, key=lambda d: (len(d.path), d.start))
            keys.add(innermost.key)
            if innermost.kind == "class":
                scopes.add(innermost.inner)
        else:
            scopes.add(())
    return keys, scopes


def _under(path: tuple[str, ...], gone: set[tuple[str, ...]]) -> bool:
    return any(path[:i] in gone for i in range(1, len(path) + 1))


def _compare_defs(ctx: _Context) -> Iterator[Change]:
    old, new = ctx.old, ctx.new
    old_taint, _ = _tainted(old)
    new_taint, _ = _tainted(new)
    gone: set[tuple[str, ...]] = set()
    for key in sorted(set(old.defs) | set(new.defs), key=lambda k: (len(k[1]), k)):
        if _under(key[1], gone):
            continue
        before, after = old.defs.get(key), new.defs.get(key)
        if before is None and after is not None:
            gone.add(after.inner)
            yield _added(ctx, after)
        elif after is None and before is not None:
            gone.add(before.inner)
            yield _deleted(ctx, before)
        elif before is not None and after is not None:
            if key in old_taint or key in new_taint:
                old_decorators = [_norm(d) for d in before.decorators]
                new_decorators = [_norm(d) for d in after.decorators]
                if _norm(before.core) != _norm(after.core) or old_decorators != new_decorators:
                    yield _incomplete_def(ctx, after)
                continue
            if _same_source(ctx, before, after):
                # Identical lines give identical ast nodes, so neither the signature nor the
                # body nor the declaration changed; skipping them saves a big class's methods.
                continue
            yield from _modified(ctx, before, after)


def _same_source(ctx: _Context, before: _Def, after: _Def) -> bool:
    """Whether both definitions span the very same lines of source (decorators included)."""
    if ctx.texts is None:
        return False  # a text that does not parse reads definitions another way; compare them
    old_lines, new_lines = ctx.texts
    if before.end - before.start != after.end - after.start:
        return False
    return old_lines[before.start - 1 : before.end] == new_lines[after.start - 1 : after.end]


def _noun(definition: _Def) -> str:
    if definition.kind == "class":
        return "class"
    return "method" if definition.in_class else "function"


def _added(ctx: _Context, definition: _Def) -> Change:
    sig = _signature(ctx.new, definition)
    return ctx.change(
        change_type=ChangeType.ADD,
        entity=ctx.qual(definition.inner),
        line_range=ctx.lines.patched_range(definition.start, definition.end),
        after_sig=sig.text,
        after_params=sig.params,
        binds_first_param=_binds(definition),
        what=f"added {_noun(definition)} {definition.name}",
    )


def _deleted(ctx: _Context, definition: _Def) -> Change:
    sig = _signature(ctx.old, definition)
    entity = ctx.qual(definition.inner)
    return ctx.change(
        change_type=ChangeType.DELETE,
        entity=entity,
        line_range=(definition.start, definition.end),
        before_sig=sig.text,
        before_params=sig.params,
        binds_first_param=_binds(definition),
        removed_names=(entity,),
        what=f"removed {_noun(definition)} {definition.name}",
    )


def _binds(definition: _Def) -> bool:
    return definition.kind == "def" and definition.in_class and not definition.is_static


def _incomplete_def(ctx: _Context, definition: _Def) -> Change:
    return ctx.change(
        change_type=ChangeType.INCOMPLETE,
        entity=ctx.qual(definition.inner),
        line_range=ctx.lines.patched_range(definition.start, definition.end),
        what="does not parse yet",
    )


def _init_params(facts: _Facts, cls: _Def) -> tuple[Param, ...] | None:
    init = facts.defs.get(("def", cls.inner, "__init__", 0))
    if init is not None:
        return _signature(facts, init).params
    generated = _generated_init(facts, cls)
    return generated.params if generated is not None else None


def _generated_init_change(ctx: _Context, before: _Def, after: _Def) -> Iterator[Change]:
    """A dataclass whose fields changed has a new generated ``__init__``: a constructor change."""
    old_init = _generated_init(ctx.old, before)
    new_init = _generated_init(ctx.new, after)
    if old_init is None or new_init is None or old_init.params == new_init.params:
        return
    node = new_init.node
    assert isinstance(node, ast.ClassDef)
    fields: list[ast.stmt] = [s for s in node.body if isinstance(s, ast.AnnAssign)] or [node]
    start = min(stmt.lineno for stmt in fields)
    end = max(stmt.end_lineno or stmt.lineno for stmt in fields)
    yield ctx.change(
        change_type=ChangeType.CONSTRUCTOR,
        entity=ctx.qual((*after.inner, "__init__")),
        line_range=ctx.lines.patched_range(start, end),
        before_sig=old_init.text,
        after_sig=new_init.text,
        before_params=old_init.params,
        after_params=new_init.params,
        binds_first_param=True,
        what=_clip(", ".join(_params_what(old_init, new_init)) or "fields changed", _WHAT_CHARS),
    )


def _flag(call: ast.Call, name: str) -> bool | None:
    for keyword in call.keywords:
        if keyword.arg == name and isinstance(keyword.value, ast.Constant):
            return bool(keyword.value.value)
    return None


def _generated_init(facts: _Facts, cls: _Def) -> _Signature | None:
    """The ``__init__`` a dataclass-style decorator writes from the class's own fields.

    Only for a class without bases (inherited fields would come first and are not visible here)
    and without its own ``__init__``.
    """
    if cls.kind != "class" or ("def", cls.inner, "__init__", 0) in facts.defs:
        return None
    node = _ast_of(facts, cls)
    if not isinstance(node, ast.ClassDef) or node.bases:
        return None
    decorator = next(
        (
            d
            for d in node.decorator_list
            if ast.unparse(d.func if isinstance(d, ast.Call) else d) in _DATACLASS_DECORATORS
        ),
        None,
    )
    if decorator is None:
        return None
    if isinstance(decorator, ast.Call) and _flag(decorator, "init") is False:
        return None
    all_kw_only = isinstance(decorator, ast.Call) and bool(_flag(decorator, "kw_only"))
    positional: list[tuple[Param, tuple[str, str, str], str]] = []
    keyword_only: list[tuple[Param, tuple[str, str, str], str]] = []
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        annotation = ast.unparse(stmt.annotation)
        if "ClassVar" in annotation:
            continue
        if annotation.rsplit(".", 1)[-1] == "KW_ONLY":
            all_kw_only = True
            continue
        value = stmt.value
        has_default = value is not None
        kw_only = all_kw_only
        if isinstance(value, ast.Call) and ast.unparse(value.func).rsplit(".", 1)[-1] in (
            "field",
            "attrib",
            "ib",
        ):
            if _flag(value, "init") is False:
                continue
            kw_only = bool(_flag(value, "kw_only")) or kw_only
            given = {k.arg for k in value.keywords}
            has_default = bool(given & {"default", "default_factory", "factory"})
        name = stmt.target.id
        kind = ParamKind.KEYWORD_ONLY if kw_only else ParamKind.POSITIONAL_OR_KEYWORD
        entry = (
            Param(name=name, kind=kind, has_default=has_default),
            (name, ast.dump(stmt.annotation), ast.dump(value) if value is not None else ""),
            f"{name}: {annotation}" + (" = ..." if has_default else ""),
        )
        (keyword_only if kw_only else positional).append(entry)
    rendered = ["self", *(e[2] for e in positional)]
    if keyword_only:
        rendered += ["*", *(e[2] for e in keyword_only)]
    entries = [*positional, *keyword_only]
    return _Signature(
        text=_clip(f"def __init__({', '.join(rendered)}):", _SIG_CHARS),
        key=tuple(rendered),
        params=(Param(name="self"), *(e[0] for e in entries)),
        details=(("self", "", ""), *(e[1] for e in entries)),
        returns="",
        decorators=(),
        is_async=False,
        node=node,
    )


def _modified(ctx: _Context, before: _Def, after: _Def) -> Iterator[Change]:
    old_sig = _signature(ctx.old, before)
    new_sig = _signature(ctx.new, after)
    entity = ctx.qual(after.inner)
    if after.kind == "class":
        if old_sig.key != new_sig.key:
            yield ctx.change(
                change_type=ChangeType.CLASS_DECL,
                entity=entity,
                line_range=ctx.lines.patched_range(after.start, after.header_end),
                before_sig=old_sig.text,
                after_sig=new_sig.text,
                before_params=_init_params(ctx.old, before),
                after_params=_init_params(ctx.new, after),
                binds_first_param=True,
                what=_class_what(old_sig, new_sig),
            )
        yield from _generated_init_change(ctx, before, after)
        return
    span = ctx.lines.patched_range(after.start, after.end)
    common = {
        "entity": entity,
        "line_range": span,
        "before_sig": old_sig.text,
        "after_sig": new_sig.text,
        "before_params": old_sig.params,
        "after_params": new_sig.params,
        "binds_first_param": _binds(after),
    }
    if old_sig.key != new_sig.key:
        params_differ = old_sig.key[0] != new_sig.key[0] or old_sig.params != new_sig.params
        constructor = after.name == "__init__" and after.in_class and params_differ
        yield ctx.change(
            change_type=ChangeType.CONSTRUCTOR if constructor else ChangeType.METHOD_SIGNATURE,
            what=_signature_what(old_sig, new_sig),
            **common,
        )
        return
    changed, escapes, reason = _body_change(before, after, old_sig.node, new_sig.node)
    if changed:
        yield ctx.change(
            change_type=ChangeType.METHOD_BODY,
            what="body changed",
            escapes=escapes,
            escape_reason=reason,
            **common,
        )


def _body_change(
    before: _Def, after: _Def, old_node: ast.AST | None, new_node: ast.AST | None
) -> tuple[bool, bool, str]:
    if isinstance(old_node, FunctionNode) and isinstance(new_node, FunctionNode):
        diff = compare_bodies(before=old_node, after=new_node)
        return diff.changed, diff.escapes, diff.reason
    if _body_norm(before) == _body_norm(after):
        return False, False, ""
    return True, True, _UNPARSED_BODY


def _body_norm(definition: _Def) -> tuple[str, ...]:
    return tuple(
        _norm(node) for kind, node in _statements(_bodies(definition.core)) if kind != "def"
    )


# ---------------------------------------------------------------------------- fields


def _field_sig(stmts: list[_Stmt]) -> str:
    return _clip(_compact(stmts[-1].node), _SIG_CHARS) if stmts else ""


def _field_parts(stmt: _Stmt) -> tuple[str, str]:
    """(annotation, value) of an assignment statement, normalised."""
    children = stmt.node.children
    if len(children) > 1 and children[1].type == "annassign":
        ann = children[1].children
        return _norm(ann[1]), " ".join(_norm(c) for c in ann[3:])
    if len(children) > 1 and children[1].type == "operator" and children[1].value == "=":
        return "", _norm(children[-1])
    return "", " ".join(_norm(c) for c in children[1:])


def _compare_fields(ctx: _Context) -> Iterator[Change]:
    old, new = ctx.old, ctx.new
    _, old_scopes = _tainted(old)
    _, new_scopes = _tainted(new)
    gone = _gone_paths(ctx)
    for path, name in sorted(set(old.fields) | set(new.fields)):
        if _under(path, gone) or path in old_scopes or path in new_scopes:
            continue
        if not _scope_exists(ctx, path):
            continue
        before, after = old.fields.get((path, name), []), new.fields.get((path, name), [])
        entity = ctx.qual((*path, name))
        if not before:
            yield ctx.change(
                change_type=ChangeType.ADD,
                entity=entity,
                line_range=ctx.lines.patched_range(after[0].start, after[-1].end),
                after_sig=_field_sig(after),
                what=f"added field {name}",
            )
        elif not after:
            yield ctx.change(
                change_type=ChangeType.FIELD,
                entity=entity,
                line_range=(before[0].start, before[-1].end),
                before_sig=_field_sig(before),
                removed_names=(entity,),
                what=f"removed field {name}",
            )
        elif [s.norm for s in before] != [s.norm for s in after]:
            old_parts = [_field_parts(s) for s in before]
            new_parts = [_field_parts(s) for s in after]
            only_annotation = [p[1] for p in old_parts] == [p[1] for p in new_parts]
            changed = _changed_stmts(after, before) or after
            yield ctx.change(
                change_type=ChangeType.FIELD,
                entity=entity,
                line_range=ctx.lines.patched_range(
                    min(s.start for s in changed), max(s.end for s in changed)
                ),
                before_sig=_field_sig(before),
                after_sig=_field_sig(after),
                what="annotation changed" if only_annotation else "value changed",
            )


def _changed_stmts(left: list[_Stmt], right: list[_Stmt]) -> list[_Stmt]:
    remaining = Counter(s.norm for s in right)
    out: list[_Stmt] = []
    for stmt in left:
        if remaining[stmt.norm] > 0:
            remaining[stmt.norm] -= 1
        else:
            out.append(stmt)
    return out


def _gone_paths(ctx: _Context) -> set[tuple[str, ...]]:
    """Inner paths of definitions present in one text only (their contents are not compared)."""
    old_keys, new_keys = set(ctx.old.defs), set(ctx.new.defs)
    gone = {ctx.old.defs[k].inner for k in old_keys - new_keys}
    gone |= {ctx.new.defs[k].inner for k in new_keys - old_keys}
    return gone


def _scope_exists(ctx: _Context, path: tuple[str, ...]) -> bool:
    return path in ctx.old.scopes and path in ctx.new.scopes


# ---------------------------------------------------------------------------- imports


def _bound_names(facts: _Facts, path: tuple[str, ...]) -> set[str]:
    names = {d.name for d in facts.defs.values() if d.path == path}
    names.update(name for (p, name) in facts.fields if p == path)
    for imp in facts.imports.get(path, ()):
        names.update(local for local, _ in imp.pairs)
    return names


def _spell(local: str, target: str) -> str:
    """``pkg.auth.login as login``: what a removed import pointed at and the name it bound.

    The walk seeds on ``<module>.<bound name>`` (the text after `` as ``); readers that want the
    original definition take the text before it. A plain ``import os`` is just ``os``.
    """
    return target if local == target else f"{target} as {local}"


def _compare_imports(ctx: _Context) -> Iterator[Change]:
    old, new = ctx.old, ctx.new
    _, old_scopes = _tainted(old)
    _, new_scopes = _tainted(new)
    gone = _gone_paths(ctx)
    for path in sorted(set(old.imports) | set(new.imports)):
        if _under(path, gone) or path in old_scopes or path in new_scopes:
            continue
        if not _scope_exists(ctx, path):
            continue
        before = old.imports.get(path, [])
        after = new.imports.get(path, [])
        old_pairs = {pair for imp in before for pair in imp.pairs}
        new_pairs = {pair for imp in after for pair in imp.pairs}
        if old_pairs == new_pairs:
            continue
        added = new_pairs - old_pairs
        removed = old_pairs - new_pairs
        still_bound = _bound_names(new, path)
        removed_names = tuple(
            sorted({_spell(local, target) for local, target in removed if local not in still_bound})
        )
        touched_new = [imp.stmt for imp in after if set(imp.pairs) & added]
        if touched_new:
            span = ctx.lines.patched_range(
                min(s.start for s in touched_new), max(s.end for s in touched_new)
            )
        else:
            touched_old = [imp.stmt for imp in before if set(imp.pairs) & removed]
            span = ctx.lines.before_range(
                min(s.start for s in touched_old), max(s.end for s in touched_old)
            )
        parts: list[str] = []
        if removed:
            parts.append("removed import " + ", ".join(sorted({t for _, t in removed})))
        if added:
            parts.append("added import " + ", ".join(sorted({t for _, t in added})))
        yield ctx.change(
            change_type=ChangeType.IMPORT,
            entity=ctx.qual(path),
            line_range=span,
            removed_names=removed_names,
            what=_clip("; ".join(parts), _WHAT_CHARS),
        )


# ---------------------------------------------------------------------------- residual


def _compare_residual(ctx: _Context) -> Iterator[Change]:
    old, new = ctx.old, ctx.new
    _, old_scopes = _tainted(old)
    _, new_scopes = _tainted(new)
    gone = _gone_paths(ctx)
    for path in sorted(set(old.residual) | set(new.residual)):
        if _under(path, gone) or not _scope_exists(ctx, path):
            continue
        before = old.residual.get(path, [])
        after = new.residual.get(path, [])
        added = _changed_stmts(after, before)
        removed = _changed_stmts(before, after)
        if not added and not removed:
            continue
        entity = ctx.qual(path)
        if path in old_scopes or path in new_scopes:
            yield ctx.change(
                change_type=ChangeType.INCOMPLETE,
                entity=entity,
                line_range=_residual_span(ctx, added, removed),
                what="does not parse yet",
            )
            continue
        changed = (*added, *removed)
        trivial = all(s.trivial for s in changed)
        level = "module" if not path else "class"
        if not trivial:
            reason = f"{level}-level statement changed"
        elif all(s.node.type in ("string", "strings", "fstring") for s in changed):
            reason = DOCSTRING_ONLY
        else:
            reason = "only no-op statements changed"
        yield ctx.change(
            change_type=ChangeType.METHOD_BODY,
            entity=entity,
            line_range=_residual_span(ctx, added, removed),
            escapes=not trivial,
            escape_reason=reason,
            what=f"{level}-level code changed",
        )


def _residual_span(ctx: _Context, added: list[_Stmt], removed: list[_Stmt]) -> tuple[int, int]:
    if added:
        return ctx.lines.patched_range(min(s.start for s in added), max(s.end for s in added))
    return ctx.lines.before_range(min(s.start for s in removed), max(s.end for s in removed))


# ============================================================================ incomplete


def _incomplete_changes(ctx: _Context, settled: _Settled, after_lines: list[str]) -> list[Change]:
    """One ``incomplete`` change per enclosing definition of the reverted (unparsable) hunks."""
    spans: dict[QualName, tuple[int, int]] = {}
    sigs: dict[QualName, str] = {}
    for hunk in settled.hunks:
        if hunk.index not in settled.reverted:
            continue
        holder = _holder(ctx.new, hunk, after_lines)
        entity = ctx.qual(holder.inner) if holder is not None else ctx.qual(())
        if hunk.j2 > hunk.j1:
            span = (hunk.j1 + 1, hunk.j2)
        else:
            line = max(1, min(hunk.j1, len(after_lines)))
            span = (line, line)
        if entity in spans:
            old = spans[entity]
            span = (min(old[0], span[0]), max(old[1], span[1]))
        spans[entity] = span
        if holder is not None:
            sigs[entity] = _signature(ctx.new, holder).text
    return [
        ctx.change(
            change_type=ChangeType.INCOMPLETE,
            entity=entity,
            line_range=span,
            before_sig=sigs.get(entity, ""),
            what="does not parse yet",
        )
        for entity, span in spans.items()
    ]


def _holder(facts: _Facts, hunk: _Hunk, after_lines: list[str]) -> _Def | None:
    """The innermost definition around a reverted hunk, in the settled text's coordinates."""
    if hunk.p2 > hunk.p1:
        first, last = hunk.p1 + 1, hunk.p2
        indent: int | None = None
    else:
        first = last = max(1, hunk.p1)
        typed = [line for line in after_lines[hunk.j1 : hunk.j2] if line.strip()]
        indent = len(typed[0]) - len(typed[0].lstrip()) if typed else 0
    holders = [
        d
        for d in facts.defs.values()
        if d.start <= first and last <= d.end and (indent is None or d.col < indent)
    ]
    return max(holders, key=lambda d: (len(d.path), d.start)) if holders else None


# ============================================================================ capping


def _cap(changes: list[Change], limit: int) -> tuple[Change, ...]:
    capped = [_cap_entity(c) for c in changes]
    capped.sort(key=_sort_key)
    if len(capped) <= limit:
        return tuple(capped)
    kept = capped[:limit]
    for extra in capped[limit:]:
        same = [i for i, c in enumerate(kept) if c.change_type is extra.change_type]
        pool = same or list(range(len(kept)))
        target = min(pool, key=_distance_to(kept, extra))
        host = kept[target]
        kept[target] = replace(
            host,
            line_range=(
                min(host.line_range[0], extra.line_range[0]),
                max(host.line_range[1], extra.line_range[1]),
            ),
            removed_names=tuple(sorted({*host.removed_names, *extra.removed_names})),
        )
    kept.sort(key=_sort_key)
    logger.debug("folded %d changes beyond the cap of %d", len(capped) - limit, limit)
    return tuple(kept)


def _distance_to(kept: list[Change], extra: Change) -> Callable[[int], tuple[int, int]]:
    def distance(index: int) -> tuple[int, int]:
        return (abs(kept[index].line_range[0] - extra.line_range[0]), index)

    return distance


def _cap_entity(change: Change) -> Change:
    limit = config.MAX_ENTITY_CHARS
    if len(change.entity) <= limit and all(len(n) <= limit for n in change.removed_names):
        return change
    return replace(
        change,
        entity=QualName(change.entity[:limit]),
        removed_names=tuple(n[:limit] for n in change.removed_names),
    )


def _sort_key(change: Change) -> tuple[str, tuple[int, int], str, str]:
    return (change.file, change.line_range, change.entity, change.change_type.value)
