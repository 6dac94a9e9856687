"""Triage (spec §3.7): every site of every ranked member into MUST-INSPECT, MAY-IMPACT or LOW-RISK.

Contract:
    input    ``Ranked`` members (hard-gated), the changes, binding's ``Breaks``, the hidden
             channels and ``Settings`` (``must_min``, ``may_min``, ``cochange_min``,
             ``test_min``, ``lex_min``).
    output   ``Triage``: one ``TriageEntry`` per evidence site (two broken calls in one function
             are two entries, each at its exact range), each bucket sorted by (production
             code before tests, -conf, file, line, entity). A site reached from several
             changes, or through several relations, appears once, in its highest bucket.
    buckets  MUST-INSPECT: a distance-1 site where the binding check proves a break, the site's
             arguments are provable (no ``*args``/``**kwargs``) and its edge is resolved, not
             name-matched. The bucket is decided by that proof, not by a score.
             MAY-IMPACT: any other site of a hard member that is unprovable (``*``/``**``
             arguments, name-matched edge), or whose member has lex ≥ ``lex_min``, co-change ≥
             ``cochange_min``, test confidence ≥ ``test_min`` or conf ≥ ``may_min``; and every
             hidden channel, flagged ``unanalyzable`` with the reference's reason.
             LOW-RISK: the rest of what the walk touched.
    conf     max(lex · 0.5^(distance - 1), co-change, test confidence), then floored to the
             bucket: MUST ≥ ``must_min``, MAY ≥ ``may_min`` (a hidden channel is exactly
             ``may_min``); a LOW-RISK conf is below ``may_min`` by construction. 4 decimals.
    reason   ``causes.cause_label`` of the site's change and relation; a hidden channel appends
             ``(unanalyzable: <reason>)``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from impact_ls.analysis.binding import Breaks
from impact_ls.analysis.causes import cause_label
from impact_ls.analysis.rank import Ranked
from impact_ls.analysis.relations import select_relations
from impact_ls.config import Settings
from impact_ls.model import (
    Bucket,
    Change,
    QualName,
    Relation,
    Triage,
    TriageEntry,
    Unanalyzable,
)

logger = logging.getLogger(__name__)

_DECIMALS = 4
_ORDER = {Bucket.MUST_INSPECT: 0, Bucket.MAY_IMPACT: 1, Bucket.LOW_RISK: 2}


def triage_members(
    ranked: Sequence[Ranked],
    changes: Sequence[Change],
    *,
    breaks: Breaks,
    hidden: Sequence[Unanalyzable],
    settings: Settings,
) -> Triage:
    """Split every site of ``ranked`` (and every hidden channel) into the three buckets."""
    change_of: dict[QualName, Change] = {}
    for each in changes:
        change_of.setdefault(each.entity, each)
    entries: list[TriageEntry] = []
    for item in ranked:
        member = item.member
        change = change_of.get(member.seed)
        if change is None or not member.sites:
            logger.debug("triage: %s has no change or no site; skipped", member.entity)
            continue
        base = max(item.lex * 0.5 ** (member.distance - 1), item.cochange, item.test_conf)
        soft = (
            item.lex >= settings.lex_min
            or item.cochange >= settings.cochange_min
            or item.test_conf >= settings.test_min
            or base >= settings.may_min
        )
        for site in member.sites:
            relation = site.relation or member.relations[0]
            provable = (site.args is None or site.args.provable) and not site.name_matched
            site_breaks = breaks.at(member, site)
            if member.distance == 1 and site_breaks and provable:
                bucket, conf = Bucket.MUST_INSPECT, max(base, settings.must_min)
            elif not provable or soft:
                bucket, conf = Bucket.MAY_IMPACT, max(base, settings.may_min)
            else:
                bucket, conf = Bucket.LOW_RISK, base
            entries.append(
                TriageEntry(
                    entity=member.entity,
                    file=site.file,
                    line=site.span.line,
                    range=site.span.as_range(),
                    conf=round(conf, _DECIMALS),
                    distance=member.distance,
                    relation=relation,
                    reason=cause_label(change, site=member.entity, relation=relation),
                    seed=change.entity,
                    change_type=change.change_type,
                    bucket=bucket,
                    name_matched=site.name_matched,
                    breaks=site_breaks,
                    via=member.via,
                )
            )
    entries.extend(_hidden_entries(hidden, changes, change_of, settings))
    return _partition(entries)


def _hidden_entries(
    hidden: Sequence[Unanalyzable],
    changes: Sequence[Change],
    change_of: dict[QualName, Change],
    settings: Settings,
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
        out.append(
            TriageEntry(
                entity=ref.entity,
                file=ref.file,
                line=ref.line,
                range=((ref.line, 0), (ref.line, 0)),
                conf=round(settings.may_min, _DECIMALS),
                distance=1,
                relation=relation,
                reason=f"{label} (unanalyzable: {ref.reason})",
                seed=change.entity,
                change_type=change.change_type,
                bucket=Bucket.MAY_IMPACT,
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
) -> tuple[bool, float, str, int, str, tuple[tuple[int, int], tuple[int, int]], str, str]:
    # Tests rank below production sites: fix the code, then its tests (a test that calls the
    # changed function directly has test confidence 1.0, which would otherwise put it first).
    return (
        _is_test_file(entry.file),
        -entry.conf,
        entry.file,
        entry.line,
        entry.entity,
        entry.range,
        entry.seed,
        entry.reason,
    )


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
