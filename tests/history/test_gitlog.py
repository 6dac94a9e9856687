"""A whole history read through ``git log`` equals the pygit2 walk, and degrades to it.

The repositories are real (pygit2 writes the odd commits git's porcelain would not), the git
command is the real one; a broken git is a real executable on PATH that fails or prints noise.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import FileMode

from impact_ls.history.cochange import CoChangeIndex
from impact_ls.history.commits import CommitFacts, CommitKind
from impact_ls.history.gitlog import read_history
from impact_ls.history.repo import GitRepo

from .helpers import GIT, git

START = 1_700_000_000

# Each commit: its message (bytes when its encoding is not UTF-8), the encoding it declares,
# and the whole tree after it (path → text; a (mode, text) pair for a symlink or script).
COMMITS: list[tuple[str | bytes, str | None, dict[str, object]]] = [
    ("import", None, {"pkg/a.py": "a\n", "pkg/b.py": "b\n", "README": "r\n"}),
    (
        "odd names: spaces, a newline, a tab, quotes, non-ASCII",
        None,
        {
            "pkg/a.py": "a2\n",
            "pkg/b.py": "b\n",
            "README": "r\n",
            "with space.py": "s\n",
            "new\nline.py": "n\n",
            "tab\there.py": "t\n",
            'quo"te.py': "q\n",
            "café/ünï.py": "u\n",
        },
    ),
    (
        b"latin-1 message: caf\xe9",
        "ISO-8859-1",
        {"pkg/a.py": "a3\n", "pkg/b.py": "b\n", "README": "r\n", "with space.py": "s2\n"},
    ),
    (
        b"a message declaring an encoding nobody knows: \xff\xfe",
        "x-no-such-encoding",
        {"pkg/a.py": "a3\n", "pkg/b2.py": "b\n", "README": "r\n", "with space.py": "s2\n"},
    ),
    (
        "a file turns symlink and a script changes mode",
        None,
        {
            "pkg/a.py": "a3\n",
            "pkg/b2.py": "b\n",
            "README": (FileMode.LINK, "pkg/a.py"),
            "with space.py": (FileMode.BLOB_EXECUTABLE, "s2\n"),
        },
    ),
]

# Settings that would change what ``git log`` prints, were they not overridden.
HOSTILE_CONFIG = """\
[diff]
    renames = copies
    relative = true
    noprefix = true
[log]
    showSignature = true
    showRoot = true
    decorate = full
[core]
    quotePath = true
[i18n]
    logOutputEncoding = ISO-8859-1
[color]
    ui = always
[format]
    pretty = oneline
"""


def _tree(repo: pygit2.Repository, files: dict[str, object]) -> pygit2.Oid:
    """The tree of ``files`` (flat paths), written folder by folder."""
    nested: dict[str, object] = {}
    for path, value in files.items():
        *folders, name = path.split("/")
        level = nested
        for folder in folders:
            level = level.setdefault(folder, {})  # type: ignore[assignment]
        level[name] = value
    return _write(repo, nested)


def _write(repo: pygit2.Repository, spec: dict[str, object]) -> pygit2.Oid:
    builder = repo.TreeBuilder()
    for name, value in spec.items():
        if isinstance(value, dict):
            builder.insert(name, _write(repo, value), FileMode.TREE)
            continue
        mode, text = value if isinstance(value, tuple) else (FileMode.BLOB, value)
        builder.insert(name, repo.create_blob(str(text).encode()), mode)
    return builder.write()


@pytest.fixture
def odd_repo(tmp_path: Path) -> Path:
    raw = pygit2.init_repository(str(tmp_path / "repo"))
    parents: list[pygit2.Oid] = []
    for number, (message, encoding, files) in enumerate(COMMITS):
        who = pygit2.Signature("Tester", "tester@example.invalid", START + number, 0)
        tree = _tree(raw, files)
        if encoding is None:
            oid = raw.create_commit("HEAD", who, who, message, tree, parents)
        else:
            oid = raw.create_commit("HEAD", who, who, message, tree, parents, encoding)
        parents = [oid]
    # a renamed module, a side branch merged back
    git(tmp_path / "repo", "checkout", "-q", "-f")
    git(tmp_path / "repo", "mv", "pkg/b2.py", "pkg/renamed.py")
    git(tmp_path / "repo", "commit", "-q", "-m", "rename a module", date="2024-01-01T00:00:00Z")
    git(tmp_path / "repo", "checkout", "-q", "-b", "side", "HEAD~1")
    (tmp_path / "repo" / "side.py").write_text("side\n", encoding="utf-8")
    git(tmp_path / "repo", "add", "side.py")
    git(tmp_path / "repo", "commit", "-q", "-m", "side work", date="2024-01-02T00:00:00Z")
    git(tmp_path / "repo", "checkout", "-q", "-")
    git(
        tmp_path / "repo",
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "merge side",
        "side",
        date="2024-01-03T00:00:00Z",
    )
    return tmp_path / "repo"


def _facts(root: Path) -> list[tuple[object, ...]]:
    repo = GitRepo.discover(root)
    assert repo is not None
    return sorted(_key(fact) for fact in repo.history())


def _key(fact: CommitFacts) -> tuple[object, ...]:
    return (fact.sha, fact.time, fact.kind, fact.parent, fact.files, fact.message.rstrip("\n"))


@contextlib.contextmanager
def _no_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No git command on PATH: history is read through pygit2."""
    with monkeypatch.context() as patch:
        empty = tmp_path / "empty-path"
        empty.mkdir(exist_ok=True)
        patch.setenv("PATH", str(empty))
        yield


def _pygit2_facts(
    root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> list[tuple[object, ...]]:
    with _no_git(monkeypatch, tmp_path):
        return _facts(root)


def test_git_log_reads_what_the_pygit2_walk_reads(
    odd_repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    repo = GitRepo.discover(odd_repo)
    assert repo is not None
    head = repo.head_sha()
    assert head is not None
    logged = read_history(odd_repo / ".git", head)
    assert logged is not None  # git is installed here: this is the git log path
    facts = _facts(odd_repo)
    assert facts == _pygit2_facts(odd_repo, monkeypatch, tmp_path)
    by_message = {key[5]: key for key in facts}
    assert by_message["odd names: spaces, a newline, a tab, quotes, non-ASCII"][4] == (
        "café/ünï.py",
        "new\nline.py",
        "pkg/a.py",
        'quo"te.py',
        "tab\there.py",
        "with space.py",
    )
    assert "latin-1 message: café" in by_message
    assert by_message["a file turns symlink and a script changes mode"][4] == (
        "README",
        "with space.py",
    )
    assert by_message["rename a module"][4] == ("pkg/b2.py", "pkg/renamed.py")
    assert by_message["merge side"][2] is CommitKind.MERGE
    assert by_message["import"][2] is CommitKind.ROOT


def test_the_users_git_configuration_changes_nothing(
    odd_repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    expected = _pygit2_facts(odd_repo, monkeypatch, tmp_path)
    config = tmp_path / "gitconfig"
    config.write_text(HOSTILE_CONFIG, encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    assert _facts(odd_repo) == expected


@pytest.mark.parametrize(
    ("behaviour", "script"),
    [
        ("refuses the repository", "echo 'fatal: detected dubious ownership' >&2; exit 128"),
        ("prints noise", "printf 'not a log\\036\\037at all\\0'; exit 0"),
        ("dies mid-output", "printf '\\036\\037%040d 1\\0'; kill -9 $$"),
    ],
)
def test_a_git_that_fails_leaves_the_walk_to_pygit2(
    odd_repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    behaviour: str,
    script: str,
) -> None:
    expected = _pygit2_facts(odd_repo, monkeypatch, tmp_path)
    broken = tmp_path / "broken-git"
    broken.mkdir()
    (broken / "git").write_text(f"#!/bin/sh\n{script}\n", encoding="utf-8")
    (broken / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{broken}:{Path(GIT).parent}")
    assert read_history(odd_repo / ".git", "HEAD") is None, behaviour
    assert _facts(odd_repo) == expected, behaviour


def test_a_co_change_index_is_the_same_whichever_reads_the_history(
    odd_repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def partners() -> tuple[object, ...]:
        repo = GitRepo.discover(odd_repo)
        assert repo is not None
        index = CoChangeIndex.build(repo, cache_dir=None)
        return index.commit_count, index.partners(
            ["pkg/a.py", "with space.py"], task_text="café module", before=2**40
        )

    with_git = partners()
    with _no_git(monkeypatch, tmp_path):
        assert partners() == with_git
    assert with_git[0] == 6  # every commit but the root and the merge
