"""``impact-ls record --status``: how old and how complete the recorded data is.

Age: when it was recorded and how many commits HEAD has moved since (or that HEAD's history no
longer contains the recorded commit: a rebase or branch switch, after which only the records of
unchanged files are used). Completeness: tests recorded against tests collected, failed ones,
files and entities recorded. Freshness: which recorded files changed on disk since (their
records keep describing the recorded text). The last attempt, when it is not the stored data
(failed, timed out, interrupted, killed, still running or abandoned), is shown with its reason.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

from impact_ls.errors import RecordBusyError, RecordError
from impact_ls.history.repo import GitRepo
from impact_ls.record.lock import LOCK_NAME, RecordLock
from impact_ls.record.store import RecordStore, RunInfo, RunStatus

_LISTED = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordStatus:
    """What ``--status`` reports, read from the database, git and the disk."""

    database: Path | None = None
    size_bytes: int = 0
    data: RunInfo | None = None
    last: RunInfo | None = None
    running: bool = False  # a record holds the lock right now
    commits_since: int | None = None
    in_history: bool | None = None  # None: no git, or recorded without a commit
    changed: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    files: int = 0


def record_status(root: Path) -> RecordStatus:
    """Read the status of the recorded data of ``root`` (an empty status when there is none)."""
    store = RecordStore.open_existing(root)
    if store is None:
        return RecordStatus()
    try:
        data, last = store.data_run(), store.last_run()
        files = store.files()
        changed, missing = [], []
        for recorded in files:
            try:
                sha = hashlib.sha256((root / recorded.path).read_bytes()).hexdigest()
            except OSError:
                missing.append(recorded.path)
                continue
            if sha != recorded.sha:
                changed.append(recorded.path)
        commits, in_history = _history(root, data)
        return RecordStatus(
            database=store.path,
            size_bytes=store.size_bytes(),
            data=data,
            last=last,
            running=_running(store.path.parent / LOCK_NAME),
            commits_since=commits,
            in_history=in_history,
            changed=tuple(changed),
            missing=tuple(missing),
            files=len(files),
        )
    finally:
        store.close()


def _history(root: Path, data: RunInfo | None) -> tuple[int | None, bool | None]:
    repo = GitRepo.discover(root)
    if data is None or data.head is None or repo is None or repo.head_sha() is None:
        return None, None
    commits = repo.commits_since(data.head)
    return commits, commits is not None


def _running(lock_path: Path) -> bool:
    lock = RecordLock(lock_path)
    try:
        lock.acquire()
    except RecordBusyError:
        return True
    except RecordError:
        return False
    lock.release()
    return False


def format_status(status: RecordStatus, *, now: float | None = None) -> str:
    """The status as a few aligned lines of text."""
    now = time.time() if now is None else now
    if status.database is None:
        return "no recorded coverage yet: run 'impact-ls record' to record the suite once\n"
    lines = [f"database    {status.database} ({_size(status.size_bytes)})"]
    data = status.data
    if data is None:
        lines.append("data        none yet: no record has completed")
    else:
        lines.append(f"recorded    {_when(data.started, now)}{_commits(status, data)}")
        lines.append(
            f"interpreter {data.python}" + (f"  (pytest {data.args})" if data.args else "")
        )
        lines.append(
            f"tests       {data.recorded} recorded of {data.collected} collected"
            + (f", {data.failed} failed" if data.failed else "")
        )
        lines.append(
            f"files       {data.files} recorded, {data.entities} entities, "
            f"{data.pairs} test-entity pairs"
        )
        lines.append(_changed_line(status))
    last = status.last
    if last is not None and (data is None or last.id != data.id):
        lines.append(f"last run    {_when(last.started, now)}: {_attempt(last, status.running)}")
    return "\n".join(lines) + "\n"


def _commits(status: RecordStatus, data: RunInfo) -> str:
    head = f" at {data.head[:10]}" if data.head else ", without git"
    if status.in_history is None:
        return head
    if not status.in_history:
        return (
            f"{head}, which HEAD's history no longer contains (rebase or branch switch): "
            "only the records of unchanged files are used"
        )
    if status.commits_since == 0:
        return f"{head} (HEAD)"
    return f"{head}, {status.commits_since} commit(s) before HEAD"


def _changed_line(status: RecordStatus) -> str:
    gone = [*status.changed, *(f"{path} (deleted)" for path in status.missing)]
    if not gone:
        return "changed     none of the recorded files changed since"
    shown = ", ".join(gone[:_LISTED]) + (
        f", … {len(gone) - _LISTED} more" if len(gone) > _LISTED else ""
    )
    return f"changed     {len(gone)} of {status.files} recorded files since: {shown}"


def _attempt(run: RunInfo, running: bool) -> str:
    if run.status is RunStatus.RUNNING:
        if running:
            return f"still running (pid {run.pid})"
        return "abandoned: the record process ended without finishing (killed?)"
    return f"{run.status}: {run.message}"


def _when(started: float, now: float) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started))
    return f"{stamp} ({_age(now - started)} ago)"


def _age(seconds: float) -> str:
    seconds = max(seconds, 0.0)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} s"


def _size(size: int) -> str:
    if size >= 1 << 20:
        return f"{size / (1 << 20):.1f} MiB"
    return f"{size / 1024:.0f} KiB"
