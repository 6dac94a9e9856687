"""The recorded-coverage database: ``record.sqlite3`` next to the fact cache.

Tables (integer ids, so each pair costs two small integers)::

    runs      one row per record attempt: start/end time, HEAD, interpreter, pytest args, pid,
              status, pytest exit code, counts (collected, recorded, failed, files, entities,
              pairs) and a message; the last ``_RUNS_KEPT`` attempts are kept
    meta      ``data_run`` → the run whose data the tables below hold
    tests     node ids of the tests that ran
    files     path, sha256 of its bytes when recorded, its module
    entities  qualname, kind, file: the innermost graph node of an executed line
    pairs     (entity, test): the test executed a line of the entity (``WITHOUT ROWID``)

A run that finishes with data replaces every data table in one transaction, so readers (the
analysis) see the old data or the new, never a mix, and a record that fails, times out or is
killed leaves the previous data as it was. The database lives where the fact cache would:
``<root>/.impact_ls/``, else the user cache dir; a reader looks in both. A corrupt database is
deleted and started afresh by the next record (a reader treats it as absent).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from impact_ls.cachedir import prepare_cache_dir, project_cache_dir, user_cache_dir
from impact_ls.errors import RecordError
from impact_ls.model import NodeKind, QualName, TestId

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # pragma: no cover - exercised only on 3.10
    from impact_ls.model import StrEnum

logger = logging.getLogger(__name__)

DB_NAME = "record.sqlite3"
SCHEMA_VERSION = 1
_RUNS_KEPT = 20
# ``accept(path, sha)``: whether the records of a file recorded at ``sha`` still count.
AcceptFile = Callable[[str, str], bool]
_BUSY_TIMEOUT_S = 10.0

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS runs (
        id INTEGER PRIMARY KEY,
        started REAL NOT NULL,
        ended REAL,
        head TEXT,
        python TEXT NOT NULL,
        args TEXT NOT NULL,
        pid INTEGER NOT NULL,
        status TEXT NOT NULL,
        exit_code INTEGER,
        collected INTEGER NOT NULL DEFAULT 0,
        recorded INTEGER NOT NULL DEFAULT 0,
        failed INTEGER NOT NULL DEFAULT 0,
        files INTEGER NOT NULL DEFAULT 0,
        entities INTEGER NOT NULL DEFAULT 0,
        pairs INTEGER NOT NULL DEFAULT 0,
        message TEXT NOT NULL DEFAULT ''
    )""",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS tests (id INTEGER PRIMARY KEY, node_id TEXT NOT NULL UNIQUE)",
    """CREATE TABLE IF NOT EXISTS files (
        id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, sha TEXT NOT NULL, module TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS files_module ON files (module)",
    """CREATE TABLE IF NOT EXISTS entities (
        id INTEGER PRIMARY KEY,
        qualname TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        file_id INTEGER NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS pairs (
        entity_id INTEGER NOT NULL, test_id INTEGER NOT NULL, PRIMARY KEY (entity_id, test_id)
    ) WITHOUT ROWID""",
)
_DATA_TABLES = ("pairs", "entities", "files", "tests")
_RUN_COLUMNS = (
    "id, started, ended, head, python, args, pid, status, exit_code, collected, recorded, "
    "failed, files, entities, pairs, message"
)
# Rows of one entity (and, unless it is a module, of everything defined inside it).
_TESTS_OF = """
    SELECT f.path, f.sha, t.node_id
    FROM entities e JOIN files f ON f.id = e.file_id
    JOIN pairs p ON p.entity_id = e.id JOIN tests t ON t.id = p.test_id
    WHERE e.qualname = ?1 OR (?2 AND e.qualname >= ?3 AND e.qualname < ?4)
"""


class RunStatus(StrEnum):
    RUNNING = "running"
    COMPLETE = "complete"  # pytest exit 0 or 1: tests that failed are recorded too
    NO_TESTS = "no-tests"
    FAILED = "failed"  # pytest exit 2+ (interrupted, internal or usage error) or no data
    TIMEOUT = "timeout"
    INTERRUPTED = "interrupted"  # Ctrl-C
    KILLED = "killed"  # pytest died of a signal


@dataclass(frozen=True, slots=True, kw_only=True)
class RunInfo:
    """One row of ``runs``."""

    id: int
    started: float
    ended: float | None
    head: str | None
    python: str
    args: str
    pid: int
    status: RunStatus
    exit_code: int | None
    collected: int
    recorded: int
    failed: int
    files: int
    entities: int
    pairs: int
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedFile:
    """A file some test executed, as it was when recorded."""

    path: str
    sha: str
    module: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Recording:
    """What one complete run found: the tests that ran and the entities each executed."""

    tests: tuple[TestId, ...]
    files: tuple[RecordedFile, ...]
    entities: Mapping[QualName, tuple[str, NodeKind]]  # entity → (path, kind)
    executed: Mapping[TestId, frozenset[QualName]]

    @property
    def pairs(self) -> int:
        """How many (test, entity) pairs the run found."""
        return sum(len(found) for found in self.executed.values())


@dataclass(frozen=True, slots=True, kw_only=True)
class RunCounts:
    """The counts a finished run writes into its ``runs`` row."""

    collected: int = 0
    recorded: int = 0
    failed: int = 0
    files: int = 0
    entities: int = 0
    pairs: int = 0


def record_db_candidates(root: Path) -> tuple[Path, Path]:
    """Where a record database may be: the project's cache folder, then the user cache dir."""
    return project_cache_dir(root) / DB_NAME, user_cache_dir(root) / DB_NAME


class RecordStore:
    """One open ``record.sqlite3``; safe to share between threads."""

    def __init__(self, conn: sqlite3.Connection, path: Path, note: str = "") -> None:
        self._conn = conn
        self._lock = threading.Lock()
        self.path = path
        self.note = note

    @classmethod
    def open_for_writing(cls, root: Path) -> RecordStore:
        """The database of ``root``, created where the cache lives; ``RecordError`` if nowhere."""
        problems = []
        project_db, user_db = record_db_candidates(root)
        for db in (project_db, user_db):
            try:
                if db is project_db:
                    prepare_cache_dir(db.parent)
                else:
                    db.parent.mkdir(parents=True, exist_ok=True)
                conn, note = _connect_rebuilding(db)
                return cls(conn, db, note)
            except (OSError, sqlite3.Error) as exc:
                problems.append(f"{db.parent}: {exc}")
        raise RecordError(
            "cannot store recorded coverage (" + "; ".join(problems) + "); make the project's "
            ".impact_ls folder or the user cache dir writable"
        )

    @classmethod
    def open_existing(cls, root: Path) -> RecordStore | None:
        """The database of ``root`` if a record ever ran there and it opens; else None."""
        for db in record_db_candidates(root):
            if not db.is_file():
                continue
            try:
                conn = sqlite3.connect(db, timeout=_BUSY_TIMEOUT_S, check_same_thread=False)
                conn.execute("SELECT count(*) FROM runs").fetchone()
            except sqlite3.Error as exc:
                logger.info("recorded coverage %s is unreadable (%s); ignoring it", db, exc)
                continue
            return cls(conn, db)
        return None

    def close(self) -> None:
        """Fold the write-ahead log into the database (it stays compact) and close it."""
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._conn.close()

    def size_bytes(self) -> int:
        """The database's size on disk, its write-ahead log included."""
        total = 0
        for suffix in ("", "-wal"):
            with contextlib.suppress(OSError):
                total += Path(str(self.path) + suffix).stat().st_size
        return total

    def begin_run(self, *, head: str | None, python: str, args: str, pid: int) -> int:
        """Insert a ``running`` row for a new attempt and return its id."""
        with self._lock, self._conn:
            cursor = self._conn.execute(
                "INSERT INTO runs (started, head, python, args, pid, status) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (time.time(), head, python, args, pid, str(RunStatus.RUNNING)),
            )
            run_id = int(cursor.lastrowid or 0)
            self._conn.execute(
                "DELETE FROM runs WHERE id <= ? AND id NOT IN "
                "(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'data_run')",
                (run_id - _RUNS_KEPT,),
            )
        return run_id

    def finish_run(
        self,
        run_id: int,
        *,
        status: RunStatus,
        exit_code: int | None,
        message: str,
        counts: RunCounts,
        recording: Recording | None = None,
    ) -> None:
        """Close the attempt; with ``recording`` its data replaces the stored data atomically."""
        with self._lock, self._conn:
            self._conn.execute(
                "UPDATE runs SET ended = ?, status = ?, exit_code = ?, message = ?, "
                "collected = ?, recorded = ?, failed = ?, files = ?, entities = ?, pairs = ? "
                "WHERE id = ?",
                (
                    time.time(),
                    str(status),
                    exit_code,
                    message,
                    counts.collected,
                    counts.recorded,
                    counts.failed,
                    counts.files,
                    counts.entities,
                    counts.pairs,
                    run_id,
                ),
            )
            if recording is not None:
                self._replace_data(run_id, recording)

    def _replace_data(self, run_id: int, recording: Recording) -> None:
        conn = self._conn
        for table in _DATA_TABLES:
            conn.execute(f"DELETE FROM {table}")
        test_ids = {test: n for n, test in enumerate(sorted(recording.tests), start=1)}
        conn.executemany("INSERT INTO tests (id, node_id) VALUES (?, ?)", _swap(test_ids))
        file_ids = {f.path: n for n, f in enumerate(sorted(recording.files, key=_path), start=1)}
        conn.executemany(
            "INSERT INTO files (id, path, sha, module) VALUES (?, ?, ?, ?)",
            ((file_ids[f.path], f.path, f.sha, f.module) for f in recording.files),
        )
        entity_ids = {q: n for n, q in enumerate(sorted(recording.entities), start=1)}
        conn.executemany(
            "INSERT INTO entities (id, qualname, kind, file_id) VALUES (?, ?, ?, ?)",
            (
                (entity_ids[q], q, str(kind), file_ids[path])
                for q, (path, kind) in recording.entities.items()
            ),
        )
        conn.executemany(
            "INSERT INTO pairs (entity_id, test_id) VALUES (?, ?)",
            sorted(
                (entity_ids[q], test_ids[test])
                for test, found in recording.executed.items()
                for q in found
            ),
        )
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('data_run', ?)", (str(run_id),)
        )

    def data_run(self) -> RunInfo | None:
        """The run whose data is stored, or None before the first complete record."""
        rows = self._query(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = "
            "(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'data_run')"
        )
        return _run(rows[0]) if rows else None

    def last_run(self) -> RunInfo | None:
        """The latest attempt, whatever became of it."""
        rows = self._query(f"SELECT {_RUN_COLUMNS} FROM runs ORDER BY id DESC LIMIT 1")
        return _run(rows[0]) if rows else None

    def files(self) -> tuple[RecordedFile, ...]:
        """Every recorded file with its hash at record time, by path."""
        rows = self._query("SELECT path, sha, module FROM files ORDER BY path")
        return tuple(RecordedFile(path=p, sha=s, module=m) for p, s, m in rows)

    def tests(self) -> tuple[TestId, ...]:
        """The node ids of every recorded test, sorted."""
        return tuple(TestId(n) for (n,) in self._query("SELECT node_id FROM tests ORDER BY 1"))

    def tests_of(
        self, entities: Iterable[QualName], *, accept: AcceptFile | None = None
    ) -> dict[QualName, frozenset[TestId]]:
        """The tests that executed a line of each entity (a class or function with the entities
        nested in it; a module only its own lines), from files ``accept(path, sha)`` admits."""
        found: dict[QualName, frozenset[TestId]] = {}
        with self._lock:
            for entity in sorted(set(entities)):
                try:
                    module = self._conn.execute(
                        "SELECT 1 FROM files WHERE module = ? LIMIT 1", (entity,)
                    ).fetchone()
                    rows = self._conn.execute(
                        _TESTS_OF, (entity, module is None, entity + ".", entity + "/")
                    ).fetchall()
                except sqlite3.Error as exc:
                    logger.info("recorded coverage unreadable (%s); using static paths only", exc)
                    return {}
                tests = frozenset(
                    TestId(test) for path, sha, test in rows if accept is None or accept(path, sha)
                )
                if tests:
                    found[entity] = tests
        return found

    def _query(self, sql: str, params: tuple[object, ...] = ()) -> list[Any]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                logger.info("recorded coverage unreadable (%s)", exc)
                return []


def _swap(ids: Mapping[TestId, int]) -> Iterable[tuple[int, str]]:
    return ((n, test) for test, n in ids.items())


def _path(f: RecordedFile) -> str:
    return f.path


def _run(row: Any) -> RunInfo:
    (id_, started, ended, head, python, args, pid, status, exit_code, *counts, message) = row
    collected, recorded, failed, files, entities, pairs = (int(c) for c in counts)
    return RunInfo(
        id=int(id_),
        started=float(started),
        ended=None if ended is None else float(ended),
        head=None if head is None else str(head),
        python=str(python),
        args=str(args),
        pid=int(pid),
        status=RunStatus(str(status)),
        exit_code=None if exit_code is None else int(exit_code),
        collected=collected,
        recorded=recorded,
        failed=failed,
        files=files,
        entities=entities,
        pairs=pairs,
        message=str(message),
    )


def _connect_rebuilding(db: Path) -> tuple[sqlite3.Connection, str]:
    """Open ``db`` for writing; a corrupt or foreign-schema file is deleted and made anew."""
    try:
        return _connect(db), ""
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError) and not _is_corruption(exc):
            raise
        logger.warning("recorded coverage %s is corrupt (%s); starting afresh", db, exc)
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                Path(str(db) + suffix).unlink()
        return _connect(db), f"the previous recorded data was unreadable ({exc}) and was reset"


def _connect(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(db, timeout=_BUSY_TIMEOUT_S, check_same_thread=False)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version not in (0, SCHEMA_VERSION):
            with conn:
                for table in (*_DATA_TABLES, "meta", "runs"):
                    conn.execute(f"DROP TABLE IF EXISTS {table}")
        with conn:
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("SELECT count(*) FROM runs").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn


def _is_corruption(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return any(word in text for word in ("malformed", "not a database", "corrupt", "disk image"))
