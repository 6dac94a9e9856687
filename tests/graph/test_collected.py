"""The engine's collection cache: kept through body edits, recomputed when collection can change."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from impact_ls.config import Settings
from impact_ls.engine import Engine

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
BASE = "tests/test_base.py"


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    root = tmp_path / "collect_inherit"
    shutil.copytree(FIXTURES / "collect_inherit", root)
    return Engine.open(root, Settings(jedi_confirm=False))


def _collection(engine: Engine):
    with engine.index.lock:
        return engine.tests.collection(engine.index.graph)


def _text(engine: Engine, file: str) -> str:
    return (engine.root / file).read_text(encoding="utf-8")


def test_a_body_edit_keeps_the_collection(engine: Engine):
    first = _collection(engine)
    version = engine.index.graph.version
    edited = _text(engine, BASE).replace("assert add(1, 2) == 3", "assert add(2, 1) == 3")
    engine.set_document(BASE, edited)
    assert engine.index.graph.version != version
    assert _collection(engine) is first


def test_a_new_test_method_is_collected_in_every_subclass(engine: Engine):
    first = _collection(engine)
    edited = _text(engine, BASE).replace(
        "    def helper(self):", "    def test_new(self):\n        pass\n\n    def helper(self):"
    )
    engine.set_document(BASE, edited)
    now = _collection(engine)
    assert now is not first
    assert set(now.ids()) - set(first.ids()) == {
        "tests/test_base.py::TestBase::test_new",
        "tests/test_sub.py::TestBase::test_new",
        "tests/test_sub.py::TestSub::test_new",
        "tests/test_sub.py::TestMixed::test_new",
        "tests/deep/test_deeper.py::TestSub::test_new",
        "tests/deep/test_deeper.py::TestDeeper::test_new",
    }


def test_a_dunder_test_edit_recomputes_and_closing_the_buffer_restores(engine: Engine):
    first = set(_collection(engine).ids())
    edited = _text(engine, BASE).replace(
        "class TestBase:\n", "class TestBase:\n    __test__ = False\n"
    )
    engine.set_document(BASE, edited)
    off = set(_collection(engine).ids())
    assert not any("::TestBase::" in i or "::TestSub::" in i for i in off)
    assert "tests/test_sub.py::TestUsesShared::test_scale" in off
    engine.close_document(BASE)
    assert set(_collection(engine).ids()) == first


def test_a_changed_pytest_config_is_read_on_refresh(engine: Engine):
    assert engine.tests.config.python_classes == ("Test",)
    (engine.root / "pytest.ini").write_text("[pytest]\npython_classes = Nothing\n")
    engine.refresh()
    assert engine.tests.config.source == "pytest.ini [pytest]"
    assert _collection(engine).ids() == []


def test_config_notes_reach_the_report(engine: Engine):
    (engine.root / "tox.ini").write_text("[pytest]\naddopts = -m 'not slow'\n")
    engine.refresh()
    report = engine.analyze([])
    assert any("-m marker selection" in note for note in report.audit.notes)
