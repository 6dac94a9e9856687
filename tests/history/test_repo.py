"""GitRepo: revisions, file texts, dirty files and history of real repositories."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from impact_ls.errors import RevisionError
from impact_ls.history.commits import CommitKind
from impact_ls.history.repo import GitRepo

from .helpers import epoch, git

Plant = Callable[[Mapping[str, str], str], Path]


def _open(root: Path) -> GitRepo:
    repo = GitRepo.discover(root)
    assert repo is not None
    return repo


def test_discover_returns_none_outside_git(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("A = 1\n", encoding="utf-8")
    assert GitRepo.discover(tmp_path) is None
    assert GitRepo.discover(tmp_path / "a.py") is None


def test_discover_from_a_subfolder_or_file_finds_the_work_tree_root(basic_repo: Path) -> None:
    assert _open(basic_repo / "pkg").root == basic_repo.resolve()
    assert _open(basic_repo / "pkg" / "auth.py").root == basic_repo.resolve()


def test_discover_returns_none_for_a_bare_repository(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "--bare", "bare.git")
    assert GitRepo.discover(tmp_path / "bare.git") is None


def test_discover_refuses_a_linked_worktree_copied_by_hand(
    basic_repo: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    linked = tmp_path / "linked"
    git(basic_repo, "worktree", "add", "-q", "--detach", str(linked), "HEAD~1")
    assert _open(linked).root == linked.resolve()
    # the copy's .git file still names the original's metadata, which names ``linked``
    copy = tmp_path / "copy"
    shutil.copytree(linked, copy)
    assert GitRepo.discover(copy / "pkg") is None
    assert "git worktree repair" in caplog.text
    git(copy, "worktree", "repair")
    assert _open(copy).root == copy.resolve()


def test_revisions_resolve_like_git(basic_repo: Path) -> None:
    repo = _open(basic_repo)
    assert repo.head_sha() == git(basic_repo, "rev-parse", "HEAD").strip()
    assert repo.resolve("HEAD~2") == git(basic_repo, "rev-parse", "HEAD~2").strip()
    assert repo.resolve("main") == repo.head_sha()
    short = git(basic_repo, "rev-parse", "--short", "HEAD~1").strip()
    assert repo.resolve(short) == git(basic_repo, "rev-parse", "HEAD~1").strip()
    assert repo.commit_time("HEAD") == epoch("2024-03-01T10:00:00Z")
    assert repo.commit_time("HEAD~6") == epoch("2024-01-01T00:00:00Z")


@pytest.mark.parametrize("rev", ["no-such-branch", "HEAD~40", "HEAD^{tree}", "::"])
def test_a_revision_naming_no_commit_raises_revision_error(basic_repo: Path, rev: str) -> None:
    repo = _open(basic_repo)
    with pytest.raises(RevisionError, match="names no commit") as caught:
        repo.resolve(rev)
    assert repr(rev) in str(caught.value)
    with pytest.raises(RevisionError):
        repo.commit_time(rev)
    with pytest.raises(RevisionError):
        repo.file_at(rev, "pkg/auth.py")


def test_file_at_reads_the_text_at_each_revision(basic_repo: Path) -> None:
    repo = _open(basic_repo)
    assert repo.file_at("HEAD", "pkg/auth.py") == (basic_repo / "pkg/auth.py").read_text(
        encoding="utf-8"
    )
    before_fix = repo.file_at("HEAD~2", "pkg/auth.py")
    assert before_fix is not None
    assert before_fix.endswith("# Audit logging for login\n")
    assert repo.file_at("HEAD~1", "pkg/mailer.py") is None  # added later
    assert repo.file_at("HEAD", "pkg/missing.py") is None
    assert repo.file_at("HEAD", "pkg") is None  # a folder, not a file
    assert repo.file_at("HEAD", "../basic/pkg/auth.py") is None
    assert repo.file_at("HEAD", "/pkg/auth.py") is None


def test_file_at_returns_none_for_bytes_that_are_not_utf8(plant: Plant, tmp_path: Path) -> None:
    root = plant({"a.py": "A = 1\n"}, "")
    (root / "latin.py").write_bytes("NAME = 'caf\u00e9'\n".encode("latin-1"))
    git(root, "add", "latin.py")
    git(root, "commit", "-q", "-m", "latin-1 file")
    repo = _open(root)
    assert repo.file_at("HEAD", "latin.py") is None
    assert repo.file_at("HEAD", "a.py") == "A = 1\n"


def test_changed_files_of_a_clean_tree_is_empty(basic_repo: Path) -> None:
    assert _open(basic_repo).changed_files("HEAD") == []


def test_changed_files_covers_every_kind_of_dirty_python_file(basic_repo: Path) -> None:
    root = basic_repo
    (root / ".gitignore").write_text("generated/\n", encoding="utf-8")
    (root / "pkg/auth.py").write_text("# unstaged edit\n", encoding="utf-8")
    (root / "pkg/session.py").write_text("# staged edit\n", encoding="utf-8")
    git(root, "add", "pkg/session.py")
    (root / "pkg/billing.py").unlink()  # deleted, not staged
    git(root, "rm", "-q", "pkg/invoice.py")  # deletion staged
    (root / "pkg/new_staged.py").write_text("X = 1\n", encoding="utf-8")
    git(root, "add", "pkg/new_staged.py")
    (root / "pkg/sub").mkdir()
    (root / "pkg/sub/untracked.py").write_text("Y = 1\n", encoding="utf-8")
    (root / "generated").mkdir()
    (root / "generated/ignored.py").write_text("Z = 1\n", encoding="utf-8")
    (root / "notes.txt").write_text("not python\n", encoding="utf-8")
    # Staged, then put back the way HEAD has it: no difference with HEAD remains.
    original = (root / "pkg/tokens.py").read_text(encoding="utf-8")
    (root / "pkg/tokens.py").write_text("# temporary\n", encoding="utf-8")
    git(root, "add", "pkg/tokens.py")
    (root / "pkg/tokens.py").write_text(original, encoding="utf-8")

    assert _open(root).changed_files("HEAD") == [
        "pkg/auth.py",
        "pkg/billing.py",
        "pkg/invoice.py",
        "pkg/new_staged.py",
        "pkg/session.py",
        "pkg/sub/untracked.py",
    ]


def test_changed_files_against_an_older_revision_includes_committed_changes(
    basic_repo: Path,
) -> None:
    repo = _open(basic_repo)
    assert repo.changed_files("HEAD~1") == ["pkg/auth.py", "pkg/mailer.py"]
    assert repo.changed_files("HEAD~3") == ["pkg/auth.py", "pkg/mailer.py", "pkg/util.py"]


def test_is_ignored_follows_gitignore(basic_repo: Path) -> None:
    (basic_repo / ".gitignore").write_text("build/\n*.log\n", encoding="utf-8")
    repo = _open(basic_repo)
    assert repo.is_ignored("build/out.py")
    assert repo.is_ignored("debug.log")
    assert not repo.is_ignored("pkg/auth.py")


def test_branch_name_and_detached_head(basic_repo: Path) -> None:
    repo = _open(basic_repo)
    assert repo.branch_name() == "main"
    git(basic_repo, "checkout", "-q", "--detach", "HEAD~1")
    detached = _open(basic_repo)
    assert detached.branch_name() is None
    assert detached.head_sha() == git(basic_repo, "rev-parse", "HEAD~0").strip()
    assert detached.resolve("HEAD") == detached.head_sha()


def test_an_empty_repository_has_no_head_and_says_so(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "trunk")
    (tmp_path / "a.py").write_text("A = 1\n", encoding="utf-8")
    repo = _open(tmp_path)
    assert repo.head_sha() is None
    assert repo.branch_name() == "trunk"
    assert not repo.is_shallow()
    assert list(repo.history()) == []
    with pytest.raises(RevisionError, match="no commits yet"):
        repo.resolve("HEAD")
    with pytest.raises(RevisionError, match="no commits yet"):
        repo.changed_files("HEAD")


def test_a_shallow_clone_is_shallow_and_its_history_ends_at_the_boundary(
    basic_repo: Path, tmp_path: Path, miner: str
) -> None:
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{basic_repo}", "shallow")
    repo = _open(tmp_path / "shallow")
    assert repo.is_shallow()
    assert not _open(basic_repo).is_shallow()
    history = list(repo.history())
    assert [(fact.message.strip(), fact.kind) for fact in history] == [
        ("Send a mail after login", CommitKind.CHANGE),
        ("Fix login redirect", CommitKind.BOUNDARY),
    ]
    assert history[0].files == ("pkg/auth.py", "pkg/mailer.py")
    assert history[1].files == ()


def test_history_walks_merged_branches_and_does_not_diff_merges(plant: Plant, miner: str) -> None:
    root = plant(
        {"a.py": "A = 1\n"},
        """
        [[commit]]
        message = "Side work"
        date = "2024-01-02T00:00:00Z"
        branch = "feature"
        touch = ["a.py", "side.py"]

        [[commit]]
        message = "Main work"
        date = "2024-01-03T00:00:00Z"
        touch = ["a.py", "main.py"]
        delete = []

        [[commit]]
        message = "Merge feature"
        date = "2024-01-04T00:00:00Z"
        merge = "feature"
        """,
    )
    repo = _open(root)
    history = list(repo.history())
    assert [(f.message, f.kind, f.files, f.time) for f in history] == [
        ("Merge feature", CommitKind.MERGE, (), epoch("2024-01-04T00:00:00Z")),
        ("Main work", CommitKind.CHANGE, ("a.py", "main.py"), epoch("2024-01-03T00:00:00Z")),
        ("Side work", CommitKind.CHANGE, ("a.py", "side.py"), epoch("2024-01-02T00:00:00Z")),
        ("initial import", CommitKind.ROOT, (), epoch("2024-01-01T00:00:00Z")),
    ]
    assert history[0].parent == history[1].sha
    # what the merge adds to the main line: itself and the branch, not what main had already
    main_work = history[1].sha
    after_main = list(repo.history(hide=main_work))
    assert [f.message for f in after_main] == ["Merge feature", "Side work"]
    seen = list(repo.history(known={main_work}))
    assert [(f.sha, f.kind, f.message) for f in seen if f.sha == main_work] == [
        (main_work, CommitKind.SEEN, "")
    ]


def test_is_ancestor_says_whether_head_grew_from_a_commit(plant: Plant) -> None:
    root = plant(
        {"a.py": "A = 1\n"},
        """
        [[commit]]
        message = "Second"
        date = "2024-01-02T00:00:00Z"
        touch = ["a.py"]
        """,
    )
    repo = _open(root)
    head, first = repo.resolve("HEAD"), repo.resolve("HEAD~1")
    assert repo.is_ancestor(first) and repo.is_ancestor(head)
    git(root, "checkout", "-q", "--detach", first)
    moved = _open(root)
    assert not moved.is_ancestor(head)
    assert not moved.is_ancestor("0" * 40)
    assert not moved.is_ancestor("not a sha")
