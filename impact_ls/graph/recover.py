"""Facts from text that does not parse: repair what ``ast`` rejects, ask parso for the rest.

A half-typed file (``def login(self, user`` with no closing parenthesis yet) must still yield
every definition it can, or the graph would lose a whole module while the user types. Two passes:

1. Repair: blank the line ``ast`` complains about (or close an empty block with ``pass``) and
   parse again, a bounded number of times; the repaired tree goes through the normal extractor,
   so the intact parts keep their calls, imports and accesses at their original lines.
2. parso's error-recovering parser lists every ``def``/``class`` header, broken ones included;
   definitions the repair lost are added from it (name, parameters, decorators, span).

``parse_error`` always carries the original ``SyntaxError``. Never raises.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from impact_ls.graph.extract import extract_from_tree, parse_quietly
from impact_ls.graph.facts import DefFact, FileFacts
from impact_ls.model import NodeKind, Param, ParamKind, Span

logger = logging.getLogger(__name__)

MAX_REPAIRS = 50
_BLOCK_HEADER = re.compile(
    r"\s*(async\s+def|def|class|if|elif|else|for|while|with|try|except|finally|match|case)\b"
)
_INDENTED_BLOCK = re.compile(r"expected an indented block after .* on line (\d+)")


def recover_facts(
    text: str, *, file: str, module: str, is_package: bool, error: BaseException
) -> FileFacts:
    """Best-effort facts for ``text`` that ``ast`` rejected with ``error``; never raises."""
    message = _describe(error)
    try:
        facts = _repaired(text, file=file, module=module, is_package=is_package, error=message)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        logger.debug("%s: repair failed: %s", file, exc)
        facts = FileFacts(file=file, module=module, is_package=is_package, parse_error=message)
    try:
        extra = _parso_defs(text, file, facts)
    except Exception as exc:  # parso is a best-effort helper here; its failure must not spread
        logger.debug("%s: parso recovery failed: %s", file, exc)
        extra = []
    if extra:
        defs = sorted(
            [*facts.definitions, *extra], key=lambda d: (d.span.line, d.span.col, d.qualname)
        )
        facts = _replace_defs(facts, tuple(defs))
    return facts


def _describe(error: BaseException) -> str:
    if isinstance(error, SyntaxError):
        return f"{error.msg} (line {error.lineno})"
    return f"{type(error).__name__}: {error}"


def _replace_defs(facts: FileFacts, defs: tuple[DefFact, ...]) -> FileFacts:
    import dataclasses

    return dataclasses.replace(facts, definitions=defs)


def _repaired(text: str, *, file: str, module: str, is_package: bool, error: str) -> FileFacts:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for _ in range(MAX_REPAIRS):
        source = "\n".join(lines)
        try:
            tree = parse_quietly(source)
        except SyntaxError as exc:
            if not _repair(lines, exc):
                break
            continue
        return extract_from_tree(
            tree, source, file=file, module=module, is_package=is_package, parse_error=error
        )
    return FileFacts(file=file, module=module, is_package=is_package, parse_error=error)


def _repair(lines: list[str], exc: SyntaxError) -> bool:
    """Change one line so that parsing gets further; False when nothing more can be done."""
    msg = exc.msg or ""
    block = _INDENTED_BLOCK.search(msg)
    if block is not None:
        header = int(block.group(1)) - 1
        if 0 <= header < len(lines) and not lines[header].rstrip().endswith(" pass"):
            lines[header] = lines[header].rstrip() + " pass"
            return True
    lineno = (exc.lineno or 0) - 1
    if not 0 <= lineno < len(lines):
        lineno = len(lines) - 1
    while lineno >= 0 and not lines[lineno].strip():
        # the error points at a blank line (end of file inside a bracket): blame the one above
        lineno -= 1
    if lineno < 0:
        return False
    _blank(lines, lineno)
    return True


def _blank(lines: list[str], lineno: int) -> None:
    """Blank a line; a broken block header takes its indented body with it."""
    line = lines[lineno]
    lines[lineno] = ""
    if not _BLOCK_HEADER.match(line):
        return
    indent = len(line) - len(line.lstrip())
    for i in range(lineno + 1, len(lines)):
        body = lines[i]
        if not body.strip():
            continue
        if len(body) - len(body.lstrip()) <= indent:
            break
        lines[i] = ""


def _parso_defs(text: str, file: str, facts: FileFacts) -> list[DefFact]:
    import parso

    known = {d.qualname for d in facts.definitions}
    tree = parso.parse(text, error_recovery=True)  # type: ignore[no-untyped-call]
    out: list[DefFact] = []
    _walk(tree, "", False, known, out)
    return out


def _walk(node: Any, parent: str, in_class: bool, known: set[str], out: list[DefFact]) -> None:
    for child in getattr(node, "children", ()):
        kind = child.type
        header = _header_of(child)
        if header is not None:
            keyword, name_leaf, params_node = header
            qual = f"{parent}.{name_leaf.value}" if parent else name_leaf.value
            is_class = keyword == "class"
            if qual not in known:
                known.add(qual)
                out.append(
                    _def_fact(
                        child,
                        qual,
                        is_class=is_class,
                        in_class=in_class,
                        name_leaf=name_leaf,
                        params_node=params_node,
                    )
                )
            _walk(child, qual, is_class, known, out)
            continue
        if kind in ("decorated", "async_stmt", "async_funcdef", "suite", "error_node") or (
            kind in ("if_stmt", "try_stmt", "with_stmt", "for_stmt", "while_stmt")
        ):
            _walk(child, parent, in_class, known, out)


def _header_of(node: Any) -> tuple[str, Any, Any] | None:
    """``(keyword, name leaf, parameters node)`` when ``node`` starts a def/class (even broken)."""
    children = getattr(node, "children", None)
    if not children:
        return None
    if node.type in ("funcdef", "classdef"):
        name = children[1]
        params = children[2] if node.type == "funcdef" and len(children) > 2 else None
        return ("def" if node.type == "funcdef" else "class"), name, params
    if node.type == "error_node":
        first = children[0]
        if first.type == "keyword" and first.value in ("def", "class") and len(children) > 1:
            name = children[1]
            if name.type == "name":
                params = None
                if first.value == "def" and len(children) > 3 and children[2].value == "(":
                    params = children[3]
                return first.value, name, params
    return None


def _def_fact(
    node: Any, qual: str, *, is_class: bool, in_class: bool, name_leaf: Any, params_node: Any
) -> DefFact:
    start = node.start_pos
    end = node.end_pos
    name_line, name_col = name_leaf.start_pos
    kind = NodeKind.CLASS if is_class else (NodeKind.METHOD if in_class else NodeKind.FUNCTION)
    params = () if is_class else _params(params_node)
    header_code = node.get_code().strip().split("\n", 1)[0]
    return DefFact(
        qualname=qual,
        kind=kind,
        span=Span(line=start[0], col=start[1], end_line=end[0], end_col=end[1]),
        name_span=Span(
            line=name_line,
            col=name_col,
            end_line=name_line,
            end_col=name_col + len(name_leaf.value),
        ),
        in_class=in_class,
        signature=" ".join(header_code.split())[:400],
        params=params,
    )


def _params(node: Any) -> tuple[Param, ...]:
    """Parameters from a parso ``parameters``/``typedargslist`` node, as far as they parse."""
    if node is None:
        return ()
    out: list[Param] = []
    kind = ParamKind.POSITIONAL_OR_KEYWORD
    star_seen = False
    leaves = []
    stack = [node]
    while stack:
        cur = stack.pop()
        if hasattr(cur, "children"):
            if cur.type == "param" or cur.type in ("tfpdef",):
                leaves.append(cur)
                continue
            stack.extend(reversed(cur.children))
        else:
            leaves.append(cur)
    pending_default = False
    for item in leaves:
        if getattr(item, "type", "") == "param":
            code = item.get_code().strip().rstrip(",").strip()
            if code.startswith("**"):
                out.append(Param(name=code[2:].split(":")[0].strip(), kind=ParamKind.VAR_KEYWORD))
                continue
            if code.startswith("*"):
                name = code[1:].split(":")[0].strip()
                star_seen = True
                if name:
                    out.append(Param(name=name, kind=ParamKind.VAR_POSITIONAL))
                continue
            if code == "/":
                out = [
                    Param(name=p.name, kind=ParamKind.POSITIONAL_ONLY, has_default=p.has_default)
                    for p in out
                ]
                continue
            name = code.split("=")[0].split(":")[0].strip()
            if not name.isidentifier():
                continue
            kind = ParamKind.KEYWORD_ONLY if star_seen else ParamKind.POSITIONAL_OR_KEYWORD
            out.append(Param(name=name, kind=kind, has_default="=" in code))
        elif getattr(item, "type", "") == "name":
            # a bare name in a broken list (``def f(self, user`` parses as names and commas)
            if pending_default:
                pending_default = False
                continue
            kind = ParamKind.KEYWORD_ONLY if star_seen else ParamKind.POSITIONAL_OR_KEYWORD
            if item.value.isidentifier() and not any(p.name == item.value for p in out):
                out.append(Param(name=item.value, kind=kind))
        elif getattr(item, "value", "") == "=":
            pending_default = True
            if out:
                last = out[-1]
                out[-1] = Param(name=last.name, kind=last.kind, has_default=True)
        elif getattr(item, "value", "") == "*":
            star_seen = True
    return tuple(out)
