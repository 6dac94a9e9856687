"""Fixtures of the pytest-lsp tests: planted copies of ``fixtures/lsp_shop``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from impact_ls.history.plant import plant_history

SHOP = Path(__file__).resolve().parents[2] / "fixtures" / "lsp_shop"


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """The lsp_shop fixture as a git repository with its planted history."""
    return plant_history(SHOP, tmp_path / "shop")


@pytest.fixture
def shop_no_git(tmp_path: Path) -> Path:
    """The lsp_shop fixture as a plain folder without git."""
    dest = tmp_path / "plain"
    shutil.copytree(SHOP, dest, ignore=shutil.ignore_patterns("history.toml"))
    return dest
