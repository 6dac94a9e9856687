"""The sqlite fact cache: keys, persistence, pruning, and how it degrades instead of failing."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from impact_ls.graph.facts import EXTRACTOR_VERSION, DefFact, FileFacts, facts_to_bytes
from impact_ls.graph.store import FactStore, sha256_of
from impact_ls.model import NodeKind, Span


def _facts(file: str, *names: str) -> FileFacts:
    module = file.removesuffix(".py").replace("/", ".")
    defs = tuple(
        DefFact(
            qualname=name,
            kind=NodeKind.FUNCTION,
            span=Span(line=i + 1, end_line=i + 1),
            name_span=Span(line=i + 1, col=4),
            signature=f"def {name}():",
        )
        for i, name in enumerate(names)
    )
    return FileFacts(file=file, module=module, line_count=len(names), definitions=defs)


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def test_open_creates_a_git_ignored_cache_folder(root: Path, cache_home: Path):
    store = FactStore.open(root)
    assert store.location == str(root / ".impact_ls" / "facts.sqlite3")
    assert store.note is None
    assert (root / ".impact_ls" / "facts.sqlite3").is_file()
    assert (root / ".impact_ls" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert not cache_home.exists()
    journal = sqlite3.connect(store.location).execute("PRAGMA journal_mode").fetchone()[0]
    assert journal == "wal"


def test_rows_are_keyed_by_path_and_content_hash_and_survive_reopening(root: Path, cache_home):
    facts = _facts("pkg/a.py", "f", "g")
    sha = sha256_of(b"def f(): pass\n")
    store = FactStore.open(root)
    assert store.put_many([("pkg/a.py", sha, facts)]) == 1
    store.close()
    again = FactStore.open(root)
    assert again.get("pkg/a.py", sha) == facts
    assert again.get("pkg/a.py", sha256_of(b"other")) is None
    assert again.get("pkg/b.py", sha) is None
    assert again.get_many({"pkg/a.py": sha, "pkg/b.py": sha}) == {"pkg/a.py": facts}
    assert again.get_many({"pkg/a.py": "0" * 64}) == {}


def test_rows_of_another_extractor_version_are_misses(root: Path, cache_home):
    store = FactStore.open(root)
    store.close()
    with sqlite3.connect(root / ".impact_ls" / "facts.sqlite3") as conn:
        conn.execute(
            "INSERT INTO facts VALUES (?, ?, ?, ?)",
            ("a.py", "abc", EXTRACTOR_VERSION + "-old", facts_to_bytes(_facts("a.py", "f"))),
        )
    assert FactStore.open(root).get("a.py", "abc") is None


def test_a_row_that_does_not_decode_is_a_miss(root: Path, cache_home, caplog):
    store = FactStore.open(root)
    damaged = bytearray(facts_to_bytes(_facts("b.py", "g")))
    damaged[-1] ^= 0x41
    store.put_encoded(
        [
            # JSON text, as an older version wrote it: a retired format, so a miss
            ("a.py", "s1", EXTRACTOR_VERSION, '{"v": "' + EXTRACTOR_VERSION + '", "f": [1, 2]}'),
            ("b.py", "s2", EXTRACTOR_VERSION, bytes(damaged)),
            ("c.py", "s3", EXTRACTOR_VERSION, facts_to_bytes(_facts("c.py", "h"))),
        ]
    )
    with caplog.at_level(logging.INFO, logger="impact_ls.graph.store"):
        assert store.get("a.py", "s1") is None
        assert store.get_many({"a.py": "s1", "b.py": "s2", "c.py": "s3"}) == {
            "c.py": _facts("c.py", "h")
        }
    assert "cached facts of a.py are in a retired format" in caplog.text
    assert "cached facts of b.py do not decode" in caplog.text


def test_a_corrupt_database_file_is_deleted_and_rebuilt(root: Path, cache_home, caplog):
    folder = root / ".impact_ls"
    folder.mkdir()
    (folder / "facts.sqlite3").write_bytes(b"this is not a database " * 200)
    with caplog.at_level(logging.WARNING, logger="impact_ls.graph.store"):
        store = FactStore.open(root)
    assert "is corrupt" in caplog.text
    assert store.location == str(folder / "facts.sqlite3")
    assert store.count() == 0
    store.put_many([("a.py", "s", _facts("a.py", "f"))])
    assert FactStore.open(root).get("a.py", "s") == _facts("a.py", "f")


def test_an_unwritable_project_falls_back_to_the_user_cache_dir(root: Path, cache_home, caplog):
    # Tests run as root, where chmod cannot make a folder read-only: a FILE named .impact_ls
    # makes mkdir fail the same way.
    (root / ".impact_ls").write_text("I am a file")
    with caplog.at_level(logging.WARNING, logger="impact_ls.graph.store"):
        store = FactStore.open(root)
    assert store.location.startswith(str(cache_home / "impact-ls"))
    assert store.location.endswith("facts.sqlite3")
    assert store.note is not None and store.note.startswith(f"cache in {cache_home / 'impact-ls'}")
    assert "is not writable" in store.note
    assert (root / ".impact_ls").read_text() == "I am a file"
    store.put_many([("a.py", "s", _facts("a.py", "f"))])
    # The same root maps to the same user cache folder next time.
    assert FactStore.open(root).get("a.py", "s") == _facts("a.py", "f")
    assert "trying the user cache dir" in caplog.text


def test_when_no_folder_is_writable_the_cache_lives_in_memory(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    (root / ".impact_ls").write_text("a file")
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file too")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    store = FactStore.open(root)
    assert store.location == ":memory:"
    assert store.note is not None and store.note.startswith("cache in memory: ")
    store.put_many([("a.py", "s", _facts("a.py", "f"))])
    assert store.get("a.py", "s") == _facts("a.py", "f")


def test_a_directory_in_place_of_the_database_falls_back(root: Path, cache_home: Path):
    (root / ".impact_ls" / "facts.sqlite3").mkdir(parents=True)
    store = FactStore.open(root)
    assert store.location.startswith(str(cache_home))
    assert store.note is not None


def test_prune_drops_vanished_paths_old_versions_and_old_hashes(root: Path, cache_home):
    store = FactStore.open(root)
    store.put_many([("a.py", f"sha{i}", _facts("a.py", f"f{i}")) for i in range(5)])
    store.put_many([("gone.py", "x", _facts("gone.py", "g"))])
    store.put_encoded([("b.py", "y", "0-ancient", "{}")])
    removed = store.prune(["a.py", "b.py"])
    assert removed == 4  # gone.py, b.py's stale version, and a.py's two oldest hashes
    assert store.count() == 3
    assert store.get("a.py", "sha4") == _facts("a.py", "f4")
    assert store.get("a.py", "sha2") == _facts("a.py", "f2")
    assert store.get("a.py", "sha1") is None
    assert store.get("gone.py", "x") is None


def test_a_closed_store_misses_and_drops_writes(root: Path, cache_home):
    store = FactStore.open(root)
    store.put_many([("a.py", "s", _facts("a.py", "f"))])
    store.close()
    assert store.get("a.py", "s") is None
    assert store.put_many([("b.py", "s", _facts("b.py", "f"))]) == 0
    assert store.get_many({"a.py": "s"}) == {}
