"""``impact-ls index``: JSON and stats output, the cache across runs, bad roots and bad files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "index_basic"


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "impact_ls", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    target = tmp_path / "proj"
    shutil.copytree(FIXTURE, target)
    return target


@pytest.fixture
def cache_env(tmp_path: Path) -> dict[str, str]:
    return {"XDG_CACHE_HOME": str(tmp_path / "xdg-cache")}


def test_json_lists_sorted_nodes_and_edges(root: Path, cache_env):
    result = _run("index", "--root", str(root), "--format", "json", env=cache_env)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # piped: no progress bar
    data = json.loads(result.stdout)
    assert set(data) == {"nodes", "edges", "dynamic", "skipped"}
    nodes = {(n["id"], n["kind"], n["file"], n["line"]) for n in data["nodes"]}
    assert {
        ("pkg.core", "module", "pkg/core.py", 1),
        ("pkg.core.greet", "function", "pkg/core.py", 4),
        ("pkg.core.Greeter", "class", "pkg/core.py", 13),
        ("pkg.core.Greeter.run", "method", "pkg/core.py", 17),
        ("tests.test_core.test_greet", "test", "tests/test_core.py", 4),
    } <= nodes
    greet = next(n for n in data["nodes"] if n["id"] == "pkg.core.greet")
    assert greet["signature"] == "def greet(name):"
    test = next(n for n in data["nodes"] if n["kind"] == "test")
    assert test["test_id"] == "tests/test_core.py::test_greet"
    calls_to_greet = [
        (e["from"], e["file"], e["line"])
        for e in data["edges"]
        if e["to"] == "pkg.core.greet" and e["kind"] == "call"
    ]
    assert calls_to_greet == [
        ("pkg.cli.main", "pkg/cli.py", 5),
        ("pkg.core.Greeter.run", "pkg/core.py", 18),
        ("tests.test_core.test_greet", "tests/test_core.py", 5),
    ]
    cli_call = next(
        e
        for e in data["edges"]
        if e["to"] == "pkg.core.greet" and e["kind"] == "call" and e["file"] == "pkg/cli.py"
    )
    assert cli_call["args"] == {
        "positional": 1,
        "keywords": [],
        "star": False,
        "double_star": False,
    }
    keys = [(n["file"], n["line"], n["id"]) for n in data["nodes"]]
    assert keys == sorted(keys)
    edge_keys = [
        (e["file"], e["line"], e["col"], e["kind"], e["from"], e["to"]) for e in data["edges"]
    ]
    assert edge_keys == sorted(edge_keys)
    assert data["skipped"] == []


def test_json_is_identical_on_a_warm_run(root: Path, cache_env):
    cold = _run("index", "--root", str(root), "--format", "json", env=cache_env)
    warm = _run("index", "--root", str(root), "--format", "json", "--jobs", "1", env=cache_env)
    assert cold.returncode == warm.returncode == 0
    assert warm.stdout == cold.stdout


def test_stats_report_counts_cache_use_and_timings(root: Path, cache_env):
    first = _run("index", "--root", str(root), env=cache_env)
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[0] == f"root      {root}"
    assert lines[1] == "files     4 (4 extracted with 1 job(s), 0 from cache, 0 skipped)"
    assert lines[2].startswith("nodes     ")
    assert "function 3" in lines[2] and "test 1" in lines[2]
    assert lines[3].startswith("edges     ") and "call " in lines[3]
    assert lines[5] == f"cache     {root / '.impact_ls' / 'facts.sqlite3'}"
    assert lines[6].startswith("time      cpu ")
    assert "discover" in lines[6] and "resolve" in lines[6]
    second = _run("index", "--root", str(root), "--format", "stats", env=cache_env)
    assert second.stdout.splitlines()[1] == (
        "files     4 (0 extracted with 1 job(s), 4 from cache, 0 skipped)"
    )


def test_stats_list_skipped_files_with_reasons(root: Path, cache_env):
    (root / "pkg" / "blob.py").write_bytes(b"\x00\x00\x00")
    (root / "pkg" / "latin.py").write_bytes(b"name = '\xe9'\n")
    (root / "pkg" / "broken.py").write_text("def oops(:\n")
    os.symlink(root / "pkg", root / "pkg" / "loop")
    result = _run("index", "--root", str(root), env=cache_env)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "files     5 (5 extracted with 1 job(s), 0 from cache, 3 skipped)" in out
    assert "skipped   3\n" in out
    assert "  pkg/blob.py: binary (contains NUL bytes)\n" in out
    assert "  pkg/latin.py: undecodable as utf-8 (no valid PEP 263 coding cookie)\n" in out
    assert "  pkg/loop: symlink loop (points at a parent)\n" in out
    assert "Traceback" not in result.stderr


def test_an_unwritable_cache_folder_is_a_note_not_an_error(root: Path, cache_env):
    (root / ".impact_ls").write_text("not a folder")
    result = _run("index", "--root", str(root), env=cache_env)
    assert result.returncode == 0, result.stderr
    cache_dir = Path(cache_env["XDG_CACHE_HOME"]) / "impact-ls"
    assert f"cache     {cache_dir}" in result.stdout
    assert f"note      cache in {cache_dir}" in result.stdout
    assert "WARNING" in result.stderr and "is not writable" in result.stderr


def test_pyproject_excludes_apply(root: Path, cache_env):
    (root / "scratch").mkdir()
    (root / "scratch" / "notes.py").write_text("def note():\n    pass\n")
    result = _run("index", "--root", str(root), "--format", "json", env=cache_env)
    files = {n["file"] for n in json.loads(result.stdout)["nodes"]}
    assert files == {"pkg/__init__.py", "pkg/cli.py", "pkg/core.py", "tests/test_core.py"}


def test_a_root_that_does_not_exist_exits_2(tmp_path: Path):
    result = _run("index", "--root", str(tmp_path / "missing"))
    assert result.returncode == 2
    assert "is not an existing directory" in result.stderr
    assert "Traceback" not in result.stderr


def test_negative_jobs_is_a_usage_error(root: Path):
    result = _run("index", "--root", str(root), "--jobs", "-1")
    assert result.returncode == 2
    assert "--jobs -1" in result.stderr


def test_progress_bar_only_on_a_terminal(root: Path, cache_env):
    # A pseudo-terminal on stderr shows the bar; the piped runs above stay quiet.
    pty = pytest.importorskip("pty")
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "impact_ls", "index", "--root", str(root)],
            stdout=subprocess.PIPE,
            stderr=follower,
            timeout=120,
            check=False,
            env={**os.environ, **cache_env},
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    assert proc.returncode == 0
    shown = b"".join(chunks).decode()
    assert "indexing [" in shown and "4/4" in shown
