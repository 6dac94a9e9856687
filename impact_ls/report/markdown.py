"""The report as GitHub-flavoured Markdown: the job summary of the impact-ls GitHub Action.

``render_markdown(report, base=..., link=...)`` gives a heading with the counts, one table of the
MUST-INSPECT and MAY-IMPACT sites (each ``file:line`` a link when ``link`` makes one, the cause
and what broke), the batches in order, the affected tests as a ``pytest`` command, co-change
partners, and the audit folded away. Long lists stop at ``MAX_ROWS`` with a count of the rest.
Pure: the caller decides where links point (the commit on GitHub) and where the text goes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from impact_ls.model import Report, TriageEntry
from impact_ls.report.wording import plural, short_entity

MAX_ROWS = 50
MAX_TESTS = 100

Link = Callable[[str, int], str | None]


def _cell(text: str) -> str:
    """Text safe inside a table cell: no pipe, no line break."""
    return text.replace("|", "\\|").replace("\n", " ")


def _where(file: str, line: int, link: Link | None) -> str:
    label = f"`{file}:{line}`"
    url = link(file, line) if link is not None else None
    return f"[{label}]({url})" if url else label


def _rows(kind: str, entries: Sequence[TriageEntry], link: Link | None) -> list[str]:
    rows = []
    for entry in entries[:MAX_ROWS]:
        line = entry.range[0][0] or entry.line
        broke = "".join(f"<br>↳ {_cell(b.detail)}" for b in entry.breaks)
        flag = " (name-matched)" if entry.name_matched else ""
        flag += " (unanalyzable)" if entry.unanalyzable else ""
        rows.append(
            f"| {kind} | {_where(entry.file, line, link)} | `{_cell(entry.entity)}`{flag} "
            f"| {_cell(entry.reason)}{broke} |"
        )
    if len(entries) > MAX_ROWS:
        rows.append(f"| {kind} | … | {len(entries) - MAX_ROWS} more | |")
    return rows


def render_markdown(report: Report, *, base: str, link: Link | None = None) -> str:
    """The job summary of ``report`` against ``base`` (a revision as the user should read it)."""
    triage = report.triage
    must, may = triage.must_inspect, triage.may_impact
    lines = [f"## impact-ls: blast radius against `{base}`", ""]
    if not report.changes:
        lines += ["No Python change against the base: nothing to inspect.", ""]
        return "\n".join(lines)
    tests = len(report.selected_tests())
    lines += [
        f"**{len(must)} must-inspect · {len(may)} may-impact · "
        f"{plural(len(report.batches), 'batch')} · {plural(tests, 'affected test')}**"
        f" from {plural(len(report.changes), 'change')}: "
        + ", ".join(f"`{short_entity(c.entity)}` ({c.change_type})" for c in report.changes[:10]),
        "",
    ]
    if must or may:
        lines += ["| | site | entity | cause |", "|---|---|---|---|"]
        lines += _rows("🔴 must", must, link)
        lines += _rows("🟠 may", may, link)
        lines.append("")
    else:
        lines += ["No call site or reference has to change.", ""]
    if report.batches:
        lines.append("**Batches** (edit and validate each together, in this order)")
        lines.append("")
        for number, batch in enumerate(report.batches, 1):
            names = " → ".join(short_entity(m) for m in batch.members[:12])
            more = " → …" if batch.size > 12 else ""
            lines.append(f"{number}. {plural(batch.size, 'site')}: {names}{more}")
        lines.append("")
    if report.tests:
        ids = report.selected_tests()
        lines += [f"**Affected tests** ({len(ids)})", "", "```"]
        lines.append("python -m pytest " + " ".join(ids[:MAX_TESTS]))
        lines.append("```")
        if len(ids) > MAX_TESTS:
            lines.append(f"… and {len(ids) - MAX_TESTS} more (`impact-ls tests` lists them all)")
        lines.append("")
    if report.cochange:
        partners = ", ".join(f"`{c.file}` ({c.score:.2f})" for c in report.cochange[:10])
        lines += [f"**Often changed together**: {partners}", ""]
    audit = report.audit
    lines += [
        "<details><summary>Audit</summary>",
        "",
        f"- verified: {audit.verified}",
        f"- heuristic: {audit.heuristic}",
        *(f"- note: {note}" for note in audit.notes),
        *(["- a cap cut the analysis (truncated)"] if audit.truncated else []),
        "",
        "</details>",
        "",
    ]
    return "\n".join(lines)
