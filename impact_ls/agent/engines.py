"""One ``Engine`` per project root for the MCP server, indexed once and refreshed per call.

The first call on a root opens and indexes it (reporting progress); later calls only re-read
the files that changed on disk. Calls on one root are serialized: an ``Engine`` is the single
writer of its graph. Unsaved editor text (``files``) stands for its files during one analysis
and is taken back afterwards, so the next call sees the disk again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from impact_ls.engine import Engine, FileEdit
from impact_ls.errors import RevisionError, RootNotFoundError, UsageError
from impact_ls.model import Report

logger = logging.getLogger(__name__)

Progress = Callable[[int, int, str], None]


def project_root(root: str) -> Path:
    """``root`` as an existing folder, or ``RootNotFoundError`` saying what was wrong."""
    if not root or not root.strip():
        raise RootNotFoundError("root is empty: pass the project folder (absolute path)")
    path = Path(root).expanduser()
    if not path.exists():
        raise RootNotFoundError(f"root {root!r} does not exist: pass the project folder")
    if not path.is_dir():
        raise RootNotFoundError(f"root {root!r} is a file, not a folder: pass the project folder")
    return path.resolve()


class Engines:
    """The open engines, by resolved root."""

    def __init__(self) -> None:
        self._engines: dict[Path, Engine] = {}
        self._locks: dict[Path, threading.Lock] = {}
        self._guard = threading.Lock()

    @contextmanager
    def engine(
        self, root: str, progress: Progress | None = None, *, base: str | None = None
    ) -> Iterator[Engine]:
        """The indexed, refreshed engine of ``root``, held exclusively while the block runs.

        With ``base``, the root must be in git and ``base`` must name a commit; both are checked
        before a first indexing, so a wrong folder fails at once instead of after a long index.
        """
        path = project_root(root)
        with self._guard:
            lock = self._locks.setdefault(path, threading.Lock())
        with lock:
            engine = self._engines.get(path)
            fresh = engine is None
            if engine is None:
                engine = Engine.open(path, build=False)
            if base is not None:
                _check_revision(engine, base)
            if fresh:
                for warning in engine.warnings:
                    logger.warning("%s", warning)

                def indexing(done: int, total: int) -> None:
                    if progress is not None:
                        progress(done, total, f"indexing {done}/{total} files")

                engine.build(progress=indexing)
                self._engines[path] = engine
            else:
                engine.refresh()
            yield engine


def _check_revision(engine: Engine, base: str) -> None:
    if engine.repo is None:
        raise RevisionError(
            f"{engine.root} is not inside a git repository; the blast radius compares the "
            "working tree with a git revision (run 'git init' and commit, or pass a folder "
            "inside a repository)"
        )
    # No other thread uses this engine: ``Engines`` holds the root's lock around every use.
    engine.repo.resolve(base)


def analyze(engine: Engine, *, base: str, files: Mapping[str, str] | None) -> Report:
    """The working tree (with ``files`` standing for their paths) against revision ``base``."""
    edits = {edit.file: edit for edit in engine.worktree_edits(base=base)}
    overlays: list[str] = []
    try:
        for path, text in sorted((files or {}).items()):
            rel = engine.relpath(path)
            if rel is None:
                raise UsageError(f"files: {path!r} lies outside the root {engine.root}")
            if not rel.endswith(".py"):
                raise UsageError(f"files: {path!r} is not a Python file")
            if not isinstance(text, str):
                raise UsageError(f"files: the text of {path!r} must be a string")
            baseline = engine.baseline_text(rel, base=base)
            engine.set_document(rel, text)
            overlays.append(rel)
            if text == baseline:
                edits.pop(rel, None)
            else:
                edits[rel] = FileEdit(file=rel, baseline=baseline, current=text)
        return engine.analyze([edits[f] for f in sorted(edits)], base=base)
    finally:
        for rel in overlays:
            engine.close_document(rel)
