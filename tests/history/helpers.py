"""Helpers for the history tests: dates, the real git CLI, compactly written fixture projects."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
# Found once: a test that takes git off PATH (the ``miner`` fixture) still plants with it.
GIT = shutil.which("git") or "git"

# The date the co-change tests analyse at: after the January commits of cochange_basic and
# before its March one.
FEBRUARY = int(datetime(2024, 2, 1, tzinfo=timezone.utc).timestamp())


def epoch(stamp: str) -> int:
    """Seconds since the epoch of an ISO date such as ``2024-01-02T10:00:00Z``."""
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp())


def git(root: Path, *args: str, date: str = "2024-06-01T12:00:00Z") -> str:
    """Run the real git CLI in ``root`` with a fixed identity and date; return its stdout."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Tester",
        "GIT_AUTHOR_EMAIL": "tester@example.invalid",
        "GIT_COMMITTER_NAME": "Tester",
        "GIT_COMMITTER_EMAIL": "tester@example.invalid",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(root),
    }
    done = subprocess.run(
        [GIT, *args], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def write_project(folder: Path, files: Mapping[str, str], history: str = "") -> Path:
    """Write a fixture project: ``files`` maps paths to (dedented) text, plus ``history.toml``."""
    for path, text in files.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text), encoding="utf-8")
    if history:
        (folder / "history.toml").write_text(textwrap.dedent(history), encoding="utf-8")
    return folder
