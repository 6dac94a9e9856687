"""impact-ls record on a real project: exact node ids, foreign interpreters, and every way a run
can go wrong (failing tests, collection errors, no tests, no pytest, a hang, SIGKILL, Ctrl-C)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from impact_ls.errors import RecordError
from impact_ls.model import QualName
from impact_ls.record.plugin import ENV_OMIT as PLUGIN_OMIT
from impact_ls.record.plugin import ENV_OUT as PLUGIN_OUT
from impact_ls.record.plugin import ENV_ROOT as PLUGIN_ROOT
from impact_ls.record.run import ENV_OMIT, ENV_OUT, ENV_ROOT, resolve_python
from impact_ls.record.store import RecordStore, RunStatus

from .helpers import (
    ALL_TESTS,
    PYTEST_PACKAGES,
    bare_python,
    cli,
    other_python,
    record,
    wait_for_file,
    wait_gone,
)

pytestmark = pytest.mark.slow

Q = QualName
PRICING = "tests/test_pricing.py"


def _tests_of(root: Path, *entities: str) -> dict[str, set[str]]:
    store = RecordStore.open_existing(root)
    assert store is not None
    try:
        found = store.tests_of([Q(e) for e in entities])
        return {entity: set(tests) for entity, tests in found.items()}
    finally:
        store.close()


def _data_run_id(root: Path) -> int | None:
    store = RecordStore.open_existing(root)
    assert store is not None
    try:
        run = store.data_run()
        return None if run is None else run.id
    finally:
        store.close()


def test_the_plugin_and_the_runner_agree_on_the_environment() -> None:
    assert (PLUGIN_OUT, PLUGIN_ROOT, PLUGIN_OMIT) == (ENV_OUT, ENV_ROOT, ENV_OMIT)


def test_each_test_is_recorded_under_the_node_id_pytest_runs(recorded: Path) -> None:
    found = _tests_of(
        recorded,
        "shop.pricing.add",
        "shop.pricing.Cart",
        "shop.pricing.Cart.total",
        "shop.doubler.apply",
        "shop.pricing",
    )
    # Inherited test classes and parametrized tests under their own ids.
    assert found["shop.pricing.add"] == {
        f"{PRICING}::test_add",
        f"{PRICING}::test_scale[1]",
        f"{PRICING}::test_scale[3]",
        f"{PRICING}::TestCart::test_total",
        f"{PRICING}::TestTaxFreeCart::test_total",
    }
    # A class counts with its methods; test_owner only constructs a Cart.
    assert found["shop.pricing.Cart"] == {
        f"{PRICING}::TestCart::test_total",
        f"{PRICING}::TestCart::test_owner",
        f"{PRICING}::TestTaxFreeCart::test_total",
        f"{PRICING}::TestTaxFreeCart::test_owner",
    }
    assert found["shop.pricing.Cart.total"] == {
        f"{PRICING}::TestCart::test_total",
        f"{PRICING}::TestTaxFreeCart::test_total",
    }
    # Reached only through importlib and a string table: what static paths cannot see.
    assert found["shop.doubler.apply"] == {"tests/test_plugins.py::test_double"}
    # Module-level lines run while pytest imports, in no test: a module has no tests of its own.
    assert "shop.pricing" not in found
    store = RecordStore.open_existing(recorded)
    assert store is not None
    run = store.data_run()
    assert run is not None
    assert (run.status, run.collected, run.recorded, run.failed) == (RunStatus.COMPLETE, 9, 9, 0)
    assert set(store.tests()) == ALL_TESTS
    assert {f.path for f in store.files()} >= {"shop/pricing.py", "shop/doubler.py"}
    store.close()


def test_the_project_interpreter_needs_neither_coverage_nor_impact_ls(
    shop: Path, tmp_path: Path
) -> None:
    python = bare_python(tmp_path / "venv", sys.executable, packages=PYTEST_PACKAGES)
    for missing in ("coverage", "impact_ls"):
        probe = subprocess.run(
            [python, "-c", f"import {missing}"], check=False, capture_output=True, cwd=tmp_path
        )
        assert probe.returncode != 0, f"{missing} should not be importable there"
    result = record(shop, python=python)
    assert result.status is RunStatus.COMPLETE, result.message
    assert _tests_of(shop, "shop.doubler.apply") == {
        "shop.doubler.apply": {"tests/test_plugins.py::test_double"}
    }


OTHER_PYTHON = other_python()


@pytest.mark.skipif(OTHER_PYTHON is None, reason="no other CPython 3.10+ on this machine")
def test_another_python_version_records_with_the_pure_python_tracer(
    shop: Path, tmp_path: Path
) -> None:
    assert OTHER_PYTHON is not None
    minor = subprocess.run(
        [OTHER_PYTHON, "-c", "import sys; print(sys.version_info[1])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    extra = ("exceptiongroup", "tomli") if minor == "10" else ()
    python = bare_python(tmp_path / "venv", OTHER_PYTHON, packages=(*PYTEST_PACKAGES, *extra))
    result = record(shop, python=python)
    assert result.status is RunStatus.COMPLETE, result.message + result.output_tail
    assert _tests_of(shop, "shop.pricing.Cart.total") == {
        "shop.pricing.Cart.total": {
            f"{PRICING}::TestCart::test_total",
            f"{PRICING}::TestTaxFreeCart::test_total",
        }
    }


def test_failing_tests_are_recorded_all_the_same(
    shop: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECORD_SHOP_FAIL", "1")
    result = record(shop)
    assert result.status is RunStatus.COMPLETE
    assert result.stored
    assert (result.counts.recorded, result.counts.failed) == (9, 1)
    assert "1 failed and are recorded all the same" in result.message


def test_a_collection_error_keeps_the_previous_data(
    recorded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _data_run_id(recorded)
    monkeypatch.setenv("RECORD_SHOP_BREAK", "1")
    result = record(recorded)
    assert result.status is RunStatus.FAILED
    assert not result.stored
    assert "errors during collection" in result.message
    assert "the previous record" in result.message
    assert "planted collection error" in result.output_tail
    assert _data_run_id(recorded) == before
    assert "shop.doubler.apply" in _tests_of(recorded, "shop.doubler.apply")


def test_no_tests_collected_keeps_the_previous_data(recorded: Path) -> None:
    before = _data_run_id(recorded)
    result = record(recorded, "-k", "no_test_has_this_name")
    assert result.status is RunStatus.NO_TESTS
    assert "collected no tests" in result.message
    assert _data_run_id(recorded) == before


def test_an_interpreter_without_pytest_fails_clearly(shop: Path, tmp_path: Path) -> None:
    python = bare_python(tmp_path / "venv", sys.executable, packages=())
    result = record(shop, python=python)
    assert result.status is RunStatus.FAILED
    assert "is pytest installed in that interpreter?" in result.message
    assert "nothing was recorded before" in result.message
    assert "No module named pytest" in result.output_tail


def test_a_hang_is_stopped_at_the_timeout_and_keeps_the_previous_data(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _data_run_id(recorded)
    started = tmp_path / "started"
    monkeypatch.setenv("RECORD_SHOP_STARTED", str(started))
    monkeypatch.setenv("RECORD_SHOP_HANG", "1")
    # Long enough for pytest to start on a busy machine, far below the 60 s hang.
    result = record(recorded, timeout_s=10)
    assert result.status is RunStatus.TIMEOUT
    assert "ran past the timeout" in result.message
    assert "the previous record" in result.message
    assert wait_gone(int(wait_for_file(started)), timeout_s=5), "the hanging pytest still runs"
    assert _data_run_id(recorded) == before


def test_a_sigkill_of_pytest_keeps_the_previous_data(recorded: Path, tmp_path: Path) -> None:
    before = _data_run_id(recorded)
    started = tmp_path / "started"
    proc = cli(recorded, env={"RECORD_SHOP_STARTED": str(started), "RECORD_SHOP_HANG": "1"})
    os.kill(int(wait_for_file(started)), signal.SIGKILL)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert "record killed: pytest was killed by SIGKILL" in err
    assert "the previous record" in err
    assert _data_run_id(recorded) == before


def test_ctrl_c_stops_pytest_and_keeps_the_previous_data(recorded: Path, tmp_path: Path) -> None:
    before = _data_run_id(recorded)
    started = tmp_path / "started"
    proc = cli(recorded, env={"RECORD_SHOP_STARTED": str(started), "RECORD_SHOP_HANG": "1"})
    child = int(wait_for_file(started))
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "record interrupted" in err
    assert wait_gone(child, timeout_s=5)
    assert _data_run_id(recorded) == before


def test_two_records_at_once_the_second_refuses(recorded: Path, tmp_path: Path) -> None:
    started, release = tmp_path / "started", tmp_path / "release"
    first = cli(
        recorded, env={"RECORD_SHOP_STARTED": str(started), "RECORD_SHOP_WAIT_FOR": str(release)}
    )
    try:
        wait_for_file(started)
        second = cli(recorded)
        _, err = second.communicate(timeout=60)
        assert second.returncode == 1
        assert "another impact-ls record is running for this project (pid " in err
        assert f"pid {first.pid}," in err
    finally:
        release.write_text("go", encoding="utf-8")
        out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert "recorded 9 of 9 collected tests" in out
    assert "testing" not in err  # no progress line when stderr is not a terminal


def test_a_killed_record_leaves_no_lock_and_its_pytest_ends(recorded: Path, tmp_path: Path) -> None:
    started = tmp_path / "started"
    proc = cli(recorded, env={"RECORD_SHOP_STARTED": str(started), "RECORD_SHOP_HANG": "1"})
    child = int(wait_for_file(started))
    proc.kill()
    proc.communicate(timeout=30)
    assert wait_gone(child), "pytest outlived the record that started it"
    status = subprocess.run(
        [sys.executable, "-m", "impact_ls", "record", "--status", "--root", str(recorded)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "abandoned: the record process ended without finishing" in status
    assert record(recorded).status is RunStatus.COMPLETE


def test_the_interpreter_is_the_flag_then_the_setting_then_the_project_venv(
    tmp_path: Path,
) -> None:
    from impact_ls.config import Settings

    root = tmp_path / "proj"
    (root / ".venv" / "bin").mkdir(parents=True)
    venv_python = root / ".venv" / "bin" / "python"
    venv_python.symlink_to(sys.executable)
    assert resolve_python(root, Settings()) == str(venv_python)
    assert resolve_python(root, Settings(python=sys.executable)) == sys.executable
    assert resolve_python(root, Settings(), sys.executable) == sys.executable
    assert resolve_python(tmp_path / "elsewhere", Settings()) == sys.executable
    with pytest.raises(RecordError, match="not an interpreter here"):
        resolve_python(root, Settings(), str(tmp_path / "nope" / "python"))


def test_pytest_arguments_pass_through_and_progress_shows_on_a_terminal(shop: Path) -> None:
    leader, follower = os.openpty()
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "impact_ls", "record", "--root", str(shop)),
            *("--", "-k", "test_add or test_double"),
        ],
        stdout=subprocess.PIPE,
        stderr=follower,
        text=True,
    )
    os.close(follower)
    terminal = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        terminal += chunk
    os.close(leader)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert out.startswith("recorded 2 of 2 collected tests over ")
    shown = terminal.decode("utf-8", "replace")
    assert "indexing [" in shown
    assert f"testing  [{'#' * 30}] 2/2" in shown
    status = subprocess.run(
        [sys.executable, "-m", "impact_ls", "record", "--status", "--root", str(shop)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "(pytest -k 'test_add or test_double')" in status.stdout
    assert "tests       2 recorded of 2 collected" in status.stdout
    assert status.stderr == ""


def test_coverage_data_that_does_not_read_back_is_a_failed_record(
    shop: Path, tmp_path: Path
) -> None:
    from impact_ls.config import Settings
    from impact_ls.graph.project import ProjectIndex
    from impact_ls.record.run import _recording

    out = tmp_path / "out"
    out.mkdir()
    (out / "coverage.host.1.x").write_bytes(b"not a coverage database" * 50)
    index = ProjectIndex(shop, Settings())
    index.build()
    with pytest.raises(RecordError, match=r"coverage's data coverage\.host\.1\.x does not read"):
        _recording(out, index, [{"collected": 1, "outcomes": {"t::a": "passed"}}])
