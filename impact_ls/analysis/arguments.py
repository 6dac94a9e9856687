"""Binding one call's argument shape to a parameter list, as Python would (DESIGN §3 binding).

Contract: ``bind_arguments(params, args, skip_first=)`` → one ``Break`` per failure
(``missing-argument``, ``too-many-positional``, ``unknown-keyword``); empty when the call binds
or when its shape has ``*``/``**`` arguments (not provable). The one binder every break rule
uses: a call site against a changed signature (``binding``), a base's call against an override
(``overrides``).
Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from impact_ls.model import ArgShape, Break, Param, ParamKind

MISSING_ARGUMENT = "missing-argument"
TOO_MANY_POSITIONAL = "too-many-positional"
UNKNOWN_KEYWORD = "unknown-keyword"

_POSITIONAL = (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)


def bind_arguments(
    params: Sequence[Param], args: ArgShape, *, skip_first: bool
) -> tuple[Break, ...]:
    """Bind a call's argument shape to parameters as Python would; one ``Break`` per failure.

    ``skip_first`` drops the first positional parameter (``self``/``cls`` of a bound call).
    A site with ``*``/``**`` arguments cannot be bound statically and yields nothing.
    """
    if not args.provable:
        return ()
    params = list(params)
    if skip_first and params and params[0].kind in _POSITIONAL:
        params = params[1:]
    positional = [p for p in params if p.kind in _POSITIONAL]
    var_positional = any(p.kind is ParamKind.VAR_POSITIONAL for p in params)
    var_keyword = any(p.kind is ParamKind.VAR_KEYWORD for p in params)
    breaks: list[Break] = []
    filled: set[str] = {p.name for p in positional[: args.positional]}
    if args.positional > len(positional) and not var_positional:
        breaks.append(
            Break(
                kind=TOO_MANY_POSITIONAL,
                detail=f"takes {len(positional)} positional argument"
                f"{'' if len(positional) == 1 else 's'} but {args.positional} "
                f"{'was' if args.positional == 1 else 'were'} given",
            )
        )
    by_name = {
        p.name: p for p in params if p.kind not in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD)
    }
    for keyword in args.keywords:
        param = by_name.get(keyword)
        if param is None or param.kind is ParamKind.POSITIONAL_ONLY:
            if var_keyword:
                continue  # swallowed by **kwargs (a positional-only name included)
            if param is None:
                detail = f"unexpected keyword argument '{keyword}'"
            else:
                detail = f"'{keyword}' is positional-only and cannot be passed by keyword"
            breaks.append(Break(kind=UNKNOWN_KEYWORD, detail=detail))
            continue
        if keyword in filled:
            breaks.append(
                Break(
                    kind=TOO_MANY_POSITIONAL,
                    detail=f"got multiple values for argument '{keyword}'",
                )
            )
            continue
        filled.add(keyword)
    for param in params:
        if param.has_default or param.name in filled:
            continue
        if param.kind in _POSITIONAL:
            breaks.append(
                Break(kind=MISSING_ARGUMENT, detail=f"missing required argument '{param.name}'")
            )
        elif param.kind is ParamKind.KEYWORD_ONLY:
            breaks.append(
                Break(
                    kind=MISSING_ARGUMENT,
                    detail=f"missing required keyword-only argument '{param.name}'",
                )
            )
    return tuple(breaks)
