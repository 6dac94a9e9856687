"""pytest in a subprocess: results, failures, a missing pytest, a hang, a cancel."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from impact_ls.config import Settings
from impact_ls.server.testrun import CaseOutcome, RunOutcome, parse_junit, run_pytest


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n", encoding="utf-8")
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_things.py").write_text(
        textwrap.dedent(
            """\
            import time


            def test_ok():
                assert 1 + 1 == 2


            class TestGroup:
                def test_planted(self):
                    assert 2 + 2 == 5, "planted failure"


            def test_hang():
                time.sleep(60)
            """
        ),
        encoding="utf-8",
    )
    return tmp_path


async def test_runs_the_selection_and_reads_failures_with_their_lines(project: Path) -> None:
    progress: list[tuple[int, int]] = []
    run = await run_pytest(
        ["tests/test_things.py::test_ok", "tests/test_things.py::TestGroup::test_planted"],
        root=project,
        settings=Settings(),
        timeout_s=60,
        on_progress=lambda done, total: progress.append((done, total)),
    )
    assert run.outcome is RunOutcome.FAILED
    assert run.count(CaseOutcome.PASSED) == 1
    assert run.count(CaseOutcome.FAILED) == 1
    failed = next(c for c in run.cases if c.outcome is CaseOutcome.FAILED)
    assert failed.test_id == "tests/test_things.py::TestGroup::test_planted"
    assert failed.file == "tests/test_things.py"
    assert failed.line == 9
    assert "planted failure" in failed.message
    assert progress == [(1, 2), (2, 2)]
    result = run.as_dict()
    assert (result["passed"], result["failed"], result["errors"]) == (1, 1, 0)
    # nothing written into the project: no cache, no bytecode
    assert sorted(p.name for p in project.rglob("*")) == [
        "pyproject.toml",
        "test_things.py",
        "tests",
    ]


async def test_all_passing(project: Path) -> None:
    run = await run_pytest(
        ["tests/test_things.py::test_ok"], root=project, settings=Settings(), timeout_s=60
    )
    assert run.outcome is RunOutcome.PASSED
    assert run.message == "1 tests passed"


async def test_a_hang_is_stopped_at_the_timeout(project: Path) -> None:
    run = await run_pytest(
        ["tests/test_things.py::test_hang"], root=project, settings=Settings(), timeout_s=1.0
    )
    assert run.outcome is RunOutcome.TIMEOUT
    assert run.message == "pytest timed out after 1 s (impactLs.testTimeoutS); it was stopped"


async def test_a_cancel_stops_pytest(project: Path) -> None:
    run = await run_pytest(
        ["tests/test_things.py::test_hang"],
        root=project,
        settings=Settings(),
        timeout_s=60,
        is_cancelled=lambda: True,
    )
    assert run.outcome is RunOutcome.CANCELLED


async def test_a_missing_pytest_module_is_reported(project: Path) -> None:
    settings = Settings(pytest_command=(sys.executable, "-m", "pytest_is_not_installed_here"))
    run = await run_pytest(
        ["tests/test_things.py::test_ok"], root=project, settings=settings, timeout_s=30
    )
    assert run.outcome is RunOutcome.ERROR
    assert run.message.startswith("pytest is not installed for ")


async def test_a_missing_interpreter_is_reported(project: Path) -> None:
    settings = Settings(python=str(project / "no-such-python"))
    run = await run_pytest(
        ["tests/test_things.py::test_ok"], root=project, settings=settings, timeout_s=30
    )
    assert run.outcome is RunOutcome.ERROR
    assert run.message.startswith(f"cannot start '{project / 'no-such-python'}'")


async def test_nothing_selected_runs_nothing(project: Path) -> None:
    run = await run_pytest([], root=project, settings=Settings(), timeout_s=30)
    assert run.outcome is RunOutcome.NO_TESTS


def test_parse_junit_xunit1_ids_errors_and_skips() -> None:
    xml = """<?xml version="1.0"?><testsuites><testsuite>
      <testcase classname="tests.test_a.TestX" name="test_p[1]" file="tests/test_a.py" line="4"/>
      <testcase classname="tests.test_a" name="test_e" file="tests/test_a.py" line="10">
        <error message="fixture 'db' not found">E  fixture 'db' not found</error></testcase>
      <testcase classname="tests.test_a" name="test_s" file="tests/test_a.py" line="20">
        <skipped message="no network"/></testcase>
    </testsuite></testsuites>"""
    cases = parse_junit(xml)
    assert [(c.test_id, c.line, c.outcome, c.message) for c in cases] == [
        ("tests/test_a.py::TestX::test_p[1]", 5, CaseOutcome.PASSED, ""),
        ("tests/test_a.py::test_e", 11, CaseOutcome.ERROR, "fixture 'db' not found"),
        ("tests/test_a.py::test_s", 21, CaseOutcome.SKIPPED, "no network"),
    ]
