"""plant_history: fixture projects become real git repositories with exactly scripted history."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from impact_ls.history.plant import plant_history

from .helpers import FIXTURES, epoch, git, write_project

Plant = Callable[[Mapping[str, str], str], Path]


def test_basic_fixture_history_has_the_scripted_messages_dates_and_author(basic_repo: Path) -> None:
    log = git(basic_repo, "log", "--format=%s|%cI|%aI|%an <%ae>|%cn").splitlines()
    assert log == [
        "Send a mail after login|2024-03-01T10:00:00+00:00|2024-03-01T10:00:00+00:00"
        "|Impact Fixture <fixture@impact-ls.invalid>|Impact Fixture",
        *[
            f"{message}|{date}|{date}|Impact Fixture <fixture@impact-ls.invalid>|Impact Fixture"
            for message, date in [
                ("Fix login redirect", "2024-01-06T10:00:00+00:00"),
                ("Audit logging for login", "2024-01-05T10:00:00+00:00"),
                ("Invoice totals in billing", "2024-01-04T10:00:00+00:00"),
                ("Rotate session tokens", "2024-01-03T10:00:00+00:00"),
                ("Add session expiry to login", "2024-01-02T10:00:00+00:00"),
                ("initial import", "2024-01-01T00:00:00+00:00"),
            ]
        ],
    ]


def test_working_tree_is_clean_on_main_without_the_script(basic_repo: Path) -> None:
    assert git(basic_repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(basic_repo, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert not (basic_repo / "history.toml").exists()
    assert "history.toml" not in git(basic_repo, "ls-files")


def test_touch_appends_the_message_and_write_creates_the_file(basic_repo: Path) -> None:
    auth = (basic_repo / "pkg/auth.py").read_text(encoding="utf-8").splitlines()
    assert auth[-4:] == [
        "# Add session expiry to login",
        "# Audit logging for login",
        "# Fix login redirect",
        "# Send a mail after login",
    ]
    assert (basic_repo / "pkg/mailer.py").read_text(encoding="utf-8").startswith('"""Mail."""')
    changed = git(basic_repo, "show", "--name-only", "--format=", "HEAD").split()
    assert changed == ["pkg/auth.py", "pkg/mailer.py"]


def test_planting_twice_gives_identical_commits(tmp_path: Path) -> None:
    first = plant_history(FIXTURES / "cochange_basic", tmp_path / "a")
    second = plant_history(FIXTURES / "cochange_basic", tmp_path / "b")
    assert git(first, "rev-parse", "HEAD") == git(second, "rev-parse", "HEAD")


def test_initial_date_and_delete(plant: Plant) -> None:
    repo = plant(
        {"a.py": "A = 1\n", "b.py": "B = 1\n"},
        """
        initial_date = "2023-05-01T08:00:00Z"
        [[commit]]
        message = "Drop b"
        date = "2023-05-02T08:00:00Z"
        delete = ["b.py"]
        """,
    )
    assert git(repo, "log", "--format=%ct %s").splitlines() == [
        f"{epoch('2023-05-02T08:00:00Z')} Drop b",
        f"{epoch('2023-05-01T08:00:00Z')} initial import",
    ]
    assert not (repo / "b.py").exists()
    assert git(repo, "ls-files").split() == ["a.py"]
    assert git(repo, "status", "--porcelain") == ""


def test_branch_commits_stay_off_main_until_merged(plant: Plant) -> None:
    repo = plant(
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
        touch = ["main.py"]

        [[commit]]
        message = "Merge feature"
        date = "2024-01-04T00:00:00Z"
        merge = "feature"
        """,
    )
    assert git(repo, "log", "--first-parent", "--format=%s").splitlines() == [
        "Merge feature",
        "Main work",
        "initial import",
    ]
    parents = git(repo, "log", "-1", "--format=%P").split()
    assert len(parents) == 2
    assert git(repo, "log", "-1", "--format=%s", parents[1]).strip() == "Side work"
    assert git(repo, "ls-files").split() == ["a.py", "main.py", "side.py"]
    assert (repo / "a.py").read_text(encoding="utf-8") == "A = 1\n# Side work\n"
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "branch", "--format=%(refname:short)").split() == ["feature", "main"]


@pytest.mark.parametrize(
    ("entry", "complaint"),
    [
        ('message = "x"\ndate = "2024-01-02T00:00:00Z"\ntouch = ["../out.py"]', "inside"),
        ('message = "x"\ndate = "yesterday"', "ISO 8601"),
        ('message = ""\ndate = "2024-01-02T00:00:00Z"', "message"),
        ('message = "x"\ndate = "2024-01-02T00:00:00Z"\ntuch = ["a.py"]', "unknown keys"),
        ('message = "x"\ndate = "2024-01-02T00:00:00Z"\ndelete = ["zz.py"]', "does not exist"),
        ('message = "x"\ndate = "2024-01-02T00:00:00Z"\nmerge = "nothing"', "no commits"),
    ],
)
def test_a_bad_script_names_the_commit_and_the_problem(
    tmp_path: Path, entry: str, complaint: str
) -> None:
    source = write_project(tmp_path / "src", {"a.py": "A = 1\n"}, f"[[commit]]\n{entry}\n")
    with pytest.raises(ValueError, match="commit #1") as caught:
        plant_history(source, tmp_path / "dest")
    assert complaint in str(caught.value)


def test_refuses_a_non_empty_destination(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ValueError, match="not empty"):
        plant_history(FIXTURES / "cochange_basic", dest)
    assert (dest / "keep.txt").read_text(encoding="utf-8") == "mine"
