"""Recorded coverage in the analysis and in ``--status``: what an edit selects from the records,
which records count after commits on top or a rebase, and how old and complete the data looks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from impact_ls.cli import main
from impact_ls.engine import Engine
from impact_ls.model import Evidence, Report
from impact_ls.record.status import format_status, record_status

from .helpers import git, record

pytestmark = pytest.mark.slow

DOUBLE = "tests/test_plugins.py::test_double"
PRICING = "tests/test_pricing.py"


def _edit(root: Path, file: str, old: str, new: str) -> None:
    path = root / file
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _evidence(report: Report) -> dict[str, Evidence]:
    return {hit.test: hit.evidence for hit in report.tests}


def _analyze(root: Path) -> Report:
    return Engine.open(root, {"jedi_confirm": False}).analyze_worktree()


def test_code_reached_only_at_run_time_selects_the_tests_that_ran_it(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _edit(recorded, "shop/doubler.py", "value * 2", "value * 3")
    report = _analyze(recorded)
    assert _evidence(report).get(DOUBLE) is Evidence.RECORDED
    assert next(h.conf for h in report.tests if h.test == DOUBLE) == 1.0
    assert main(["tests", "--root", str(recorded)]) == 0
    assert DOUBLE in capsys.readouterr().out.split()
    # Without the record, no static path leads from shop.doubler to that test.
    shutil.rmtree(recorded / ".impact_ls")
    assert DOUBLE not in _evidence(_analyze(recorded))


def test_records_join_the_static_paths_of_an_edited_function(recorded: Path) -> None:
    _edit(recorded, "shop/pricing.py", "return a + b", "return b + a")
    evidence = _evidence(_analyze(recorded))
    assert evidence[f"{PRICING}::test_add"] is Evidence.BOTH
    # Inherited tests run again in the subclass: pytest's ids, straight from the run.
    assert f"{PRICING}::TestTaxFreeCart::test_total" in evidence
    assert {t for t, e in evidence.items() if e is not Evidence.STATIC} == {
        f"{PRICING}::test_add",
        f"{PRICING}::test_scale[1]",
        f"{PRICING}::test_scale[3]",
        f"{PRICING}::TestCart::test_total",
        f"{PRICING}::TestTaxFreeCart::test_total",
    }


def test_a_deleted_function_selects_the_tests_that_ran_its_baseline(recorded: Path) -> None:
    _edit(
        recorded,
        "shop/doubler.py",
        "def apply(value):\n    return value * 2\n",
        "",
    )
    report = _analyze(recorded)
    assert [c.change_type.value for c in report.changes] == ["delete"]
    assert _evidence(report).get(DOUBLE) is Evidence.RECORDED


def test_commits_on_top_of_the_record_keep_its_records(recorded: Path) -> None:
    _edit(recorded, "shop/doubler.py", "value * 2", "value + value")
    git(recorded, "commit", "-qam", "doubler: add instead of multiply")
    _edit(recorded, "shop/doubler.py", "value + value", "value * 3")
    report = _analyze(recorded)
    assert _evidence(report).get(DOUBLE) is Evidence.RECORDED
    assert not any("rebase" in note for note in report.audit.notes)
    status = format_status(record_status(recorded))
    assert "1 commit(s) before HEAD" in status
    assert "changed     1 of 6 recorded files since: shop/doubler.py" in status


def test_after_a_rebase_only_files_unchanged_since_the_record_count(recorded: Path) -> None:
    _edit(recorded, "shop/doubler.py", "value * 2", "value + value")
    git(recorded, "commit", "-q", "--amend", "-am", "initial import, rewritten")
    _edit(recorded, "shop/doubler.py", "value + value", "value * 3")
    report = _analyze(recorded)
    assert DOUBLE not in _evidence(report)
    assert any("predates a rebase or branch switch" in note for note in report.audit.notes)
    status = format_status(record_status(recorded))
    assert "which HEAD's history no longer contains (rebase or branch switch)" in status
    # shop/pricing.py is byte for byte what was recorded: its records still count.
    git(recorded, "checkout", "-q", "shop/doubler.py")
    _edit(recorded, "shop/pricing.py", "return a + b", "return b + a")
    assert _evidence(_analyze(recorded))[f"{PRICING}::test_add"] is Evidence.BOTH


def test_status_says_how_old_and_how_complete_the_data_is(
    recorded: Path, shop: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert format_status(record_status(shop)) == (
        "no recorded coverage yet: run 'impact-ls record' to record the suite once\n"
    )
    status = format_status(record_status(recorded))
    assert "(HEAD)" in status
    assert "tests       9 recorded of 9 collected\n" in status
    assert "files       6 recorded" in status
    assert "changed     none of the recorded files changed since" in status
    assert "last run" not in status
    (recorded / "shop/pricing.py").unlink()
    monkeypatch.setenv("RECORD_SHOP_BREAK", "1")
    assert not record(recorded).stored
    status = format_status(record_status(recorded))
    assert "changed     1 of 6 recorded files since: shop/pricing.py (deleted)" in status
    assert "last run    " in status
    assert ": failed: pytest was interrupted" in status
    # The stored data is still the first record's.
    assert "tests       9 recorded of 9 collected\n" in status
