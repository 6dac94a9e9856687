"""The peers our prediction is measured beside, computed at the case's parent commit.

* ``grep_files``: ``git grep -c -w`` of the changed short names (``Case.names``) in the ``.py``
  files of the parent tree, the seed left out, ranked by matching lines (descending), then path.
  This is the maintainer's first move: search the repository for the name they changed.
* ``CoChangeHistory.ranking``: plain co-change, no text weighting: for every non-merge commit
  that is an ancestor of the parent (the parent itself excluded — strictly before it) and touches
  at most ``MAX_COMMIT_FILES`` paths, count the other ``.py`` files it changed with the seed;
  keep those that exist at the parent; rank by count descending, then path. Callers cut it to a
  top K.
"""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path

MAX_COMMIT_FILES = 50  # as the product's co-change miner, so both ignore sweeping commits


def _run(cwd: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(
        ["git", "-c", "core.quotepath=off", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        errors="replace",
        check=False,
    )
    if check and done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def grep_files(clone: Path, parent: str, names: tuple[str, ...], seed: str) -> tuple[str, ...]:
    """Files of the parent tree that mention one of ``names`` as a word, most mentions first."""
    if not names:
        return ()
    patterns = [arg for name in names for arg in ("-e", name)]
    # Exit status 1 means no match, which is an answer, not a failure.
    out = _run(clone, "grep", "-c", "-w", *patterns, parent, "--", "*.py", check=False)
    counts: list[tuple[int, str]] = []
    prefix = f"{parent}:"
    for line in out.splitlines():
        if not line.startswith(prefix):
            continue
        path, _, count = line[len(prefix) :].rpartition(":")
        if path and path != seed:
            counts.append((-int(count), path))
    return tuple(path for _, path in sorted(counts))


class CoChangeHistory:
    """Every non-merge commit's changed paths, read once per repository."""

    def __init__(self, clone: Path) -> None:
        self.clone = clone
        out = _run(clone, "log", "--no-merges", "--no-renames", "--format=%x01%H", "--name-only")
        self.files: dict[str, tuple[str, ...]] = {}
        for chunk in out.split("\x01")[1:]:
            sha, _, rest = chunk.partition("\n")
            self.files[sha.strip()] = tuple(p for p in rest.splitlines() if p)

    def ranking(self, parent: str, seed: str) -> tuple[str, ...]:
        """Files that co-changed with ``seed`` before ``parent``, most co-changes first."""
        parents = _run(self.clone, "rev-parse", f"{parent}^@").split()
        if not parents:
            return ()
        ancestors = _run(self.clone, "rev-list", "--no-merges", *parents).split()
        existing = set(_run(self.clone, "ls-tree", "-r", "--name-only", parent, "--").splitlines())
        counts: Counter[str] = Counter()
        for sha in ancestors:
            files = self.files.get(sha, ())
            if seed not in files or len(files) > MAX_COMMIT_FILES:
                continue
            for path in files:
                if path != seed and path.endswith(".py") and path in existing:
                    counts[path] += 1
        return tuple(path for path, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
