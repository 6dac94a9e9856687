"""`impact-ls test` runs exactly the selection; an empty selection says why, never runs all."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from impact_ls.history.plant import plant_history

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "select_paths"
SQUARE_AREA = (
    "        return self.size * self.size\n",
    "        return self.size * self.size + 1\n",
)


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def _impact(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "impact_ls", *args], root)


def _edit(root: Path, file: str, old: str, new: str) -> None:
    path = root / file
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return plant_history(FIXTURE, tmp_path / "project")


def test_no_change_selects_nothing_and_says_why(project: Path) -> None:
    listed = _impact(project, "tests")
    assert (listed.returncode, listed.stdout) == (0, "")
    assert "impact-ls: no test selected: no Python file changed against HEAD" in listed.stderr

    ran = _impact(project, "test")
    assert ran.returncode == 0
    assert ran.stdout.splitlines() == [
        "impact-ls: no affected test to run: no Python file changed against HEAD, so no test "
        "is affected"
    ]
    assert "passed" not in ran.stdout + ran.stderr  # pytest never ran


def test_a_change_that_stays_in_its_function_runs_nothing(project: Path) -> None:
    _edit(
        project,
        "app/shapes.py",
        "def make_square(size):\n",
        'def make_square(size):\n    """A square of side ``size``."""\n',
    )
    listed = _impact(project, "tests")
    assert listed.stdout == ""
    assert "no test selected: 1 change stays inside its function" in listed.stderr

    ran = _impact(project, "test")
    assert ran.returncode == 0
    [line] = ran.stdout.splitlines()
    assert line.startswith("impact-ls: no affected test to run: ")


def test_a_change_no_test_reaches_names_the_file(project: Path) -> None:
    _edit(
        project,
        "app/sizes.py",
        "    big = small * 10\n",
        "    big = small * 10\n\n\ndef f():\n    return 1\n",
    )
    listed = _impact(project, "tests")
    assert listed.stdout == ""
    assert re.search(r"no test selected: 1 change in app/sizes\.py reaches no test", listed.stderr)


def test_a_floor_above_every_selected_test_says_so(project: Path) -> None:
    _edit(project, "app/shapes.py", *SQUARE_AREA)
    listed = _impact(project, "tests", "--min-conf", "1.01")
    assert listed.stdout == ""
    assert "have a confidence below 1.01 (lower --min-conf to run them)" in listed.stderr


def test_a_project_without_tests_says_pytest_collects_none(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    shutil.copytree(FIXTURE, bare, ignore=shutil.ignore_patterns("tests", "scripts"))
    root = plant_history(bare, tmp_path / "project")
    _edit(root, "app/shapes.py", *SQUARE_AREA)
    listed = _impact(root, "tests")
    assert listed.returncode == 0 and listed.stdout == ""
    assert "no test selected: pytest collects no test in this project" in listed.stderr


@pytest.mark.slow
def test_test_runs_exactly_the_selection_with_the_project_venv(project: Path) -> None:
    _edit(project, "app/shapes.py", *SQUARE_AREA)
    selected = _impact(project, "tests").stdout.split()
    assert selected and "tests/test_plain.py::test_arithmetic" not in selected
    expected = _run([sys.executable, "-m", "pytest", "--co", "-q", *selected], project)
    items = [line for line in expected.stdout.splitlines() if "::" in line]

    # the project's .venv wins over the interpreter impact-ls runs in
    venv_python = project / ".venv" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.symlink_to(sys.executable)
    ran = _impact(project, "test", "--", "-q", "-p", "no:cacheprovider")
    assert f"running {len(selected)} affected tests with {venv_python}" in ran.stderr
    assert ran.returncode == 1  # the edit breaks some of them: pytest's status is ours
    summary = ran.stdout.strip().splitlines()[-1]
    counts = {kind: int(n) for n, kind in re.findall(r"(\d+) (failed|passed|errors?)", summary)}
    assert counts.get("failed", 0) > 0, ran.stdout
    assert sum(counts.values()) == len(items)


def test_a_missing_interpreter_is_a_clear_error(project: Path) -> None:
    _edit(project, "app/shapes.py", *SQUARE_AREA)
    ran = _impact(project, "test", "--python", str(project / "no-such-python"))
    assert ran.returncode == 1
    assert "which is not an interpreter here" in ran.stderr
    assert "Traceback" not in ran.stderr


def test_a_cap_shortens_only_the_report_and_says_so(project: Path) -> None:
    with (project / "pyproject.toml").open("a", encoding="utf-8") as config:
        config.write("\n[tool.impact-ls]\nmax-test-pairs = 2\n")
    _edit(project, "app/shapes.py", *SQUARE_AREA)
    every = _impact(project, "tests").stdout.split()
    assert len(every) > 2  # `tests` prints the whole selection, whatever the cap
    report = json.loads(_impact(project, "analyze", "--format", "json", "--no-llm").stdout)
    assert len(report["tests"]) == 2
    assert report["audit"]["truncated"] is True
    note = (
        f"{len(every)} test pairs ({len(every)} tests) selected; the report lists the 2 most "
        "confident (max-test-pairs); 'impact-ls tests' prints every one"
    )
    assert note in report["audit"]["notes"]
    assert report["obligations"]["validate"] == sorted(every)

    text = _impact(project, "analyze", "--no-llm", "--color", "never").stdout
    assert "the report lists the 2 most confident (max-test-pairs)" in " ".join(text.split())


def test_an_import_time_break_says_why_in_text_and_json(project: Path) -> None:
    _edit(project, "app/registry.py", "def register(name):", "def register(name, version):")
    why = (
        "import-time break: app.plugins calls app.registry.register at import "
        "(app/plugins.py:7), which no longer binds, and tests.test_imports imports app.plugins"
    )
    report = json.loads(_impact(project, "analyze", "--format", "json", "--no-llm").stdout)
    reasons = {t["test"]: t.get("reason") for t in report["tests"]}
    assert reasons == {
        "tests/test_imports.py::test_big": why,
        "tests/test_imports.py::test_registered": why,
        "tests/test_imports.py::test_unit": why,
    }
    text = _impact(project, "analyze", "--no-llm", "--color", "never").stdout
    assert f"why 3 tests: {why}" in " ".join(text.split())
