"""Which ``.py`` files of a project root are indexed, and how their text is read.

``discover_files`` walks the root with ``os.scandir`` and prunes, as early as it can, the
directories that ``config.DEFAULT_EXCLUDES``, ``.gitignore`` (through pygit2, when the root lies in
a git work tree) or the ``exclude`` globs of ``Settings`` rule out; ``include`` globs, when given,
keep only the files they match. Symlinked directories are never followed (a target inside the root
is indexed at its real path; one outside the root, or a loop, is skipped with a reason), so the
walk always ends. ``read_source`` turns one file into text or a ``Skipped`` that says why not:
too large, binary, undecodable (a PEP 263 coding cookie is honoured), vanished or unreadable.

Paths handed out are root-relative with ``/`` separators; every skip is logged at INFO.
"""

from __future__ import annotations

import io
import logging
import os
import stat
import sys
import tokenize
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

import pygit2

from impact_ls.config import DEFAULT_EXCLUDES, Settings

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # pragma: no cover - exercised only on 3.10
    from impact_ls.model import StrEnum  # type: ignore[attr-defined]

logger = logging.getLogger(__name__)

_EXCLUDED_NAMES = frozenset(DEFAULT_EXCLUDES)


class SkipKind(StrEnum):
    """Why a file of the project is left out of the graph."""

    TOO_LARGE = "too-large"
    BINARY = "binary"
    UNDECODABLE = "undecodable"
    VANISHED = "vanished"
    UNREADABLE = "unreadable"
    SYMLINK_LOOP = "symlink-loop"
    OUTSIDE_ROOT = "outside-root"


@dataclass(frozen=True, slots=True, kw_only=True)
class Skipped:
    """A path that is not indexed, and the reason a person can read."""

    path: str
    kind: SkipKind
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Discovery:
    """The outcome of one walk of the root: the files to index and the paths left out."""

    files: tuple[str, ...]
    skipped: tuple[Skipped, ...] = ()


class PathFilter:
    """Answers "is this root-relative path indexed?" with the walk's own rules.

    Built once per root (it opens the git repository, if any) and reused for every editor
    update, so a file the walk would skip is ignored when it is edited too.
    """

    def __init__(self, root: Path, settings: Settings) -> None:
        self.root = root
        self._include = tuple(_normalise(p) for p in settings.include if _normalise(p))
        self._exclude = tuple(_normalise(p) for p in settings.exclude if _normalise(p))
        self._repo, self._prefix = _open_repo(root)

    def excludes_dir(self, rel: str) -> bool:
        """Whether the directory ``rel`` (and so everything under it) is left out."""
        name = rel.rsplit("/", 1)[-1]
        if name in _EXCLUDED_NAMES:
            return True
        if any(_glob_matches(rel, pattern) for pattern in self._exclude):
            return True
        return self._git_ignored(rel + "/")

    def excludes_file(self, rel: str) -> bool:
        """Whether the file ``rel`` is left out, judged by its own name only (not its parents)."""
        if not rel.endswith(".py"):
            return True
        if any(_glob_matches(rel, pattern) for pattern in self._exclude):
            return True
        if self._include and not any(_glob_matches(rel, p) for p in self._include):
            return True
        return self._git_ignored(rel)

    def allows(self, rel: str) -> bool:
        """Whether the walk would index ``rel``: neither it nor a parent directory is excluded."""
        parts = rel.split("/")
        if any(part in ("", ".", "..") for part in parts):
            return False
        for depth in range(1, len(parts)):
            if self.excludes_dir("/".join(parts[:depth])):
                return False
        return not self.excludes_file(rel)

    def _git_ignored(self, rel: str) -> bool:
        if self._repo is None:
            return False
        try:
            return bool(self._repo.path_is_ignored(self._prefix + rel))
        except Exception:
            logger.debug("git could not say whether %s is ignored", rel, exc_info=True)
            return False


def discover_files(root: Path, settings: Settings) -> Discovery:
    """Every indexable ``.py`` file under ``root``, sorted, plus the paths skipped on the way."""
    root = root.resolve()
    path_filter = PathFilter(root, settings)
    files: list[str] = []
    skipped: list[Skipped] = []
    stack: list[tuple[str, str]] = [(str(root), "")]
    while stack:
        directory, rel_dir = stack.pop()
        try:
            with os.scandir(directory) as entries:
                listing = sorted(entries, key=lambda e: e.name)
        except OSError as exc:
            if rel_dir:
                skipped.append(_skip(rel_dir, SkipKind.UNREADABLE, f"cannot list directory: {exc}"))
            else:
                logger.warning("cannot list the project root %s: %s", root, exc)
            continue
        subdirs: list[tuple[str, str]] = []
        for entry in listing:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.is_symlink():
                kept, skip = _symlink(root, entry, rel, path_filter)
                files.extend(kept)
                skipped.extend(skip)
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if not path_filter.excludes_dir(rel):
                    subdirs.append((entry.path, rel))
            elif entry.name.endswith(".py") and not path_filter.excludes_file(rel):
                files.append(rel)
        # Reversed so that popping visits subdirectories in name order.
        stack.extend(reversed(subdirs))
    logger.debug("discovered %d files under %s (%d skipped)", len(files), root, len(skipped))
    return Discovery(
        files=tuple(sorted(files)), skipped=tuple(sorted(skipped, key=lambda s: s.path))
    )


def _symlink(
    root: Path, entry: os.DirEntry[str], rel: str, path_filter: PathFilter
) -> tuple[tuple[str, ...], tuple[Skipped, ...]]:
    """Classify a symlink: a ``.py`` file inside the root is kept, a directory is not followed."""
    looks_indexable = entry.name.endswith(".py") and not path_filter.excludes_file(rel)
    try:
        target = Path(os.path.realpath(entry.path, strict=True))
    except OSError as exc:
        # ELOOP for a cycle, ENOENT for a dangling link; only the former can hang a walker.
        if _is_loop(entry.path):
            return (), (_skip(rel, SkipKind.SYMLINK_LOOP, "symlink loop"),)
        if looks_indexable:
            return (), (_skip(rel, SkipKind.VANISHED, f"dangling symlink ({exc.strerror})"),)
        return (), ()
    inside = target == root or root in target.parents
    try:
        is_dir = stat.S_ISDIR(target.stat().st_mode)
    except OSError:
        return (), ()
    if is_dir:
        if not inside:
            if path_filter.excludes_dir(rel):
                return (), ()
            why = f"symlinked directory leads outside the root ({target})"
            return (), (_skip(rel, SkipKind.OUTSIDE_ROOT, why),)
        if target == root or target in Path(root, rel).parents:
            return (), (_skip(rel, SkipKind.SYMLINK_LOOP, "symlink loop (points at a parent)"),)
        logger.debug("not following symlinked directory %s; %s is indexed in place", rel, target)
        return (), ()
    if not looks_indexable:
        return (), ()
    if inside:
        return (rel,), ()
    return (), (_skip(rel, SkipKind.OUTSIDE_ROOT, f"symlink leads outside the root ({target})"),)


def _is_loop(path: str) -> bool:
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == getattr(os, "ELOOP", 40) or "loop" in str(exc).lower()
    return False


def read_bytes(root: Path, rel: str, settings: Settings) -> bytes | Skipped:
    """The bytes of ``root/rel``, or why not: too large, vanished or unreadable."""
    path = root / rel
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > settings.max_file_bytes:
                return _skip(
                    rel,
                    SkipKind.TOO_LARGE,
                    f"larger than {settings.max_file_bytes} bytes ({size} bytes)",
                )
            data = handle.read(settings.max_file_bytes + 1)
    except FileNotFoundError:
        return _skip(rel, SkipKind.VANISHED, "vanished before it could be read")
    except OSError as exc:
        return _skip(rel, SkipKind.UNREADABLE, f"unreadable: {exc.strerror or exc}")
    if len(data) > settings.max_file_bytes:
        # It grew between fstat and read.
        return _skip(rel, SkipKind.TOO_LARGE, f"larger than {settings.max_file_bytes} bytes")
    return data


def decode_source(data: bytes, *, path: str) -> str | Skipped:
    """Decode a file's bytes as Python does: BOM or PEP 263 cookie, else UTF-8."""
    if b"\0" in data:
        return _skip(path, SkipKind.BINARY, "binary (contains NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if "unknown encoding" in str(exc.msg):
            return _skip(path, SkipKind.UNDECODABLE, f"undecodable: {exc.msg}")
        return _skip(
            path, SkipKind.UNDECODABLE, "undecodable as utf-8 (no valid PEP 263 coding cookie)"
        )
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        return _skip(path, SkipKind.UNDECODABLE, f"undecodable as {encoding}: {exc}")


def read_source(root: Path, rel: str, settings: Settings) -> str | Skipped:
    """The text of ``root/rel``, or a ``Skipped`` saying why it cannot be indexed."""
    data = read_bytes(root, rel, settings)
    if isinstance(data, Skipped):
        return data
    return decode_source(data, path=rel)


def _skip(path: str, kind: SkipKind, reason: str) -> Skipped:
    logger.info("skipping %s: %s", path, reason)
    return Skipped(path=path, kind=kind, reason=reason)


def _open_repo(root: Path) -> tuple[pygit2.Repository | None, str]:
    """The git repository whose work tree holds ``root``, and ``root``'s path inside it."""
    try:
        found = pygit2.discover_repository(str(root))
        if not found:
            logger.debug("%s is not in a git repository; .gitignore is not consulted", root)
            return None, ""
        repo = pygit2.Repository(found)
    except Exception:  # a broken .git degrades to "no .gitignore"
        logger.info("cannot open the git repository around %s; .gitignore is not consulted", root)
        return None, ""
    if repo.is_bare or not repo.workdir:
        return None, ""
    workdir = Path(repo.workdir).resolve()
    if root == workdir:
        return repo, ""
    try:
        prefix = root.relative_to(workdir).as_posix() + "/"
    except ValueError:
        return None, ""
    if _ignored(repo, prefix):
        # The root sits in a folder its enclosing repository ignores (an unpacked sdist, a
        # vendored checkout): indexing it was asked for explicitly, so that repo has no say.
        logger.debug("%s is ignored by the repository at %s; not consulting it", root, workdir)
        return None, ""
    return repo, prefix


def _ignored(repo: pygit2.Repository, path: str) -> bool:
    try:
        return bool(repo.path_is_ignored(path))
    except Exception:  # libgit2 errors mean "cannot tell", which must not hide files
        return False


def _normalise(pattern: str) -> str:
    pattern = pattern.strip().replace("\\", "/").strip("/")
    while pattern.startswith("./"):
        pattern = pattern[2:]
    if pattern.endswith("/**"):
        pattern = pattern[:-3]
    return pattern


def _glob_matches(rel: str, pattern: str) -> bool:
    """gitignore-like matching of a root-relative path against one include/exclude glob.

    A pattern without ``/`` matches any path component (``migrations``, ``*_pb2.py``); one with
    ``/`` matches the path or one of its parent directories from the root (``docs/*``,
    ``src/pkg/gen``); a leading ``**/`` also matches at the top.
    """
    if "/" not in pattern:
        return any(fnmatchcase(part, pattern) for part in rel.split("/"))
    candidates = [pattern]
    if pattern.startswith("**/"):
        candidates.append(pattern[3:])
    parts = rel.split("/")
    for depth in range(len(parts), 0, -1):
        prefix = "/".join(parts[:depth])
        if any(fnmatchcase(prefix, c) for c in candidates):
            return True
    return False
