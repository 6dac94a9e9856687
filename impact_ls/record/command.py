"""The ``impact-ls record`` subcommand: its arguments, its progress line and what it prints.

``add_record_parser`` registers the subcommand on the CLI's subparsers; ``run_record`` runs it.
A complete record prints its counts on stdout and exits 0 (tests that failed are recorded too);
a record that fails, times out or is killed prints why on stderr with the end of pytest's
output and exits 1, keeping the previous data; Ctrl-C (or SIGTERM) exits 130. ``--status``
prints the age and completeness of the stored data and records nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import TypeVar

from impact_ls.errors import UsageError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130
_BAR = 30
_Parser = TypeVar("_Parser", bound=argparse.ArgumentParser)


def add_record_parser(sub: argparse._SubParsersAction[_Parser]) -> None:
    """Register ``record`` on the CLI's subparsers."""
    record = sub.add_parser(
        "record",
        help="run the suite once under coverage; the test map then adds what each test ran",
        description="Run the test suite once under coverage.py with one context per test and "
        "store which functions, methods and classes each test executed; afterwards the test "
        "map selects a test that executed a changed or reached entity. Arguments after -- go "
        "to pytest.",
    )
    record.add_argument(
        "--root", default=None, help="project root (default: the enclosing project)"
    )
    record.add_argument(
        "--python",
        default=None,
        metavar="PY",
        help="interpreter with the project's pytest (default: the 'python' setting, else "
        ".venv or venv in the root, else this one)",
    )
    record.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="S",
        help="stop pytest after S seconds and keep the previous data (default: the "
        "record-timeout-s setting, 3600; 0: no limit)",
    )
    record.add_argument(
        "--status", action="store_true", help="how old and how complete the recorded data is"
    )
    record.add_argument("pytest_args", nargs=argparse.REMAINDER, metavar="-- PYTEST ARGS")


def run_record(args: argparse.Namespace, *, root: Path) -> int:
    """Run ``impact-ls record`` with parsed ``args`` on ``root``; return the exit status."""
    # Deferred: the CLI imports this module for its parser, and --help must stay fast.
    from impact_ls.config import settings_from_pyproject
    from impact_ls.record.run import RecordRequest, record_suite, resolve_python
    from impact_ls.record.status import format_status, record_status
    from impact_ls.record.store import RunStatus

    pytest_args = list(args.pytest_args)
    if pytest_args[:1] == ["--"]:
        pytest_args = pytest_args[1:]
    if args.status:
        if pytest_args:
            raise UsageError("record --status takes no pytest arguments")
        sys.stdout.write(format_status(record_status(root)))
        return EXIT_OK
    if args.timeout is not None and args.timeout < 0:
        raise UsageError(f"--timeout {args.timeout}: expected seconds >= 0 (0: no limit)")
    settings, warnings = settings_from_pyproject(root)
    for warning in warnings:
        sys.stderr.write(f"impact-ls: warning: {warning}\n")
    request = RecordRequest(
        root=root,
        python=resolve_python(root, settings, args.python),
        pytest_args=tuple(pytest_args),
        timeout_s=settings.record_timeout_s if args.timeout is None else args.timeout,
    )
    line = _ProgressLine() if sys.stderr.isatty() else None
    try:
        with _sigterm_interrupts():
            result = record_suite(request, settings, progress=None if line is None else line.show)
    finally:
        if line is not None:
            line.close()
    if result.status is RunStatus.COMPLETE:
        sys.stdout.write(f"{result.message} in {result.wall_s:.1f} s\n")
        for note in result.notes:
            sys.stdout.write(f"note: {note}\n")
        sys.stdout.write(
            f"stored in {result.database}; the test map uses it from now on "
            "('impact-ls record --status' says how old it is)\n"
        )
        return EXIT_OK
    sys.stderr.write(f"impact-ls: record {result.status}: {result.message}\n")
    if result.output_tail:
        sys.stderr.write(f"last lines of pytest's output ({result.log}):\n")
        sys.stderr.write("".join(f"  {line}\n" for line in result.output_tail.splitlines()))
    return EXIT_INTERRUPTED if result.status is RunStatus.INTERRUPTED else EXIT_FAILED


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM stops a record the way Ctrl-C does: pytest is stopped, the old data kept."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class _ProgressLine:
    """``indexing [####....] 3/10`` then ``testing [...] 5/297`` on one stderr line."""

    def __init__(self) -> None:
        self._last: tuple[str, int, int] | None = None

    def show(self, phase: str, done: int, total: int) -> None:
        if self._last == (phase, done, total):
            return
        if self._last is not None and self._last[0] != phase:
            sys.stderr.write("\n")
        self._last = (phase, done, total)
        filled = _BAR * done // total if total else _BAR
        sys.stderr.write(f"\r{phase:<8} [{'#' * filled}{'.' * (_BAR - filled)}] {done}/{total}")
        sys.stderr.flush()

    def close(self) -> None:
        """End the line, so what follows starts on its own."""
        if self._last is not None:
            sys.stderr.write("\n")
            self._last = None
