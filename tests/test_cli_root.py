"""Where the CLI looks: the project around a subfolder, FILE arguments, an empty repository."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from impact_ls.demo import DEMO_SOURCE, make_demo_project

IMPACT = [sys.executable, "-m", "impact_ls"]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*IMPACT, *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """The demo project as a git repository with the signature edit in its work tree."""
    return make_demo_project(tmp_path / "shop")


def test_analyze_from_a_subfolder_analyzes_the_enclosing_git_project(shop: Path):
    result = _run("analyze", "--format", "json", "--no-llm", cwd=shop / "acme")
    assert result.returncode == 0, result.stderr
    assert result.stderr == f"impact-ls: project root {shop} (the enclosing git work tree)\n"
    report = json.loads(result.stdout)
    assert [c["file"] for c in report["changes"]] == ["acme/auth.py"]
    assert ("acme/api.py", 9) in {(e["file"], e["line"]) for e in report["triage"]["must_inspect"]}
    assert report["tests"], "the tests of the whole project are selected"
    assert not (shop / "acme" / ".impact_ls").exists()  # no second cache in the subfolder
    assert (shop / ".impact_ls").is_dir()


def test_at_the_root_nothing_is_said_about_the_root(shop: Path):
    result = _run("analyze", "--format", "json", "--no-llm", cwd=shop)
    assert (result.returncode, result.stderr) == (0, "")


def test_tests_from_a_subfolder_print_ids_pytest_can_run_from_there(shop: Path):
    here = shop / "acme"
    result = _run("tests", cwd=here)
    assert result.returncode == 0, result.stderr
    ids = result.stdout.split()
    assert "../tests/test_auth.py::test_login_returns_token" in ids
    # The README's `pytest $(impact-ls tests)`, typed in the subfolder.
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *ids],
        cwd=here,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    summary = run.stdout.strip().splitlines()[-1]
    assert "no tests ran" not in summary and "error" not in summary, run.stdout
    counts = {word: int(n) for n, word in (part.split()[:2] for part in summary.split(", "))}
    assert counts.get("passed", 0) + counts.get("failed", 0) == len(ids), summary


def test_an_explicit_root_keeps_node_ids_as_pytest_prints_them(shop: Path, tmp_path: Path):
    result = _run("tests", "--root", str(shop), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "tests/test_auth.py::test_login_returns_token" in result.stdout.split()
    assert result.stderr == ""


def test_without_git_the_nearest_pyproject_is_the_root(tmp_path: Path):
    project = tmp_path / "plain"
    shutil.copytree(DEMO_SOURCE, project, ignore=shutil.ignore_patterns("history.toml"))
    result = _run("index", cwd=project / "acme")
    assert result.returncode == 0, result.stderr
    assert result.stderr == (
        f"impact-ls: project root {project} (the nearest folder with a pyproject.toml)\n"
    )
    assert result.stdout.splitlines()[0] == f"root      {project}"
    files = len(list(project.rglob("*.py")))
    assert result.stdout.splitlines()[1].startswith(f"files     {files} ")
    # analyze needs git; the error names the project, not the subfolder
    analyze = _run("analyze", cwd=project / "acme")
    assert analyze.returncode == 2
    assert f"{project} is not a git repository" in analyze.stderr


def test_a_folder_with_no_project_around_it_is_its_own_root(tmp_path: Path):
    folder = tmp_path / "loose"
    folder.mkdir()
    (folder / "m.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    result = _run("index", cwd=folder)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.splitlines()[0] == f"root      {folder}"


@pytest.mark.parametrize("missing", ["nosuch.py", "acme/nosuch.py", "../elsewhere.py"])
def test_a_file_that_does_not_exist_is_a_usage_error(shop: Path, missing: str):
    result = _run("analyze", missing, cwd=shop)
    assert result.returncode == 2
    assert result.stderr == (
        f"impact-ls: error: FILE {missing}: no such file (neither on disk nor at HEAD)\n"
    )
    assert result.stdout == ""


def test_a_file_outside_the_root_is_a_usage_error(shop: Path, tmp_path: Path):
    stray = tmp_path / "stray.py"
    stray.write_text("X = 1\n", encoding="utf-8")
    result = _run("analyze", str(stray), cwd=shop)
    assert result.returncode == 2
    assert result.stderr == (
        f"impact-ls: error: FILE {stray}: lies outside the project root {shop}\n"
    )


def test_a_name_too_long_for_the_file_system_is_a_usage_error(shop: Path):
    result = _run("analyze", "x" * 300 + ".py", cwd=shop)
    assert result.returncode == 2
    assert "File name too long" in result.stderr
    assert "Traceback" not in result.stderr


def test_files_are_read_relative_to_the_current_folder(shop: Path):
    session = shop / "acme" / "session.py"
    session.write_text(session.read_text().replace("SESSION_TTL = 3600", "SESSION_TTL = 60"))
    result = _run("analyze", "--format", "json", "session.py", cwd=shop / "acme")
    assert result.returncode == 0, result.stderr
    assert [c["entity"] for c in json.loads(result.stdout)["changes"]] == [
        "acme.session.SESSION_TTL"
    ]


def test_a_folder_argument_selects_the_changes_under_it(shop: Path):
    test_file = shop / "tests" / "test_session.py"
    test_file.write_text(test_file.read_text() + "\n\ndef test_added():\n    assert True\n")
    only_tests = json.loads(_run("analyze", "--format", "json", "tests", cwd=shop).stdout)
    assert [c["file"] for c in only_tests["changes"]] == ["tests/test_session.py"]
    only_acme = json.loads(_run("analyze", "--format", "json", "acme/", cwd=shop).stdout)
    assert [c["file"] for c in only_acme["changes"]] == ["acme/auth.py"]


def test_a_deleted_file_can_be_named(shop: Path):
    (shop / "acme" / "tokens.py").unlink()
    result = _run("analyze", "--format", "json", "acme/tokens.py", cwd=shop)
    assert result.returncode == 0, result.stderr
    changes = json.loads(result.stdout)["changes"]
    assert {c["file"] for c in changes} == {"acme/tokens.py"}
    kinds = {(c["change_type"], c["entity"]) for c in changes}
    assert ("delete", "acme.tokens.issue_token") in kinds


@pytest.fixture
def empty_repo(tmp_path: Path) -> Path:
    root = tmp_path / "fresh"
    root.mkdir()
    pygit2.init_repository(str(root), initial_head="main")
    (root / "m.py").write_text("def f(a):\n    return a\n", encoding="utf-8")
    (root / "use.py").write_text("from m import f\n\nf(1)\n", encoding="utf-8")
    return root


def test_an_empty_repository_says_to_commit_first(empty_repo: Path):
    result = _run("analyze", cwd=empty_repo)
    assert result.returncode == 2
    assert result.stderr == (
        f"impact-ls: error: {empty_repo} has no commits yet, so 'HEAD' names nothing to compare "
        "with; commit once (git add -A && git commit -m start), then analyze the next change\n"
    )
    assert "saved" not in result.stderr


def test_baseline_saved_in_an_empty_repository_is_honoured(empty_repo: Path):
    (empty_repo / "pyproject.toml").write_text(
        '[tool.impact-ls]\nbaseline = "saved"\n', encoding="utf-8"
    )
    text = _run("analyze", cwd=empty_repo)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[0] == "No changes against the saved text."
    assert "the saved text is the working tree itself" in text.stdout
    report = json.loads(_run("analyze", "--format", "json", cwd=empty_repo).stdout)
    assert (report["base"], report["changes"]) == ("saved", [])
    tests = _run("tests", cwd=empty_repo)
    assert (tests.returncode, tests.stdout) == (0, "")
    assert 'baseline = "saved"' in tests.stderr
