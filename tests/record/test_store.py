"""The record database: atomic replacement, the class/module rule, the file rule, corruption."""

from __future__ import annotations

from pathlib import Path

import pytest

from impact_ls.errors import RecordError
from impact_ls.model import NodeKind, QualName, TestId
from impact_ls.record.store import (
    DB_NAME,
    RecordedFile,
    Recording,
    RecordStore,
    RunCounts,
    RunStatus,
)

Q = QualName
T = TestId


def _recording(sha: str = "a" * 64) -> Recording:
    entities = {
        Q("pkg.mod.add"): ("pkg/mod.py", NodeKind.FUNCTION),
        Q("pkg.mod.add_more"): ("pkg/mod.py", NodeKind.FUNCTION),
        Q("pkg.mod.Cart"): ("pkg/mod.py", NodeKind.CLASS),
        Q("pkg.mod.Cart.total"): ("pkg/mod.py", NodeKind.METHOD),
        Q("pkg.mod.Cart.total.inner"): ("pkg/mod.py", NodeKind.FUNCTION),
        Q("pkg.mod"): ("pkg/mod.py", NodeKind.MODULE),
        Q("pkg.mod.sub"): ("pkg/mod/sub.py", NodeKind.MODULE),
        Q("pkg.other.f"): ("pkg/other.py", NodeKind.FUNCTION),
    }
    executed = {
        T("t::test_add"): frozenset({Q("pkg.mod.add")}),
        T("t::test_more"): frozenset({Q("pkg.mod.add_more")}),
        T("t::test_cart"): frozenset({Q("pkg.mod.Cart")}),
        T("t::test_total"): frozenset({Q("pkg.mod.Cart.total.inner")}),
        T("t::test_lazy"): frozenset({Q("pkg.mod"), Q("pkg.mod.sub")}),
        T("t::test_other"): frozenset({Q("pkg.other.f")}),
    }
    files = (
        RecordedFile(path="pkg/mod.py", sha=sha, module="pkg.mod"),
        RecordedFile(path="pkg/mod/sub.py", sha="b" * 64, module="pkg.mod.sub"),
        RecordedFile(path="pkg/other.py", sha="c" * 64, module="pkg.other"),
    )
    tests = (*executed, T("t::test_nothing"))
    return Recording(tests=tests, files=files, entities=entities, executed=executed)


def _store(root: Path, recording: Recording | None = None) -> RecordStore:
    store = RecordStore.open_for_writing(root)
    run = store.begin_run(head="f" * 40, python="python", args="", pid=1)
    recording = recording or _recording()
    store.finish_run(
        run,
        status=RunStatus.COMPLETE,
        exit_code=0,
        message="ok",
        counts=RunCounts(recorded=len(recording.tests)),
        recording=recording,
    )
    return store


def test_a_class_or_function_counts_with_what_is_nested_in_it_a_module_alone(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path)
    found = store.tests_of([Q("pkg.mod.add"), Q("pkg.mod.Cart"), Q("pkg.mod"), Q("pkg.absent")])
    assert found == {
        # "add" is not a prefix of "add_more": only names nested under "add." count.
        Q("pkg.mod.add"): {T("t::test_add")},
        Q("pkg.mod.Cart"): {T("t::test_cart"), T("t::test_total")},
        # a module: its own lines only, never its submodules or definitions
        Q("pkg.mod"): {T("t::test_lazy")},
    }
    assert set(store.tests()) == {*_recording().executed, T("t::test_nothing")}


def test_records_of_files_the_rule_rejects_do_not_count(tmp_path: Path) -> None:
    store = _store(tmp_path)
    found = store.tests_of(
        [Q("pkg.mod.add"), Q("pkg.other.f")], accept=lambda path, sha: path != "pkg/other.py"
    )
    assert found == {Q("pkg.mod.add"): {T("t::test_add")}}


def test_a_failed_run_keeps_the_data_and_a_complete_one_replaces_it(tmp_path: Path) -> None:
    store = _store(tmp_path)
    first = store.data_run()
    failed = store.begin_run(head=None, python="python", args="-x", pid=2)
    store.finish_run(
        failed, status=RunStatus.TIMEOUT, exit_code=None, message="slow", counts=RunCounts()
    )
    assert store.data_run() == first
    last = store.last_run()
    assert last is not None
    assert (last.status, last.message, last.args) == (RunStatus.TIMEOUT, "slow", "-x")
    assert store.tests_of([Q("pkg.other.f")]) == {Q("pkg.other.f"): {T("t::test_other")}}
    replacement = Recording(
        tests=(T("t::new"),),
        files=(RecordedFile(path="pkg/mod.py", sha="d" * 64, module="pkg.mod"),),
        entities={Q("pkg.mod.add"): ("pkg/mod.py", NodeKind.FUNCTION)},
        executed={T("t::new"): frozenset({Q("pkg.mod.add")})},
    )
    _store(tmp_path, replacement)
    reopened = RecordStore.open_existing(tmp_path)
    assert reopened is not None
    assert reopened.tests_of([Q("pkg.other.f"), Q("pkg.mod.add")]) == {
        Q("pkg.mod.add"): {T("t::new")}
    }
    assert [f.sha for f in reopened.files()] == ["d" * 64]


def test_old_attempts_are_pruned_but_the_stored_data_keeps_its_run(tmp_path: Path) -> None:
    store = _store(tmp_path)
    data = store.data_run()
    assert data is not None
    for n in range(30):
        run = store.begin_run(head=None, python="python", args=str(n), pid=n)
        store.finish_run(
            run, status=RunStatus.FAILED, exit_code=2, message="no", counts=RunCounts()
        )
    assert store.data_run() == data
    count = store._query("SELECT count(*) FROM runs")[0][0]
    assert count <= 21


def test_a_corrupt_database_is_reset_by_the_next_record(tmp_path: Path) -> None:
    _store(tmp_path).close()
    db = tmp_path / ".impact_ls" / DB_NAME
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(b"this is not sqlite" * 100)
    assert RecordStore.open_existing(tmp_path) is None
    store = RecordStore.open_for_writing(tmp_path)
    assert "unreadable" in store.note
    assert store.data_run() is None


def test_an_unwritable_project_keeps_the_record_in_the_user_cache_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".impact_ls").write_text("a file where the cache folder should be", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    store = _store(root)
    assert store.path.is_relative_to(tmp_path / "cache")
    reader = RecordStore.open_existing(root)
    assert reader is not None
    assert reader.path == store.path
    store.close()
    reader.close()
    # A file where the user cache dir should be: nowhere left to store a record.
    (tmp_path / "not-a-dir").write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "not-a-dir"))
    with pytest.raises(RecordError, match="cannot store recorded coverage"):
        RecordStore.open_for_writing(root)
