"""The CLI in a shell: a reader that closes the pipe early, an unexpected error, the demo folder."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from impact_ls.demo import make_demo_project

EXIT_PIPE = 141
# What a user's environment may hold; unbuffered output is what made every line its own write.
UNBUFFERED = {**os.environ, "PYTHONUNBUFFERED": "1"}
IMPACT = [sys.executable, "-m", "impact_ls"]


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_demo_project(tmp_path_factory.mktemp("shell") / "shop")


def _closed_early(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run with stdout a pipe whose reader is gone before anything is written."""
    proc = subprocess.Popen(
        [*IMPACT, *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=UNBUFFERED,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    stderr = proc.stderr.read()
    proc.stderr.close()
    return subprocess.CompletedProcess(proc.args, proc.wait(timeout=300), "", stderr)


@pytest.mark.parametrize(
    "args",
    [["tests"], ["analyze"], ["analyze", "--format", "json"], ["index", "--format", "json"]],
    ids=" ".join,
)
def test_a_closed_pipe_ends_quietly_with_the_sigpipe_status(demo_root: Path, args: list[str]):
    result = _closed_early(args, demo_root)
    assert result.stderr == ""
    assert result.returncode == EXIT_PIPE


def test_the_demo_into_a_closed_pipe_ends_quietly(tmp_path: Path):
    result = _closed_early(["demo"], tmp_path)
    assert (result.returncode, result.stderr) == (EXIT_PIPE, "")


@pytest.mark.parametrize("command", ["impact-ls tests", "impact-ls demo"])
def test_piping_into_head_prints_one_line_and_no_traceback(demo_root: Path, command: str):
    script = f"set -o pipefail; {command.replace('impact-ls', ' '.join(IMPACT))} | head -1"
    result = subprocess.run(
        ["bash", "-c", script],
        cwd=demo_root,
        capture_output=True,
        text=True,
        env=UNBUFFERED,
        timeout=300,
        check=False,
    )
    assert len(result.stdout.splitlines()) == 1
    assert "Traceback" not in result.stderr
    assert "rerun with --debug" not in result.stderr
    # 141 when the reader left before the last write, 0 when every write came first.
    assert result.returncode in (0, EXIT_PIPE), result.stderr


_FAULT = (
    "import sys\n"
    "from impact_ls import cli\n"
    "def broken(args):\n"
    "    raise KeyError('file:///somewhere/views.py')\n"
    "cli._COMMANDS['tests'] = broken\n"
    "sys.exit(cli.main(sys.argv[1:]))\n"
)


def test_an_unexpected_error_is_one_line_and_the_traceback_needs_debug(tmp_path: Path):
    # No real input reaches an unexpected error on purpose, so one is injected into a handler.
    plain = subprocess.run(
        [sys.executable, "-c", _FAULT, "tests"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert plain.returncode == 1
    assert plain.stderr.splitlines() == [
        "impact-ls: error: unexpected KeyError: 'file:///somewhere/views.py' "
        "(rerun with --debug for the traceback)"
    ]
    debug = subprocess.run(
        [sys.executable, "-c", _FAULT, "--debug", "tests"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert debug.returncode == 1
    assert "Traceback (most recent call last)" in debug.stderr
    assert "rerun with --debug" not in debug.stderr


def test_an_unwritable_log_file_is_a_usage_error(tmp_path: Path):
    result = subprocess.run(
        [*IMPACT, "--log-file", str(tmp_path / "no" / "such" / "dir" / "log"), "tests"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("impact-ls: error: --log-file ")
    assert "No such file or directory" in result.stderr


def test_the_demo_says_its_folder_is_temporary_and_offers_keep(tmp_path: Path):
    result = subprocess.run(
        [*IMPACT, "demo"], cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert "temporary folder deleted when the demo ends (--keep keeps it)" in first
    assert "/impact-ls-demo-" not in result.stdout  # no path that is gone once the demo ends


def test_demo_keep_keeps_the_project_and_says_where(tmp_path: Path):
    result = subprocess.run(
        [*IMPACT, "demo", "--keep"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    match = re.search(r"kept in (\S+)\.", result.stdout.splitlines()[0])
    assert match is not None, result.stdout
    root = Path(match.group(1))
    try:
        assert (root / "acme" / "auth.py").is_file()
        assert f"    cd {root}" in result.stdout.splitlines()
        again = subprocess.run(
            [*IMPACT, "tests"], cwd=root, capture_output=True, text=True, timeout=300, check=False
        )
        assert "tests/test_auth.py::test_login_returns_token" in again.stdout.split()
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)
