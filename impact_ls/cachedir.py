"""The project's cache folder, ``<root>/.impact_ls``, kept out of git by its own ``.gitignore``.

When that folder cannot be written, caches fall back to ``user_cache_dir(root)``:
``$XDG_CACHE_HOME/impact-ls/<hash of root>/``, else ``~/.cache/impact-ls/...``.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from impact_ls.config import CACHE_DIR_NAME

GITIGNORE_TEXT = "# created by impact-ls; the cache is never committed\n*\n"


def project_cache_dir(root: Path) -> Path:
    """Where the cache of the project at ``root`` lives."""
    return Path(root) / CACHE_DIR_NAME


def prepare_cache_dir(directory: Path) -> Path:
    """Create ``directory`` holding a ``.gitignore`` of ``*``; may raise ``OSError``.

    pytest and ruff mark their caches the same way, so a cache never shows up in ``git status``.
    """
    directory.mkdir(parents=True, exist_ok=True)
    marker = directory / ".gitignore"
    if not marker.is_file():
        marker.write_text(GITIGNORE_TEXT, encoding="utf-8")
    return directory


def user_cache_dir(root: Path) -> Path:
    """The per-user fallback cache folder of the project at ``root`` (not created here)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    digest = hashlib.sha256(str(Path(root).resolve()).encode("utf-8")).hexdigest()[:16]
    return Path(base) / "impact-ls" / digest
