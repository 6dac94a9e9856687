"""Triage (spec §3.7): every site of every ranked member into MUST-INSPECT, MAY-IMPACT or LOW-RISK.

Contract:
    input    ``Ranked`` members (hard-gated), the changes, binding's ``Breaks``, the hidden
             channels, the co-change score of each file and ``Settings`` (``must_min``,
             ``may_min``, ``cochange_min``, ``test_min``, ``lex_min``).
    output   ``Triage``: one ``TriageEntry`` per evidence site (two broken calls in one function
             are two entries, each at its exact range), each bucket sorted by (production code,
             then tests, then ``docs/`` and ``examples/``; -conf, file, line, entity). A site
             reached from several changes, or through several relations, appears once, in its
             highest bucket.
    buckets  MUST-INSPECT: a distance-1 site where the binding check proves a break and its
             edge is resolved, not name-matched; the site's arguments must be provable (no
             ``*args``/``**kwargs``) unless the break holds whatever they are (a name that is
             gone, a call-shape flip, an inherited member lost). An ``__all__`` entry of the
             changed module that still names a removed name. Decided by proof, not by a score.
             MAY-IMPACT: a direct use of a class whose bases changed (``isinstance``,
             ``except``, inherited members). Then, when history knows the edit (the edited
             files have co-change partners), history decides the rest: a reached site nothing
             proves broken — unprovable, still binding or name-matched — is MAY-IMPACT iff its
             file co-changes with the edited file at ≥ ``cochange_support`` (beyond distance 1:
             ≥ ``cochange_min``) or is an edited file, else LOW-RISK; and a test file the test map
             selects that co-changes so, or is named for the edited module (``test_<module>.py``,
             ``<module>_test.py``: its own tests, by pytest's naming convention), gets one
             MAY-IMPACT entry (``TestedBy``, its most confident test) when no other entry puts
             it there (issue 11: on real commits, reached files under that share were nearly
             never edited with the change; a module's own selected test file that nothing else
             listed was, one time in two).
             Without history: a distance-1 call or instantiation that binding proved still
             binds is LOW-RISK; any other distance-1 site that is unprovable or whose member
             has lex ≥ ``lex_min``, test confidence ≥ ``test_min`` or conf ≥ ``may_min`` is
             MAY-IMPACT — except that a name-matched site needs its file to import the changed
             module, and a site beyond distance 1 needs conf ≥ ``may_min`` from lex alone.
             With or without history: every hidden channel, flagged ``unanalyzable`` with the
             reference's reason, except a ``weak`` one (a bare string literal, a lookup of a
             shared dunder, a dotted path or computed lookup in a test) whose file co-changes
             under ``cochange_min``: listed LOW-RISK, still flagged.
             LOW-RISK: the rest of what the walk touched.
    conf     MUST: max(lex · 0.5^(distance - 1), co-change, test confidence), floored to
             ``must_min``. MAY with history: ``may_min`` + (1 - ``may_min``) · co-change share
             (an edited file's share is 1), so the files history ties closest come first; MAY
             without history: that max floored to ``may_min`` (a hidden channel exactly
             ``may_min``). A LOW-RISK conf is capped just below ``may_min``. 4 decimals.
    reason   ``causes.cause_label`` of the site's change and relation; a hidden channel appends
             ``(unanalyzable: <reason>)``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from impact_ls.analysis.binding import Breaks, binding_checked, is_shape_independent
from impact_ls.analysis.causes import cause_label
from impact_ls.analysis.rank import Ranked
from impact_ls.analysis.relations import reached_removal, select_relations
from impact_ls.analysis.testmap import UNOBSERVED, named_for
from impact_ls.config import Settings
from impact_ls.model import (
    Break,
    Bucket,
    Change,
    ChangeType,
    Member,
    QualName,
    Relation,
    Triage,
    TriageEntry,
    Unanalyzable,
)

logger = logging.getLogger(__name__)

_DECIMALS = 4
_ORDER = {Bucket.MUST_INSPECT: 0, Bucket.MAY_IMPACT: 1, Bucket.LOW_RISK: 2}
STALE_EXPORT = "stale-export"
_DOC_FOLDERS = frozenset({"docs", "doc", "examples", "example"})


@dataclass(frozen=True, slots=True, kw_only=True)
class TestedSite:
    """A test file the test map selects: its most confident test definition and where it is."""

    __test__ = False  # not a pytest class, despite the name

    test_file: str
    entity: QualName
    line: int
    conf: float
    changed_file: str  # the changed file whose change selects it


def triage_members(
    ranked: Sequence[Ranked],
    changes: Sequence[Change],
    *,
    breaks: Breaks,
    hidden: Sequence[Unanalyzable],
    settings: Settings,
    cochange: Mapping[str, float] = MappingProxyType({}),
    tested: Sequence[TestedSite] = (),
) -> Triage:
    """Split every site of ``ranked`` (and every hidden channel) into the three buckets.

    ``cochange`` is the co-change score of each file (empty: no history for the edit);
    ``tested`` are the selected test files, which join MAY-IMPACT when history ties them.
    """
    change_of: dict[QualName, Change] = {}
    for each in changes:
        change_of.setdefault(each.entity, each)
    edited = frozenset(c.file for c in changes)
    history = _knows_history(cochange)
    entries: list[TriageEntry] = []
    for item in ranked:
        change = change_of.get(item.member.seed)
        if change is None or not item.member.sites:
            logger.debug("triage: %s has no change or no site; skipped", item.member.entity)
            continue
        entries.extend(
            _member_entries(item, change, breaks, settings, history=history, edited=edited)
        )
    entries.extend(_hidden_entries(hidden, changes, change_of, settings, cochange, history=history))
    entries.extend(_stale_export_entries(changes, settings))
    if history:
        entries.extend(_tested_entries(tested, changes, entries, settings, cochange))
    return _partition(entries)


def _member_entries(
    item: Ranked,
    change: Change,
    breaks: Breaks,
    settings: Settings,
    *,
    history: bool,
    edited: frozenset[str],
) -> list[TriageEntry]:
    """The entries of one reached member's sites, each in its bucket."""
    member = item.member
    # an edited file is as tied to the edit as a file can be; a far caller needs the tie the
    # rules without history ask of it (issue 11: far callers with a weaker one were noise)
    tie = settings.cochange_support if member.distance == 1 else settings.cochange_min
    supported = item.cochange >= tie or member.file in edited
    entries: list[TriageEntry] = []
    base = max(item.lex * 0.5 ** (member.distance - 1), item.cochange, item.test_conf)
    low = min(base, _below(settings.may_min))
    soft = (
        item.lex >= settings.lex_min
        or item.cochange >= settings.cochange_min
        or item.test_conf >= settings.test_min
        or base >= settings.may_min
    )
    # Beyond distance 1, and for a site found by name only, a reach is not evidence by
    # itself: what the graph saw is kept, but MAY-IMPACT asks for a second, independent hint.
    co_changed = item.cochange >= settings.cochange_min
    far = co_changed or item.lex * 0.5 ** (member.distance - 1) >= settings.may_min
    folded = member.distance == 1 and len(change.removed_names) > 1
    for site in member.sites:
        relation = site.relation or member.relations[0]
        site_breaks = breaks.at(member, site)
        cause = reached_removal(change, member.via, site.target) if folded else change
        provable = not site.name_matched and (
            site.args is None
            or site.args.provable
            or any(is_shape_independent(b) for b in site_breaks)
        )
        if member.distance == 1 and site_breaks and provable:
            bucket, conf = Bucket.MUST_INSPECT, max(base, settings.must_min)
        elif _hierarchy_site(change, relation, member.distance):
            bucket, conf = Bucket.MAY_IMPACT, max(base, settings.may_min)
        elif _gated(history=history):
            bucket = Bucket.MAY_IMPACT if supported else Bucket.LOW_RISK
            share = 1.0 if member.file in edited else item.cochange
            conf = _may_conf(base, share, settings, history=history) if supported else low
        elif (
            member.distance == 1
            and item.cochange <= 0.0
            and binding_checked(
                change, args=site.args, relation=relation, name_matched=site.name_matched
            )
        ):
            # binding proved the call still binds: only history says it was edited with
            # the signature before (issue 11: such calls were most wrong direct callers)
            bucket, conf = Bucket.LOW_RISK, low
        elif _unsupported(site.name_matched, co_changed or item.imports_seed, far, member):
            bucket, conf = Bucket.LOW_RISK, low
        elif not provable or soft:
            bucket, conf = Bucket.MAY_IMPACT, max(base, settings.may_min)
        else:
            bucket, conf = Bucket.LOW_RISK, low
        entries.append(
            TriageEntry(
                entity=member.entity,
                file=site.file,
                line=site.span.line,
                range=site.span.as_range(),
                conf=round(conf, _DECIMALS),
                distance=member.distance,
                relation=relation,
                reason=cause_label(cause, site=member.entity, relation=relation),
                seed=change.entity,
                change_type=change.change_type,
                bucket=bucket,
                name_matched=site.name_matched,
                breaks=site_breaks,
                via=member.via,
            )
        )
    return entries


def _stale_export_entries(changes: Sequence[Change], settings: Settings) -> list[TriageEntry]:
    """``__all__`` entries of the changed module that name what is gone: ``import *`` fails."""
    out = []
    for change in changes:
        module = QualName(change.entity.rpartition(".")[0] or change.entity)
        for line in change.stale_exports:
            detail = f"__all__ still lists '{change.short_name}', which no longer exists"
            out.append(
                TriageEntry(
                    entity=module,
                    file=change.file,
                    line=line,
                    range=((line, 0), (line, 0)),
                    conf=round(settings.must_min, _DECIMALS),
                    distance=1,
                    relation=Relation.IMPORTED_BY,
                    reason=cause_label(change, site=module, relation=Relation.IMPORTED_BY),
                    seed=change.entity,
                    change_type=change.change_type,
                    bucket=Bucket.MUST_INSPECT,
                    breaks=(Break(kind=STALE_EXPORT, detail=detail),),
                    via=change.entity,
                )
            )
    return out


def _knows_history(cochange: Mapping[str, float]) -> bool:
    """Whether history knows the edit: then a missing co-change tie is evidence too."""
    return bool(cochange)


def _gated(*, history: bool) -> bool:
    """Whether history decides a reached site nothing proves broken (see the module contract)."""
    return history


def _may_conf(base: float, share: float, settings: Settings, *, history: bool) -> float:
    """A MAY-IMPACT conf: with history, ordered by the co-change share that admitted the site.

    Without history it is the member's evidence, max(lex, co-change, test confidence), floored
    to ``may_min``; with history the share maps onto [``may_min``, 1], so the file the edit
    changed with most often comes first (a direct test's confidence of 1.0 would otherwise put
    every test above the production code history ties to the edit).
    """
    if history:
        return settings.may_min + (1.0 - settings.may_min) * min(share, 1.0)
    return max(base, settings.may_min)


def _hidden_weak(ref: Unanalyzable, share: float, settings: Settings) -> bool:
    """Whether a hidden channel stays out of MAY-IMPACT (listed LOW-RISK, still flagged): a
    ``weak`` one (see ``hidden``: a bare string literal, mostly data) whose file does not
    co-change ≥ ``cochange_min``.

    History does not demote the others: what no analysis can see is never LOW-RISK on the
    absence of a co-change tie alone (DESIGN §3; on real commits the gate changed little).
    """
    return ref.weak and share < settings.cochange_min


def _tested_entries(
    tested: Sequence[TestedSite],
    changes: Sequence[Change],
    entries: Sequence[TriageEntry],
    settings: Settings,
    cochange: Mapping[str, float],
) -> list[TriageEntry]:
    """A selected test file tied to the edit — it co-changes with the edited file, or is named
    for the edited module — gets one ``TestedBy`` MAY-IMPACT entry.

    Only for a test file (a ``tests``/``test`` folder, ``test_*.py``, ``*_test.py``,
    ``conftest.py``) no other entry already puts in MAY-IMPACT or MUST-INSPECT, never for an
    edited file itself.
    """
    shown = {e.file for e in entries if e.bucket is not Bucket.LOW_RISK}
    edited = {c.file for c in changes}
    out = []
    for site in tested:
        share = cochange.get(site.test_file, 0.0)
        tied = share >= settings.cochange_support or named_for(site.test_file, site.changed_file)
        if not tied or site.test_file in shown | edited or not _is_test_file(site.test_file):
            continue
        change = next(
            (c for c in changes if c.file == site.changed_file and c.change_type not in UNOBSERVED),
            None,
        )
        if change is None:
            continue
        out.append(
            TriageEntry(
                entity=site.entity,
                file=site.test_file,
                line=site.line,
                range=((site.line, 0), (site.line, 0)),
                conf=round(_may_conf(share, share, settings, history=True), _DECIMALS),
                distance=1,
                relation=Relation.TESTED_BY,
                reason=cause_label(change, site=site.entity, relation=Relation.TESTED_BY),
                seed=change.entity,
                change_type=change.change_type,
                bucket=Bucket.MAY_IMPACT,
                via=change.entity,
            )
        )
    return out


def _unsupported(name_matched: bool, tied: bool, far: bool, member: Member) -> bool:
    """A name-matched site whose file has no other tie to the change (co-change, an import of
    the changed module), or a site beyond distance 1 that co-change does not support."""
    return (name_matched and not tied) or (member.distance >= 2 and not far)


def _below(limit: float) -> float:
    """The largest reported conf under ``limit``: a LOW-RISK conf stays below ``may_min``."""
    return round(limit - 0.1**_DECIMALS, _DECIMALS)


def _hierarchy_site(change: Change, relation: Relation, distance: int) -> bool:
    """A direct use of a class whose bases changed (``isinstance``, ``except``, inherited members).

    What it does at run time changed even when no break can be proved: never LOW-RISK.
    """
    return (
        change.change_type is ChangeType.CLASS_DECL
        and relation is Relation.USED_BY
        and (distance == 1)
    )


def _hidden_entries(
    hidden: Sequence[Unanalyzable],
    changes: Sequence[Change],
    change_of: dict[QualName, Change],
    settings: Settings,
    cochange: Mapping[str, float],
    *,
    history: bool,
) -> list[TriageEntry]:
    out = []
    for ref in hidden:
        change = change_of.get(ref.seed) if ref.seed is not None else None
        if change is None:
            # An entry from an older producer without ``seed``: the change it names, else the first.
            named = [c for c in changes if c.short_name == ref.name] or list(changes)
            if not named:
                continue
            change = named[0]
        relations = select_relations(change)
        relation = relations[0] if relations else Relation.CALLERS
        label = cause_label(change, site=ref.entity, relation=relation)
        share = cochange.get(ref.file, 0.0)
        weak = _hidden_weak(ref, share, settings)
        conf = _below(settings.may_min)
        if not weak:
            conf = round(_may_conf(settings.may_min, share, settings, history=history), _DECIMALS)
        out.append(
            TriageEntry(
                entity=ref.entity,
                file=ref.file,
                line=ref.line,
                range=((ref.line, 0), (ref.line, 0)),
                conf=conf,
                distance=1,
                relation=relation,
                reason=f"{label} (unanalyzable: {ref.reason})",
                seed=change.entity,
                change_type=change.change_type,
                bucket=Bucket.LOW_RISK if weak else Bucket.MAY_IMPACT,
                unanalyzable=True,
                via=change.entity,
            )
        )
    return out


def _partition(entries: Sequence[TriageEntry]) -> Triage:
    best: dict[tuple[str, str, tuple[tuple[int, int], tuple[int, int]]], TriageEntry] = {}
    for entry in sorted(entries, key=_strength):
        best.setdefault((entry.entity, entry.file, entry.range), entry)
    buckets: dict[Bucket, list[TriageEntry]] = {b: [] for b in Bucket}
    for entry in best.values():
        buckets[entry.bucket].append(entry)
    for items in buckets.values():
        items.sort(key=_report_key)
    logger.debug(
        "triage: %d must, %d may, %d low",
        len(buckets[Bucket.MUST_INSPECT]),
        len(buckets[Bucket.MAY_IMPACT]),
        len(buckets[Bucket.LOW_RISK]),
    )
    return Triage(
        must_inspect=tuple(buckets[Bucket.MUST_INSPECT]),
        may_impact=tuple(buckets[Bucket.MAY_IMPACT]),
        low_risk=tuple(buckets[Bucket.LOW_RISK]),
    )


def _strength(entry: TriageEntry) -> tuple[int, float, int, str, str, str]:
    return (
        _ORDER[entry.bucket],
        -entry.conf,
        entry.distance,
        entry.seed,
        entry.relation.value,
        entry.reason,
    )


def _report_key(
    entry: TriageEntry,
) -> tuple[int, float, str, int, str, tuple[tuple[int, int], tuple[int, int]], str, str]:
    # Tests rank below production sites: fix the code, then its tests (a test that calls the
    # changed function directly has test confidence 1.0, which would otherwise put it first).
    return (
        _rank_group(entry.file),
        -entry.conf,
        entry.file,
        entry.line,
        entry.entity,
        entry.range,
        entry.seed,
        entry.reason,
    )


def _rank_group(file: str) -> int:
    """Production code first, then tests, then documentation and examples (issue 11, item 7)."""
    if file.split("/", 1)[0] in _DOC_FOLDERS:
        return 2
    return 1 if _is_test_file(file) else 0


def _is_test_file(file: str) -> bool:
    parts = file.split("/")
    name = parts[-1]
    return (
        "tests" in parts[:-1]
        or "test" in parts[:-1]
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
    )
