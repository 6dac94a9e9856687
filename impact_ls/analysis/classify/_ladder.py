"""The precedence ladder: match baseline and current definitions, one atomic change each.

The contract is in the package docstring (``analysis/classify/__init__.py``).
"""

from __future__ import annotations

import ast
import functools
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from impact_ls import config
from impact_ls.analysis.classify._escape import DOCSTRING_ONLY, FunctionNode, compare_bodies
from impact_ls.analysis.classify._outline import (
    Definition,
    DefinitionKey,
    LeafFunction,
    MethodKey,
    Outline,
    Parsed,
    Skeleton,
    Statement,
    ast_of,
    bodies,
    compact,
    leaf_functions,
    norm,
    outline_of,
    package_of,
    skeleton,
    statements,
    touched_bindings,
    touched_statements,
    untouched_methods,
)
from impact_ls.analysis.classify._settle import (
    Check,
    Hunk,
    LineMap,
    Settled,
    check,
    hunk_lines,
    opcodes,
    settle,
    split_lines,
)
from impact_ls.analysis.classify._shape import (
    bases_of,
    call_shape,
    export_lines,
    instance_attributes,
    method_spans,
    own_names,
    serves_any_attribute,
)
from impact_ls.analysis.classify._signatures import (
    SIG_CHARS,
    WHAT_CHARS,
    class_what,
    clip,
    generated_init,
    params_what,
    signature,
    signature_what,
)
from impact_ls.model import Change, ChangeType, Param, QualName

logger = logging.getLogger(__name__)

_UNPARSED_BODY = "body does not parse as Python; assuming it escapes"


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
    before_lines = split_lines(before)
    after_lines = split_lines(after)
    ops = opcodes(before_lines, after_lines)
    before_check = _baseline_check(before)
    settled = settle(ops, before_lines, after_lines, before_check)
    lines = LineMap(opcodes=ops, p2a=settled.p2a, after_count=len(after_lines))
    package = package_of(module, file)
    patched_shape: Skeleton | None = None
    texts: tuple[list[str], list[str]] | None = None
    edited: _Edited | None = None
    kept: _Kept | None = None
    if before_check.tree is not None and settled.check.tree is not None:
        # parso is slow on big files: only the top-level statements the edit touches are parsed
        keep_before, keep_patched = touched_statements(
            before_check.tree, settled.check.tree, settled
        )
        patched_lines = split_lines(settled.text)
        old_touched, new_touched = hunk_lines(settled)
        pinned = touched_bindings(before_check.tree, old_touched) | touched_bindings(
            settled.check.tree, new_touched
        )
        patched_leaves = leaf_functions(settled.check.tree, _baseline_leaf_index(before))
        left_out = untouched_methods(
            _baseline_leaves(before), before_lines, keep_before, old_touched, pinned
        ) & untouched_methods(patched_leaves, patched_lines, keep_patched, new_touched, pinned)
        kept = (frozenset(keep_before), frozenset(old_touched), left_out)
        patched_shape = skeleton(patched_lines, keep_patched, patched_leaves, new_touched, left_out)
        texts = (before_lines, patched_lines)
        edited = _Edited(new=frozenset(new_touched), p2b=settled.p2b)
    old = _baseline_outline(before, kept, package)
    new = outline_of(
        Parsed.of_skeleton(patched_shape, settled.check)
        if patched_shape is not None
        else Parsed.of(settled.text, settled.check),
        package,
    )
    ctx = _Context(
        file=file, module=module, old=old, new=new, lines=lines, texts=texts, edited=edited
    )
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


@functools.lru_cache(maxsize=4)
def _baseline_check(text: str) -> Check:
    # A baseline stays the same over an editing session's keystrokes: parse it once (its tree
    # is only read). Four, for the few files edited at once; a big module's tree is megabytes.
    return check(text)


@functools.lru_cache(maxsize=4)
def _baseline_leaves(text: str) -> list[LeafFunction]:
    tree = _baseline_check(text).tree
    return leaf_functions(tree) if tree is not None else []


@functools.lru_cache(maxsize=4)
def _baseline_leaf_index(text: str) -> dict[int, LeafFunction]:
    # the leaves hold their nodes, so no other node can take their ids while this is cached
    return {id(leaf.node): leaf for leaf in _baseline_leaves(text)}


# What the baseline's skeleton keeps: statement lines, touched lines, methods left out.
_Kept = tuple[frozenset[int], frozenset[int], frozenset[MethodKey]]


@functools.lru_cache(maxsize=4)
def _baseline_outline(before: str, kept: _Kept | None, package: str) -> Outline:
    """The baseline's outline: of its skeleton keeping ``kept`` when both texts parse, else of
    the whole text.

    Keystrokes in one function keep the same statements touched: the skeleton is built and
    parsed once. Outlines are only read (their lazy ast lookups are memos).
    """
    checked = _baseline_check(before)
    if kept is None or checked.tree is None:
        return outline_of(Parsed.of(before, checked), package)
    keep, touched, left_out = kept
    shape = skeleton(
        split_lines(before), set(keep), _baseline_leaves(before), set(touched), left_out
    )
    return outline_of(Parsed.of_skeleton(shape, checked), package)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Edited:
    """The patched text's touched lines and its map back to baseline lines (None: new)."""

    new: frozenset[int]
    p2b: tuple[int | None, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Context:
    file: str
    module: str
    old: Outline
    new: Outline
    lines: LineMap
    # The baseline and patched lines, when both texts parse with ``ast`` (else None).
    texts: tuple[list[str], list[str]] | None = None
    # Where the hunks are, when both texts parse (else None).
    edited: _Edited | None = None

    def qual(self, parts: Iterable[str]) -> QualName:
        return QualName(".".join(p for p in (self.module, *parts) if p))

    def change(self, **values: Any) -> Change:
        return Change(file=self.file, **values)


def _tainted(outline: Outline) -> tuple[set[DefinitionKey], set[tuple[str, ...]]]:
    """Definitions and scopes that hold a syntax error the settling could not remove."""
    keys: set[DefinitionKey] = set()
    scopes: set[tuple[str, ...]] = set()
    for line in outline.parse.errors:
        holders = [d for d in outline.defs.values() if d.start <= line <= d.end]
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
                old_decorators = [norm(d) for d in before.decorators]
                new_decorators = [norm(d) for d in after.decorators]
                if norm(before.core) != norm(after.core) or old_decorators != new_decorators:
                    yield _incomplete_def(ctx, after)
                continue
            if _same_source(ctx, before, after):
                # Identical lines give identical ast nodes, so neither the signature nor the
                # body nor the declaration changed; skipping them saves a big class's methods.
                continue
            yield from _modified(ctx, before, after)


def _same_source(ctx: _Context, before: Definition, after: Definition) -> bool:
    """Whether both definitions span the very same lines of source (decorators included)."""
    if ctx.texts is None:
        return False  # a text that does not parse reads definitions another way; compare them
    old_lines, new_lines = ctx.texts
    if before.end - before.start != after.end - after.start:
        return False
    return old_lines[before.start - 1 : before.end] == new_lines[after.start - 1 : after.end]


def _noun(definition: Definition) -> str:
    if definition.kind == "class":
        return "class"
    return "method" if definition.in_class else "function"


def _added(ctx: _Context, definition: Definition) -> Change:
    sig = signature(ctx.new, definition)
    return ctx.change(
        change_type=ChangeType.ADD,
        entity=ctx.qual(definition.inner),
        line_range=ctx.lines.patched_range(definition.start, definition.end),
        after_sig=sig.text,
        after_params=sig.params,
        binds_first_param=_binds(definition),
        what=f"added {_noun(definition)} {definition.name}",
    )


def _deleted(ctx: _Context, definition: Definition) -> Change:
    sig = signature(ctx.old, definition)
    entity = ctx.qual(definition.inner)
    # a method's class as it is now: a base it lists, or what it binds itself, may still
    # give its instances the name (binding reads them: ``hierarchy.still_provided``)
    owner = _owner_class(ctx.new, definition) if definition.in_class else None
    return ctx.change(
        change_type=ChangeType.DELETE,
        entity=entity,
        line_range=(definition.start, definition.end),
        before_sig=sig.text,
        before_params=sig.params,
        binds_first_param=_binds(definition),
        removed_names=(entity,),
        what=f"removed {_noun(definition)} {definition.name}",
        stale_exports=_stale_exports(ctx, definition.path, definition.name),
        bases_after=(bases_of(owner) or ()) if owner is not None else (),
        own_members=_own_members(owner),
    )


def _owner_class(outline: Outline, definition: Definition) -> ast.AST | None:
    """The ``ast`` node of the class that held ``definition``, if ``outline`` still has it."""
    path = definition.path
    owner = outline.defs.get(("class", path[:-1], path[-1], 0))
    return ast_of(outline, owner) if owner is not None else None


def _stale_exports(ctx: _Context, path: tuple[str, ...], name: str) -> tuple[int, ...]:
    """Where the current text's ``__all__`` still lists a module-level name that is gone."""
    return export_lines(ctx.new.parse.tree, name) if not path else ()


def _binds(definition: Definition) -> bool:
    return definition.kind == "def" and definition.in_class and not definition.is_static


def _incomplete_def(ctx: _Context, definition: Definition) -> Change:
    return ctx.change(
        change_type=ChangeType.INCOMPLETE,
        entity=ctx.qual(definition.inner),
        line_range=ctx.lines.patched_range(definition.start, definition.end),
        what="does not parse yet",
    )


def _init_params(outline: Outline, cls: Definition) -> tuple[Param, ...] | None:
    init = outline.defs.get(("def", cls.inner, "__init__", 0))
    if init is not None:
        return signature(outline, init).params
    generated = generated_init(outline, cls)
    if generated is not None:
        return generated.params
    node = ast_of(outline, cls)
    if (
        isinstance(node, ast.ClassDef)
        and not (node.bases or node.keywords or node.decorator_list)
        and not (own_names(node) & {"__new__", "__init__"})
    ):
        return (Param(name="self"),)  # object.__init__: a call with arguments fails
    return None


def _generated_init_change(
    ctx: _Context, before: Definition, after: Definition
) -> Iterator[Change]:
    """A dataclass whose fields changed has a new generated ``__init__``: a constructor change."""
    old_init = generated_init(ctx.old, before)
    new_init = generated_init(ctx.new, after)
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
        what=clip(", ".join(params_what(old_init, new_init)) or "fields changed", WHAT_CHARS),
    )


def _modified(ctx: _Context, before: Definition, after: Definition) -> Iterator[Change]:
    old_sig = signature(ctx.old, before)
    new_sig = signature(ctx.new, after)
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
                what=class_what(old_sig, new_sig),
                bases_before=bases_of(old_sig.node) or (),
                bases_after=bases_of(new_sig.node) or (),
                own_members=_own_members(new_sig.node),
            )
        yield from _generated_init_change(ctx, before, after)
        yield from _removed_attributes(ctx, entity, old_sig.node, new_sig.node)
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
    shape = call_shape(old_sig, new_sig)
    if old_sig.key != new_sig.key or shape:
        params_differ = old_sig.key[0] != new_sig.key[0] or old_sig.params != new_sig.params
        constructor = after.name == "__init__" and after.in_class and params_differ
        what = signature_what(old_sig, new_sig) if old_sig.key != new_sig.key else ""
        said = [str(s) for s in shape if str(s) not in what]
        yield ctx.change(
            change_type=ChangeType.CONSTRUCTOR if constructor else ChangeType.METHOD_SIGNATURE,
            what=clip(", ".join(p for p in (what, *said) if p), WHAT_CHARS),
            call_shape=shape,
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


def _own_members(node: ast.AST | None) -> tuple[str, ...]:
    if not isinstance(node, ast.ClassDef):
        return ()
    return tuple(sorted(own_names(node) | set(instance_attributes(node))))


def _removed_attributes(
    ctx: _Context, entity: QualName, old_node: ast.AST | None, new_node: ast.AST | None
) -> Iterator[Change]:
    """A ``self.<name>`` no method binds any more (renamed, or a stored parameter dropped)."""
    if not isinstance(old_node, ast.ClassDef) or not isinstance(new_node, ast.ClassDef):
        return
    if serves_any_attribute(old_node) or serves_any_attribute(new_node):
        return
    # A method that reappears verbatim in the new class binds what it bound: only the others can
    # have bound a name that is gone (a method edit in a 2,000-line class read all its methods
    # twice). The verbatim ones are read last, and only while a name is left to clear.
    verbatim = _verbatim_methods(ctx, new_node)
    old_attrs = instance_attributes(old_node, verbatim)
    class_level = own_names(old_node)
    gone = {
        name
        for name in old_attrs
        # A class-level field is compared as a field; ``self.__x`` is mangled, private to the class.
        if name not in class_level and not (name.startswith("__") and name[-2:] != "__")
    }
    gone -= own_names(new_node)
    if gone:
        gone -= set(instance_attributes(new_node, _spans_in_new(ctx, verbatim)))
    if gone and verbatim:
        gone -= set(instance_attributes(old_node, verbatim, inside=True))
    for name, stmt in sorted(old_attrs.items()):
        if name not in gone:
            continue
        yield ctx.change(
            change_type=ChangeType.FIELD,
            entity=QualName(f"{entity}.{name}"),
            line_range=(stmt.lineno, stmt.end_lineno or stmt.lineno),
            before_sig=clip(" ".join(ast.unparse(stmt).split()), SIG_CHARS),
            removed_names=(QualName(f"{entity}.{name}"),),
            what=f"removed attribute {name}",
        )


def _verbatim_methods(ctx: _Context, new_class: ast.ClassDef) -> frozenset[tuple[int, int]]:
    """Baseline (first, last) lines of the methods of ``new_class`` no hunk touches.

    Untouched lines lie in one stretch of equal lines, so such a method is the baseline's
    method at the lines its own map to: the same text, in the same class.
    """
    if ctx.edited is None:
        return frozenset()
    touched, p2b = ctx.edited.new, ctx.edited.p2b
    spans: set[tuple[int, int]] = set()
    for start, end in method_spans(new_class):
        if end > len(p2b) or any(line in touched for line in range(start, end + 1)):
            continue
        first, last = p2b[start - 1], p2b[end - 1]
        if first is not None and last is not None:
            spans.add((first, last))
    return frozenset(spans)


def _spans_in_new(
    ctx: _Context, verbatim: frozenset[tuple[int, int]]
) -> frozenset[tuple[int, int]]:
    """The patched-text spans of ``verbatim`` (baseline spans of untouched methods)."""
    if ctx.edited is None or not verbatim:
        return frozenset()
    to_new = {b: p for p, b in enumerate(ctx.edited.p2b, start=1) if b is not None}
    return frozenset((to_new[first], to_new[last]) for first, last in verbatim)


def _body_change(
    before: Definition, after: Definition, old_node: ast.AST | None, new_node: ast.AST | None
) -> tuple[bool, bool, str]:
    if isinstance(old_node, FunctionNode) and isinstance(new_node, FunctionNode):
        diff = compare_bodies(before=old_node, after=new_node)
        return diff.changed, diff.escapes, diff.reason
    if _body_norm(before) == _body_norm(after):
        return False, False, ""
    return True, True, _UNPARSED_BODY


def _body_norm(definition: Definition) -> tuple[str, ...]:
    return tuple(norm(node) for kind, node in statements(bodies(definition.core)) if kind != "def")


def _field_sig(stmts: list[Statement]) -> str:
    return clip(compact(stmts[-1].node), SIG_CHARS) if stmts else ""


def _field_parts(stmt: Statement) -> tuple[str, str]:
    """(annotation, value) of an assignment statement, normalised."""
    children = stmt.node.children
    if len(children) > 1 and children[1].type == "annassign":
        ann = children[1].children
        return norm(ann[1]), " ".join(norm(c) for c in ann[3:])
    if len(children) > 1 and children[1].type == "operator" and children[1].value == "=":
        return "", norm(children[-1])
    return "", " ".join(norm(c) for c in children[1:])


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
                stale_exports=_stale_exports(ctx, path, name),
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


def _changed_stmts(left: list[Statement], right: list[Statement]) -> list[Statement]:
    remaining = Counter(s.norm for s in right)
    out: list[Statement] = []
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


def _bound_names(outline: Outline, path: tuple[str, ...]) -> set[str]:
    names = {d.name for d in outline.defs.values() if d.path == path}
    names.update(name for (p, name) in outline.fields if p == path)
    for imp in outline.imports.get(path, ()):
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
            what=clip("; ".join(parts), WHAT_CHARS),
        )


OVERLOAD_ONLY = "only @overload declarations changed (type checkers read them, nothing runs them)"


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
        elif all(s.overload for s in changed):
            reason = OVERLOAD_ONLY
        else:
            reason = "only no-op statements changed"
        yield ctx.change(
            change_type=ChangeType.METHOD_BODY,
            entity=entity,
            line_range=_residual_span(ctx, added, removed),
            escapes=not trivial,
            escape_reason=reason,
            what=(
                "@overload declarations changed"
                if reason == OVERLOAD_ONLY
                else f"{level}-level code changed"
            ),
        )


def _residual_span(
    ctx: _Context, added: list[Statement], removed: list[Statement]
) -> tuple[int, int]:
    if added:
        return ctx.lines.patched_range(min(s.start for s in added), max(s.end for s in added))
    return ctx.lines.before_range(min(s.start for s in removed), max(s.end for s in removed))


def _incomplete_changes(ctx: _Context, settled: Settled, after_lines: list[str]) -> list[Change]:
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
            sigs[entity] = signature(ctx.new, holder).text
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


def _holder(outline: Outline, hunk: Hunk, after_lines: list[str]) -> Definition | None:
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
        for d in outline.defs.values()
        if d.start <= first and last <= d.end and (indent is None or d.col < indent)
    ]
    return max(holders, key=lambda d: (len(d.path), d.start)) if holders else None


def _cap(changes: list[Change], limit: int) -> tuple[Change, ...]:
    capped = [_cap_entity(c) for c in changes]
    capped.sort(key=_sort_key)
    if len(capped) <= limit:
        return tuple(capped)
    # every kind keeps a change to fold into before the earliest fill the rest of the cap
    firsts: dict[tuple[object, ...], int] = {}
    for index, change in enumerate(capped):
        firsts.setdefault(_fold_kind(change), index)
    chosen = set(sorted(firsts.values())[:limit])
    chosen.update([i for i in range(len(capped)) if i not in chosen][: limit - len(chosen)])
    kept = [c for i, c in enumerate(capped) if i in chosen]
    folded: Counter[int] = Counter()
    for extra in (c for i, c in enumerate(capped) if i not in chosen):
        target = min(range(len(kept)), key=_host_order(kept, extra))
        host = kept[target]
        # a removal folded into one of its kind stays analyzed: the walk starts from every
        # removed name (``relations.walk_seeds``) and binding names the one a site reached
        alike = _fold_kind(host) == _fold_kind(extra) and bool(extra.removed_names)
        folded[target] += alike
        kept[target] = replace(
            host,
            line_range=(
                min(host.line_range[0], extra.line_range[0]),
                max(host.line_range[1], extra.line_range[1]),
            ),
            removed_names=tuple(sorted({*host.removed_names, *extra.removed_names}))
            if alike
            else host.removed_names,
        )
    for target, count in folded.items():
        if count:
            what = f"{kept[target].what}, and {count} more the change cap folded in"
            kept[target] = replace(kept[target], what=clip(what, WHAT_CHARS))
    kept.sort(key=_sort_key)
    logger.debug("folded %d changes beyond the cap of %d", len(capped) - limit, limit)
    return tuple(kept)


def _fold_kind(change: Change) -> tuple[object, ...]:
    """What a change folds into: its type, whether it removes or changes, and for a deletion its
    scope (``own_members``/``bases_after`` describe the deleted method's class)."""
    kind = change.change_type
    scope = change.entity.rpartition(".")[0] if kind is ChangeType.DELETE else ""
    return (kind, bool(change.after_sig), scope)


def _host_order(kept: list[Change], extra: Change) -> Callable[[int], tuple[Any, ...]]:
    kind = _fold_kind(extra)

    def order(index: int) -> tuple[Any, ...]:
        host = kept[index]
        unlike = tuple(a != b for a, b in zip(_fold_kind(host), kind, strict=True))
        return (unlike, abs(host.line_range[0] - extra.line_range[0]), index)

    return order


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
