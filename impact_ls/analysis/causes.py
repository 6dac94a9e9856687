"""The one wording of an obligation's cause, shared by triage, the DAG and the presenters.

``cause_label(change, site=..., relation=...)`` is the template of every reason string:
``"<change_type> changed (<what>) → <site> <verb> via <relation>"``, with the verb
``must re-bind`` (method-signature, import, delete), ``must be updated`` (field, constructor,
class-decl), ``must be re-checked`` (method-body) or ``must be re-tested`` (any change over
``TestedBy``). ``<what>`` is ``Change.what`` when classify filled it, else derived from the
parameter lists, removed names or escape reason (``change_summary``).
"""

from __future__ import annotations

from collections.abc import Mapping

from impact_ls.model import Change, ChangeType, Relation

_VERBS: Mapping[ChangeType, str] = {
    ChangeType.METHOD_SIGNATURE: "must re-bind",
    ChangeType.IMPORT: "must re-bind",
    ChangeType.DELETE: "must re-bind",
    ChangeType.FIELD: "must be updated",
    ChangeType.CONSTRUCTOR: "must be updated",
    ChangeType.CLASS_DECL: "must be updated",
    ChangeType.METHOD_BODY: "must be re-checked",
}
_RETEST = "must be re-tested"


def cause_label(change: Change, *, site: str, relation: Relation) -> str:
    """The cause string of one obligation: what changed, which site, what it must do, and why."""
    verb = _RETEST if relation is Relation.TESTED_BY else _VERBS.get(change.change_type)
    return (
        f"{change.change_type.value} changed ({change_summary(change)}) → {site} "
        f"{verb or 'must be re-checked'} via {relation.value}"
    )


def change_summary(change: Change) -> str:
    """What changed, in a few words: ``Change.what``, else derived from the change."""
    if change.what:
        return change.what
    if change.before_params is not None and change.after_params is not None:
        before = [p.name for p in change.before_params]
        after = [p.name for p in change.after_params]
        parts = [f"added param {n}" for n in after if n not in before]
        parts += [f"removed param {n}" for n in before if n not in after]
        return ", ".join(parts) if parts else "parameters changed"
    if change.removed_names:
        return "removed " + ", ".join(change.removed_names)
    if change.change_type is ChangeType.DELETE:
        return f"{change.short_name} removed"
    if change.escape_reason:
        return change.escape_reason
    return change.short_name
