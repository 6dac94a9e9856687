"""The record tests' project: ``fixtures/record_shop`` planted as a git repository, recorded once.

Records run real pytest in a subprocess. ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` keeps the child
from loading this environment's many plugins (the shop needs none), which keeps each record to a
few seconds; ``RECORD_SHOP_*`` variables steer the shop's ``test_steered`` (fail, wait, hang).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from impact_ls.history.plant import plant_history

from .helpers import FIXTURE, child_env, copy_project, record


@pytest.fixture(autouse=True)
def _quiet_child(monkeypatch: pytest.MonkeyPatch) -> None:
    child_env(monkeypatch)


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A fresh planted shop, never recorded."""
    return plant_history(FIXTURE, tmp_path / "shop")


@pytest.fixture(scope="session")
def recorded_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A shop recorded once per session (copy it before changing anything)."""
    root = plant_history(FIXTURE, tmp_path_factory.mktemp("template") / "shop")
    with pytest.MonkeyPatch.context() as patch:
        child_env(patch)
        result = record(root)
    assert result.stored, result.message
    yield root


@pytest.fixture
def recorded(recorded_template: Path, tmp_path: Path) -> Path:
    """A recorded shop of this test's own."""
    return copy_project(recorded_template, tmp_path / "recorded")
