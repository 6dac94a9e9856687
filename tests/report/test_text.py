"""The terminal report: golden pages, section order, colour only when asked."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from impact_ls.model import Batch, QualName, Report
from impact_ls.report.text import render_text

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


def test_header_and_change_line(reports: Reports) -> None:
    lines = render_text(reports["report_signature_change"](), color=False).splitlines()
    assert lines[:4] == [
        "Blast radius of 1 change against HEAD",
        "  method-signature  pkg.auth.LoginService.login  pkg/auth.py:12",
        "    def login(self, user): → def login(self, user, mfa_code):",
        "    added param mfa_code",
    ]


def test_buckets_in_order_with_sites(reports: Reports) -> None:
    text = render_text(reports["report_signature_change"](), color=False)
    must = text.index("MUST-INSPECT · 2 sites")
    may = text.index("MAY-IMPACT · 2 sites")
    low = text.index("LOW-RISK · 2 sites (not listed)")
    assert must < may < low
    lines = text.splitlines()
    assert (
        "  pkg/views.py:41         pkg.views.login_view             method-signature changed "
        "(added param mfa_code) → login_view must re-bind via CalledBy"
    ) in lines
    assert "      ↳ missing required argument 'mfa_code'" in lines
    registry = next(line for line in lines if line.startswith("  pkg/registry.py:7 "))
    assert registry.endswith("string-keyed getattr of 'login'  [unanalyzable]")
    # LOW-RISK sites are counted, not listed.
    assert "pkg.cli.main" not in text


def test_batches_tests_and_next_edits(reports: Reports) -> None:
    lines = render_text(reports["report_signature_change"](), color=False).splitlines()
    assert (
        "  Batch 1 · 4 sites: LoginService.login → login_endpoint → login_view → Session.validate"
    ) in lines
    assert "  Batch 2 · 1 site: dispatch" in lines
    assert "  1.00  tests/test_auth.py::TestLogin::test_mfa" in lines
    assert "  0.56  tests/test_views.py::test_login_view  (recorded coverage)" in lines
    assert "  0.42  pkg/session.py" in lines
    assert "  pkg/plugins/__init__.py:1  module-level __getattr__ may serve any name" in lines
    assert "Next edits (chosen by the LLM)" in lines
    assert "  1. pkg.views.login_view — login_view calls login without mfa_code" in lines
    note = "  note: jedi confirmed 1 of 2 name-matched candidates"
    assert lines[lines.index("Audit") + 3] == note


def test_fallback_is_labelled_as_batch_order(reports: Reports) -> None:
    lines = render_text(reports["report_fallback"](), color=False).splitlines()
    start = lines.index("Next edits (batch order)")
    assert [line.split(" — ")[0] for line in lines[start + 1 : start + 5]] == [
        "  1. pkg.api.handlers.login_endpoint",
        "  2. pkg.views.login_view",
        "  3. pkg.session.Session.validate",
        "  4. pkg.registry.dispatch",
    ]


def test_long_and_split_batches_are_abbreviated(reports: Reports) -> None:
    members = tuple(QualName(f"pkg.mod.f{i}") for i in range(10))
    report = dataclasses.replace(
        reports["report_signature_change"](),
        batches=(Batch(batch_id=0, members=members, split=True),),
    )
    lines = render_text(report, color=False).splitlines()
    assert ("  Batch 1 · 10 sites (split): f0 → f1 → f2 → f3 → f4 → f5 → f6 → f7 → … (+2)") in lines


def test_no_ansi_without_colour(reports: Reports) -> None:
    for case in CASES:
        assert "\x1b" not in render_text(reports[case](), color=False)


def test_colour_marks_buckets(reports: Reports) -> None:
    text = render_text(reports["report_signature_change"](), color=True)
    assert "\x1b[1m\x1b[31mMUST-INSPECT · 2 sites\x1b[0m" in text
    assert "\x1b[31mpkg/views.py:41       \x1b[0m  pkg.views.login_view" in text
    assert "\x1b[1m\x1b[33mMAY-IMPACT · 2 sites\x1b[0m" in text
    assert "\x1b[33mpkg/session.py:23\x1b[0m  pkg.session.Session.validate" in text
    assert "\x1b[1m\x1b[2mLOW-RISK · 2 sites (not listed)\x1b[0m" in text
    plain = render_text(reports["report_signature_change"](), color=False)
    stripped = text
    for code in ("\x1b[0m", "\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[33m"):
        stripped = stripped.replace(code, "")
    assert stripped == plain


def test_stale_report_says_so(reports: Reports) -> None:
    report = dataclasses.replace(reports["report_signature_change"](), stale=True)
    first = render_text(report, color=False).splitlines()[0]
    assert first == (
        "Blast radius of 1 change against HEAD (stale: the edit does not parse yet; "
        "showing the last complete analysis)"
    )
