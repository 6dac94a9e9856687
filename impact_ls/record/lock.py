"""One record per project at a time: an OS file lock on ``record.lock`` in the cache folder.

The lock is ``flock`` (``msvcrt.locking`` on Windows) on an open file, so the kernel releases it
when its holder exits in any way, SIGKILL included: a lock left by a dead record is never stale,
the file merely remains. The file holds the holder's pid and start time, for the message the
second record prints when it refuses to run.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import IO

from impact_ls.errors import RecordBusyError, RecordError

LOCK_NAME = "record.lock"


class RecordLock:
    """A non-blocking exclusive lock; ``with RecordLock(path):`` or ``acquire``/``release``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: IO[str] | None = None

    def acquire(self) -> None:
        """Take the lock or raise ``RecordBusyError`` naming the record that holds it."""
        try:
            handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release
        except OSError as exc:
            raise RecordError(f"cannot create the record lock {self.path}: {exc}") from exc
        if not _try_lock(handle):
            holder = _holder(handle)
            handle.close()
            raise RecordBusyError(
                f"another impact-ls record is running for this project ({holder}); "
                "wait for it to finish, or stop it, then record again"
            )
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()} {time.time():.0f}\n")
        handle.flush()
        self._handle = handle

    def release(self) -> None:
        """Let the next record run (the file stays; an unlocked file is free)."""
        handle, self._handle = self._handle, None
        if handle is None:
            return
        with contextlib.suppress(OSError):
            handle.seek(0)
            handle.truncate()
        _unlock(handle)
        handle.close()

    def __enter__(self) -> RecordLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


def _holder(handle: IO[str]) -> str:
    with contextlib.suppress(OSError, ValueError):
        handle.seek(0)
        pid, started = handle.read().split()[:2]
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(started)))
        return f"pid {int(pid)}, started {when}"
    return "holder unknown"


if sys.platform == "win32":  # pragma: no cover - exercised only on Windows
    import msvcrt

    def _try_lock(handle: IO[str]) -> bool:
        try:
            handle.seek(0)
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(handle: IO[str]) -> None:
        with contextlib.suppress(OSError):
            handle.seek(0)
            msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(handle: IO[str]) -> bool:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(handle: IO[str]) -> None:
        with contextlib.suppress(OSError):
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
