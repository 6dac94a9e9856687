"""CoChangeIndex: L = 1 co-change partners from planted git history, cached per HEAD."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from impact_ls.history.cochange import NOTE_EMPTY, NOTE_NO_GIT, NOTE_NO_HISTORY, CoChangeIndex
from impact_ls.history.repo import GitRepo
from impact_ls.model import CoChange

from .helpers import FEBRUARY, epoch, git

Plant = Callable[[Mapping[str, str], str], Path]
FAR_FUTURE = 2**40
MARCH = epoch("2024-03-01T10:00:00Z")  # the commit that adds pkg/mailer.py


def _open(root: Path) -> GitRepo:
    repo = GitRepo.discover(root)
    assert repo is not None
    return repo


def _index(root: Path, cache: Path | None = None, **kwargs: int) -> CoChangeIndex:
    return CoChangeIndex.build(_open(root), cache_dir=cache, **kwargs)


def _pairs(found: tuple[CoChange, ...]) -> list[tuple[str, float]]:
    return [(c.file, c.score) for c in found]


# churn of a two-file commit = 1/log2(3) = 0.6309, of a one-file commit = 1. Before February
# pkg/auth.py changed in two two-file commits (with session.py, with util.py) and once alone:
# each partner's share is 0.6309 / (0.6309 + 0.6309 + 1) = 0.2789.
AUTH_PARTNERS = [("pkg/session.py", 0.2789), ("pkg/util.py", 0.2789)]


def test_co_changed_partners_surface_with_their_share_of_history(
    basic_repo: Path, miner: str
) -> None:
    index = _index(basic_repo)
    assert index.notes == ()
    assert index.commit_count == 6
    found = index.partners(["pkg/auth.py"], task_text="", before=FEBRUARY)
    assert _pairs(found) == AUTH_PARTNERS
    assert all(isinstance(c, CoChange) for c in found)


def test_commits_at_or_after_the_cutoff_are_never_evidence(basic_repo: Path) -> None:
    index = _index(basic_repo)
    at_cutoff = index.partners(["pkg/auth.py"], task_text="mail", before=MARCH)
    assert _pairs(at_cutoff) == AUTH_PARTNERS
    after = index.partners(["pkg/auth.py"], task_text="", before=MARCH + 1)
    # Three two-file commits and one single-file commit: 0.6309 / 2.8928 = 0.2181.
    assert _pairs(after) == [
        ("pkg/mailer.py", 0.2181),
        ("pkg/session.py", 0.2181),
        ("pkg/util.py", 0.2181),
    ]
    assert index.partners(["pkg/mailer.py"], task_text="", before=MARCH) == ()


def test_only_direct_partners_are_recalled(basic_repo: Path) -> None:
    index = _index(basic_repo)
    # tokens.py changed with session.py, session.py with auth.py: tokens.py is two hops away.
    auth = {c.file for c in index.partners(["pkg/auth.py"], task_text="", before=FAR_FUTURE)}
    assert "pkg/tokens.py" not in auth
    session = index.partners(["pkg/session.py"], task_text="", before=FEBRUARY)
    assert _pairs(session) == [("pkg/auth.py", 0.5), ("pkg/tokens.py", 0.5)]


def test_unrelated_files_are_absent(basic_repo: Path) -> None:
    index = _index(basic_repo)
    auth = {c.file for c in index.partners(["pkg/auth.py"], task_text="", before=FAR_FUTURE)}
    assert auth.isdisjoint({"pkg/billing.py", "pkg/invoice.py", "pkg/__init__.py"})
    assert _pairs(index.partners(["pkg/billing.py"], task_text="", before=FEBRUARY)) == [
        ("pkg/invoice.py", 1.0)
    ]
    assert index.partners(["pkg/__init__.py"], task_text="", before=FAR_FUTURE) == ()
    assert index.partners(["not/in/history.py"], task_text="", before=FAR_FUTURE) == ()


def test_several_inputs_merge_their_partners_and_exclude_themselves(basic_repo: Path) -> None:
    index = _index(basic_repo)
    found = index.partners(["pkg/session.py", "pkg/auth.py"], task_text="", before=FEBRUARY)
    assert _pairs(found) == [("pkg/tokens.py", 0.5), ("pkg/util.py", 0.2789)]


def test_a_message_matching_the_task_raises_its_commit_weight(basic_repo: Path) -> None:
    index = _index(basic_repo)
    found = index.partners(["pkg/auth.py"], task_text="Session expiry", before=FEBRUARY)
    # "Add session expiry to login" is the best match (relevance 1); the other two commits keep
    # the floor 0.2: 0.6309 / (0.6309 + 0.2 * 0.6309 + 0.2) = 0.6592, 0.1262 / 0.9571 = 0.1318.
    assert _pairs(found) == [("pkg/session.py", 0.6592), ("pkg/util.py", 0.1318)]
    audit = index.partners(["pkg/auth.py"], task_text="auditLog", before=FEBRUARY)
    assert _pairs(audit) == [("pkg/util.py", 0.6592), ("pkg/session.py", 0.1318)]


def test_asking_again_answers_the_same_whatever_was_asked_in_between(basic_repo: Path) -> None:
    # answers are kept per question (keystrokes repeat it); each part of the question counts
    index = _index(basic_repo)
    questions = [
        (("pkg/auth.py",), "Session expiry", FEBRUARY, 8),
        (("pkg/auth.py",), "auditLog", FEBRUARY, 8),
        (("pkg/auth.py",), "Session expiry", FAR_FUTURE, 8),
        (("pkg/auth.py",), "Session expiry", FEBRUARY, 1),
        (("pkg/auth.py", "pkg/session.py"), "Session expiry", FEBRUARY, 8),
    ]
    first = [index.partners(list(f), task_text=t, before=b, limit=n) for f, t, b, n in questions]
    assert len({tuple(_pairs(a)) for a in first}) == len(questions)  # all different
    again = [
        index.partners(list(reversed(f)), task_text=t, before=b, limit=n)
        for f, t, b, n in reversed(questions)
    ]
    assert again[::-1] == first


def test_a_task_matching_no_message_leaves_pure_co_change(basic_repo: Path) -> None:
    index = _index(basic_repo)
    for task in ("", "zebra quantum", "invoice"):  # "invoice" matches a commit auth.py is not in
        assert _pairs(index.partners(["pkg/auth.py"], task_text=task, before=FEBRUARY)) == (
            AUTH_PARTNERS
        )


def test_at_most_limit_partners_per_file(plant: Plant) -> None:
    others = [f"mod_{n:02}.py" for n in range(45)]
    root = plant(
        {"hub.py": "HUB = 1\n"},
        f"""
        [[commit]]
        message = "Touch everything"
        date = "2024-01-02T00:00:00Z"
        touch = {json.dumps(["hub.py", *others])}
        """,
    )
    index = _index(root)
    found = index.partners(["hub.py"], task_text="", before=FAR_FUTURE)
    assert _pairs(found) == [(name, 1.0) for name in others[:40]]
    three = index.partners(["hub.py"], task_text="", before=FAR_FUTURE, limit=3)
    assert [c.file for c in three] == ["mod_00.py", "mod_01.py", "mod_02.py"]


def test_commits_touching_more_than_the_cap_are_skipped(plant: Plant, miner: str) -> None:
    fifty = ["hub.py", *(f"a_{n:02}.py" for n in range(49))]
    fifty_one = ["hub.py", "wide.py", *(f"b_{n:02}.py" for n in range(49))]
    root = plant(
        {"hub.py": "HUB = 1\n"},
        f"""
        [[commit]]
        message = "Fifty files"
        date = "2024-01-02T00:00:00Z"
        touch = {json.dumps(fifty)}

        [[commit]]
        message = "Fifty-one files"
        date = "2024-01-03T00:00:00Z"
        touch = {json.dumps(fifty_one)}
        """,
    )
    index = _index(root)
    assert index.commit_count == 1
    found = {c.file for c in index.partners(["hub.py"], task_text="", before=FAR_FUTURE)}
    assert "a_00.py" in found
    assert found.isdisjoint({"wide.py", "b_00.py"})
    wider = _index(root, max_commit_files=60)
    assert wider.commit_count == 2
    assert _pairs(wider.partners(["wide.py"], task_text="", before=FAR_FUTURE))[0] == (
        "b_00.py",
        1.0,
    )


def test_only_python_files_pair_and_the_other_paths_count_for_breadth(
    plant: Plant, miner: str, tmp_path: Path
) -> None:
    root = plant(
        {"hub.py": "HUB = 1\n"},
        """
        [[commit]]
        message = "Hub, docs and changelog"
        date = "2024-01-02T00:00:00Z"
        touch = ["hub.py", "wide.py", "CHANGES.rst", "docs/hub.md"]

        [[commit]]
        message = "Hub and a helper"
        date = "2024-01-03T00:00:00Z"
        touch = ["hub.py", "helper.py"]

        [[commit]]
        message = "Docs alone"
        date = "2024-01-04T00:00:00Z"
        touch = ["README.md"]
        """,
    )
    cache = tmp_path / "cache"
    built = _index(root, cache)
    # "Docs alone" changes no Python file: no Python file's history holds it
    assert built.commit_count == 2
    # churn of the four-path commit 1/log2(5) = 0.4307, of the two-path one 1/log2(3) = 0.6309
    expected = [("helper.py", 0.5943), ("wide.py", 0.4057)]
    assert _pairs(built.partners(["hub.py"], task_text="", before=FAR_FUTURE)) == expected
    cached = _index(root, cache)
    assert cached.mined_commits == 0  # read back from the cache, breadth included
    assert _pairs(cached.partners(["hub.py"], task_text="", before=FAR_FUTURE)) == expected


def test_merged_branch_commits_count_and_merges_do_not(plant: Plant, miner: str) -> None:
    root = plant(
        {"hub.py": "HUB = 1\n"},
        """
        [[commit]]
        message = "Side work"
        date = "2024-01-02T00:00:00Z"
        branch = "feature"
        touch = ["hub.py", "side.py"]

        [[commit]]
        message = "Main work"
        date = "2024-01-03T00:00:00Z"
        touch = ["hub.py", "main.py"]

        [[commit]]
        message = "Merge feature"
        date = "2024-01-04T00:00:00Z"
        merge = "feature"
        touch = ["hub.py", "merged.py"]
        """,
    )
    index = _index(root)
    # "Side work" lives only behind the merge; the merge's own diff is not a commit of its own
    assert index.commit_count == 2
    assert _pairs(index.partners(["hub.py"], task_text="", before=FAR_FUTURE)) == [
        ("main.py", 0.5),
        ("side.py", 0.5),
    ]


def test_the_cache_of_a_head_is_reused(basic_repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _index(basic_repo, cache)
    head = _open(basic_repo).head_sha()
    assert first.mined_commits == 7
    assert sorted(p.name for p in cache.iterdir()) == [".gitignore", f"cochange-{head}.json"]
    assert (cache / ".gitignore").read_text(encoding="utf-8").endswith("\n*\n")
    second = _index(basic_repo, cache)
    assert second.mined_commits == 0
    assert second.commit_count == 6
    assert _pairs(second.partners(["pkg/auth.py"], task_text="", before=FEBRUARY)) == (
        AUTH_PARTNERS
    )


@pytest.mark.parametrize(
    "damage",
    [
        "{not json",
        "",
        "[]",
        '{"version": 1}',
        "RIGHT_HEAD_BAD_IDS",
        "RIGHT_HEAD_NARROW_COMMIT",
        "RIGHT_HEAD_OLD_ROWS",
    ],
)
def test_a_corrupt_cache_is_a_miss_and_is_rewritten(
    basic_repo: Path, tmp_path: Path, damage: str
) -> None:
    cache = tmp_path / "cache"
    _index(basic_repo, cache)
    head = _open(basic_repo).head_sha()
    path = cache / f"cochange-{head}.json"
    if damage.startswith("RIGHT_HEAD_"):
        payload = json.loads(path.read_text(encoding="utf-8"))
        row = payload["commits"][0]
        if damage == "RIGHT_HEAD_BAD_IDS":
            row[3] = [999]
        elif damage == "RIGHT_HEAD_NARROW_COMMIT":
            row[4] = len(row[3]) - 1  # fewer paths than its Python files
        else:
            payload["commits"] = [r[:4] for r in payload["commits"]]  # format 2's rows
        damage = json.dumps(payload)
    path.write_text(damage, encoding="utf-8")
    rebuilt = _index(basic_repo, cache)
    assert rebuilt.mined_commits == 7
    assert _pairs(rebuilt.partners(["pkg/auth.py"], task_text="", before=FEBRUARY)) == (
        AUTH_PARTNERS
    )
    assert json.loads(path.read_text(encoding="utf-8"))["head"] == head
    assert _index(basic_repo, cache).mined_commits == 0


def test_a_cache_built_with_another_size_cap_is_not_reused(
    basic_repo: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    _index(basic_repo, cache)
    assert _index(basic_repo, cache, max_commit_files=1).mined_commits == 7


def test_an_unwritable_cache_folder_is_bypassed(basic_repo: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("", encoding="utf-8")
    index = _index(basic_repo, blocker / "cache")
    assert index.mined_commits == 7
    assert _pairs(index.partners(["pkg/auth.py"], task_text="", before=FEBRUARY)) == (AUTH_PARTNERS)


def _commit_one(root: Path) -> None:
    with (root / "pkg/auth.py").open("a", encoding="utf-8") as handle:
        handle.write("# rotate tokens on login\n")
    with (root / "pkg/tokens.py").open("a", encoding="utf-8") as handle:
        handle.write("# rotate tokens on login\n")
    git(root, "commit", "-q", "-am", "Rotate tokens on login", date="2024-03-05T09:00:00Z")


def _everything(index: CoChangeIndex, paths: list[str]) -> dict[str, list[tuple[str, float]]]:
    return {
        path: _pairs(index.partners([path], task_text="rotate login", before=FAR_FUTURE))
        for path in paths
    }


PATHS = [
    "pkg/auth.py",
    "pkg/billing.py",
    "pkg/invoice.py",
    "pkg/mailer.py",
    "pkg/session.py",
    "pkg/tokens.py",
    "pkg/util.py",
]


def test_refresh_after_one_new_commit_mines_only_it_and_equals_a_fresh_build(
    basic_repo: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    old = _index(basic_repo, cache)
    assert old.refresh(_open(basic_repo)) is old
    _commit_one(basic_repo)
    new = old.refresh(_open(basic_repo))
    fresh = _index(basic_repo)
    assert new.mined_commits == 1
    assert new.head == fresh.head == _open(basic_repo).head_sha()
    assert new.commit_count == fresh.commit_count == 7
    assert _everything(new, PATHS) == _everything(fresh, PATHS)
    assert _everything(new, PATHS)["pkg/auth.py"][0] == ("pkg/tokens.py", 0.3536)
    # The old view still answers for its own HEAD.
    assert old.commit_count == 6
    assert "pkg/tokens.py" not in {
        c.file for c in old.partners(["pkg/auth.py"], task_text="", before=FAR_FUTURE)
    }
    # Stored as a delta on the old HEAD; a cold start follows it without mining.
    delta = json.loads((cache / f"cochange-{new.head}.json").read_text(encoding="utf-8"))
    assert delta["base"] == old.head
    assert len(delta["commits"]) == 1
    cold = _index(basic_repo, cache)
    assert cold.mined_commits == 0
    assert _everything(cold, PATHS) == _everything(fresh, PATHS)


def test_refreshing_an_old_view_twice_does_not_disturb_the_first_refresh(
    basic_repo: Path,
) -> None:
    old = _index(basic_repo)
    _commit_one(basic_repo)
    first = old.refresh(_open(basic_repo))
    second = old.refresh(_open(basic_repo))
    assert first.commit_count == second.commit_count == 7
    assert _everything(first, PATHS) == _everything(second, PATHS)


def test_refresh_after_head_moved_back_reads_nothing_again(
    basic_repo: Path, tmp_path: Path
) -> None:
    index = _index(basic_repo, tmp_path / "cache")
    git(basic_repo, "reset", "-q", "--hard", "HEAD~2")
    moved = index.refresh(_open(basic_repo))
    assert moved.mined_commits == 0  # every commit it reaches was read for the first HEAD
    assert moved.commit_count == 4
    assert index.commit_count == 6  # the first view is untouched
    assert _pairs(moved.partners(["pkg/auth.py"], task_text="", before=FAR_FUTURE)) == [
        ("pkg/session.py", 0.5),
        ("pkg/util.py", 0.5),
    ]


def test_no_git_gives_an_empty_index_with_a_note(tmp_path: Path) -> None:
    assert GitRepo.discover(tmp_path) is None
    index = CoChangeIndex.empty(NOTE_NO_GIT)
    assert index.notes == ("no git repository: co-change unavailable",)
    assert index.head is None
    assert index.partners(["a.py"], task_text="x", before=FAR_FUTURE) == ()


def test_an_empty_repository_degrades_with_a_note(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    index = _index(tmp_path, tmp_path / ".impact_ls")
    assert index.notes == (NOTE_EMPTY,)
    assert index.partners(["a.py"], task_text="", before=FAR_FUTURE) == ()
    (tmp_path / "a.py").write_text("A = 1\n", encoding="utf-8")
    git(tmp_path, "add", "a.py")
    git(tmp_path, "commit", "-q", "-m", "first")
    only_root = index.refresh(_open(tmp_path))
    assert only_root.notes == (NOTE_NO_HISTORY,)
    assert only_root.commit_count == 0
    head = _open(tmp_path).head_sha()
    assert (tmp_path / ".impact_ls" / f"cochange-{head}.json").is_file()


def test_a_detached_head_indexes_the_history_it_points_at(basic_repo: Path) -> None:
    git(basic_repo, "checkout", "-q", "--detach", "HEAD~1")
    index = _index(basic_repo)
    assert index.notes == ()
    assert index.commit_count == 5
    assert _pairs(index.partners(["pkg/auth.py"], task_text="", before=FAR_FUTURE)) == (
        AUTH_PARTNERS
    )


def test_a_shallow_clone_limits_co_change_and_says_so(
    basic_repo: Path, tmp_path: Path, miner: str
) -> None:
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{basic_repo}", "shallow")
    index = _index(tmp_path / "shallow", tmp_path / "cache")
    assert index.notes == ("shallow clone: co-change limited to 1 commit",)
    assert _pairs(index.partners(["pkg/auth.py"], task_text="", before=FAR_FUTURE)) == [
        ("pkg/mailer.py", 1.0)
    ]
    git(tmp_path / "shallow", "fetch", "-q", "--unshallow")
    deepened = index.refresh(_open(tmp_path / "shallow"))
    assert deepened.notes == ()
    assert deepened.commit_count == 6
