"""Fixtures for the history tests: fixture projects planted as real git repositories."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from impact_ls.history.plant import plant_history

from .helpers import FIXTURES, write_project


@pytest.fixture(params=["git log", "pygit2"])
def miner(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """Each way a whole history is read: one ``git log``, or (no git command on PATH) pygit2."""
    if request.param == "pygit2":
        empty = tmp_path / "no-git-on-path"
        empty.mkdir()
        monkeypatch.setenv("PATH", str(empty))
    return str(request.param)


@pytest.fixture
def basic_repo(tmp_path: Path) -> Path:
    """``fixtures/cochange_basic`` planted as a git repository."""
    return plant_history(FIXTURES / "cochange_basic", tmp_path / "basic")


@pytest.fixture
def plant(tmp_path: Path) -> Callable[[Mapping[str, str], str], Path]:
    """Plant an ad-hoc project described by its files and its ``history.toml`` text."""
    counter = iter(range(1_000))

    def make(files: Mapping[str, str], history: str) -> Path:
        number = next(counter)
        source = write_project(tmp_path / f"source{number}", files, history)
        return plant_history(source, tmp_path / f"repo{number}")

    return make
