"""history's changed paths equal libgit2's tree diff, on trees built entry by entry.

The history walk compares raw tree objects and skips equal subtrees instead of asking libgit2
for a full diff; these commits cover what that comparison must get right: nested edits, added
and deleted folders, a file that becomes a folder and back, symlinks, submodules, mode changes,
names that sort around ``/``, non-ASCII and odd names.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pygit2
from pygit2.enums import DeltaStatus, FileMode

from impact_ls.history.commits import CommitKind
from impact_ls.history.repo import GitRepo

# A file tree as nested dicts: a str value is a blob's text, a (mode, text) pair a blob with
# that mode, a dict a folder, an Oid a submodule commit.
Spec = dict[str, object]

SUBMODULE_A = pygit2.Oid(hex="1" * 40)
SUBMODULE_B = pygit2.Oid(hex="2" * 40)

BASE: Spec = {
    "README": "readme\n",
    "a.txt": "a\n",
    "a": {"x.py": "x = 1\n", "y.py": "y = 1\n"},
    "a0": "a0\n",
    "deep": {"one": {"two": {"three.py": "3\n", "keep.py": "keep\n"}}, "side.py": "side\n"},
    "gone": {"g1.py": "1\n", "sub": {"g2.py": "2\n"}},
    "run.sh": "echo hi\n",
    "link": (FileMode.LINK, "a.txt"),
    "vendor": SUBMODULE_A,
    "café.py": "c = 1\n",
    "with space.py": "s = 1\n",
    "will_be_folder": "file\n",
}

# Each step: (message, the whole tree after it, the paths that changed, sorted).
STEPS: list[tuple[str, Spec, list[str]]] = [
    (
        "edit a nested file and a top file",
        {
            **BASE,
            "README": "readme v2\n",
            "deep": {
                "one": {"two": {"three.py": "3 v2\n", "keep.py": "keep\n"}},
                "side.py": "side\n",
            },
        },
        ["README", "deep/one/two/three.py"],
    ),
    (
        "delete a folder, add one, file becomes folder",
        {
            **{k: v for k, v in BASE.items() if k not in ("gone", "will_be_folder")},
            "README": "readme v2\n",
            "deep": {
                "one": {"two": {"three.py": "3 v2\n", "keep.py": "keep\n"}},
                "side.py": "side\n",
            },
            "fresh": {"n1.py": "n1\n", "inner": {"n2.py": "n2\n"}},
            "will_be_folder": {"inside.py": "inside\n"},
        },
        [
            "fresh/inner/n2.py",
            "fresh/n1.py",
            "gone/g1.py",
            "gone/sub/g2.py",
            "will_be_folder",
            "will_be_folder/inside.py",
        ],
    ),
    (
        "mode change, symlink retarget, submodule bump, names around '/'",
        {
            **{k: v for k, v in BASE.items() if k not in ("gone", "will_be_folder")},
            "README": "readme v2\n",
            "deep": {
                "one": {"two": {"three.py": "3 v2\n", "keep.py": "keep\n"}},
                "side.py": "side\n",
            },
            "fresh": {"n1.py": "n1\n", "inner": {"n2.py": "n2\n"}},
            "will_be_folder": {"inside.py": "inside\n"},
            "run.sh": (FileMode.BLOB_EXECUTABLE, "echo hi\n"),
            "link": (FileMode.LINK, "a0"),
            "vendor": SUBMODULE_B,
            "a.txt": "a v2\n",
            "a": {"x.py": "x = 2\n", "y.py": "y = 1\n"},
            "a0": "a0 v2\n",
            "café.py": "c = 2\n",
            "with space.py": "s = 2\n",
        },
        ["a.txt", "a/x.py", "a0", "café.py", "link", "run.sh", "vendor", "with space.py"],
    ),
    (
        "folder becomes file again; a file becomes a symlink; submodule removed",
        {
            "README": "readme v2\n",
            "a.txt": (FileMode.LINK, "a0"),
            "a": {"x.py": "x = 2\n", "y.py": "y = 1\n"},
            "a0": "a0 v2\n",
            "will_be_folder": "file again\n",
        },
        [
            "a.txt",  # once, though libgit2 reports a file turned symlink twice
            "café.py",
            "deep/one/two/keep.py",
            "deep/one/two/three.py",
            "deep/side.py",
            "fresh/inner/n2.py",
            "fresh/n1.py",
            "link",
            "run.sh",
            "vendor",
            "will_be_folder",
            "will_be_folder/inside.py",
            "with space.py",
        ],
    ),
    ("nothing changes", {}, []),  # filled in below: the previous tree again
]
STEPS[-1] = ("nothing changes", STEPS[-2][1], [])


def _tree(repo: pygit2.Repository, spec: Spec) -> pygit2.Oid:
    builder = repo.TreeBuilder()
    for name, value in spec.items():
        if isinstance(value, dict):
            builder.insert(name, _tree(repo, value), FileMode.TREE)
        elif isinstance(value, pygit2.Oid):
            builder.insert(name, value, FileMode.COMMIT)
        elif isinstance(value, tuple):
            mode, text = value
            builder.insert(name, repo.create_blob(text.encode()), mode)
        else:
            assert isinstance(value, str)
            builder.insert(name, repo.create_blob(value.encode()), FileMode.BLOB)
    return builder.write()


def _libgit2_paths(repo: pygit2.Repository, old: pygit2.Oid, new: pygit2.Oid) -> list[str]:
    """libgit2's paths, each once (it reports a file turned symlink as deleted and added)."""
    diff = repo.get(old).diff_to_tree(repo.get(new))
    return sorted(
        {
            d.old_file.path if d.status == DeltaStatus.DELETED else d.new_file.path
            for d in diff.deltas
        }
    )


def test_changed_paths_match_libgit2_tree_diff(tmp_path: Path, miner: str) -> None:
    raw = pygit2.init_repository(str(tmp_path / "repo"))
    signature = pygit2.Signature("Tester", "tester@example.invalid", 1_700_000_000, 0)
    parents: list[pygit2.Oid] = []
    trees = [_tree(raw, BASE)]
    raw.create_commit("HEAD", signature, signature, "base", trees[0], parents)
    for number, (message, spec, _) in enumerate(STEPS, start=1):
        trees.append(_tree(raw, spec))
        when = pygit2.Signature("Tester", "tester@example.invalid", 1_700_000_000 + number, 0)
        raw.create_commit("HEAD", when, when, message, trees[-1], [raw.head.target])

    repo = GitRepo.discover(tmp_path / "repo")
    assert repo is not None
    history = list(repo.history())
    assert [fact.message for fact in reversed(history)] == ["base"] + [s[0] for s in STEPS]
    assert history[-1].kind is CommitKind.ROOT
    changes = list(reversed(history[:-1]))
    for step, fact, (old, new) in zip(STEPS, changes, pairwise(trees), strict=True):
        message, _, expected = step
        assert fact.kind is CommitKind.CHANGE, message
        assert list(fact.files) == expected, message
        assert list(fact.files) == _libgit2_paths(raw, old, new), message


def test_a_long_walk_reuses_trees_and_still_matches_libgit2(tmp_path: Path, miner: str) -> None:
    """Many commits each touching one file somewhere: the per-walk tree cache never goes stale."""
    raw = pygit2.init_repository(str(tmp_path / "repo"))
    spec: dict[str, object] = {
        f"pkg{p}": {f"mod{m}.py": f"{p}.{m} v0\n" for m in range(6)} for p in range(4)
    }
    trees = []
    for number in range(40):
        package = spec[f"pkg{number % 4}"]
        assert isinstance(package, dict)
        package[f"mod{number % 6}.py"] = f"v{number}\n"
        if number % 7 == 3:
            spec[f"extra{number}"] = {"e.py": "e\n"}
        trees.append(_tree(raw, spec))
        when = pygit2.Signature("Tester", "tester@example.invalid", 1_700_000_000 + number, 0)
        parents = [] if number == 0 else [raw.head.target]
        raw.create_commit("HEAD", when, when, f"commit {number}", trees[-1], parents)
    repo = GitRepo.discover(tmp_path / "repo")
    assert repo is not None
    facts = list(reversed(list(repo.history())))
    assert len(facts) == 40
    for fact, (old, new) in zip(facts[1:], pairwise(trees), strict=True):
        assert list(fact.files) == _libgit2_paths(raw, old, new)
        assert fact.files  # every commit changed one module (and maybe added a folder)
    assert facts[3].files == ("extra3/e.py", "pkg3/mod3.py")
