"""One commit of a history as both history readers give it (``repo.py``'s pygit2 walk and
``gitlog.py``'s ``git log``): its kind, time, message, first parent and changed paths."""

from __future__ import annotations

import sys
from collections.abc import Container
from typing import NamedTuple

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # pragma: no cover - exercised only on 3.10
    from impact_ls.model import StrEnum


class CommitKind(StrEnum):
    """How a commit of the history relates to its parents."""

    CHANGE = "change"  # one parent, diffed against it
    MERGE = "merge"  # two or more parents: not diffed (its changes belong to the merged commits)
    ROOT = "root"  # no parent: imports a whole tree at once, not diffed
    BOUNDARY = "boundary"  # its parent is cut off by a shallow clone: not diffed
    SEEN = "seen"  # read by the caller before (``history(known=…)``): not read again


class CommitFacts(NamedTuple):
    """One commit of the history: when, why, its first parent, which paths changed.

    A named tuple, not a frozen dataclass: a history is read by the ten thousand commits, and a
    tuple is made in a third of the time."""

    sha: str
    time: int
    message: str
    kind: CommitKind
    parent: str | None = None
    files: tuple[str, ...] = ()


def commit_kind(sha: str, parents: int, boundary: Container[str]) -> CommitKind:
    """What a commit with ``parents`` parents is to the history walk, before reading its trees."""
    if sha in boundary:
        return CommitKind.BOUNDARY
    if parents > 1:
        return CommitKind.MERGE
    return CommitKind.CHANGE if parents else CommitKind.ROOT
