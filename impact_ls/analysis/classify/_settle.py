"""Put the diff hunks a parse error points at back to their baseline text until it parses.

Private to ``analysis/classify/``; used by ``_ladder.py``. The edit is diffed line by line
(``opcodes``); ``settle`` reverts, one round at a time, the hunks that the parse errors point at,
and keeps the maps from the settled ("patched") text back to the current and baseline lines
(``LineMap``). ``check`` parses a text with ``ast`` and lists its error lines; a text whose edit
lies inside one definition is parsed there only (``_reparse.py``). Each reverted hunk becomes
one ``incomplete`` change in ``_ladder.py``.
"""

from __future__ import annotations

import ast
import logging
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from parso.grammar import load_grammar
from parso.utils import split_lines as parso_split_lines

from impact_ls.analysis.classify._reparse import reparse
from impact_ls.graph.extract import parse_quietly

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class Check:
    tree: ast.Module | None
    errors: tuple[int, ...]  # lines with syntax errors; empty when ``ast`` accepts the text


def parso(text: str) -> Any:
    """parso's error-recovering tree (its grammars are cached by parso itself)."""
    return load_grammar().parse(text)


def check(text: str, *, thorough: bool = True) -> Check:
    """Parsed with ``ast``; if that fails (and ``thorough``), add the error lines parso finds."""
    try:
        tree: ast.Module = parse_quietly(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        lines = {max(1, getattr(exc, "lineno", None) or 1)}
        if thorough:
            lines.update(_parso_error_lines(parso(text)))
        return Check(tree=None, errors=tuple(sorted(lines)))
    # parso flags some valid syntax it does not know (``match``); ast is the judge of validity
    return Check(tree=tree, errors=())


def _parso_error_lines(module: Any) -> set[int]:
    lines: set[int] = set()
    stack = [module]
    while stack:
        node = stack.pop()
        if node.type in ("error_node", "error_leaf"):
            lines.add(node.start_pos[0])
        stack.extend(getattr(node, "children", ()))
    return lines


# Characters ``str.splitlines`` breaks lines at and the tokenizer does not.
_NOT_BREAKS = re.compile("[\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def split_lines(text: str) -> list[str]:
    """Lines as the tokenizer counts them (form feeds and other odd breaks are not newlines)."""
    if _NOT_BREAKS.search(text) is None:
        # parso's merge loop costs a big module a millisecond per call for nothing
        return text.splitlines(keepends=True)
    lines: list[str] = parso_split_lines(text, keepends=True)
    return lines[:-1] if lines and not lines[-1] else lines


_Opcode = tuple[str, int, int, int, int]


def opcodes(before: list[str], after: list[str]) -> list[_Opcode]:
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
class Hunk:
    index: int
    i1: int
    i2: int
    j1: int
    j2: int
    p1: int  # 0-based start of the hunk in the patched text
    p2: int  # exclusive end


@dataclass(frozen=True, slots=True, kw_only=True)
class Settled:
    text: str
    check: Check
    p2a: tuple[int, ...]  # patched line (index + 1) → current-text line
    p2b: tuple[int | None, ...]
    hunks: tuple[Hunk, ...]
    reverted: frozenset[int]


def _assemble(
    opcodes: list[_Opcode], before: list[str], after: list[str], reverted: frozenset[int]
) -> tuple[list[str], list[int], list[int | None], list[Hunk]]:
    text: list[str] = []
    p2a: list[int] = []
    p2b: list[int | None] = []
    hunks: list[Hunk] = []
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
        hunks.append(Hunk(index=index, i1=i1, i2=i2, j1=j1, j2=j2, p1=start, p2=len(text)))
        index += 1
    return text, p2a, p2b, hunks


def settle(
    opcodes: list[_Opcode], before: list[str], after: list[str], before_check: Check
) -> Settled:
    """Put back to the baseline the hunks that parse errors point at until the text parses.

    An error that sits on an unchanged line which was already broken in the baseline is not the
    edit's fault and reverts nothing.
    """
    baseline_errors = set(before_check.errors)
    reverted: frozenset[int] = frozenset()
    while True:
        lines, p2a, p2b, hunks = _assemble(opcodes, before, after, reverted)
        text = "".join(lines)
        tree = reparse(before_check.tree, before, lines) if before_check.tree else None
        # ast names the first error only, which is enough one hunk at a time; parso's full list
        # is needed to tell the baseline's own errors apart
        checked = (
            Check(tree=tree, errors=())
            if tree is not None
            else check(text, thorough=bool(baseline_errors))
        )
        fresh = [
            line
            for line in checked.errors
            if not (line <= len(p2b) and p2b[line - 1] in baseline_errors)
        ]
        picked = _hunks_near(fresh, hunks, reverted) if fresh else set()
        if not picked:
            return Settled(
                text=text,
                check=checked,
                p2a=tuple(p2a),
                p2b=tuple(p2b),
                hunks=tuple(hunks),
                reverted=reverted,
            )
        reverted = reverted | picked


def _hunks_near(errors: list[int], hunks: list[Hunk], reverted: frozenset[int]) -> set[int]:
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


def hunk_lines(settled: Settled) -> tuple[set[int], set[int]]:
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


@dataclass(frozen=True, slots=True, kw_only=True)
class LineMap:
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
