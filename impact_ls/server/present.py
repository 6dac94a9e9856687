"""Turn ``Report`` values into LSP objects: diagnostics, code lenses and code actions.

Pure: every function maps model values to lsprotocol values and touches no file, socket or
clock. Positions come from a ``Locator`` the caller supplies, which knows the client's position
encoding and the text of each file; report lines are 1-based and columns are UTF-8 byte offsets
(as ``ast`` gives them), LSP lines are 0-based.

Rules (DESIGN §6):
- MUST-INSPECT → Warning at the site, ``code: "must-inspect"``, message = what broke there, then
  the cause label (``missing required argument 'x' — <cause>``: a panel that cuts the line keeps
  the point), ``relatedInformation`` → the changed definition.
- MAY-IMPACT → Information, Hint or nothing (``may_severity``); unanalyzable ones say so.
- One Hint summary at each changed definition that reaches anything.
- Diagnostics of a file are the union over all reports (``union_diagnostics``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from lsprotocol import types

from impact_ls.model import Change, ChangeType, Report, TriageEntry
from impact_ls.report.wording import plural, short_entity, site_message, site_point
from impact_ls.server.testrun import CaseOutcome, TestRun

SOURCE = "impact"
CODE_MUST = "must-inspect"
CODE_MAY = "may-impact"
CODE_UNANALYZABLE = "unanalyzable"
CODE_SUMMARY = "blast-radius"
CODE_TEST_FAILED = "test-failed"

CMD_SHOW_BLAST_RADIUS = "impact.showBlastRadius"
CMD_RUN_AFFECTED_TESTS = "impact.runAffectedTests"
CMD_REINDEX = "impact.reindex"
CMD_OPEN_LOCATION = "impact.openLocation"
CMD_SHOW_LOCATIONS = "impact.showLocations"
COMMANDS = (
    CMD_SHOW_BLAST_RADIUS,
    CMD_RUN_AFFECTED_TESTS,
    CMD_REINDEX,
    CMD_OPEN_LOCATION,
    CMD_SHOW_LOCATIONS,
)

_STALE = " (stale: the edit does not parse yet)"
_LENS_NAMES = 2
_SUMMARY_RELATED = 20


class Locator(Protocol):
    """Where things are in the client's terms: URIs and encoded positions."""

    def uri(self, file: str) -> str:
        """The URI of a root-relative file."""
        ...

    def position(self, file: str, line: int, col: int) -> types.Position:
        """The client position of 1-based ``line`` and UTF-8 byte column ``col`` in ``file``."""
        ...

    def line_end(self, file: str, line: int) -> types.Position:
        """The client position of the end of 1-based ``line`` in ``file``."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """A place the user may want to go next: an entity, why, and where it is."""

    entity: str
    reason: str
    file: str
    range: types.Range


def _line_range(locator: Locator, file: str, line: int) -> types.Range:
    line = max(line, 1)
    return types.Range(start=locator.position(file, line, 0), end=locator.line_end(file, line))


def _entry_range(locator: Locator, entry: TriageEntry) -> types.Range:
    (line, col), (end_line, end_col) = entry.range
    if line <= 0:
        return _line_range(locator, entry.file, entry.line)
    start = locator.position(entry.file, line, col)
    if end_line < line or (end_line == line and end_col <= col):
        return types.Range(start=start, end=locator.line_end(entry.file, line))
    return types.Range(start=start, end=locator.position(entry.file, end_line, end_col))


def _live_changes(report: Report) -> tuple[Change, ...]:
    return tuple(c for c in report.changes if c.change_type is not ChangeType.INCOMPLETE)


def _entries_of(report: Report, change: Change) -> tuple[list[TriageEntry], list[TriageEntry]]:
    """The MUST and MAY entries seeded by ``change`` (all of them when it is the only change)."""
    must = [e for e in report.triage.must_inspect if e.seed == change.entity]
    may = [e for e in report.triage.may_impact if e.seed == change.entity]
    if not must and not may and len(_live_changes(report)) == 1:
        return list(report.triage.must_inspect), list(report.triage.may_impact)
    return must, may


def _loc(locator: Locator, file: str, rng: types.Range) -> dict[str, Any]:
    return {"uri": locator.uri(file), "range": _range_dict(rng)}


def _range_dict(rng: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


def _sort_key(d: types.Diagnostic) -> tuple[int, int, int, int, str, str]:
    return (
        d.range.start.line,
        d.range.start.character,
        d.range.end.line,
        d.range.end.character,
        str(d.code or ""),
        d.message,
    )


# --------------------------------------------------------------------------- diagnostics


def report_diagnostics(
    report: Report, *, locator: Locator, may_severity: str = "information"
) -> dict[str, list[types.Diagnostic]]:
    """Diagnostics of one report keyed by URI: MUST/MAY at their sites, a summary at each seed."""
    out: dict[str, list[types.Diagnostic]] = {}
    changes = {c.entity: c for c in report.changes}
    may_level = {
        "information": types.DiagnosticSeverity.Information,
        "hint": types.DiagnosticSeverity.Hint,
    }.get(may_severity)
    buckets: list[tuple[Sequence[TriageEntry], types.DiagnosticSeverity | None]] = [
        (report.triage.must_inspect, types.DiagnosticSeverity.Warning),
        (report.triage.may_impact, may_level),
    ]
    for entries, severity in buckets:
        if severity is None:
            continue
        for entry in entries:
            out.setdefault(locator.uri(entry.file), []).append(
                _site_diagnostic(entry, severity, changes.get(entry.seed), locator, report.stale)
            )
    for change in _live_changes(report):
        summary = _summary_diagnostic(report, change, locator)
        if summary is not None:
            out.setdefault(locator.uri(change.file), []).append(summary)
    return {uri: sorted(diags, key=_sort_key) for uri, diags in out.items()}


def _site_diagnostic(
    entry: TriageEntry,
    severity: types.DiagnosticSeverity,
    change: Change | None,
    locator: Locator,
    stale: bool,
) -> types.Diagnostic:
    must = severity is types.DiagnosticSeverity.Warning
    message = site_message(entry)
    code = CODE_MUST if must else (CODE_UNANALYZABLE if entry.unanalyzable else CODE_MAY)
    related = None
    if change is not None:
        related = [
            types.DiagnosticRelatedInformation(
                location=types.Location(
                    uri=locator.uri(change.file),
                    range=_line_range(locator, change.file, change.line_range[0]),
                ),
                message=f"changed: {change.after_sig or change.before_sig or change.entity}",
            )
        ]
    return types.Diagnostic(
        range=_entry_range(locator, entry),
        message=message + (_STALE if stale else ""),
        severity=severity,
        code=code,
        source=SOURCE,
        related_information=related,
        data={"entity": entry.entity, "seed": entry.seed, "bucket": str(entry.bucket)},
    )


def _summary_diagnostic(
    report: Report, change: Change, locator: Locator
) -> types.Diagnostic | None:
    must, may = _entries_of(report, change)
    tests = _tests_of(report, change)
    if not must and not may and not tests:
        return None
    batches = _batches_of(report, change, must + may)
    text = (
        f"Blast radius of {short_entity(change.entity)} ({change.change_type}): "
        f"{len(must)} must-inspect · {len(may)} may-impact · {plural(len(batches), 'batch')} · "
        f"{_affected(len(tests), cut=report.selection_cut)}"
    )
    if must:
        sites = ", ".join(f"{e.file}:{e.line}" for e in must[:5])
        text += f"; inspect {sites}" + (" …" if len(must) > 5 else "")
    related = [
        types.DiagnosticRelatedInformation(
            location=types.Location(uri=locator.uri(e.file), range=_entry_range(locator, e)),
            message=site_message(e),
        )
        for e in must[:_SUMMARY_RELATED]
    ]
    return types.Diagnostic(
        range=_line_range(locator, change.file, change.line_range[0]),
        message=text + (_STALE if report.stale else ""),
        severity=types.DiagnosticSeverity.Hint,
        code=CODE_SUMMARY,
        source=SOURCE,
        related_information=related or None,
        data={"entity": change.entity, "must": len(must), "may": len(may)},
    )


def union_diagnostics(
    parts: Iterable[Mapping[str, Sequence[types.Diagnostic]]],
) -> dict[str, list[types.Diagnostic]]:
    """Merge per-URI diagnostics of several reports; identical ones appear once, sorted."""
    merged: dict[str, dict[tuple[Any, ...], types.Diagnostic]] = {}
    for part in parts:
        for uri, diags in part.items():
            bucket = merged.setdefault(uri, {})
            for d in diags:
                bucket.setdefault((*_sort_key(d), d.severity), d)
    return {uri: sorted(b.values(), key=_sort_key) for uri, b in merged.items()}


def test_diagnostics(run: TestRun, *, locator: Locator) -> dict[str, list[types.Diagnostic]]:
    """An Error on each failing or erroring test's definition line, keyed by URI."""
    out: dict[str, list[types.Diagnostic]] = {}
    for case in run.cases:
        if case.outcome not in (CaseOutcome.FAILED, CaseOutcome.ERROR) or not case.file:
            continue
        verb = "failed" if case.outcome is CaseOutcome.FAILED else "errored"
        out.setdefault(locator.uri(case.file), []).append(
            types.Diagnostic(
                range=_line_range(locator, case.file, case.line or 1),
                message=f"affected test {verb}: {case.message or case.test_id}",
                severity=types.DiagnosticSeverity.Error,
                code=CODE_TEST_FAILED,
                source=SOURCE,
                data={"test": case.test_id},
            )
        )
    return {uri: sorted(d, key=_sort_key) for uri, d in out.items()}


# --------------------------------------------------------------------------- lenses


def _tests_of(report: Report, change: Change) -> list[str]:
    # the whole selection, not the report's shortened list: the lens runs every selected test
    hits = report.selection or report.tests
    files = {c.file for c in _live_changes(report)}
    if len(files) <= 1:
        return sorted({t.test for t in hits})
    return sorted({t.test for t in hits if t.file == change.file})


def _batches_of(report: Report, change: Change, entries: Sequence[TriageEntry]) -> list[int]:
    wanted = {change.entity, *(e.entity for e in entries)}
    return [b.batch_id for b in report.batches if wanted & set(b.members)]


def affected_tests(report: Report | None, *, file: str | None = None) -> list[str]:
    """The affected test ids of ``report`` (of the changes in ``file`` if given), sorted."""
    if report is None:
        return []
    changes = [c for c in _live_changes(report) if file is None or c.file == file]
    return sorted({t for c in changes for t in _tests_of(report, c)})


def _member_locations(report: Report, locator: Locator) -> dict[str, tuple[str, types.Range]]:
    """Where each entity of the report is: its triage site, else its change, else its DAG node."""
    where: dict[str, tuple[str, types.Range]] = {}
    for node in report.dag.nodes:
        if node.file and node.line > 0:
            where[node.entity] = (node.file, _line_range(locator, node.file, node.line))
    for change in report.changes:
        where[change.entity] = (
            change.file,
            _line_range(locator, change.file, change.line_range[0]),
        )
    for entries in (report.triage.low_risk, report.triage.may_impact, report.triage.must_inspect):
        for e in entries:
            where[e.entity] = (e.file, _entry_range(locator, e))
    return where


def code_lenses(report: Report | None, *, file: str, locator: Locator) -> list[types.CodeLens]:
    """Lenses on each changed definition of ``file``: blast radius, run tests, one per batch."""
    if report is None:
        return []
    lenses: list[types.CodeLens] = []
    where = _member_locations(report, locator)
    uri = locator.uri(file)
    ordinal = {
        b.batch_id: i + 1 for i, b in enumerate(sorted(report.batches, key=lambda b: b.batch_id))
    }
    stale = " (stale)" if report.stale else ""
    for change in _live_changes(report):
        if change.file != file:
            continue
        rng = _line_range(locator, file, change.line_range[0])
        must, may = _entries_of(report, change)
        batch_ids = _batches_of(report, change, must + may)
        lenses.append(
            types.CodeLens(
                range=rng,
                command=types.Command(
                    title=f"Blast radius: {len(must)} must · {len(may)} may · "
                    f"{plural(len(batch_ids), 'batch')}{stale}",
                    command=CMD_SHOW_BLAST_RADIUS,
                    arguments=[uri],
                ),
            )
        )
        # The tests lens comes second: a narrow editor cuts the row of lenses at its end.
        tests = _tests_of(report, change)
        if tests:
            lenses.append(types.CodeLens(range=rng, command=_run_tests_command(uri, tests, report)))
        for batch in (b for b in report.batches if b.batch_id in batch_ids):
            # The lens sits on the seed: its name in the title would only repeat the line.
            others = [m for m in batch.members if m != change.entity]
            names = [short_entity(m) for m in others[:_LENS_NAMES]]
            more = " → …" if len(others) > _LENS_NAMES else ""
            listed = f": {' → '.join(names)}{more}" if names else ""
            locations = [_loc(locator, *where[m]) for m in batch.members if m in where]
            lenses.append(
                types.CodeLens(
                    range=rng,
                    command=types.Command(
                        title=f"Batch {ordinal[batch.batch_id]} · "
                        f"{plural(batch.size, 'site')}{listed}",
                        command=CMD_SHOW_LOCATIONS,
                        arguments=[uri, _range_dict(rng)["start"], locations],
                    ),
                )
            )
    return lenses


# --------------------------------------------------------------------------- actions


def _must_order(report: Report) -> list[TriageEntry]:
    """MUST sites in the order to edit them: the next-edit order (LLM or batch), then the rest."""
    batch_of = {m: b.batch_id for b in report.batches for m in b.members}
    ranked = {item.entity: i for i, item in enumerate(report.next_edits.items)}
    return sorted(
        report.triage.must_inspect,
        key=lambda e: (
            ranked.get(e.entity, len(ranked)),
            batch_of.get(e.entity, len(batch_of)),
            e.distance,
            e.file,
            e.line,
        ),
    )


def next_targets(report: Report, *, locator: Locator) -> list[Target]:
    """Where to edit next, in order.

    With MUST-INSPECT sites, exactly those (one target per site, in the LLM's or the batch order;
    a MAY site needs no change, so it is never the next edit then). Without any, the next-edit
    list of the report (MAY sites to review). A reason from the LLM is kept; the batch order's
    cause label gives way to what broke at the site.
    """
    llm = {i.entity: i.reason for i in report.next_edits.items if not report.next_edits.failed}
    if report.triage.must_inspect:
        return [
            Target(
                entity=e.entity,
                reason=llm.get(e.entity) or site_point(e),
                file=e.file,
                range=_entry_range(locator, e),
            )
            for e in _must_order(report)
        ]
    where = _member_locations(report, locator)
    entries = {e.entity: e for e in report.triage.may_impact}
    targets: list[Target] = []
    seen: set[str] = set()
    for item in report.next_edits.items:
        if item.entity in seen or item.entity not in where:
            continue
        seen.add(item.entity)
        file, rng = where[item.entity]
        entry = entries.get(item.entity)
        reason = llm.get(item.entity) or (site_point(entry) if entry else item.reason)
        targets.append(Target(entity=item.entity, reason=reason, file=file, range=rng))
    return targets


def _overlaps(a: types.Range, b: types.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and (
        b.start.line,
        b.start.character,
    ) <= (a.end.line, a.end.character)


def _open_action(
    target: Target, locator: Locator, diagnostics: list[types.Diagnostic]
) -> types.CodeAction:
    title = f"Next edit: {short_entity(target.entity)} — {target.reason}"
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=diagnostics or None,
        command=types.Command(
            title=title,
            command=CMD_OPEN_LOCATION,
            arguments=[_loc(locator, target.file, target.range)],
        ),
    )


def _show_action(uri: str) -> types.CodeAction:
    title = "Show blast radius"
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.Empty,
        command=types.Command(title=title, command=CMD_SHOW_BLAST_RADIUS, arguments=[uri]),
    )


def _run_tests_action(uri: str, tests: list[str], report: Report) -> types.CodeAction:
    command = _run_tests_command(uri, tests, report)
    return types.CodeAction(title=command.title, kind=types.CodeActionKind.Empty, command=command)


def _run_tests_command(uri: str, tests: list[str], report: Report) -> types.Command:
    """Run ``tests``; when the editor's search stopped at its budget, the server first completes
    the document's selection with an unbounded search (``complete``), so the run misses none."""
    title = f"Run {_affected(len(tests), cut=report.selection_cut)}"
    selection: dict[str, Any] = {"complete": True} if report.selection_cut else {"tests": tests}
    return types.Command(
        title=title, command=CMD_RUN_AFFECTED_TESTS, arguments=[{"uri": uri, **selection}]
    )


def _affected(count: int, *, cut: bool) -> str:
    """``3 affected tests``, or ``250+ affected tests`` when the search stopped at its budget."""
    return f"{count}+ affected tests" if cut else plural(count, "affected test")


def _after(targets: Sequence[Target], at: Target) -> Target:
    """The target after ``at`` in the order, wrapping round; ``at`` itself when it is alone."""
    for i, target in enumerate(targets):
        if (target.entity, target.file, target.range) == (at.entity, at.file, at.range):
            return targets[(i + 1) % len(targets)]
    return targets[0]


def code_actions(
    reports: Iterable[Report],
    *,
    file: str,
    rng: types.Range,
    locator: Locator,
    own: Report | None = None,
    context: Sequence[types.Diagnostic] = (),
) -> list[types.CodeAction]:
    """Actions at ``rng`` of ``file``, for clients without lenses as much as for those with them.

    At a changed definition and at every MUST-INSPECT site: ``Next edit: …`` (the first site of
    the order at the definition; the site after this one at a site, round to the first after the
    last, the site itself when it is the only one), ``Show blast radius`` and ``Run N affected
    tests``. ``own`` is the report of the document ``file`` itself (its changed definitions);
    ``reports`` are all reports whose MUST sites may lie in ``file``.
    """
    actions: dict[str, types.CodeAction] = {}

    def offer(*items: types.CodeAction | None) -> None:
        for item in items:
            if item is not None:
                actions.setdefault(item.title, item)

    if own is not None:
        targets = next_targets(own, locator=locator)
        for change in _live_changes(own):
            start, end = change.line_range
            span = types.Range(
                start=locator.position(file, start, 0), end=locator.line_end(file, max(end, start))
            )
            if change.file != file or not _overlaps(span, rng):
                continue
            first = next((t for t in targets if t.entity != change.entity), None)
            tests = _tests_of(own, change)
            uri = locator.uri(file)
            offer(
                _open_action(first, locator, []) if first else None,
                _show_action(uri),
                _run_tests_action(uri, tests, own) if tests else None,
            )
    for report in reports:
        sites = [e for e in report.triage.must_inspect if e.file == file]
        hits = [e for e in sites if _overlaps(_entry_range(locator, e), rng)]
        if not hits:
            continue
        targets = next_targets(report, locator=locator)
        seed_uri = locator.uri(report.changes[0].file) if report.changes else locator.uri(file)
        tests = affected_tests(report)
        for entry in hits:
            here = Target(
                entity=entry.entity,
                reason="",
                file=entry.file,
                range=_entry_range(locator, entry),
            )
            matching = [
                d for d in context if d.code == CODE_MUST and _overlaps(d.range, here.range)
            ]
            offer(
                _open_action(_after(targets, here), locator, matching) if targets else None,
                _show_action(seed_uri),
                _run_tests_action(seed_uri, tests, report) if tests else None,
            )
    return list(actions.values())
