"""Overrides that no longer accept what the callers of their base method pass (issue 11).

Contract:
    ``override_break(change, override, graph, calls=)`` → the ``Break`` of ``override`` (a
    method that overrides the method-signature change's entity) when one resolved call of the
    base proves it: the call binds to the base's new parameters, did not bind to its old ones
    (it was written for the new signature — the edit's own callers, typically), and does not
    bind to the override's parameters. A call that dispatches through the base
    (``self.hook(x, new=1)``) reaches the override for an instance of the subclass, so the
    override fails there with a ``TypeError``. Nothing else is proved: a call that already bound
    to the old signature and fails the override was broken before the edit; a name-matched call
    or one with ``*args``/``**kwargs`` proves nothing, nor does a call from a method of the same
    name (an override's ``super().name(…)`` reaches the base, never a sibling); an override
    with a decorator that may change its signature (anything but ``override``,
    ``abstractmethod``, ``final``: a static or class method, a property, a wrapper) or with
    unknown parameters is never judged. ``base_calls`` lists the
    calls a base is judged by, so that every override of one base shares them.
Pure: reads the graph only (the override's parameters and decorators, the base's callers).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from impact_ls.analysis.arguments import bind_arguments
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import Break, Change, ChangeType, Edge, Param, QualName

logger = logging.getLogger(__name__)

OVERRIDE_MISMATCH = "override-mismatch"

# Decorators that leave a method's call signature as written; any other one may change it.
_TRANSPARENT = frozenset({"override", "abstractmethod", "final"})


def override_break(
    change: Change,
    override: QualName,
    graph: CodeGraph,
    *,
    calls: Sequence[Edge] | None = None,
) -> Break | None:
    """The break of ``override`` when a call of the changed base method proves it.

    ``calls`` are the base's resolved call edges (``base_calls``) when the caller already has
    them: every override of one base is judged against the same calls.
    """
    if (
        change.change_type is not ChangeType.METHOD_SIGNATURE
        or not change.binds_first_param
        or change.before_params is None
        or change.after_params is None
        or change.before_params == change.after_params
    ):
        return None
    node = graph.node(override)
    if node is None or not node.params or not keeps_signature(node.decorators):
        return None
    for call in base_calls(change.entity, graph) if calls is None else calls:
        if call.source.rpartition(".")[2] == change.short_name:
            # ``super().name(…)`` or ``Base.name(self, …)`` in an override: it calls the base,
            # never a sibling override
            continue
        args = call.args
        if args is None or not args.provable:
            continue  # only ``base_calls`` filters them when the caller hands its own
        if bind_arguments(change.after_params, args, skip_first=True):
            continue  # the call does not fit the new signature: binding reports it itself
        if not bind_arguments(change.before_params, args, skip_first=True):
            continue  # it fit the old signature too: whatever the override does is not new
        failed = bind_arguments(node.params, args, skip_first=True)
        if failed:
            detail = (
                f"{_params_text(node.params)} does not accept the call at "
                f"{call.file}:{call.span.line}, which the new signature of "
                f"'{change.short_name}' accepts: {failed[0].detail}"
            )
            return Break(kind=OVERRIDE_MISMATCH, detail=detail)
    return None


def base_calls(entity: QualName, graph: CodeGraph) -> list[Edge]:
    """Resolved call edges into ``entity`` that an override could be judged by, in order."""
    calls = [
        e
        for e in graph.callers_of(entity, ordered=False)
        if not e.name_matched and e.args is not None and e.args.provable
    ]
    calls.sort(key=lambda e: (e.file, e.span.line, e.span.col, e.source))
    return calls


def keeps_signature(decorators: tuple[str, ...]) -> bool:
    """Whether the decorators keep the signature as written (a static or class method, a
    property, a wrapper of unknown shape do not)."""
    return all(d.split("(", 1)[0].rsplit(".", 1)[-1] in _TRANSPARENT for d in decorators)


def _params_text(params: tuple[Param, ...]) -> str:
    return "the override (" + ", ".join(p.name for p in params) + ")"
