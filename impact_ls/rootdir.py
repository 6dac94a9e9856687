"""Which folder is the project: ``--root`` when given, else the enclosing project of a folder.

Found the way git, pytest and ruff find theirs, so ``cd src && impact-ls analyze`` analyzes the
whole project instead of making ``src`` a second one: the enclosing git work tree, else the
nearest folder upward holding a ``pyproject.toml`` or ``setup.cfg``, else the folder itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from impact_ls.errors import RootNotFoundError

PROJECT_MARKERS = ("pyproject.toml", "setup.cfg")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectRoot:
    """A project root and how it was found (``how`` is shown when it is not the start folder)."""

    path: Path
    how: str


def _git_work_tree(start: Path) -> Path | None:
    # A ".git" folder, or the ".git" file of a linked worktree or submodule, marks a work tree.
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _marked_folder(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if any((folder / marker).is_file() for marker in PROJECT_MARKERS):
            return folder
    return None


def find_project_root(start: Path) -> ProjectRoot:
    """The project enclosing ``start``: git work tree, else nearest marker file, else ``start``."""
    start = start.resolve()
    if (found := _git_work_tree(start)) is not None:
        return ProjectRoot(path=found, how="the enclosing git work tree")
    if (found := _marked_folder(start)) is not None:
        marker = next(m for m in PROJECT_MARKERS if (found / m).is_file())
        return ProjectRoot(path=found, how=f"the nearest folder with a {marker}")
    return ProjectRoot(path=start, how="the current folder")


def given_root(value: str) -> ProjectRoot:
    """The folder named by ``--root``; ``RootNotFoundError`` when it is not a directory."""
    path = Path(value).expanduser()
    if not path.is_dir():
        raise RootNotFoundError(f"--root {value!r} is not an existing directory")
    return ProjectRoot(path=path.resolve(), how="--root")
