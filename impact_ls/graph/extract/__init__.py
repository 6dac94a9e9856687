"""Turn one file's text into ``FileFacts`` with a single walk over the stdlib ``ast``.

Contract: ``extract_facts`` never raises and never executes project code. Text that does not
parse goes to ``recover.py`` (parso error recovery), so a half-typed file still yields every
definition it can, with ``parse_error`` set. The walk keeps only small rows per node — no jedi,
no per-node objects beyond the facts themselves — so cold indexing stays within a small factor
of ``ast.parse`` alone.

The parts, in the order a newcomer would read them:

- ``walker.py``: the state of one walk, the traversal, scopes, and the facts it yields;
- ``definitions.py``: ``def``/``class`` (with ``pytest_items.py``: tests, fixtures, requests);
- ``bindings.py``: imports, assignments, ``__all__``, parameters;
- ``uses.py``: calls, attribute chains, dynamic references;
- ``implicit.py``: the calls syntax makes without a call (operators, ``with``, ``for``…);
- ``syntax.py`` and ``source_text.py``: reading values out of nodes and out of the text.
"""

from __future__ import annotations

import ast
import logging

from impact_ls.graph.extract import bindings, definitions, implicit, uses
from impact_ls.graph.extract.syntax import parse_quietly
from impact_ls.graph.extract.walker import Handler, Walker
from impact_ls.graph.facts import FileFacts, facts_to_bytes, gc_paused

logger = logging.getLogger(__name__)

# which module records what each node kind says; every other kind is walked through
_HANDLERS: dict[type, Handler] = {
    ast.FunctionDef: definitions.visit_def,
    ast.AsyncFunctionDef: definitions.visit_def,
    ast.ClassDef: definitions.visit_class,
    ast.Return: definitions.visit_return,
    ast.Yield: definitions.visit_yield,
    ast.YieldFrom: definitions.visit_yield,
    ast.Import: bindings.visit_import,
    ast.ImportFrom: bindings.visit_import_from,
    ast.If: bindings.visit_if,
    ast.Assign: bindings.visit_assign,
    ast.AnnAssign: bindings.visit_ann_assign,
    ast.AugAssign: bindings.visit_aug_assign,
    ast.Expr: bindings.visit_expr_stmt,
    ast.Global: bindings.visit_global,
    ast.Nonlocal: bindings.visit_global,
    ast.arg: bindings.visit_arg,
    ast.Lambda: definitions.visit_lambda,
    ast.ExceptHandler: bindings.visit_except,
    ast.Call: uses.visit_call,
    ast.Attribute: uses.visit_attribute,
    ast.BinOp: implicit.visit_binop,
    ast.Compare: implicit.visit_compare,
    ast.UnaryOp: implicit.visit_unary,
    ast.Subscript: implicit.visit_subscript,
    ast.With: implicit.visit_with,
    ast.AsyncWith: implicit.visit_with,
    ast.For: implicit.visit_for,
    ast.AsyncFor: implicit.visit_for,
    ast.comprehension: implicit.visit_comprehension,
    ast.FormattedValue: implicit.visit_formatted,
    ast.Raise: implicit.visit_raise,
}


def extract_facts(text: str, *, file: str, module: str, is_package: bool) -> FileFacts:
    """Extract the facts of one file; never raises, whatever ``text`` holds."""
    with gc_paused():
        walked = _walk(text, file=file, module=module, is_package=is_package)
        if isinstance(walked, FileFacts):
            return walked
        return walked.result(module=module, is_package=is_package, parse_error=None)


def extract_encoded(text: str, *, file: str, module: str, is_package: bool) -> bytes:
    """``facts_to_bytes(extract_facts(...))``, made without the call and access facts (what an
    extraction worker sends: it has no use for the facts themselves)."""
    with gc_paused():
        walked = _walk(text, file=file, module=module, is_package=is_package)
        if isinstance(walked, FileFacts):
            return facts_to_bytes(walked)
        return walked.encoded(module=module, is_package=is_package, parse_error=None)


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
    walker = Walker(text, file, _HANDLERS)
    walker.run(tree)
    return walker.result(module=module, is_package=is_package, parse_error=parse_error)


def _walk(text: str, *, file: str, module: str, is_package: bool) -> Walker | FileFacts:
    """The finished walk of ``text``, or the facts of a text that does not parse or walk."""
    try:
        tree = parse_quietly(text, file)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        from impact_ls.graph.recover import recover_facts  # parso only on the slow path

        try:
            return recover_facts(text, file=file, module=module, is_package=is_package, error=exc)
        except Exception as inner:  # the contract is "never raises": an empty module, logged
            logger.debug("%s: recovery failed: %r", file, inner)
            return FileFacts(file=file, module=module, is_package=is_package, parse_error=str(exc))
    walker = Walker(text, file, _HANDLERS)
    try:
        walker.run(tree)
    except RecursionError as exc:
        logger.debug("%s: tree too deep to walk: %s", file, exc)
        return FileFacts(
            file=file, module=module, is_package=is_package, parse_error=f"too deep: {exc}"
        )
    return walker


__all__ = ["extract_encoded", "extract_facts", "extract_from_tree", "parse_quietly"]
