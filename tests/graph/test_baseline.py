"""The baseline view of a dirty file: what the project used of its baseline text."""

from __future__ import annotations

from pathlib import Path

import pytest

from impact_ls.config import Settings
from impact_ls.graph.baseline import BaselineEdges
from impact_ls.graph.project import ProjectIndex
from impact_ls.model import EdgeKind

BASELINE = """\
import re

_WORD = re.compile(r"\\w+")


class Store:
    def get(self, key):
        return key

    def words(self, text):
        return _WORD.findall(text) + [self.get(text)]
"""
# ``get`` deleted, ``_WORD`` renamed at its definition only: its read in ``words`` dangles
CURRENT = """\
import re

_WORDS = re.compile(r"\\w+")


class Store:
    def words(self, text):
        return _WORD.findall(text) + [self.get(text)]
"""
CALLER = """\
from pkg.store import Store


def fetch(key):
    return Store().get(key)
"""


@pytest.fixture(autouse=True)
def _user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


@pytest.fixture
def index(tmp_path: Path) -> ProjectIndex:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "store.py").write_text(CURRENT, encoding="utf-8")
    (root / "pkg" / "api.py").write_text(CALLER, encoding="utf-8")
    return ProjectIndex.open(root, Settings(), jobs=1)


def test_a_deleted_method_keeps_its_callers_from_the_baseline(index: ProjectIndex) -> None:
    assert index.graph.node("pkg.store.Store.get") is None
    before = sorted(map(repr, index.graph.edges_in_file("pkg/store.py")))
    found = index.baseline_snapshot("pkg/store.py", BASELINE)
    assert found is not None
    # the file was put at its baseline for the read, and back
    assert sorted(map(repr, index.graph.edges_in_file("pkg/store.py"))) == before
    assert index.graph.node("pkg.store.Store.get") is None

    overlay = found.edges(index.facts("pkg/store.py"), CURRENT)
    callers = {(e.source, e.kind) for e in overlay if e.target == "pkg.store.Store.get"}
    assert ("pkg.api.fetch", EdgeKind.CALL) in callers
    view = index.graph.overlaid(overlay)
    assert "pkg.api.fetch" in {e.source for e in view.callers_of("pkg.store.Store.get")}
    assert "pkg.store.Store.get" in found.defined


def test_a_renamed_constant_is_still_read_where_the_current_text_names_it(
    index: ProjectIndex,
) -> None:
    found = index.baseline_snapshot("pkg/store.py", BASELINE)
    assert found is not None
    overlay = found.edges(index.facts("pkg/store.py"), CURRENT)
    reads = {(e.source, e.span.line) for e in overlay if e.target == "pkg.store._WORD"}
    assert reads == {("pkg.store.Store.words", 8)}

    # once the read is fixed too, nothing dangles
    fixed = CURRENT.replace("_WORD.findall", "_WORDS.findall")
    index.update("pkg/store.py", fixed)
    overlay = found.edges(index.facts("pkg/store.py"), fixed)
    assert [e for e in overlay if e.target == "pkg.store._WORD"] == []


def test_cached_snapshots_are_forgotten_when_a_file_they_read_changes(
    index: ProjectIndex,
) -> None:
    found = index.baseline_snapshot("pkg/store.py", BASELINE)
    assert found is not None
    cache = BaselineEdges()
    cache.put("pkg/store.py", "d1", found)
    assert cache.get("pkg/store.py", "d1") is found
    assert cache.get("pkg/store.py", "d2") is None  # another baseline
    cache.changed(["pkg/__init__.py"])  # no edge of the snapshot comes from there
    assert cache.get("pkg/store.py", "d1") is found
    cache.changed(["pkg/api.py"])  # the caller moved: its edge may be stale
    assert cache.get("pkg/store.py", "d1") is None
