"""Run pytest on selected node ids in a subprocess and read its JUnit XML back.

Contract: ``run_pytest`` never raises for a problem of the user's setup. A missing interpreter or
pytest, a hang past the timeout, a cancellation or unreadable output each come back as a
``TestRun`` with a clear ``message``. It writes nothing into the project: the XML goes to a temp
dir, pytest's cache plugin is disabled and ``PYTHONDONTWRITEBYTECODE`` is set.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import re
import signal
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from impact_ls.config import Settings

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # pragma: no cover - exercised only on 3.10
    from impact_ls.model import StrEnum

logger = logging.getLogger(__name__)

_POLL_S = 0.1
# One line per finished test in ``-v`` output: "tests/test_x.py::test_a PASSED   [ 50%]".
_RESULT_LINE = re.compile(r"::\S*\s+(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b")
_MAX_MESSAGE = 500


class CaseOutcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"


class RunOutcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    NO_TESTS = "no-tests"


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseResult:
    """One test's result: node id, place (1-based line, 0 if unknown) and why it failed."""

    test_id: str
    file: str
    line: int
    outcome: CaseOutcome
    message: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class TestRun:
    """The outcome of one pytest run."""

    __test__ = False  # not a pytest class, despite the name

    outcome: RunOutcome
    cases: tuple[CaseResult, ...] = ()
    message: str = ""
    returncode: int | None = None
    duration_s: float = 0.0
    command: tuple[str, ...] = ()
    selected: tuple[str, ...] = ()

    def count(self, outcome: CaseOutcome) -> int:
        """How many cases ended with ``outcome``."""
        return sum(1 for c in self.cases if c.outcome is outcome)

    def as_dict(self) -> dict[str, object]:
        """The command result: counts first, then the failing tests and the message."""
        return {
            "outcome": str(self.outcome),
            "passed": self.count(CaseOutcome.PASSED),
            "failed": self.count(CaseOutcome.FAILED),
            "errors": self.count(CaseOutcome.ERROR),
            "skipped": self.count(CaseOutcome.SKIPPED),
            "selected": list(self.selected),
            "failures": [
                {"test": c.test_id, "file": c.file, "line": c.line, "message": c.message}
                for c in self.cases
                if c.outcome in (CaseOutcome.FAILED, CaseOutcome.ERROR)
            ],
            "message": self.message,
            "returncode": self.returncode,
            "duration_s": round(self.duration_s, 3),
            "command": list(self.command),
        }


def pytest_command(settings: Settings) -> list[str]:
    """The command prefix: ``Settings.pytest_command``, else ``<python> -m pytest``."""
    if settings.pytest_command:
        return list(settings.pytest_command)
    return [settings.python or sys.executable, "-m", "pytest"]


def parse_junit(xml_text: str) -> tuple[CaseResult, ...]:
    """Cases of a pytest ``junit_family=xunit1`` report, sorted by file, line and id."""
    root = ET.fromstring(xml_text)
    cases = []
    for case in root.iter("testcase"):
        file = (case.get("file") or "").replace("\\", "/")
        name = case.get("name") or ""
        classname = case.get("classname") or ""
        outcome, message = CaseOutcome.PASSED, ""
        for tag, kind in (
            ("failure", CaseOutcome.FAILED),
            ("error", CaseOutcome.ERROR),
            ("skipped", CaseOutcome.SKIPPED),
        ):
            element = case.find(tag)
            if element is not None:
                outcome = kind
                message = _first_line(element.get("message") or element.text or tag)
                break
        line_attr = case.get("line")
        # pytest writes the 0-based line of the test function; we keep 1-based lines.
        line = int(line_attr) + 1 if line_attr and line_attr.isdigit() else 0
        cases.append(
            CaseResult(
                test_id=_node_id(file, classname, name),
                file=file,
                line=line,
                outcome=outcome,
                message=message,
            )
        )
    return tuple(sorted(cases, key=lambda c: (c.file, c.line, c.test_id)))


def _first_line(text: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line[:_MAX_MESSAGE]


def _node_id(file: str, classname: str, name: str) -> str:
    if not file:
        return f"{classname}::{name}" if classname else name
    module = file[:-3].replace("/", ".") if file.endswith(".py") else file
    classes = classname[len(module) :].lstrip(".") if classname.startswith(module) else ""
    parts = [file, *(c for c in classes.split(".") if c), name]
    return "::".join(parts)


async def run_pytest(
    test_ids: Sequence[str],
    *,
    root: Path,
    settings: Settings,
    timeout_s: float,
    on_progress: Callable[[int, int], None] | None = None,
    is_cancelled: Callable[[], bool] | None = None,
) -> TestRun:
    """Run pytest on ``test_ids`` in ``root``, bounded by ``timeout_s``, stopped by a cancel."""
    selected = tuple(test_ids)
    if not selected:
        return TestRun(outcome=RunOutcome.NO_TESTS, message="no affected tests to run")
    with tempfile.TemporaryDirectory(prefix="impact-ls-pytest-") as tmp:
        xml_path = Path(tmp) / "junit.xml"
        command = _command(settings, xml_path, selected)
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        started = time.monotonic()
        try:
            proc = await asyncio.create_subprocess_exec(
                *command,
                cwd=root,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            return TestRun(
                outcome=RunOutcome.ERROR,
                message=f"cannot start {command[0]!r}: {exc.strerror or exc}; "
                "set impactLs.python or impactLs.pytestCommand",
                command=command,
                selected=selected,
            )
        # Read stderr all along: a full pipe would block pytest and look like a hang.
        errors = asyncio.ensure_future(_drain(proc.stderr))
        try:
            outcome = await _wait(proc, len(selected), timeout_s, on_progress, is_cancelled)
        finally:
            if not errors.done():
                await asyncio.wait({errors}, timeout=1.0)
                errors.cancel()
        duration = time.monotonic() - started
        stderr = (
            errors.result().decode("utf-8", "replace")
            if errors.done() and not errors.cancelled()
            else ""
        )
        if outcome is not None:
            return _stopped(
                outcome, timeout_s, duration=duration, command=command, selected=selected
            )
        return _finish(
            proc.returncode,
            xml_path,
            stderr=stderr,
            command=command,
            selected=selected,
            duration=duration,
        )


def _command(settings: Settings, xml_path: Path, selected: tuple[str, ...]) -> tuple[str, ...]:
    return (
        *pytest_command(settings),
        "-v",
        "--color=no",
        "-p",
        "no:cacheprovider",
        "-o",
        "junit_family=xunit1",
        f"--junitxml={xml_path}",
        *selected,
    )


def _stopped(
    outcome: RunOutcome,
    timeout_s: float,
    *,
    duration: float,
    command: tuple[str, ...],
    selected: tuple[str, ...],
) -> TestRun:
    what = "timed out" if outcome is RunOutcome.TIMEOUT else "was cancelled"
    limit = (
        f" after {timeout_s:g} s (impactLs.testTimeoutS)" if outcome is RunOutcome.TIMEOUT else ""
    )
    return TestRun(
        outcome=outcome,
        message=f"pytest {what}{limit}; it was stopped",
        duration_s=duration,
        command=command,
        selected=selected,
    )


async def _wait(
    proc: asyncio.subprocess.Process,
    total: int,
    timeout_s: float,
    on_progress: Callable[[int, int], None] | None,
    is_cancelled: Callable[[], bool] | None,
) -> RunOutcome | None:
    """Wait for ``proc`` while counting results; kill it and say why on timeout or cancel."""
    reader = asyncio.ensure_future(_count_results(proc, total, on_progress))
    exited = asyncio.ensure_future(proc.wait())
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            done, _ = await asyncio.wait({exited}, timeout=_POLL_S)
            if done:
                # stdout reaches EOF once pytest exits (unless a child kept it open).
                await asyncio.wait({reader}, timeout=1.0)
                return None
            if is_cancelled is not None and is_cancelled():
                _kill(proc)
                return RunOutcome.CANCELLED
            if time.monotonic() >= deadline:
                _kill(proc)
                return RunOutcome.TIMEOUT
    except asyncio.CancelledError:
        _kill(proc)
        raise
    finally:
        for task in (reader, exited):
            if not task.done():
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if proc.returncode is None:
            await proc.wait()


async def _count_results(
    proc: asyncio.subprocess.Process, total: int, on_progress: Callable[[int, int], None] | None
) -> None:
    assert proc.stdout is not None
    done = 0
    while line := await proc.stdout.readline():
        if _RESULT_LINE.search(line.decode("utf-8", "replace")):
            done += 1
            if on_progress is not None:
                on_progress(min(done, max(total, done)), max(total, done))


async def _drain(stream: asyncio.StreamReader | None) -> bytes:
    if stream is None:
        return b""
    try:
        return await stream.read()
    except OSError:
        return b""


def _kill(proc: asyncio.subprocess.Process) -> None:
    """Kill pytest and whatever it started (it leads its own session)."""
    if proc.returncode is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            proc.kill()


def _finish(
    returncode: int | None,
    xml_path: Path,
    *,
    stderr: str,
    command: tuple[str, ...],
    selected: tuple[str, ...],
    duration: float,
) -> TestRun:
    run = functools.partial(
        TestRun, returncode=returncode, command=command, selected=selected, duration_s=duration
    )
    try:
        cases = parse_junit(xml_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if "No module named pytest" in stderr:
            message = (
                f"pytest is not installed for {command[0]}; "
                "set impactLs.python or impactLs.pytestCommand"
            )
        else:
            message = (
                f"pytest exited with status {returncode} without a report: "
                f"{_first_line(stderr) or 'no output'}"
            )
        return run(outcome=RunOutcome.ERROR, message=message)
    except (OSError, ET.ParseError) as exc:
        return run(outcome=RunOutcome.ERROR, message=f"unreadable pytest report: {exc}")
    failed = sum(1 for c in cases if c.outcome in (CaseOutcome.FAILED, CaseOutcome.ERROR))
    if failed:
        outcome, message = RunOutcome.FAILED, f"{failed} of {len(cases)} tests failed"
    elif returncode in (0, 5) and cases:
        outcome, message = RunOutcome.PASSED, f"{len(cases)} tests passed"
    elif returncode == 5 or not cases:
        outcome, message = RunOutcome.NO_TESTS, "pytest collected no tests"
    else:
        outcome = RunOutcome.ERROR
        message = (
            f"pytest exited with status {returncode}: {_first_line(stderr) or 'see its output'}"
        )
    return run(outcome=outcome, cases=cases, message=message)
