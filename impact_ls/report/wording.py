"""Plain words for people, shared by every human-facing rendering (terminal, SARIF, editor).

The report's ``reason`` is the cause label of the spec (``<change_type> changed (<what>) → <site>
<verb> via <relation>``): exact and searchable, but it repeats the edited entity and reads like a
log line. These helpers derive, from the report's own fields, what a person wants first: what
broke at a site (``missing required argument 'mfa_code'``) or how the site depends on the edit
(``overrides LoginService.login, whose signature changed``). Nothing here changes the report.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from impact_ls.analysis.binding import DELETED_SYMBOL, REMOVED_FIELD, REMOVED_IMPORT
from impact_ls.model import Break, Change, ChangeType, Relation, TriageEntry

# What a site does to the entity before it in the walk (the member relative to ``via``).
_RELATION_VERBS: dict[Relation, str] = {
    Relation.CALLED_BY: "calls",
    Relation.CALLERS: "calls",
    Relation.OVERRIDES: "overrides",
    Relation.OVERRIDDEN_BY: "is overridden by",
    Relation.USED_BY: "uses",
    Relation.CONSTRUCTED_BY: "creates",
    Relation.INSTANTIATED_BY: "creates",
    Relation.SUBCLASS_OF: "subclasses",
    Relation.SUPERCLASS_OF: "is a base class of",
    Relation.IMPORTED_BY: "imports",
    Relation.TESTED_BY: "tests",
}
# What changed, as the end of "…, whose <noun> changed" (or a whole clause for add/delete).
_CHANGED: dict[ChangeType, str] = {
    ChangeType.METHOD_SIGNATURE: "whose signature changed",
    ChangeType.METHOD_BODY: "whose body changed",
    ChangeType.FIELD: "whose value changed",
    ChangeType.CLASS_DECL: "whose class declaration changed",
    ChangeType.CONSTRUCTOR: "whose constructor changed",
    ChangeType.IMPORT: "whose imports changed",
    ChangeType.ADD: "which was added",
    ChangeType.DELETE: "which was removed",
    ChangeType.INCOMPLETE: "which does not parse yet",
}
_CHANGE_KINDS: dict[ChangeType, str] = {
    ChangeType.METHOD_SIGNATURE: "signature changed",
    ChangeType.METHOD_BODY: "body changed",
    ChangeType.FIELD: "field changed",
    ChangeType.CLASS_DECL: "class declaration changed",
    ChangeType.CONSTRUCTOR: "constructor changed",
    ChangeType.IMPORT: "imports changed",
    ChangeType.ADD: "added",
    ChangeType.DELETE: "deleted",
    ChangeType.INCOMPLETE: "does not parse yet",
}
_UNANALYZABLE = re.compile(r"\s*\(unanalyzable: (?P<why>.*)\)$")
_QUOTED = re.compile(r"'([^']+)'")


def plural(count: int, noun: str) -> str:
    """``1 site``, ``2 sites``, ``3 batches``: the count with its noun in the right number."""
    if count == 1:
        return f"{count} {noun}"
    suffix = "es" if noun.endswith(("s", "sh", "ch", "x")) else "s"
    return f"{count} {noun}{suffix}"


def short_entity(entity: str) -> str:
    """``Class.method`` for a method, the bare name otherwise: enough to recognise a site."""
    parts = entity.split(".")
    if len(parts) >= 2 and parts[-2][:1].isupper():
        return ".".join(parts[-2:])
    return parts[-1]


def change_summary(change: Change) -> str:
    """What happened to the edited definition: ``added param mfa_code``, ``deleted``, …."""
    return change.what or _CHANGE_KINDS.get(change.change_type, str(change.change_type))


def _break_words(item: Break) -> str:
    """One break as a person says it; binding's own wording already is, except for names."""
    quoted = _QUOTED.findall(item.detail)
    if item.kind == DELETED_SYMBOL and quoted:
        return f"uses {short_entity(quoted[0])}, which no longer exists"
    if item.kind == REMOVED_FIELD and quoted:
        return f"uses the removed field '{quoted[0]}'"
    if item.kind == REMOVED_IMPORT and " no longer imports " in item.detail:
        names = [n.strip() for n in item.detail.split(" no longer imports ", 1)[1].split(",")]
        listed = ", ".join(f"'{n}'" for n in names if n)
        return f"imports the removed name{'s' if len(names) > 1 else ''} {listed}"
    return item.detail


def breaks_text(breaks: Sequence[Break]) -> str:
    """What broke at a site, every break once, in plain words joined by ``;``."""
    return "; ".join(dict.fromkeys(_break_words(b) for b in breaks))


def split_reason(reason: str) -> tuple[str, str]:
    """The cause label and, for a hidden channel, why static analysis cannot follow it."""
    match = _UNANALYZABLE.search(reason)
    if match is None:
        return reason, ""
    return reason[: match.start()], match.group("why")


def site_point(entry: TriageEntry) -> str:
    """The first thing to know about a site: what broke there, or how it reaches the edit."""
    if entry.breaks:
        return breaks_text(entry.breaks)
    seed = short_entity(entry.seed)
    cause, hidden = split_reason(entry.reason)
    if entry.unanalyzable:
        why = hidden or (cause if " → " not in cause else "")
        return f"may reach {seed} by name: {why}" if why else f"may reach {seed} by name"
    verb = _RELATION_VERBS.get(entry.relation, "depends on")
    if entry.name_matched:
        return f"{verb} something named {seed.rsplit('.', 1)[-1]} (its receiver's type is unknown)"
    if entry.distance > 1:
        via = short_entity(entry.via) if entry.via else ""
        if via and via != seed:
            return f"{verb} {via}, {entry.distance} steps from {seed}"
        return f"{entry.distance} steps from {seed}"
    via = short_entity(entry.via or entry.seed)
    return f"{verb} {via}, {_CHANGED.get(entry.change_type, 'which changed')}"


def site_message(entry: TriageEntry) -> str:
    """The one-line message of a site for Problems and code scanning: the point, then the cause.

    A panel that cuts a long line keeps what matters (``missing required argument 'x' — …``).
    """
    cause, _ = split_reason(entry.reason)
    point = site_point(entry)
    if not cause or " → " not in cause:
        return point
    return f"{point} — {cause}"
