"""ProjectIndex on real folders: cold and warm builds, per-file patches, refresh, bad input."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from impact_ls.config import Settings
from impact_ls.graph import project as project_module
from impact_ls.graph.project import ProjectIndex
from impact_ls.graph.workspace import Discovery, SkipKind
from impact_ls.model import EdgeKind, QualName

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "index_basic"
FILES = ("pkg/__init__.py", "pkg/cli.py", "pkg/core.py", "tests/test_core.py")


@pytest.fixture(autouse=True)
def _user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # Never let a fallback write into the real ~/.cache.
    home = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


@pytest.fixture
def root(tmp_path: Path) -> Path:
    target = tmp_path / "proj"
    shutil.copytree(FIXTURE, target)
    return target


def _callers(index: ProjectIndex, qid: str) -> list[tuple[str, str, int]]:
    return [(e.source, e.file, e.span.line) for e in index.graph.callers_of(qid)]


def _write(root: Path, rel: str, content: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


def test_cold_build_indexes_every_file_and_resolves_calls(root: Path):
    index = ProjectIndex(root, Settings())
    assert not index.ready
    assert list(index.graph.nodes()) == []
    stats = index.build()
    assert index.ready
    assert (stats.files, stats.extracted, stats.from_cache, stats.skipped) == (4, 4, 0, 0)
    assert index.files() == FILES
    assert _callers(index, "pkg.core.greet") == [
        ("pkg.cli.main", "pkg/cli.py", 5),
        ("pkg.core.Greeter.run", "pkg/core.py", 18),
        ("tests.test_core.test_greet", "tests/test_core.py", 5),
    ]
    assert [name for name, _ in stats.phases] == [
        "discover",
        "read",
        "cache",
        "extract",
        "store",
        "resolve",
    ]
    assert index.notes == ()
    assert index.cache_location == str(root / ".impact_ls" / "facts.sqlite3")


def test_warm_start_reads_everything_from_the_cache(root: Path):
    first = ProjectIndex.open(root, Settings())
    warm = ProjectIndex.open(root, Settings())
    assert (warm.stats.extracted, warm.stats.from_cache) == (0, 4)
    assert sorted(warm.graph.edges(), key=repr) == sorted(first.graph.edges(), key=repr)
    assert sorted(warm.graph.nodes(), key=repr) == sorted(first.graph.nodes(), key=repr)


def test_changing_one_file_re_extracts_exactly_that_one(root: Path):
    ProjectIndex.open(root, Settings())
    _write(root, "pkg/cli.py", "from pkg.core import shout\n\n\ndef main():\n    shout('x')\n")
    index = ProjectIndex.open(root, Settings())
    assert (index.stats.extracted, index.stats.from_cache) == (1, 3)
    assert _callers(index, "pkg.core.shout") == [
        ("pkg.cli.main", "pkg/cli.py", 5),
        ("pkg.core.greet", "pkg/core.py", 6),
    ]
    assert ("pkg.cli.main", "pkg/cli.py", 5) not in _callers(index, "pkg.core.greet")


def test_a_corrupt_cache_database_is_rebuilt(root: Path, caplog):
    ProjectIndex.open(root, Settings())
    (root / ".impact_ls" / "facts.sqlite3").write_bytes(b"\x00garbage" * 512)
    for suffix in ("-wal", "-shm"):
        (root / ".impact_ls" / f"facts.sqlite3{suffix}").unlink(missing_ok=True)
    with caplog.at_level(logging.WARNING):
        index = ProjectIndex.open(root, Settings())
    assert "is corrupt" in caplog.text
    assert (index.stats.extracted, index.stats.from_cache) == (4, 0)
    assert len(_callers(index, "pkg.core.greet")) == 3
    again = ProjectIndex.open(root, Settings())
    assert (again.stats.extracted, again.stats.from_cache) == (0, 4)


def test_a_read_only_root_keeps_the_cache_in_the_user_cache_dir(root: Path, _user_cache: Path):
    # Tests run as root; a FILE called .impact_ls makes the cache folder impossible instead.
    (root / ".impact_ls").write_text("not a folder")
    index = ProjectIndex.open(root, Settings())
    assert index.cache_location.startswith(str(_user_cache / "impact-ls"))
    assert any(note.startswith(f"cache in {_user_cache / 'impact-ls'}") for note in index.notes)
    assert len(_callers(index, "pkg.core.greet")) == 3
    assert (root / ".impact_ls").read_text() == "not a folder"
    warm = ProjectIndex.open(root, Settings())
    assert (warm.stats.extracted, warm.stats.from_cache) == (0, 4)


def test_no_writable_cache_anywhere_still_builds_in_memory(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    (root / ".impact_ls").write_text("not a folder")
    blocker = tmp_path / "blocked"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    index = ProjectIndex.open(root, Settings())
    assert index.cache_location == ":memory:"
    assert any(note.startswith("cache in memory: ") for note in index.notes)
    assert len(_callers(index, "pkg.core.greet")) == 3


def test_parallel_extraction_gives_the_same_graph(root: Path, monkeypatch: pytest.MonkeyPatch):
    for i in range(12):
        _write(
            root, f"pkg/more{i}.py", f"from pkg.core import greet\n\ndef use{i}():\n    greet()\n"
        )
    serial = ProjectIndex(root, Settings())
    serial.build(jobs=1)
    shutil.rmtree(root / ".impact_ls")
    monkeypatch.setattr(project_module, "PARALLEL_MIN_FILES", 2)
    monkeypatch.setattr(project_module, "_CHUNK", 1)
    monkeypatch.setattr(project_module, "_INFLIGHT_PER_WORKER", 1)
    monkeypatch.setattr(project_module, "_WORKER_CHUNKS", 1)
    here: list[str] = []
    extract_one = project_module._extract_one

    def spied(item):  # the real extraction, noting which files this process took
        here.append(item[0])
        return extract_one(item)

    monkeypatch.setattr(project_module, "_extract_one", spied)
    switch = sys.getswitchinterval()
    parallel = ProjectIndex(root, Settings())
    seen: list[tuple[int, int]] = []
    stats = parallel.build(jobs=2, progress=lambda done, total: seen.append((done, total)))
    assert stats.jobs == 2
    assert stats.extracted == 16
    assert seen[0] == (0, 16) and seen[-1] == (16, 16)
    assert 0 < len(here) < 16  # this process extracts beside its worker
    assert sys.getswitchinterval() == switch
    assert sorted(parallel.graph.edges(), key=repr) == sorted(serial.graph.edges(), key=repr)


def test_progress_counts_cached_files_as_done(root: Path):
    ProjectIndex.open(root, Settings())
    _write(root, "pkg/extra.py", "def extra():\n    pass\n")
    seen: list[tuple[int, int]] = []
    ProjectIndex(root, Settings()).build(progress=lambda d, t: seen.append((d, t)))
    assert seen == [(4, 5), (5, 5)]


def test_bad_files_are_skipped_with_reasons_and_the_rest_is_indexed(root: Path, caplog):
    _write(root, "pkg/binary.py", b"\x00\x01\x02ELF")
    _write(root, "pkg/latin.py", b"x = '\xe9t\xe9'\n")
    _write(root, "pkg/big.py", "x = 1\n" * 200)
    _write(root, "pkg/empty.py", "")
    _write(root, "pkg/broken.py", "def greet_all(:\n    greet(\n")
    os.symlink(root / "pkg", root / "pkg" / "loop")
    with caplog.at_level(logging.INFO, logger="impact_ls.graph.workspace"):
        index = ProjectIndex.open(root, Settings(max_file_bytes=1000))
    skipped = {s.path: s.kind for s in index.skipped}
    assert skipped == {
        "pkg/big.py": SkipKind.TOO_LARGE,
        "pkg/binary.py": SkipKind.BINARY,
        "pkg/latin.py": SkipKind.UNDECODABLE,
        "pkg/loop": SkipKind.SYMLINK_LOOP,
    }
    assert index.stats.skipped == 4
    assert "pkg/empty.py" in index.files()
    assert "pkg/broken.py" in index.files()
    assert index.graph.node("pkg.empty") is not None
    assert any(n.startswith("skipped pkg/latin.py: undecodable") for n in index.notes)
    assert "skipping pkg/binary.py: binary" in caplog.text
    assert len(_callers(index, "pkg.core.greet")) == 3


def test_a_file_vanishing_between_discovery_and_reading_is_skipped(root: Path):
    def delete_core(found: Discovery) -> None:
        assert "pkg/cli.py" in found.files
        (root / "pkg" / "cli.py").unlink()

    index = ProjectIndex(root, Settings(), on_discovered=delete_core)
    stats = index.build()
    assert [(s.path, s.kind) for s in index.skipped] == [("pkg/cli.py", SkipKind.VANISHED)]
    assert stats.files == 3
    assert "pkg/cli.py" not in index.files()


def test_a_git_repository_root_honours_gitignore(root: Path):
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    _write(root, ".gitignore", "pkg/generated_*.py\n")
    _write(root, "pkg/generated_a.py", "def gen():\n    pass\n")
    _write(root, "scratch/notes.py", "x = 1\n")  # excluded by the fixture's pyproject setting
    index = ProjectIndex.open(root, Settings(exclude=("scratch",)))
    assert index.files() == FILES


def test_update_patches_one_file_and_its_dependents(root: Path):
    index = ProjectIndex.open(root, Settings())
    index.update("pkg/cli.py", "from pkg.core import shout\n\n\ndef main():\n    shout('a')\n")
    assert ("pkg.cli.main", "pkg/cli.py", 5) in _callers(index, "pkg.core.shout")
    assert [c for c in _callers(index, "pkg.core.greet") if c[1] == "pkg/cli.py"] == []
    # The disk did not change: the cache still answers a restart with the disk's version.
    restart = ProjectIndex.open(root, Settings())
    assert ("pkg.cli.main", "pkg/cli.py", 5) in _callers(restart, "pkg.core.greet")


def test_update_of_a_renamed_definition_keeps_callers_pointing_at_the_old_name(root: Path):
    index = ProjectIndex.open(root, Settings())
    text = (root / "pkg" / "core.py").read_text().replace("def greet(", "def welcome(")
    index.update(str(root / "pkg" / "core.py"), text)
    assert index.graph.node("pkg.core.greet") is None
    assert index.graph.node("pkg.core.welcome") is not None
    assert ("pkg.cli.main", "pkg/cli.py", 5) in _callers(index, "pkg.core.greet")


def test_update_ignores_paths_outside_the_root_and_excluded_files(root: Path, tmp_path: Path):
    index = ProjectIndex.open(root, Settings(exclude=("scratch",)))
    before = sorted(index.graph.edges(), key=repr)
    index.update(tmp_path / "elsewhere.py", "def greet():\n    pass\n")
    index.update("../elsewhere.py", "x = 1\n")
    index.update("scratch/x.py", "from pkg.core import greet\ngreet()\n")
    index.update(".venv/lib/x.py", "from pkg.core import greet\ngreet()\n")
    index.update("README.md", "# hi\n")
    assert sorted(index.graph.edges(), key=repr) == before
    assert index.files() == FILES


def test_update_adds_a_new_file_and_remove_forgets_it(root: Path):
    index = ProjectIndex.open(root, Settings())
    index.update("pkg/new.py", "from pkg.core import greet\n\n\ndef hi():\n    greet('x')\n")
    assert ("pkg.new.hi", "pkg/new.py", 5) in _callers(index, "pkg.core.greet")
    index.remove(root / "pkg" / "new.py")
    assert "pkg/new.py" not in index.files()
    assert ("pkg.new.hi", "pkg/new.py", 5) not in _callers(index, "pkg.core.greet")


def test_update_of_text_that_does_not_parse_keeps_the_file_indexed(root: Path):
    index = ProjectIndex.open(root, Settings())
    index.update("pkg/cli.py", "from pkg.core import greet\n\ndef main(:\n")
    assert "pkg/cli.py" in index.files()
    facts = index.facts("pkg/cli.py")
    assert facts is not None and facts.parse_error


def test_refresh_patches_what_changed_on_disk(root: Path):
    index = ProjectIndex.open(root, Settings())
    _write(root, "pkg/cli.py", "from pkg.core import shout\n\n\ndef main():\n    shout('a')\n")
    _write(root, "pkg/extra.py", "from pkg.core import greet\n\n\ndef extra():\n    greet('b')\n")
    (root / "tests" / "test_core.py").unlink()
    assert index.refresh() == ("pkg/cli.py", "pkg/extra.py", "tests/test_core.py")
    assert _callers(index, "pkg.core.greet") == [
        ("pkg.core.Greeter.run", "pkg/core.py", 18),
        ("pkg.extra.extra", "pkg/extra.py", 5),
    ]
    assert index.files() == ("pkg/__init__.py", "pkg/cli.py", "pkg/core.py", "pkg/extra.py")
    assert index.refresh() == ()
    # What refresh extracted went into the cache.
    warm = ProjectIndex.open(root, Settings())
    assert (warm.stats.extracted, warm.stats.from_cache) == (0, 4)


def test_updates_during_a_build_are_replayed_on_the_new_graph(root: Path):
    index = ProjectIndex(root, Settings())

    def edit_while_building(_: Discovery) -> None:
        index.update("pkg/late.py", "from pkg.core import greet\n\n\ndef late():\n    greet()\n")

    index._on_discovered = edit_while_building
    index.build()
    assert ("pkg.late.late", "pkg/late.py", 5) in _callers(index, "pkg.core.greet")


def test_relpath_and_module_for(root: Path, tmp_path: Path):
    index = ProjectIndex.open(root, Settings())
    assert index.relpath(root / "pkg" / "core.py") == "pkg/core.py"
    assert index.relpath("pkg/core.py") == "pkg/core.py"
    assert index.relpath(tmp_path / "other.py") is None
    assert index.relpath(root) is None
    assert index.module_for("pkg/core.py") == "pkg.core"
    assert index.module_for(root / "pkg" / "__init__.py") == "pkg"
    assert index.graph.has_edge(
        source=QualName("tests.test_core.test_greet"), target="pkg.core.greet", kind=EdgeKind.TESTS
    )


def test_cached_facts_follow_a_source_root_that_moved(tmp_path: Path):
    root = tmp_path / "layout"
    _write(root, "src/app/__init__.py", "")
    _write(root, "src/app/core.py", "def run():\n    pass\n")
    _write(root, "src/app/cli.py", "from app.core import run\n\n\ndef main():\n    run()\n")
    first = ProjectIndex.open(root, Settings())
    assert first.module_for("src/app/core.py") == "app.core"
    assert _callers(first, "app.core.run") == [("app.cli.main", "src/app/cli.py", 5)]
    # src/ becomes a package itself: same bytes, new module names, no re-extraction.
    _write(root, "src/__init__.py", "")
    second = ProjectIndex.open(root, Settings())
    assert (second.stats.extracted, second.stats.from_cache) == (1, 3)
    assert second.module_for("src/app/core.py") == "src.app.core"
    assert second.graph.node("src.app.core.run") is not None
    assert second.graph.node("app.core.run") is None
    facts = second.facts("src/app/core.py")
    assert facts is not None and facts.module == "src.app.core"


def test_refresh_rebuilds_when_the_source_roots_move(tmp_path: Path):
    root = tmp_path / "layout"
    _write(root, "src/app/__init__.py", "")
    _write(root, "src/app/core.py", "def run():\n    pass\n")
    index = ProjectIndex.open(root, Settings())
    _write(root, "src/__init__.py", "")
    assert index.refresh() == ("src/__init__.py",)
    assert index.module_for("src/app/core.py") == "src.app.core"
    assert index.graph.node("src.app.core.run") is not None
    assert index.graph.node("app.core.run") is None


def test_progress_ends_at_the_total_when_the_last_file_is_undecodable(root: Path):
    _write(root, "tests/zz_latin.py", b"x = '\xe9'\n")
    seen: list[tuple[int, int]] = []
    ProjectIndex(root, Settings()).build(progress=lambda d, t: seen.append((d, t)))
    assert seen[0] == (0, 5)
    assert seen[-1] == (4, 4)


def test_an_update_before_the_first_build_survives_it(root: Path):
    index = ProjectIndex(root, Settings())
    index.update("pkg/early.py", "from pkg.core import greet\n\n\ndef early():\n    greet()\n")
    index.build()
    assert ("pkg.early.early", "pkg/early.py", 5) in _callers(index, "pkg.core.greet")
    index.build()  # replayed once, not forever: a rebuild reads the disk again
    assert "pkg/early.py" not in index.files()


def test_concurrent_build_and_refresh_are_serialised(root: Path):
    index = ProjectIndex(root, Settings())
    results: list[object] = []
    threads = [
        threading.Thread(target=lambda: results.append(index.build())),
        threading.Thread(target=lambda: results.append(index.refresh())),
        threading.Thread(target=lambda: results.append(index.build())),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(results) == 3
    assert index.ready
    assert index.files() == FILES
    assert len(_callers(index, "pkg.core.greet")) == 3
