"""Read a definition's signature and say in one line how it changed.

Private to ``analysis/classify/``; used by ``_ladder.py``. ``signature`` renders a
function's or class's header from ``ast`` (from parso's tokens when ``ast`` cannot read it) with
a comparison key and its parameters; ``generated_init`` is the ``__init__`` a dataclass-style
decorator writes; ``signature_what``, ``params_what`` and ``class_what`` are the ``what`` texts.
"""

from __future__ import annotations

import ast
import logging
from dataclasses import dataclass

from impact_ls.analysis.classify._outline import Definition, Outline, ast_of, compact, norm
from impact_ls.model import Param, ParamKind

logger = logging.getLogger(__name__)


SIG_CHARS = 200
WHAT_CHARS = 120
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


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True, kw_only=True)
class Signature:
    text: str
    key: tuple[str, ...]
    params: tuple[Param, ...] | None
    details: tuple[tuple[str, str, str], ...]  # (name, annotation dump, default dump)
    returns: str
    decorators: tuple[str, ...]
    is_async: bool
    node: ast.AST | None


def signature(outline: Outline, definition: Definition) -> Signature:
    """The rendered header of a definition, its comparison key and its parameters."""
    decorators = tuple(compact(d) for d in definition.decorators)
    decorator_norms = tuple(norm(d) for d in definition.decorators)
    node = ast_of(outline, definition)
    if definition.kind == "class":
        return _class_signature(definition, node, decorators, decorator_norms)
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        header = " ".join(norm(c) for c in definition.core.children[:-1])
        text = " ".join("".join(c.get_code() for c in definition.core.children[:-1]).split()) + ":"
        prefix = "async " if definition.is_async else ""
        return Signature(
            text=clip(prefix + text, SIG_CHARS),
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
    return Signature(
        text=clip(text + ":", SIG_CHARS),
        key=(ast.dump(node.args), returns, str(definition.is_async), *decorator_norms),
        params=params,
        details=details,
        returns=returns,
        decorators=decorators,
        is_async=definition.is_async,
        node=node,
    )


def _class_signature(
    definition: Definition,
    node: ast.AST | None,
    decorators: tuple[str, ...],
    norms: tuple[str, ...],
) -> Signature:
    if isinstance(node, ast.ClassDef):
        args = [ast.unparse(b) for b in node.bases] + [ast.unparse(k) for k in node.keywords]
        text = (
            f"class {definition.name}({', '.join(args)}):" if args else f"class {definition.name}:"
        )
        bases = "|".join(ast.dump(b) for b in node.bases)
        keywords = "|".join(ast.dump(k) for k in node.keywords)
        return Signature(
            text=clip(text, SIG_CHARS),
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
    return Signature(
        text=clip(text, SIG_CHARS),
        key=(" ".join(norm(c) for c in header), "", *norms),
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


def signature_what(old: Signature, new: Signature) -> str:
    """One line saying how a function signature changed."""
    parts: list[str] = []
    if old.params is not None and new.params is not None:
        parts.extend(params_what(old, new))
    if old.returns != new.returns:
        parts.append("return annotation changed")
    if old.is_async != new.is_async:
        parts.append("now async" if new.is_async else "no longer async")
    parts.extend(_decorators_what(old.decorators, new.decorators))
    return clip(", ".join(parts) or "signature changed", WHAT_CHARS)


def params_what(old: Signature, new: Signature) -> list[str]:
    """What changed in the parameters: added, removed, renamed, defaults, kinds, order."""
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


def class_what(old: Signature, new: Signature) -> str:
    """One line saying how a class declaration changed."""
    parts: list[str] = []
    if old.key[0] != new.key[0]:
        parts.append("bases changed")
    if old.key[1] != new.key[1]:
        parts.append("class keywords changed")
    parts.extend(_decorators_what(old.decorators, new.decorators))
    return clip(", ".join(parts) or "declaration changed", WHAT_CHARS)


def _flag(call: ast.Call, name: str) -> bool | None:
    for keyword in call.keywords:
        if keyword.arg == name and isinstance(keyword.value, ast.Constant):
            return bool(keyword.value.value)
    return None


def generated_init(outline: Outline, cls: Definition) -> Signature | None:
    """The ``__init__`` a dataclass-style decorator writes from the class's own fields.

    Only for a class without bases (inherited fields would come first and are not visible here)
    and without its own ``__init__``.
    """
    if cls.kind != "class" or ("def", cls.inner, "__init__", 0) in outline.defs:
        return None
    node = ast_of(outline, cls)
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
    return Signature(
        text=clip(f"def __init__({', '.join(rendered)}):", SIG_CHARS),
        key=tuple(rendered),
        params=(Param(name="self"), *(e[0] for e in entries)),
        details=(("self", "", ""), *(e[1] for e in entries)),
        returns="",
        decorators=(),
        is_async=False,
        node=node,
    )
