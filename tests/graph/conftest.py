"""Shared fixtures for the graph tests: fixture projects loaded file by file into a builder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from impact_ls.graph.builder import GraphBuilder

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _texts(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*.py"))
    }


@pytest.fixture(scope="session")
def fixture_texts() -> Callable[[str], dict[str, str]]:
    """Every ``.py`` file of ``fixtures/<name>`` by root-relative posix path."""
    return _texts


@pytest.fixture(scope="session")
def fixtures_root() -> Path:
    """The repository's ``fixtures/`` folder."""
    return FIXTURES


@pytest.fixture
def build_fixture() -> Callable[[str], GraphBuilder]:
    """Build the graph of a fixture project file by file, as an editor session would."""

    def build(name: str) -> GraphBuilder:
        builder = GraphBuilder()
        for path, text in _texts(name).items():
            builder.update(path, text)
        return builder

    return build
