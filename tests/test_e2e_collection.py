"""End to end: `impact-ls tests` prints ids pytest collects, and `pytest <them>` runs them all."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from impact_ls.history.plant import plant_history

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "collect_inherit"

# every id pytest runs ``TestBase.test_add`` (or a test calling ``add``) under: the class in its
# module, imported into test_sub, inherited by TestSub, TestMixed and TestDeeper, a Mixin test
DIRECT = {
    "tests/test_base.py::TestBase::test_add",
    "tests/test_sub.py::TestBase::test_add",
    "tests/test_sub.py::TestSub::test_add",
    "tests/test_sub.py::TestMixed::test_add",
    "tests/test_sub.py::TestMixed::test_from_mixin",
    "tests/deep/test_deeper.py::TestSub::test_add",
    "tests/deep/test_deeper.py::TestDeeper::test_add",
    "tests/deep/test_deeper.py::TestDeeper::TestInner::test_inner",
}


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.mark.slow
def test_tests_prints_every_collected_id_and_pytest_runs_them(tmp_path: Path):
    root = plant_history(FIXTURE, tmp_path / "project")
    calc = root / "app" / "calc.py"
    calc.write_text(calc.read_text().replace("return a + b", "return b + a"))

    listed = _run([sys.executable, "-m", "impact_ls", "tests", "--root", str(root)], root)
    assert listed.returncode == 0, listed.stderr
    ids = listed.stdout.split()
    assert set(ids) >= DIRECT

    collected = _run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--co", "-q"], root)
    assert set(ids) <= {line for line in collected.stdout.splitlines() if "::" in line}

    ran = _run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *ids], root)
    assert ran.returncode == 0, ran.stdout
    assert f"{len(ids)} passed" in ran.stdout
