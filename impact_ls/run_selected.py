"""``impact-ls test``: run pytest on exactly the selected node ids, in the project's interpreter.

The interpreter is ``--python``, else the one ``impact-ls record`` uses
(``record.run.resolve_python``): the configured ``python``, else the project's
``.venv``/``venv``, else the one impact-ls runs in.
pytest runs in the project root (the ids are root-relative) with the user's extra arguments
after the ids; its exit status is the command's. A configured interpreter that does not exist
is a clear error, not a crash.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from impact_ls.config import Settings
from impact_ls.errors import ImpactError
from impact_ls.record.run import resolve_python

logger = logging.getLogger(__name__)


def run_selected(
    root: Path,
    settings: Settings,
    tests: Sequence[str],
    pytest_args: Sequence[str],
    *,
    python: str | None = None,
) -> int:
    """Run ``python -m pytest <tests> <pytest_args>`` in ``root``; pytest's exit status."""
    python = resolve_python(root, settings, python)
    command = [python, "-m", "pytest", *tests, *pytest_args]
    noun = "test" if len(tests) == 1 else "tests"
    sys.stderr.write(f"impact-ls: running {len(tests)} affected {noun} with {python}\n")
    sys.stderr.flush()
    logger.debug("running %s", command[:4])
    try:
        return subprocess.run(command, cwd=root, check=False).returncode
    except OSError as exc:
        raise ImpactError(f"cannot run {python}: {exc.strerror or exc}") from exc
