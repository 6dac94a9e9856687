"""The engine: git baselines, subfolder roots, and degraded history without git or commits."""

import shutil
import subprocess
from pathlib import Path

import pytest

from impact_ls.demo import AFTER, BEFORE, DEMO_SOURCE, EDITED_FILE
from impact_ls.engine import Engine, FileEdit
from impact_ls.errors import RevisionError


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def _copy_demo(dest: Path) -> Path:
    shutil.copytree(DEMO_SOURCE, dest, ignore=shutil.ignore_patterns("history.toml"))
    return dest


def _edit(root: Path) -> None:
    path = root / EDITED_FILE
    path.write_text(path.read_text(encoding="utf-8").replace(BEFORE, AFTER, 1), encoding="utf-8")


def _must_sites(report) -> set[tuple[str, int]]:
    return {(e.file, e.line) for e in report.triage.must_inspect}


def test_a_root_below_the_repository_top_speaks_root_paths(tmp_path: Path):
    repo = tmp_path / "mono"
    root = _copy_demo(repo / "services" / "shop")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "import")
    _edit(root)
    engine = Engine.open(root)
    assert engine.baseline_text(EDITED_FILE) is not None
    report = engine.analyze_worktree()
    assert [c.file for c in report.changes] == [EDITED_FILE]
    assert {("acme/api.py", 9), ("acme/cli.py", 9)} <= _must_sites(report)


def test_without_git_edits_still_analyze_and_history_says_why(tmp_path: Path):
    root = _copy_demo(tmp_path / "shop")
    before = (root / EDITED_FILE).read_text(encoding="utf-8")
    _edit(root)
    engine = Engine.open(root)
    assert engine.baseline_text(EDITED_FILE) is None
    report = engine.analyze(
        [FileEdit(file=EDITED_FILE, baseline=before, current=(root / EDITED_FILE).read_text())]
    )
    assert {("acme/api.py", 9), ("acme/cli.py", 9)} <= _must_sites(report)
    assert report.cochange == ()
    assert any("not a git repository" in note for note in report.audit.notes)
    with pytest.raises(RevisionError, match="not a git repository"):
        engine.analyze_worktree()


def test_an_empty_repository_degrades_to_no_cochange(tmp_path: Path):
    root = _copy_demo(tmp_path / "shop")
    _git(root, "init", "-q")
    before = (root / EDITED_FILE).read_text(encoding="utf-8")
    _edit(root)
    engine = Engine.open(root)
    report = engine.analyze(
        [FileEdit(file=EDITED_FILE, baseline=before, current=(root / EDITED_FILE).read_text())]
    )
    assert report.cochange == ()
    assert report.audit.notes, "an empty history must be noted in the audit"
    assert {("acme/api.py", 9)} <= _must_sites(report)


def test_analysis_writes_the_test_map_and_never_touches_sources(tmp_path: Path):
    root = _copy_demo(tmp_path / "shop")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "import")
    _edit(root)
    snapshot = {p: p.read_bytes() for p in root.rglob("*.py")}
    Engine.open(root).analyze_worktree()
    assert {p: p.read_bytes() for p in root.rglob("*.py")} == snapshot
    lines = (root / ".impact_ls" / "test_map.txt").read_text(encoding="utf-8").splitlines()
    assert "acme/auth.py tests/test_auth.py::test_login_returns_token 1.0" in lines
    assert (root / ".impact_ls" / ".gitignore").read_text(encoding="utf-8").endswith("\n*\n")
