"""One record per project: a second one is refused; a dead holder's lock is free again."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from impact_ls.errors import RecordBusyError
from impact_ls.record.lock import RecordLock


def test_a_second_record_is_refused_with_the_holder_named(tmp_path: Path) -> None:
    path = tmp_path / "record.lock"
    busy = r"another impact-ls record is running .*pid \d+"
    with RecordLock(path), pytest.raises(RecordBusyError, match=busy):
        RecordLock(path).acquire()
    with RecordLock(path):
        pass


def test_the_lock_of_a_killed_holder_is_free(tmp_path: Path) -> None:
    path = tmp_path / "record.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys, time
                from pathlib import Path
                from impact_ls.record.lock import RecordLock
                lock = RecordLock(Path({str(path)!r}))
                lock.acquire()
                print("locked", flush=True)
                time.sleep(60)
                """
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RecordBusyError, match=f"pid {holder.pid},"):
            RecordLock(path).acquire()
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        assert path.read_text(encoding="utf-8").split()[0] == str(holder.pid)  # left behind
        with RecordLock(path):
            assert path.read_text(encoding="utf-8").split()[0] != str(holder.pid)
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
