"""The terminal report: golden pages, plain words, grouping by file, 100 columns, colour."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from impact_ls.model import (
    Batch,
    Break,
    Bucket,
    Change,
    ChangeType,
    QualName,
    Relation,
    Report,
    TriageEntry,
)
from impact_ls.report.text import WIDTH, render_text

Reports = dict[str, Callable[[], Report]]
CASES = ("report_empty", "report_fallback", "report_signature_change")


@pytest.mark.parametrize("case", CASES)
def test_text_matches_golden(
    case: str, reports: Reports, golden: Callable[[str, str], None]
) -> None:
    golden(f"{case}.txt", render_text(reports[case](), color=False))


def test_empty_report_says_so_plainly(reports: Reports) -> None:
    assert render_text(reports["report_empty"](), color=False) == "No changes against HEAD.\n"
    assert render_text(reports["report_empty"](), color=True) == "No changes against HEAD.\n"


def test_the_changed_entity_is_named_once_in_the_header(reports: Reports) -> None:
    text = render_text(reports["report_signature_change"](), color=False)
    lines = text.splitlines()
    assert lines[:4] == [
        "Blast radius of LoginService.login against HEAD",
        "  pkg/auth.py:12  pkg.auth.LoginService.login: added param mfa_code",
        "      - def login(self, user):",
        "      + def login(self, user, mfa_code):",
    ]
    body = text.split("\n\nAudit\n")[0]
    assert body.count("pkg.auth.LoginService.login") == 1
    assert "→ login_view must re-bind via" not in text  # no cause labels: --format json has them


def test_sites_are_grouped_by_file_with_what_broke(reports: Reports) -> None:
    lines = render_text(reports["report_signature_change"](), color=False).splitlines()
    start = lines.index("MUST-INSPECT · 2 sites that break: fix each")
    assert lines[start + 1 : start + 5] == [
        "  pkg/api/handlers.py",
        "    17  login_endpoint  missing required argument 'mfa_code'",
        "  pkg/views.py",
        "    41  login_view      missing required argument 'mfa_code'",
    ]


def test_may_sites_say_how_they_reach_the_edit_and_never_must(reports: Reports) -> None:
    text = render_text(reports["report_signature_change"](), color=False)
    lines = text.splitlines()
    start = lines.index("MAY-IMPACT · 2 sites to check (no break is proven)")
    may = lines[start + 1 : start + 5]
    assert may == [
        "  pkg/registry.py",
        "     7  dispatch          may reach LoginService.login by name: string-keyed getattr "
        "of 'login'",
        "  pkg/session.py",
        "    23  Session.validate  2 steps from LoginService.login",
    ]
    assert not any("must" in line for line in may)
    assert "LOW-RISK · 2 sites, not listed (--format json lists them)" in lines
    assert "pkg.cli.main" not in text


def _entry(entity: str, *, relation: Relation, breaks: tuple[Break, ...] = (), **kw: object):
    fields: dict[str, object] = {
        "entity": QualName(entity),
        "file": "pkg/mod.py",
        "line": 3,
        "range": ((3, 0), (3, 5)),
        "conf": 0.5,
        "distance": 1,
        "relation": relation,
        "reason": "cause",
        "seed": QualName("pkg.base.Base.run"),
        "change_type": ChangeType.METHOD_SIGNATURE,
        "bucket": Bucket.MAY_IMPACT,
        "breaks": breaks,
        "via": QualName("pkg.base.Base.run"),
    }
    fields.update(kw)
    return TriageEntry(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("entry", "point"),
    [
        (
            _entry("pkg.mod.Child.run", relation=Relation.OVERRIDES),
            "overrides Base.run, whose signature changed",
        ),
        (
            _entry("pkg.mod.f", relation=Relation.CALLED_BY, name_matched=True),
            "calls something named run (its receiver's type is unknown)",
        ),
        (
            _entry(
                "pkg.mod.g",
                relation=Relation.CALLED_BY,
                distance=3,
                via=QualName("pkg.mod.f"),
            ),
            "calls f, 3 steps from Base.run",
        ),
        (
            _entry(
                "pkg.mod.h",
                relation=Relation.IMPORTED_BY,
                bucket=Bucket.MUST_INSPECT,
                breaks=(Break(kind="removed-import", detail="pkg.base no longer imports run"),),
            ),
            "imports the removed name 'run'",
        ),
        (
            _entry(
                "pkg.mod.k",
                relation=Relation.CALLED_BY,
                bucket=Bucket.MUST_INSPECT,
                change_type=ChangeType.DELETE,
                breaks=(
                    Break(
                        kind="deleted-symbol",
                        detail="references 'pkg.base.Base.run', which no longer exists",
                    ),
                ),
            ),
            "uses Base.run, which no longer exists",
        ),
    ],
    ids=["overrides", "name-matched", "farther", "removed-import", "deleted"],
)
def test_each_kind_of_site_reads_as_plain_words(
    reports: Reports, entry: TriageEntry, point: str
) -> None:
    report = dataclasses.replace(
        reports["report_signature_change"](),
        triage=dataclasses.replace(
            reports["report_signature_change"]().triage,
            must_inspect=(entry,) if entry.bucket is Bucket.MUST_INSPECT else (),
            may_impact=(entry,) if entry.bucket is Bucket.MAY_IMPACT else (),
        ),
    )
    row = next(line for line in render_text(report, color=False).splitlines() if "  3  " in line)
    assert row.endswith(point)


def _long_report(reports: Reports) -> Report:
    """Two changes, long names and many breaks: the worst case for the width."""
    base = reports["report_signature_change"]()
    long_seed = QualName(
        "pkg.very_long_module_name.SomeRatherLongClassName.a_method_with_a_long_name"
    )
    second = Change(
        change_type=ChangeType.METHOD_SIGNATURE,
        entity=long_seed,
        file="pkg/very_long_module_name.py",
        line_range=(40, 44),
        before_sig="def a_method_with_a_long_name(self, first_argument, second_argument):",
        after_sig="def a_method_with_a_long_name(self, first_argument, second_argument, "
        "third_argument, *, fourth_keyword_only_argument):",
        what="added param third_argument, added param fourth_keyword_only_argument",
    )
    breaks = (
        Break(kind="missing-argument", detail="missing required argument 'third_argument'"),
        Break(
            kind="missing-argument",
            detail="missing required keyword-only argument 'fourth_keyword_only_argument'",
        ),
    )
    extra = dataclasses.replace(
        base.triage.must_inspect[0],
        entity=QualName("pkg.consumers.AnotherQuiteLongClassName.method_calling_the_changed_one"),
        file="pkg/consumers/deeply/nested/package/module_with_a_long_name.py",
        line=1234,
        seed=long_seed,
        breaks=breaks,
    )
    return dataclasses.replace(
        base,
        changes=(*base.changes, second),
        triage=dataclasses.replace(base.triage, must_inspect=(*base.triage.must_inspect, extra)),
    )


def test_every_line_fits_the_width(reports: Reports) -> None:
    for report in (*(reports[c]() for c in CASES), _long_report(reports)):
        for line in render_text(report, color=False).splitlines():
            assert len(line) <= WIDTH, line


def test_several_changes_are_numbered_and_their_sites_grouped_under_each(
    reports: Reports,
) -> None:
    lines = render_text(_long_report(reports), color=False).splitlines()
    assert lines[0] == "Blast radius of 2 changes against HEAD"
    assert lines[1] == "  1. pkg/auth.py:12  pkg.auth.LoginService.login: added param mfa_code"
    assert "  2. pkg/very_long_module_name.py:40" in lines
    assert "  from LoginService.login (pkg/auth.py:12)" in lines
    start = lines.index(
        "  from SomeRatherLongClassName.a_method_with_a_long_name (pkg/very_long_module_name.py:40)"
    )
    assert lines[start + 1] == "    pkg/consumers/deeply/nested/package/module_with_a_long_name.py"
    assert (
        lines[start + 2].strip() == "1234  AnotherQuiteLongClassName.method_calling_the_changed_one"
    )
    rest = " ".join(line.strip() for line in lines[start + 3 : start + 5])
    assert rest == (
        "missing required argument 'third_argument'; missing required keyword-only argument "
        "'fourth_keyword_only_argument'"
    )


def test_batches_tests_and_the_llm_order(reports: Reports) -> None:
    lines = render_text(reports["report_signature_change"](), color=False).splitlines()
    assert (
        "  1. LoginService.login → login_endpoint → login_view → Session.validate  (4 sites)"
    ) in lines
    assert "  2. dispatch" in lines
    assert "  1.00  tests/test_auth.py::TestLogin::test_mfa" in lines
    assert "  0.56  tests/test_views.py::test_login_view  (recorded coverage)" in lines
    assert "  0.42  pkg/session.py" in lines
    # registry.py:7 is listed once, as a MAY site; the other hidden channel has its own section
    assert "  pkg/plugins/__init__.py:1  module-level __getattr__ may serve any name" in lines
    assert not any(line.startswith("  pkg/registry.py:7") for line in lines)
    start = lines.index("Next edits (as the LLM ordered them)")
    assert lines[start + 1] == (
        "  1. pkg/views.py:41  login_view — login_view calls login without mfa_code"
    )
    assert (
        lines[lines.index("Audit") + 3] == "  note: jedi confirmed 1 of 2 name-matched candidates"
    )


def test_the_next_step_names_the_first_site_and_what_broke(reports: Reports) -> None:
    text = render_text(reports["report_signature_change"](), color=False)
    assert (
        "Next: fix login_view at pkg/views.py:41 (missing required argument 'mfa_code'), then "
        "the other site\n  that must change; then run the 2 affected tests"
    ) in text


def test_the_batch_order_fallback_is_not_listed_twice(reports: Reports) -> None:
    text = render_text(reports["report_fallback"](), color=False)
    assert "Next edits" not in text
    assert "Next: fix login_endpoint at pkg/api/handlers.py:17" in text


def test_long_and_split_batches_are_abbreviated(reports: Reports) -> None:
    members = tuple(QualName(f"pkg.mod.f{i}") for i in range(10))
    report = dataclasses.replace(
        reports["report_signature_change"](),
        batches=(Batch(batch_id=0, members=members, split=True),),
    )
    lines = render_text(report, color=False).splitlines()
    assert "  1. f0 → f1 → f2 → f3 → f4 → f5 → … (+4)  (10 sites, split)" in lines


def test_skipped_files_and_cut_walks_are_said_at_the_top(reports: Reports) -> None:
    base = reports["report_signature_change"]()
    notes = (
        "jedi confirmed 1 of 2 name-matched candidates",
        "skipped pkg/huge.py: larger than 1048576 bytes (2000000 bytes)",
        "pkg.auth.LoginService.login: walk capped at max-walk-nodes = 200; 7 dependents not "
        "kept, 3 of them direct",
    )
    report = dataclasses.replace(base, audit=dataclasses.replace(base.audit, notes=notes))
    lines = render_text(report, color=False).splitlines()
    assert lines[1:4] == [
        "  note: skipped pkg/huge.py: larger than 1048576 bytes (2000000 bytes) (raise "
        "max-file-bytes in",
        "    [tool.impact-ls] to include it)",
        "  note: pkg.auth.LoginService.login: walk capped at max-walk-nodes = 200; 7 dependents "
        "not kept, 3",
    ]
    assert "farther" not in "\n".join(lines)


def test_no_ansi_without_colour(reports: Reports) -> None:
    for case in CASES:
        assert "\x1b" not in render_text(reports[case](), color=False)


def test_colour_marks_buckets(reports: Reports) -> None:
    text = render_text(reports["report_signature_change"](), color=True)
    assert "\x1b[1m\x1b[31mMUST-INSPECT · 2 sites that break: fix each\x1b[0m" in text
    assert "  \x1b[31mpkg/views.py\x1b[0m\n" in text
    assert "\x1b[1m\x1b[33mMAY-IMPACT · 2 sites to check (no break is proven)\x1b[0m" in text
    assert "  \x1b[33mpkg/session.py\x1b[0m\n" in text
    assert "\x1b[1m\x1b[2mLOW-RISK · 2 sites, not listed (--format json lists them)\x1b[0m" in text
    plain = render_text(reports["report_signature_change"](), color=False)
    stripped = text
    for code in ("\x1b[0m", "\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[33m"):
        stripped = stripped.replace(code, "")
    assert stripped == plain


def test_stale_report_says_so(reports: Reports) -> None:
    report = dataclasses.replace(reports["report_signature_change"](), stale=True)
    first = render_text(report, color=False).splitlines()[:2]
    assert first == [
        "Blast radius of LoginService.login against HEAD (stale: the edit does not parse yet; "
        "showing the",
        "  last complete analysis)",
    ]
