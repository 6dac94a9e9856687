"""The report as a readable terminal page: changes, triage, batches, tests, next edits, audit.

``render_text`` is pure; the CLI prints its result. Sections appear in reading order — what
changed, what must be inspected, what may be impacted, how many low-risk sites were left out, the
batches to edit together, the tests to re-run, co-change partners, unanalyzable sites, the next
edits and the audit. Empty sections are omitted. ANSI colour (red MUST, yellow MAY, dim LOW) is
used only when ``color=True``.
"""

from __future__ import annotations

from collections.abc import Sequence

from impact_ls.model import Change, ChangeType, Evidence, Report, TriageEntry
from impact_ls.report.wording import plural, short_entity

_RESET = "\x1b[0m"
_BOLD = "\x1b[1m"
_DIM = "\x1b[2m"
_RED = "\x1b[31m"
_YELLOW = "\x1b[33m"

_MAX_LOC_WIDTH = 40
_MAX_ENTITY_WIDTH = 48
_MAX_BATCH_NAMES = 8
# A test selected only by a static path is the norm and stays unmarked.
_EVIDENCE = {
    Evidence.STATIC: "",
    Evidence.RECORDED: "  (recorded coverage)",
    Evidence.BOTH: "  (recorded coverage + static path)",
}


class _Style:
    """Wraps text in ANSI codes, or leaves it alone when colour is off."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, *codes: str) -> str:
        if not self.color or not codes:
            return text
        return "".join(codes) + text + _RESET


def _change_lines(change: Change) -> list[str]:
    lines = [f"  {change.change_type}  {change.entity}  {change.file}:{change.line_range[0]}"]
    if change.change_type is ChangeType.INCOMPLETE:
        lines.append("    does not parse yet; the previous analysis of it is kept")
    elif change.before_sig and change.after_sig and change.before_sig != change.after_sig:
        lines.append(f"    {change.before_sig} → {change.after_sig}")
    elif change.before_sig or change.after_sig:
        lines.append(f"    {change.after_sig or change.before_sig}")
    if change.what:
        lines.append(f"    {change.what}")
    return lines


def _entry_lines(
    entries: Sequence[TriageEntry], style: _Style, codes: tuple[str, ...]
) -> list[str]:
    """``file:line  entity  reason`` rows, under their seed when several changes caused them."""
    seeds = list(dict.fromkeys(e.seed for e in entries))
    loc_width = min(_MAX_LOC_WIDTH, max(len(f"{e.file}:{e.line}") for e in entries))
    ent_width = min(_MAX_ENTITY_WIDTH, max(len(e.entity) for e in entries))
    lines: list[str] = []
    for seed in seeds:
        indent = "  "
        if len(seeds) > 1:
            lines.append(f"  from {seed}")
            indent = "    "
        for e in (e for e in entries if e.seed == seed):
            loc = f"{e.file}:{e.line}".ljust(loc_width)
            flags = "  [unanalyzable]" if e.unanalyzable else ""
            flags += "  [name-matched]" if e.name_matched and not e.unanalyzable else ""
            row = f"{style(loc, *codes)}  {e.entity.ljust(ent_width)}  {e.reason}{flags}"
            lines.append(f"{indent}{row}")
            lines.extend(f"{indent}    ↳ {b.detail}" for b in e.breaks)
    return lines


_Section = tuple[str, tuple[str, ...], list[str]]


def _triage_sections(report: Report, style: _Style) -> list[_Section]:
    triage = report.triage
    sections: list[_Section] = []
    if triage.must_inspect:
        title = f"MUST-INSPECT · {plural(len(triage.must_inspect), 'site')}"
        sections.append((title, (_RED,), _entry_lines(triage.must_inspect, style, (_RED,))))
    if triage.may_impact:
        title = f"MAY-IMPACT · {plural(len(triage.may_impact), 'site')}"
        sections.append((title, (_YELLOW,), _entry_lines(triage.may_impact, style, (_YELLOW,))))
    if triage.low_risk:
        title = f"LOW-RISK · {plural(len(triage.low_risk), 'site')} (not listed)"
        sections.append((title, (_DIM,), []))
    if not sections:
        sections.append(("No other site is affected.", (), []))
    return sections


def _batch_lines(report: Report) -> list[str]:
    lines = []
    for b in report.batches:
        names = [short_entity(m) for m in b.members[:_MAX_BATCH_NAMES]]
        if b.size > _MAX_BATCH_NAMES:
            names.append(f"… (+{b.size - _MAX_BATCH_NAMES})")
        split = " (split)" if b.split else ""
        sites = plural(b.size, "site")
        # People count from 1; the JSON keeps the 0-based batch_id of the schema.
        lines.append(f"  Batch {b.batch_id + 1} · {sites}{split}: {' → '.join(names)}")
    return lines


def _next_edit_section(report: Report) -> list[_Section]:
    nxt = report.next_edits
    if not (nxt.items or nxt.failed):
        return []
    origin = "batch order" if nxt.failed else "chosen by the LLM"
    lines = [f"  {i}. {e.entity} — {e.reason}" for i, e in enumerate(nxt.items, 1)]
    return [(f"Next edits ({origin})", (), lines or ["  (none)"])]


def _audit_lines(report: Report, style: _Style) -> list[str]:
    audit = report.audit
    lines = []
    if audit.verified:
        lines.append(f"  verified: {audit.verified}")
    if audit.heuristic:
        lines.append(f"  heuristic: {audit.heuristic}")
    if audit.truncated:
        lines.append("  truncated: a cap cut this report; see the notes")
    lines.extend(f"  note: {note}" for note in audit.notes)
    return [style(line, _DIM) for line in lines]


def render_text(report: Report, *, color: bool) -> str:
    """Render ``report`` as a terminal page; ANSI colour codes only when ``color`` is true."""
    style = _Style(color)
    if not report.changes:
        lines = [f"No changes against {report.base}."]
        lines.extend(f"  note: {note}" for note in report.audit.notes)
        return "\n".join(lines) + "\n"

    title = f"Blast radius of {plural(len(report.changes), 'change')} against {report.base}"
    if report.stale:
        title += " (stale: the edit does not parse yet; showing the last complete analysis)"
    sections: list[_Section] = [
        (title, (), [line for c in report.changes for line in _change_lines(c)]),
        *_triage_sections(report, style),
    ]
    if report.batches:
        title = "Batches (edit and validate each together, in this order)"
        sections.append((title, (), _batch_lines(report)))
    if report.tests:
        lines = [f"  {t.conf:.2f}  {t.test}{_EVIDENCE[t.evidence]}" for t in report.tests]
        sections.append((f"Affected tests · {len(report.tests)}", (), lines))
    if report.cochange:
        lines = [f"  {c.score:.2f}  {c.file}" for c in report.cochange]
        sections.append(("Co-change partners (from git history)", (), lines))
    if report.unanalyzable:
        lines = [f"  {u.file}:{u.line}  {u.reason}" for u in report.unanalyzable]
        title = "Unanalyzable sites (static analysis cannot follow these; check them by hand)"
        sections.append((title, (), lines))
    sections.extend(_next_edit_section(report))
    sections.append((f"Next: {report.next.action} — {report.next.reason}", (), []))
    audit = _audit_lines(report, style)
    if audit:
        sections.append(("Audit", (_DIM,), audit))
    blocks = ["\n".join([style(title, _BOLD, *codes), *lines]) for title, codes, lines in sections]
    return "\n\n".join(blocks) + "\n"
