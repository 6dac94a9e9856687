"""Plant a fixture project's scripted git history into a fresh repository (tests and the demo).

A fixture project is a folder of source files plus an optional ``history.toml``::

    initial_date = "2024-01-01T00:00:00Z"     # optional; the date of "initial import"

    [[commit]]
    message = "Add mfa to login"
    date = "2024-01-02T10:00:00Z"
    touch = ["pkg/auth.py", "pkg/session.py"]      # append "# <message>" to each
    write = { "pkg/new.py" = "VALUE = 1\\n" }       # optional: replace or create whole files
    delete = ["pkg/old.py"]                          # optional
    branch = "feature"                               # optional: commit on this side branch
    merge = "feature"                                # optional: merge that branch into main

``plant_history`` copies the folder (without ``history.toml``), commits the whole tree as
"initial import", replays the commits in order with a fixed author and the given dates as both
author and committer dates, and leaves the work tree clean on branch ``main``. Everything is
deterministic: the same fixture gives the same commit shas on every run.

A ``branch`` commit starts the branch at main's tip the first time it is named and leaves main
alone; a ``merge`` commit on main has main's tip and the branch tip as parents and takes every
file the branch changed since it forked, then applies its own ``touch``/``write``/``delete``.
"""

from __future__ import annotations

import logging
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Any

import pygit2
from pygit2.enums import CheckoutStrategy, FileMode

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib

logger = logging.getLogger(__name__)

HISTORY_FILE = "history.toml"
MAIN_BRANCH = "main"
INITIAL_MESSAGE = "initial import"
INITIAL_DATE = "2024-01-01T00:00:00Z"
AUTHOR_NAME = "Impact Fixture"
AUTHOR_EMAIL = "fixture@impact-ls.invalid"

_KNOWN_KEYS = frozenset({"message", "date", "touch", "write", "delete", "branch", "merge"})


@dataclass(slots=True)
class _Branch:
    """A branch being planted: its tip, its files, and what changed since it forked from main."""

    tip: pygit2.Oid
    files: dict[str, tuple[bytes, FileMode]]
    changed: set[str] = field(default_factory=set)


def plant_history(source: Path, dest: Path) -> Path:
    """Copy the fixture ``source`` to ``dest`` as a git repository with its scripted history.

    Returns ``dest``. ``dest`` must not exist or be an empty folder. Raises ``ValueError``
    naming the bad entry when ``history.toml`` is malformed.
    """
    script = _read_script(source)
    if dest.exists() and any(dest.iterdir()):
        raise ValueError(f"{dest} is not empty; plant a fixture into a fresh folder")
    shutil.copytree(source, dest, ignore=_ignore_history(source), dirs_exist_ok=True)
    repo = pygit2.init_repository(str(dest), initial_head=MAIN_BRANCH)

    files = _snapshot(dest)
    initial = _date(script.get("initial_date", INITIAL_DATE), "initial_date")
    blobs: dict[bytes, pygit2.Oid] = {}
    root = _commit(repo, blobs, files, INITIAL_MESSAGE, initial, parents=[])
    main = _Branch(tip=root, files=dict(files))
    branches: dict[str, _Branch] = {}

    for number, entry in enumerate(script.get("commit", []), start=1):
        where = f"{HISTORY_FILE} commit #{number}"
        if not isinstance(entry, Mapping):
            raise ValueError(f"{where}: expected a table")
        unknown = set(entry) - _KNOWN_KEYS
        if unknown:
            raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
        message = entry.get("message")
        if not isinstance(message, str) or not message.strip():
            raise ValueError(f"{where}: 'message' must be a non-empty string")
        when = _date(entry.get("date"), f"{where} date")
        branch_name = entry.get("branch")
        merge_name = entry.get("merge")
        if branch_name is not None and merge_name is not None:
            raise ValueError(f"{where}: a commit is either on a 'branch' or a 'merge', not both")

        if branch_name is not None:
            target = branches.setdefault(
                _name(branch_name, where), _Branch(tip=main.tip, files=dict(main.files))
            )
        else:
            target = main
        parents = [target.tip]
        if merge_name is not None:
            side = branches.get(_name(merge_name, where))
            if side is None:
                raise ValueError(f"{where}: merges branch {merge_name!r}, which has no commits")
            for path in sorted(side.changed):
                if path in side.files:
                    main.files[path] = side.files[path]
                else:
                    main.files.pop(path, None)
            parents.append(side.tip)

        touched = _apply(target.files, entry, message, where)
        target.changed |= touched
        target.tip = _commit(repo, blobs, target.files, message, when, parents=parents)
        if branch_name is not None:
            repo.references.create(f"refs/heads/{branch_name}", target.tip, force=True)
        else:
            repo.references.create(f"refs/heads/{MAIN_BRANCH}", target.tip, force=True)

    _check_out(repo, dest, main)
    logger.debug("planted %s into %s at %s", source, dest, main.tip)
    return dest


def _read_script(source: Path) -> dict[str, Any]:
    if not source.is_dir():
        raise ValueError(f"fixture {source} is not a folder")
    path = source / HISTORY_FILE
    if not path.exists():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: {exc}") from exc


def _ignore_history(source: Path) -> Any:
    top = str(source)

    def ignore(folder: str, names: list[str]) -> list[str]:
        # Only the fixture's own history.toml is a script; a nested one is project data.
        return [HISTORY_FILE] if folder == top and HISTORY_FILE in names else []

    return ignore


def _snapshot(root: Path) -> dict[str, tuple[bytes, FileMode]]:
    files: dict[str, tuple[bytes, FileMode]] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] == ".git" or not path.is_file():
            continue
        mode = FileMode.BLOB_EXECUTABLE if path.stat().st_mode & 0o111 else FileMode.BLOB
        files[rel.as_posix()] = (path.read_bytes(), mode)
    return files


def _apply(
    files: dict[str, tuple[bytes, FileMode]], entry: Mapping[str, Any], message: str, where: str
) -> set[str]:
    """Apply one commit's edits to ``files``; return the paths it changed."""
    touched: set[str] = set()
    line = "# " + " ".join(message.split()) + "\n"
    for raw in _strings(entry.get("touch", []), f"{where} touch"):
        path = _path(raw, where)
        content, mode = files.get(path, (b"", FileMode.BLOB))
        if content and not content.endswith(b"\n"):
            content += b"\n"
        files[path] = (content + line.encode("utf-8"), mode)
        touched.add(path)
    writes = entry.get("write", {})
    if not isinstance(writes, Mapping):
        raise ValueError(f"{where}: 'write' must be a table of path = content")
    for raw, text in writes.items():
        if not isinstance(text, str):
            raise ValueError(f"{where}: write {raw!r} must be a string")
        path = _path(raw, where)
        mode = files.get(path, (b"", FileMode.BLOB))[1]
        files[path] = (text.encode("utf-8"), mode)
        touched.add(path)
    for raw in _strings(entry.get("delete", []), f"{where} delete"):
        path = _path(raw, where)
        if files.pop(path, None) is None:
            raise ValueError(f"{where}: cannot delete {path!r}, it does not exist")
        touched.add(path)
    return touched


def _commit(
    repo: pygit2.Repository,
    blobs: dict[bytes, pygit2.Oid],
    files: Mapping[str, tuple[bytes, FileMode]],
    message: str,
    when: int,
    *,
    parents: list[pygit2.Oid],
) -> pygit2.Oid:
    # An in-memory index builds the tree without touching the work tree, so side branches
    # need no checkout; `blobs` remembers written contents so a commit writes only new ones.
    index = pygit2.Index()
    for path, (content, mode) in sorted(files.items()):
        blob = blobs.get(content)
        if blob is None:
            blob = blobs[content] = repo.create_blob(content)
        index.add(pygit2.IndexEntry(path, blob, mode))
    tree = index.write_tree(repo)
    signature = pygit2.Signature(AUTHOR_NAME, AUTHOR_EMAIL, when, 0)
    return repo.create_commit(None, signature, signature, message, tree, parents)


def _check_out(repo: pygit2.Repository, dest: Path, main: _Branch) -> None:
    repo.references.create(f"refs/heads/{MAIN_BRANCH}", main.tip, force=True)
    repo.set_head(f"refs/heads/{MAIN_BRANCH}")
    for path in _snapshot(dest):
        if path not in main.files:
            (dest / path).unlink()
    commit = repo.get(main.tip)
    assert isinstance(commit, pygit2.Commit)
    repo.checkout_tree(commit.tree, strategy=CheckoutStrategy.FORCE)
    repo.index.read_tree(commit.tree)
    repo.index.write()


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where}: expected a list of paths")
    return value


def _path(raw: str, where: str) -> str:
    pure = PurePosixPath(raw)
    if pure.is_absolute() or ".." in pure.parts or not pure.parts or pure.parts[0] == ".git":
        raise ValueError(f"{where}: path {raw!r} must stay inside the project")
    return pure.as_posix()


def _name(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value or value == MAIN_BRANCH:
        raise ValueError(f"{where}: branch names are non-empty strings other than {MAIN_BRANCH!r}")
    return value


def _date(value: Any, where: str) -> int:
    if isinstance(value, datetime):  # TOML's own datetime literal
        moment = value
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise ValueError(f"{where}: {value!r} is not an ISO 8601 date") from exc
    else:
        raise ValueError(f"{where}: expected a date like 2024-01-02T10:00:00Z")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp())
