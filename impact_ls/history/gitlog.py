"""A whole history read through one ``git log`` when the git command is installed.

A cold co-change build reads every commit reachable from HEAD. git compares trees in C, several
times faster than pygit2 can (it offers no tree comparison that skips equal subtrees, and ours
reads raw tree objects one by one in Python): a build over pytest's 17.7k commits takes
0.45 s of CPU with ``git log`` (0.28 s of it git's), 1.5 s with the pygit2 walk.
``GitRepo.history`` walks with pygit2 whenever ``read_history`` returns ``None``: no git
command, a repository it refuses (another owner's, an unknown format), a non-zero exit or
output it cannot parse. A refresh, which reads a few commits, stays on pygit2:
starting a process would cost more than reading them.

The answer is the pygit2 walk's: the same commits and kinds, each ``CHANGE`` commit's paths
against its first parent without rename detection, sorted. Options given on the command line
keep the user's git configuration from changing what is listed (rename detection, signatures,
quoting, encodings, formats); the repository is named by ``--git-dir``, never found from the
environment or the working folder.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Container
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Windows
    fcntl = None  # type: ignore[assignment]

from impact_ls.history.commits import CommitFacts, CommitKind, commit_kind

logger = logging.getLogger(__name__)

# A commit's header, marked by two control characters no commit message holds in practice;
# a record that does not parse back drops the whole answer (never a half-read history).
_MARK = b"\x1e\x1f"
_FORMAT = "--format=%x1e%x1f%H %P%x00%ct%x00%B%x00"
_CHUNK = 1 << 20
# git flushes its output after every commit (600 bytes on average): read as it is written, pytest's
# 5 MB took 9,000 reads and 0.04 s of CPU, a fifth of the whole build's own; a short pause before
# each read lets a pipe's worth gather (90 reads, 0.005 s), and a larger pipe where the system
# allows one keeps git from ever waiting on a full one (the wall time does not grow)
_GATHER_S = 0.002
_PIPE_BYTES = 1 << 20
_SHA_CHARS = 40
# Variables that point git at another repository, index or object store than ours.
_REDIRECTS = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_COMMON_DIR",
        "GIT_NAMESPACE",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
    }
)


def read_history(
    git_dir: Path, head: str, boundary: Container[str] = frozenset()
) -> list[CommitFacts] | None:
    """Every commit reachable from the commit ``head``, newest first (committer time among
    commits not ordered by ancestry), or ``None`` when git cannot say. ``boundary`` holds the
    commits a shallow clone cut off from their parents (git lists them as parentless)."""
    git = shutil.which("git")
    if git is None:
        return None
    env = {k: v for k, v in os.environ.items() if k not in _REDIRECTS}
    env["GIT_TERMINAL_PROMPT"] = "0"
    command = [
        git,
        "--no-pager",
        f"--git-dir={git_dir}",
        # signed commits would put gpg's report into the output
        "-c",
        "log.showSignature=false",
        "log",
        "-z",
        "--no-renames",
        "--name-only",
        "--date-order",
        "--no-color",
        "--encoding=UTF-8",
        "--ignore-submodules=none",
        _FORMAT,
        head,
        "--",
    ]
    try:
        with subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        ) as process:
            assert process.stdout is not None
            commits = _parse(_gathering(process.stdout), boundary)
            code = process.wait()
    except (OSError, ValueError) as exc:
        logger.info("git log could not read %s (%s); reading history through pygit2", git_dir, exc)
        return None
    if code != 0 or commits is None:
        logger.info("git log of %s failed (exit %s); reading history through pygit2", git_dir, code)
        return None
    return commits


def _gathering(stdout: IO[bytes]) -> Callable[[int], bytes]:
    """A reader of the pipe ``stdout`` that lets git's output gather before each read."""
    fd = stdout.fileno()
    if fcntl is not None and hasattr(fcntl, "F_SETPIPE_SZ"):
        with contextlib.suppress(OSError):  # a system limit below it: the pipe stays as it is
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)

    def read(size: int) -> bytes:
        time.sleep(_GATHER_S)
        return os.read(fd, size)

    return read


def _parse(read: Callable[[int], bytes], boundary: Container[str]) -> list[CommitFacts] | None:
    """The commits of the output ``read`` streams, or ``None`` when a record does not parse."""
    commits: list[CommitFacts] = []
    pending = b""
    while True:
        chunk = read(_CHUNK)
        records = (pending + chunk).split(_MARK)
        # the last piece may be cut mid-record, unless the output has ended
        pending = records.pop() if chunk else b""
        for record in records:
            if not record:
                continue
            commit = _record(record, boundary)
            if commit is None:
                return None
            commits.append(commit)
        if not chunk:
            return commits


def _record(record: bytes, boundary: Container[str]) -> CommitFacts | None:
    """One commit: ``<sha> <parents>\\0<time>\\0<message>\\0`` then, after ``\\0\\n``, its
    changed paths, each ending in ``\\0``."""
    parts = record.split(b"\0", 3)
    if len(parts) != 4:
        return None
    head, when, message, rest = parts
    shas = head.decode("ascii", "replace").split()
    if not shas or len(shas[0]) != _SHA_CHARS or not when.isdigit():
        return None
    sha, parents = shas[0], shas[1:]
    kind = commit_kind(sha, len(parents), boundary)
    files: tuple[str, ...] = ()
    if kind is CommitKind.CHANGE and rest:
        # git ends the header with ``\0\n``; a root commit's or a merge's paths are not listed
        names = rest.removeprefix(b"\0").removeprefix(b"\n")
        # decoded as ``os.fsdecode`` decodes a path on POSIX (what pygit2 reports)
        files = tuple(sorted(filter(None, names.decode("utf-8", "surrogateescape").split("\0"))))
    return CommitFacts(
        sha,
        int(when),
        message.decode("utf-8", "replace"),
        kind,
        # git lists a commit a shallow clone cut off as parentless: ``commit_kind`` tells it
        parents[0] if parents and kind is not CommitKind.BOUNDARY else None,
        files,
    )
