"""What the child pytest needs on its path: the record plugin and a copy of coverage.py.

The project's interpreter has pytest but maybe neither coverage nor impact_ls, so
``prepare_runtime`` makes a folder holding ``_impact_ls_record.py`` (the source of ``plugin.py``)
and a copy of the ``coverage`` package impact-ls itself runs with; the child gets that folder at
the front of ``PYTHONPATH``. A copy rather than a link: the child writes its own bytecode there
and never into impact-ls's environment. The copy lives in the cache folder, one per coverage
version, so later records reuse it and its bytecode; without a usable cache folder it goes to a
temporary folder that the caller deletes. Coverage's C tracer is built for impact-ls's Python; in
another Python it does not load and coverage uses its pure-Python tracer (slower, same data).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import logging
import os
import shutil
import tempfile
from pathlib import Path

from impact_ls.errors import RecordError

logger = logging.getLogger(__name__)

PLUGIN_MODULE = "_impact_ls_record"
_RUNTIME_DIR = "record-runtime"


def prepare_runtime(cache: Path | None) -> tuple[Path, bool]:
    """The folder to put on the child's path, and whether it is temporary (delete it after)."""
    source, version = _coverage_package()
    if cache is not None:
        target = cache / _RUNTIME_DIR / f"coverage-{version}"
        try:
            _ensure_copy(source, target)
            _write_plugin(target)
            return target, False
        except OSError as exc:
            logger.info("cannot keep the record runtime in %s (%s); using a temp dir", target, exc)
    temporary = Path(tempfile.mkdtemp(prefix="impact-ls-runtime-"))
    try:
        shutil.copytree(source, temporary / "coverage", ignore=_IGNORED)
        _write_plugin(temporary)
    except OSError as exc:
        shutil.rmtree(temporary, ignore_errors=True)
        raise RecordError(f"cannot prepare the record plugin in {temporary}: {exc}") from exc
    return temporary, True


_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc")


def _coverage_package() -> tuple[Path, str]:
    spec = importlib.util.find_spec("coverage")
    if spec is None or spec.origin is None:
        raise RecordError(
            "coverage.py is not installed next to impact-ls; reinstall impact-ls "
            "(it depends on coverage>=7)"
        )
    return Path(spec.origin).parent, importlib.metadata.version("coverage")


def _ensure_copy(source: Path, target: Path) -> None:
    """Copy the package once; a half-made copy (a crash mid-copy) is never used."""
    if (target / "coverage" / "__init__.py").is_file():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(source, staging / "coverage", ignore=_IGNORED)
    try:
        staging.rename(target)
    except OSError:
        # Another record made it first (the lock is per project, the runtime may be shared).
        shutil.rmtree(staging, ignore_errors=True)
        if not (target / "coverage" / "__init__.py").is_file():
            raise


def _write_plugin(target: Path) -> None:
    text = Path(__file__).with_name("plugin.py").read_text(encoding="utf-8")
    path = target / f"{PLUGIN_MODULE}.py"
    with contextlib.suppress(OSError):
        if path.read_text(encoding="utf-8") == text:
            return
    staging = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    staging.write_text(text, encoding="utf-8")
    staging.replace(path)
