"""The job-summary Markdown of the GitHub Action."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from impact_ls.model import Report
from impact_ls.report import markdown
from impact_ls.report.markdown import render_markdown

Reports = dict[str, Callable[[], Report]]


def test_sites_are_one_table_with_links_causes_and_breaks(reports: Reports) -> None:
    report = reports["report_signature_change"]()
    text = render_markdown(report, base="main", link=lambda f, n: f"https://x/{f}#L{n}")
    assert text.startswith("## impact-ls: blast radius against `main`\n")
    rows = [line for line in text.splitlines() if line.startswith("| 🔴 must |")]
    assert len(rows) == len(report.triage.must_inspect)
    first = report.triage.must_inspect[0]
    line = first.range[0][0]
    assert rows[0].startswith(
        f"| 🔴 must | [`{first.file}:{line}`](https://x/{first.file}#L{line}) |"
    )
    assert all(b.detail in text for e in report.triage.must_inspect for b in e.breaks)
    assert "<details><summary>Audit</summary>" in text
    assert "python -m pytest " in text


def test_pipes_are_escaped_and_long_lists_say_how_many_more(reports: Reports, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    report = reports["report_signature_change"]()
    entry = dataclasses.replace(report.triage.must_inspect[0], reason="a | b")
    many = dataclasses.replace(report.triage, must_inspect=(entry,) * 3)
    monkeypatch.setattr(markdown, "MAX_ROWS", 2)
    text = render_markdown(dataclasses.replace(report, triage=many), base="HEAD")
    assert "a \\| b" in text
    assert "| 🔴 must | … | 1 more | |" in text
    assert f"`{entry.file}:{entry.range[0][0]}`" in text  # no link without a link maker


def test_no_change_says_so(reports: Reports) -> None:
    assert "No Python change against the base" in render_markdown(
        reports["report_empty"](), base="HEAD"
    )
