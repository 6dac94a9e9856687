"""Which files pytest collects tests from: ``testpaths``, ``norecursedirs``, ``python_files``.

``collected_files(files, config)`` keeps, of the project's files (root-relative, ``/``), those
pytest would import as test modules when run in the root: under each ``testpaths`` entry
(globbed, recursively, against the files and their folders; none matching, or none given, means
the root), not below a folder matching ``norecursedirs`` (the initial paths themselves and their
parents are exempt, as pytest exempts them), named ``__pycache__``, or given to
``--ignore``/``--ignore-glob``, and with a name matching ``python_files`` — except a file named
in ``testpaths`` itself, which pytest collects whatever its name. Patterns follow pytest's
``fnmatch_ex``: without a ``/`` they match the last path component, with one the absolute path.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterable

from impact_ls.graph.pytest_config import PytestConfig


def collected_files(files: Iterable[str], config: PytestConfig) -> set[str]:
    """The ``.py`` files among ``files`` that pytest collects as test modules."""
    return _Files(config).collected(files)


class _Files:
    def __init__(self, config: PytestConfig) -> None:
        self.config = config
        self._dirs: dict[tuple[str, str], bool] = {}

    def collected(self, files: Iterable[str]) -> set[str]:
        candidates = [f for f in files if f.endswith(".py")]
        starts = self._starts(candidates)
        return {f for f in candidates if self._collects_file(f, starts)}

    def _starts(self, files: Iterable[str]) -> tuple[str, ...]:
        """The initial paths: ``testpaths`` globbed against what exists, else the root."""
        if not self.config.testpaths:
            return ("",)
        known: set[str] = set()
        for file in files:
            known.add(file)
            parent = posixpath.dirname(file)
            while parent and parent not in known:
                known.add(parent)
                parent = posixpath.dirname(parent)
        found: set[str] = set()
        for pattern in self.config.testpaths:
            found.update(_glob(self._relative(pattern), known))
        return tuple(sorted(found)) or ("",)

    def _relative(self, path: str) -> str:
        text = path.replace("\\", "/")
        root = self.config.root.rstrip("/")
        if root and text.startswith(root + "/"):
            text = text[len(root) + 1 :]
        text = posixpath.normpath(text) if text else "."
        return "" if text == "." else text

    def _collects_file(self, file: str, starts: tuple[str, ...]) -> bool:
        for start in starts:
            if file == start:
                return not self._ignored(file)
            if start and not file.startswith(start + "/"):
                continue
            if self._under_collected_dirs(file, start) and not self._ignored(file):
                return _matches_path(self.config.python_files, file, self.config.root)
        return False

    def _under_collected_dirs(self, file: str, start: str) -> bool:
        """Whether no directory between ``start`` (exempt) and ``file`` stops the recursion."""
        return self._dir_collected(posixpath.dirname(file), start)

    def _dir_collected(self, directory: str, start: str) -> bool:
        if directory == start or not directory:
            return True
        key = (directory, start)
        known = self._dirs.get(key)
        if known is None:
            parent = posixpath.dirname(directory)
            known = (
                self._dir_collected(parent, start)
                and posixpath.basename(directory) != "__pycache__"
                and not self._ignored(directory)
                and not _matches_path(self.config.norecursedirs, directory, self.config.root)
            )
            self._dirs[key] = known
        return known

    def _ignored(self, path: str) -> bool:
        absolute = _absolute(path, self.config.root)
        if path in self.config.ignore or absolute in self.config.ignore:
            return True
        if not self.config.ignore_glob:
            return False
        return any(
            fnmatch.fnmatch(absolute, _absolute(glob, self.config.root))
            for glob in self.config.ignore_glob
        )


def _absolute(path: str, root: str) -> str:
    root = root.rstrip("/")
    if path.startswith("/"):
        return path
    return f"{root}/{path}" if path else (root or "/")


def _matches_path(patterns: tuple[str, ...], path: str, root: str) -> bool:
    """pytest's ``fnmatch_ex``: a pattern without ``/`` matches the name, else the full path."""
    name = path.rsplit("/", 1)[-1]
    for pattern in patterns:
        if "/" not in pattern:
            if fnmatch.fnmatch(name, pattern):
                return True
        elif fnmatch.fnmatch(
            _absolute(path, root), pattern if pattern.startswith("/") else f"*/{pattern}"
        ):
            return True
    return False


def _glob(pattern: str, known: set[str]) -> list[str]:
    """``glob.glob(pattern, recursive=True)`` over the known files and directories."""
    pattern = pattern.rstrip("/")
    if not pattern:
        return [""]
    if not any(c in pattern for c in "*?["):
        return [pattern] if pattern in known else []
    segments = pattern.split("/")
    return sorted(p for p in known if _glob_match(segments, p.split("/")))


def _glob_match(segments: list[str], parts: list[str]) -> bool:
    """One path against glob segments: ``**`` spans any number of parts; wildcards skip
    names starting with a dot unless the segment does (as ``glob`` does)."""
    if not segments:
        return not parts
    head = segments[0]
    if head == "**":
        return any(
            _glob_match(segments[1:], parts[i:])
            for i in range(len(parts) + 1)
            if not any(p.startswith(".") for p in parts[:i])
        )
    if not parts:
        return False
    part = parts[0]
    if part.startswith(".") and not head.startswith("."):
        return False
    return fnmatch.fnmatchcase(part, head) and _glob_match(segments[1:], parts[1:])
