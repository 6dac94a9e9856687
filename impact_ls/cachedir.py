"""The project's cache folder, ``<root>/.impact_ls``, kept out of git by its own ``.gitignore``."""

from __future__ import annotations

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
