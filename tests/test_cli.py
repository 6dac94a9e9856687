"""The CLI contract: help, version, usage errors exit 2 with a clear message."""

import subprocess
import sys
from pathlib import Path

import pytest

from impact_ls import __version__


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "impact_ls", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def test_version():
    result = _run("--version")
    assert (result.returncode, result.stdout.strip()) == (0, f"impact-ls {__version__}")


def test_help_lists_every_command():
    result = _run("--help")
    assert result.returncode == 0
    for command in ("analyze", "tests", "index", "serve", "demo"):
        assert command in result.stdout


def test_no_command_prints_help_and_exits_2():
    result = _run()
    assert result.returncode == 2
    assert "usage: impact-ls" in result.stdout


@pytest.mark.parametrize(
    "args",
    [("analyze", "--bogus"), ("frobnicate",), ("analyze", "--format", "yaml")],
)
def test_unknown_option_or_command_exits_2(args):
    result = _run(*args)
    assert result.returncode == 2
    assert "impact-ls: error:" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("command", ["analyze", "tests", "index"])
def test_missing_root_exits_2(tmp_path: Path, command: str):
    result = _run(command, "--root", str(tmp_path / "nope"))
    assert result.returncode == 2
    assert "is not an existing directory" in result.stderr
