"""The report as a page for a person at a terminal: what changed, what breaks, what to do next.

``render_text`` is pure; the CLI prints its result. Reading order: the title and the notes a
reader must not miss (skipped files, caps), the changed definitions named once each, the
MUST-INSPECT sites (what broke there, in plain words) and the MAY-IMPACT sites (how each reaches
the edit), grouped by file with their line numbers, how many low-risk sites were left out, the
batches to edit together, the tests to re-run, co-change partners, sites static analysis cannot
follow, the next step and the audit. Empty sections are omitted and every line fits
``WIDTH`` columns (a path longer than that is printed whole: it must stay copyable).
``--format json`` keeps the full detail, cause labels included. ANSI colour (red MUST, yellow
MAY, dim LOW) only with ``color=True``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from impact_ls.model import Change, ChangeType, Evidence, QualName, Report, TriageEntry
from impact_ls.report.wording import change_summary, plural, short_entity, site_point

WIDTH = 100

_RESET = "\x1b[0m"
_BOLD = "\x1b[1m"
_DIM = "\x1b[2m"
_RED = "\x1b[31m"
_YELLOW = "\x1b[33m"

_MAX_ENTITY_WIDTH = 32
_MAX_BATCH_NAMES = 6
# Notes that change what the page can be trusted for come first, not at the end.
_URGENT_NOTES = ("skipped ", "indexing in progress")
# A test selected only by a static path is the norm and stays unmarked.
_EVIDENCE = {
    Evidence.STATIC: "",
    Evidence.RECORDED: "  (recorded coverage)",
    Evidence.BOTH: "  (recorded coverage + static path)",
    Evidence.NAMED: "  (its module's own test file: no path reaches a test)",
}


class _Style:
    """Wraps text in ANSI codes, or leaves it alone when colour is off."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, *codes: str) -> str:
        if not self.color or not codes:
            return text
        return "".join(codes) + text + _RESET


def _wrap(text: str, indent: str, hanging: str | None = None) -> list[str]:
    """``text`` filled to ``WIDTH`` columns; continuation lines start with ``hanging``."""
    return textwrap.wrap(
        text,
        width=WIDTH,
        initial_indent=indent,
        subsequent_indent=indent + "  " if hanging is None else hanging,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [indent]


def _base_label(base: str) -> str:
    return "the saved text" if base == "saved" else base


def _note_text(note: str) -> str:
    """A note in plain words, with what to do about a skipped file."""
    if note.startswith("skipped ") and "larger than" in note:
        return note + " (raise max-file-bytes in [tool.impact-ls] to include it)"
    return note


def _notes(report: Report) -> tuple[list[str], list[str]]:
    """The urgent notes (shown under the title) and the rest (shown in the audit)."""
    urgent: list[str] = []
    rest: list[str] = []
    for raw in report.audit.notes:
        note = _note_text(raw)
        (urgent if note.startswith(_URGENT_NOTES) or ": walk capped" in raw else rest).append(note)
    return urgent, rest


def _change_lines(change: Change, number: int | None) -> list[str]:
    where = f"{change.file}:{change.line_range[0]}"
    label = f"{number}. " if number is not None else ""
    lines = _wrap(f"{label}{where}  {change.entity}: {change_summary(change)}", "  ", "      ")
    if change.change_type is ChangeType.INCOMPLETE:
        lines.append("      the previous analysis of it is kept until it parses")
    elif change.before_sig and change.after_sig and change.before_sig != change.after_sig:
        lines.extend(_wrap(f"- {change.before_sig}", "      ", "        "))
        lines.extend(_wrap(f"+ {change.after_sig}", "      ", "        "))
    elif change.before_sig or change.after_sig:
        lines.extend(_wrap(change.after_sig or change.before_sig, "      ", "        "))
    return lines


def _site_rows(
    entries: Sequence[TriageEntry], indent: str, style: _Style, codes: tuple[str, ...]
) -> list[str]:
    """``line  entity  point`` rows under a header per file, files in report order."""
    by_file: dict[str, list[TriageEntry]] = {}
    for entry in entries:
        by_file.setdefault(entry.file, []).append(entry)
    digits = max(len(str(e.line)) for e in entries)
    names = [short_entity(e.entity) for e in entries]
    ent_width = min(_MAX_ENTITY_WIDTH, max(len(n) for n in names))
    lines: list[str] = []
    for file, rows in by_file.items():
        lines.append(f"{indent}{style(file, *codes)}")
        for entry in rows:
            name = short_entity(entry.entity)
            lead = f"{indent}  {str(entry.line).rjust(digits)}  "
            point = site_point(entry)
            if len(name) > ent_width:
                lines.append(lead + name)
                pad = " " * (len(lead) + 2)
                lines.extend(_wrap(point, pad, pad + "  "))
                continue
            pad = " " * (len(lead) + ent_width + 2)
            text = lead + name.ljust(ent_width) + "  " + point
            lines.extend(_wrap(text, "", pad + "  ") if len(text) > WIDTH else [text])
    return lines


def _bucket_lines(
    report: Report, entries: Sequence[TriageEntry], style: _Style, codes: tuple[str, ...]
) -> list[str]:
    """Sites grouped by file, and first by changed definition when several changes caused them."""
    seeds = list(dict.fromkeys(e.seed for e in entries))
    if len(seeds) == 1:
        return _site_rows(entries, "  ", style, codes)
    where = {c.entity: f"{c.file}:{c.line_range[0]}" for c in report.changes}
    lines: list[str] = []
    for seed in seeds:
        lines.extend(_wrap(f"from {short_entity(seed)} ({where.get(seed, seed)})", "  "))
        lines.extend(_site_rows([e for e in entries if e.seed == seed], "    ", style, codes))
    return lines


_Section = tuple[str, tuple[str, ...], list[str]]


def _triage_sections(report: Report, style: _Style) -> list[_Section]:
    triage = report.triage
    sections: list[_Section] = []
    if triage.must_inspect:
        title = f"MUST-INSPECT · {plural(len(triage.must_inspect), 'site')} that break: fix each"
        lines = _bucket_lines(report, triage.must_inspect, style, (_RED,))
        sections.append((title, (_RED,), lines))
    if triage.may_impact:
        title = (
            f"MAY-IMPACT · {plural(len(triage.may_impact), 'site')} to check (no break is proven)"
        )
        lines = _bucket_lines(report, triage.may_impact, style, (_YELLOW,))
        sections.append((title, (_YELLOW,), lines))
    if triage.low_risk:
        title = (
            f"LOW-RISK · {plural(len(triage.low_risk), 'site')}, not listed "
            "(--format json lists them)"
        )
        sections.append((title, (_DIM,), []))
    if not sections:
        sections.append(("No other site is affected.", (), []))
    return sections


def _batch_lines(report: Report) -> list[str]:
    lines = []
    for number, batch in enumerate(report.batches, 1):
        names = [short_entity(m) for m in batch.members[:_MAX_BATCH_NAMES]]
        if batch.size > _MAX_BATCH_NAMES:
            names.append(f"… (+{batch.size - _MAX_BATCH_NAMES})")
        split = ", split" if batch.split else ""
        size = f"  ({plural(batch.size, 'site')}{split})" if batch.size > 1 or split else ""
        lines.extend(_wrap(f"{number}. {' → '.join(names)}{size}", "  ", "     "))
    return lines


def _entry_of(report: Report, entity: QualName) -> TriageEntry | None:
    for bucket in (report.triage.must_inspect, report.triage.may_impact):
        for entry in bucket:
            if entry.entity == entity:
                return entry
    return None


def _next_edit_section(report: Report) -> list[_Section]:
    """The LLM's order with its reasons; the batch-order fallback is the batches section."""
    nxt = report.next_edits
    if not nxt.items or nxt.failed:
        return []
    lines = []
    for i, item in enumerate(nxt.items, 1):
        entry = _entry_of(report, item.entity)
        where = f"{entry.file}:{entry.line}  " if entry is not None else ""
        text = f"{i}. {where}{short_entity(item.entity)} — {item.reason}"
        lines.extend(_wrap(text, "  ", "     "))
    return [("Next edits (as the LLM ordered them)", (), lines)]


def _tests_section(report: Report) -> _Section:
    """The listed tests, then why each group beyond a call path was selected (import-time
    breaks, conftest hooks), once per reason; the count is the whole selection's."""
    lines = [f"  {t.conf:.2f}  {t.test}{_EVIDENCE[t.evidence]}" for t in report.tests]
    whole = report.selection or report.tests
    reasons: dict[str, set[str]] = {}
    for hit in whole:
        if hit.reason:
            reasons.setdefault(hit.reason, set()).add(hit.test)
    for reason in sorted(reasons):
        lines.extend(_wrap(f"why {plural(len(reasons[reason]), 'test')}: {reason}", "  ", "    "))
    count = len({t.test for t in whole})
    shown = len({t.test for t in report.tests})
    listed = f" · {shown} listed" if shown < count else ""
    return (f"Affected tests · {count}{listed} (pytest $(impact-ls tests))", (), lines)


def _next_line(report: Report) -> str:
    """The one step to take now, from the report's ``next`` and its sites."""
    must = report.triage.must_inspect
    tests = len(report.selected_tests())
    run = f"run the {plural(tests, 'affected test')}" if tests else ""
    if report.next.action == "edit" and must:
        first = next(
            (e for i in report.next_edits.items if (e := _entry_of(report, i.entity)) in must),
            must[0],
        )
        more = len(must) - 1
        text = f"Next: fix {short_entity(first.entity)} at {first.file}:{first.line}"
        text += f" ({site_point(first)})"
        if more:
            others = "site" if more == 1 else f"{more} sites"
            text += f", then the other {others} that must change"
        return text + (f"; then {run}" if run else "")
    if report.next.action == "run-tests" and run:
        may = len(report.triage.may_impact)
        review = f"; review the {plural(may, 'may-impact site')}" if may else ""
        return f"Next: no site must change; {run} (pytest $(impact-ls tests)){review}"
    return f"Next: {report.next.reason}"


def _audit_lines(report: Report, notes: Sequence[str], style: _Style) -> list[str]:
    audit = report.audit
    lines = []
    if audit.verified:
        lines.extend(_wrap(f"verified: {audit.verified}", "  ", "    "))
    if audit.heuristic:
        lines.extend(_wrap(f"heuristic: {audit.heuristic}", "  ", "    "))
    if audit.truncated:
        lines.append("  truncated: a cap cut this report; see the notes")
    for note in notes:
        lines.extend(_wrap(f"note: {note}", "  ", "    "))
    return [style(line, _DIM) for line in lines]


def _title(report: Report) -> str:
    live = [c for c in report.changes if c.change_type is not ChangeType.INCOMPLETE]
    what = short_entity(live[0].entity) if len(live) == 1 else plural(len(report.changes), "change")
    title = f"Blast radius of {what} against {_base_label(report.base)}"
    if report.stale:
        title += " (stale: the edit does not parse yet; showing the last complete analysis)"
    return title


def render_text(report: Report, *, color: bool) -> str:
    """Render ``report`` as a terminal page; ANSI colour codes only when ``color`` is true."""
    style = _Style(color)
    urgent, notes = _notes(report)
    if not report.changes:
        lines = [f"No changes against {_base_label(report.base)}."]
        lines.extend(line for note in (*urgent, *notes) for line in _wrap(f"note: {note}", "  "))
        return "\n".join(lines) + "\n"

    numbered = len(report.changes) > 1
    head = [line for note in urgent for line in _wrap(f"note: {note}", "  ", "    ")]
    for i, change in enumerate(report.changes, 1):
        head.extend(_change_lines(change, i if numbered else None))
    sections: list[_Section] = [(_title(report), (), head), *_triage_sections(report, style)]
    if report.batches:
        title = "Edit in this order (each batch changes and is tested together)"
        sections.append((title, (), _batch_lines(report)))
    if report.tests:
        sections.append(_tests_section(report))
    if report.cochange:
        lines = [f"  {c.score:.2f}  {c.file}" for c in report.cochange]
        sections.append(("Files that changed together with these in git history", (), lines))
    listed = {(e.file, e.line) for e in report.triage.may_impact if e.unanalyzable}
    hidden = [u for u in report.unanalyzable if (u.file, u.line) not in listed]
    if hidden:
        lines = [line for u in hidden for line in _wrap(f"{u.file}:{u.line}  {u.reason}", "  ")]
        title = "Also reached by name only (static analysis cannot follow these: check by hand)"
        sections.append((title, (), lines))
    sections.extend(_next_edit_section(report))
    sections.append((_next_line(report), (_BOLD,), []))
    audit = _audit_lines(report, notes, style)
    if audit:
        sections.append(("Audit", (_DIM,), audit))
    blocks = []
    for title, codes, lines in sections:
        titled = [style(t, _BOLD, *codes) for t in _wrap(title, "", "  ")]
        blocks.append("\n".join([*titled, *lines]))
    return "\n\n".join(blocks) + "\n"
