"""The on-disk cache of per-file facts: sqlite, keyed by path, content hash and extractor version.

``FactStore.open(root)`` puts the database at ``<root>/.impact_ls/facts.sqlite3`` (the folder gets
a ``.gitignore`` of ``*``, as pytest and ruff do). It never raises: a corrupt database is deleted
and rebuilt; a root where the folder cannot be made or written falls back to the user cache dir
(``$XDG_CACHE_HOME/impact-ls/<hash of root>/``, else ``~/.cache/impact-ls/...``), and if that fails
too, to an in-memory database. ``note`` says which degradation happened, for the report's audit.

A row whose facts no longer decode is a miss, never an error; a failing write is logged and
dropped. The cache is an accelerator: losing it costs time, not correctness. Rows are
``(path, sha256 of the file's bytes, EXTRACTOR_VERSION) → facts_to_bytes``; several hashes of
one path may coexist (switching branches back and forth stays warm) until ``prune`` trims them.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
import threading
from collections.abc import Generator, Iterable, Iterator, Mapping
from pathlib import Path

from impact_ls.cachedir import prepare_cache_dir, user_cache_dir
from impact_ls.config import CACHE_DIR_NAME
from impact_ls.graph.facts import EXTRACTOR_VERSION, FileFacts, facts_from_bytes, facts_to_bytes
from impact_ls.graph.resolved import CachedResolution, decode_resolution

logger = logging.getLogger(__name__)

DB_NAME = "facts.sqlite3"
# Bump when the table layout changes; an older database is dropped and rebuilt.
SCHEMA_VERSION = 1
# Hashes kept per path after a prune: the current one plus a few recent branches' versions.
_ROWS_PER_PATH = 3
_BUSY_TIMEOUT_S = 5.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (
    path TEXT NOT NULL,
    sha TEXT NOT NULL,
    version TEXT NOT NULL,
    facts TEXT NOT NULL,
    PRIMARY KEY (path, sha, version)
)
"""

_INSERT = "INSERT OR REPLACE INTO facts (path, sha, version, facts) VALUES (?, ?, ?, ?)"

# One resolution per path (the last build's): its edges plus what its resolution read elsewhere
# (see resolved.py); a row whose sha or stamp differs from the current one is a miss.
_RESOLVED_SCHEMA = """
CREATE TABLE IF NOT EXISTS resolved (
    path TEXT PRIMARY KEY,
    sha TEXT NOT NULL,
    data BLOB NOT NULL
)
"""
_INSERT_RESOLVED = "INSERT OR REPLACE INTO resolved (path, sha, data) VALUES (?, ?, ?)"

Row = tuple[str, str, FileFacts]


class FactStore:
    """A sqlite cache of ``FileFacts`` that degrades instead of failing."""

    def __init__(self, conn: sqlite3.Connection, *, location: str, note: str | None = None) -> None:
        self._conn = conn
        self._lock = threading.Lock()
        self._broken = False
        self.location = location
        self.note = note

    @classmethod
    def open(cls, root: Path) -> FactStore:
        """The cache for ``root``: in the project, else the user cache dir, else memory."""
        project_dir = Path(root) / CACHE_DIR_NAME
        try:
            _prepare_dir(project_dir, gitignore=True)
            return cls(_connect(project_dir / DB_NAME), location=str(project_dir / DB_NAME))
        except (OSError, sqlite3.Error) as exc:
            first = f"{project_dir} is not writable ({_why(exc)})"
            logger.warning("fact cache: %s; trying the user cache dir", first)
        user_dir = user_cache_dir(Path(root))
        try:
            _prepare_dir(user_dir, gitignore=False)
            db = user_dir / DB_NAME
            return cls(_connect(db), location=str(db), note=f"cache in {user_dir}: {first}")
        except (OSError, sqlite3.Error) as exc:
            second = f"{user_dir} is not writable ({_why(exc)})"
            logger.warning("fact cache: %s; keeping the cache in memory", second)
        return cls(_connect(None), location=":memory:", note=f"cache in memory: {first}; {second}")

    @classmethod
    def in_memory(cls, note: str | None = None) -> FactStore:
        """A store that forgets everything when the process ends."""
        return cls(_connect(None), location=":memory:", note=note)

    def close(self) -> None:
        """Close the database; later calls behave as misses and dropped writes."""
        with self._lock:
            self._broken = True
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()

    def get(self, path: str, sha: str) -> FileFacts | None:
        """The cached facts of ``path`` at content hash ``sha``, or ``None`` (a miss)."""
        with self._lock:
            text = self._query_one(path, sha)
        return None if text is None else _decode(path, text)

    def get_many(self, wanted: Mapping[str, str]) -> dict[str, FileFacts]:
        """Cached facts for each ``path → sha`` of ``wanted`` that has a valid row, in one scan.

        Rows are decoded as the cursor yields them, so the encoded facts of the whole project are
        never held at once.
        """
        found: dict[str, FileFacts] = {}
        if not wanted:
            return found
        with self._lock:
            if self._broken:
                return found
            try:
                cursor = self._conn.execute(
                    "SELECT path, sha, facts FROM facts WHERE version = ?", (EXTRACTOR_VERSION,)
                )
                for path, sha, text in cursor:
                    if wanted.get(path) == sha:
                        facts = _decode(path, text)
                        if facts is not None:
                            found[path] = facts
            except sqlite3.Error as exc:
                self._fail("read", exc)
                return {}
        return found

    def iter_resolutions(
        self, wanted: Mapping[str, str]
    ) -> Generator[tuple[str, CachedResolution], None, None]:
        """``(path, resolution)`` for each ``path → sha`` of ``wanted`` with a valid row, by path.

        Rows are decoded as the cursor yields them (a project's edges weigh tens of MB), so the
        store stays locked until the iterator ends or is closed: close it before writing.
        """
        if not wanted:
            return
        with self._lock:
            if self._broken:
                return
            try:
                cursor = self._conn.execute("SELECT path, sha, data FROM resolved ORDER BY path")
                for path, sha, data in cursor:
                    if wanted.get(path) == sha:
                        resolution = decode_resolution(data)
                        if resolution is not None:
                            yield path, resolution
            except sqlite3.Error as exc:
                self._fail("read", exc)

    def put_resolutions(self, rows: Iterable[tuple[str, str, bytes]]) -> int:
        """Store ``(path, sha, encode_resolution output)`` rows; return how many were written.

        The rows are consumed as sqlite writes them (one transaction), never held all at once.
        """
        written = 0

        def counted() -> Iterator[tuple[str, str, bytes]]:
            nonlocal written
            for row in rows:
                written += 1
                yield row

        with self._lock:
            if self._broken:
                return 0
            try:
                with self._conn:
                    self._conn.executemany(_INSERT_RESOLVED, counted())
            except sqlite3.Error as exc:
                self._fail("write", exc)
                return 0
        return written

    def _query_one(self, path: str, sha: str) -> str | bytes | None:
        if self._broken:
            return None
        try:
            row = self._conn.execute(
                "SELECT facts FROM facts WHERE path = ? AND sha = ? AND version = ?",
                (path, sha, EXTRACTOR_VERSION),
            ).fetchone()
        except sqlite3.Error as exc:
            self._fail("read", exc)
            return None
        return None if row is None else row[0]

    def put_many(self, rows: Iterable[Row]) -> int:
        """Store ``(path, sha, facts)`` rows in one transaction; return how many were written."""
        return self.put_encoded(
            (path, sha, EXTRACTOR_VERSION, facts_to_bytes(facts)) for path, sha, facts in rows
        )

    def put_encoded(self, rows: Iterable[tuple[str, str, str, str | bytes]]) -> int:
        """Store ``(path, sha, extractor version, encoded facts)`` rows serialised elsewhere.

        The facts are ``facts_to_bytes`` output; anything else reads back as a miss.
        """
        batch = list(rows)
        if not batch:
            return 0
        with self._lock:
            if self._broken:
                return 0
            try:
                with self._conn:
                    self._conn.executemany(_INSERT, batch)
            except sqlite3.Error as exc:
                self._fail("write", exc)
                return 0
        return len(batch)

    def prune(self, existing_paths: Iterable[str]) -> int:
        """Drop rows of vanished paths, of other extractor versions and old hashes; return count."""
        keep = sorted(set(existing_paths))
        with self._lock:
            if self._broken:
                return 0
            try:
                with self._conn:
                    conn = self._conn
                    conn.execute("CREATE TEMP TABLE IF NOT EXISTS keep (path TEXT PRIMARY KEY)")
                    conn.execute("DELETE FROM keep")
                    conn.executemany("INSERT INTO keep (path) VALUES (?)", ((p,) for p in keep))
                    removed = conn.execute(
                        "DELETE FROM facts"
                        " WHERE version != ? OR path NOT IN (SELECT path FROM keep)",
                        (EXTRACTOR_VERSION,),
                    ).rowcount
                    removed += self._conn.execute(
                        """DELETE FROM facts WHERE rowid IN (
                               SELECT rowid FROM (
                                   SELECT rowid, ROW_NUMBER() OVER (
                                       PARTITION BY path ORDER BY rowid DESC) AS n
                                   FROM facts)
                               WHERE n > ?)""",
                        (_ROWS_PER_PATH,),
                    ).rowcount
                    removed += conn.execute(
                        "DELETE FROM resolved WHERE path NOT IN (SELECT path FROM keep)"
                    ).rowcount
                    self._conn.execute("DELETE FROM keep")
            except sqlite3.Error as exc:
                self._fail("prune", exc)
                return 0
        if removed:
            logger.debug("pruned %d cached rows", removed)
        return max(removed, 0)

    def count(self) -> int:
        """How many rows the cache holds (all paths, hashes and versions)."""
        with self._lock:
            if self._broken:
                return 0
            try:
                return int(self._conn.execute("SELECT count(*) FROM facts").fetchone()[0])
            except sqlite3.Error as exc:
                self._fail("read", exc)
                return 0

    def _fail(self, what: str, exc: sqlite3.Error) -> None:
        """A database that fails mid-session stops being used; the next open rebuilds it."""
        if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
            logger.warning("fact cache busy (%s); %s skipped", exc, what)
            return
        logger.warning("fact cache %s failed (%s); continuing without the cache", what, exc)
        self._broken = True
        self.note = f"cache disabled after a {what} error: {exc}"


def sha256_of(data: bytes) -> str:
    """The hex sha256 of a file's bytes: the content half of a cache key."""
    return hashlib.sha256(data).hexdigest()


def _decode(path: str, data: str | bytes) -> FileFacts | None:
    if isinstance(data, str):  # the JSON an older version wrote: re-extracted like any miss
        logger.info("cached facts of %s are in a retired format; re-extracting", path)
        return None
    try:
        return facts_from_bytes(data)
    except (ValueError, TypeError, KeyError) as exc:
        logger.info("cached facts of %s do not decode (%s); re-extracting", path, exc)
        return None


def _prepare_dir(directory: Path, *, gitignore: bool) -> None:
    if gitignore:
        prepare_cache_dir(directory)
    else:
        directory.mkdir(parents=True, exist_ok=True)


def _connect(db: Path | None) -> sqlite3.Connection:
    """Open (and if need be rebuild) the database; raise only when ``db`` cannot be written."""
    if db is None:
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        _init(conn)
        return conn
    try:
        conn = _open_file(db)
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError) and not _is_corruption(exc):
            raise
        logger.warning("fact cache %s is corrupt (%s); deleting and rebuilding it", db, exc)
        _delete_db(db)
        conn = _open_file(db)
    return conn


def _open_file(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(db, timeout=_BUSY_TIMEOUT_S, check_same_thread=False)
    try:
        _init(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _init(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode=WAL")
    # The cache may lose its last transaction on power loss; it is rebuilt from sources anyway.
    conn.execute("PRAGMA synchronous=NORMAL")
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version not in (0, SCHEMA_VERSION):
        logger.info("fact cache schema %s is not %s; rebuilding it", version, SCHEMA_VERSION)
        with conn:
            conn.execute("DROP TABLE IF EXISTS facts")
            conn.execute("DROP TABLE IF EXISTS resolved")
    with conn:
        conn.execute(_SCHEMA)
        conn.execute(_RESOLVED_SCHEMA)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    # Touch the table so a damaged file fails here, where it can be rebuilt, not mid-index.
    conn.execute("SELECT count(*) FROM facts").fetchone()


def _is_corruption(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return any(word in text for word in ("malformed", "not a database", "corrupt", "disk image"))


def _delete_db(db: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            Path(str(db) + suffix).unlink()


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)
