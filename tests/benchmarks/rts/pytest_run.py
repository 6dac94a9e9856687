"""Run pytest (or any selector command) in a library's venv and read what it did.

Every run is a child process; its cost is wall time and the CPU of the whole process tree
(``resource.getrusage(RUSAGE_CHILDREN)`` before and after, so pytest's own children count).
A pytest run loads ``rts_recorder`` and returns its record: collected node ids after
selection, failed node ids, failed collectors.
"""

from __future__ import annotations

import json
import resource
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .projects import Library, child_env

PLUGIN_DIR = Path(__file__).resolve().parent / "plugin"

# pytest-timeout turns a test that hangs after a mutation into a failure of that test; the
# process timeout is the backstop for a hang outside any test (an import that never ends).
TEST_TIMEOUT_S = 60
BASE_ARGS = (
    "-p",
    "rts_recorder",
    "-q",
    "--no-header",
    "-o",
    "addopts=",
    "--continue-on-collection-errors",
    f"--timeout={TEST_TIMEOUT_S}",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Cost:
    """Wall and CPU seconds (CPU of every child process, user + system)."""

    wall: float
    cpu: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """A finished child run: exit code, cost, the last lines of its output, and for pytest
    the recorder's data (``None`` when the process died before writing it)."""

    returncode: int
    cost: Cost
    tail: str
    stdout: str = ""
    timed_out: bool = False
    collected: tuple[str, ...] = ()
    failed: frozenset[str] = field(default_factory=frozenset)
    collect_errors: frozenset[str] = field(default_factory=frozenset)
    recorded: bool = False


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(cmd: list[str], *, cwd: Path, timeout: float, env: dict[str, str]) -> Outcome:
    """Run ``cmd``; return its exit code, cost and the tail of stdout+stderr."""
    cpu0, wall0 = _children_cpu(), time.perf_counter()
    timed_out = False
    try:
        proc = subprocess.run(
            cmd,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        returncode, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        timed_out, returncode = True, -9
        stdout = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else ""
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
    cost = Cost(wall=time.perf_counter() - wall0, cpu=_children_cpu() - cpu0)
    return Outcome(
        returncode=returncode,
        cost=cost,
        tail="\n".join((stdout + stderr).splitlines()[-15:]),
        stdout=stdout,
        timed_out=timed_out,
    )


def run_pytest(
    lib: Library, extra: list[str], *, timeout: float, cacheprovider: bool = False
) -> Outcome:
    """``python -m pytest <tests> <extra>`` in ``lib``'s venv and tree, with the recorder.

    pytest's cache is off (``-p no:cacheprovider``) unless ``cacheprovider``: pytest-testmon
    cannot run without it (it reads the ``--lf`` option), so its runs get a cache in a
    throwaway folder outside the tree.
    """
    with tempfile.TemporaryDirectory(prefix="rts-") as tmp:
        record = Path(tmp) / "record.json"
        cache = ["-o", f"cache_dir={tmp}/cache"] if cacheprovider else ["-p", "no:cacheprovider"]
        env = child_env(PLUGIN_DIR)
        env["RTS_RECORD_FILE"] = str(record)
        cmd = [
            str(lib.python),
            "-m",
            "pytest",
            lib.tests,
            f"--rootdir={lib.tree}",
            "-c",
            str(lib.config),
            *BASE_ARGS,
            *cache,
            *lib.pytest_args,
            *extra,
        ]
        outcome = run(cmd, cwd=lib.tree, timeout=timeout, env=env)
        if not record.exists():
            return outcome
        data = json.loads(record.read_text(encoding="utf-8"))
    return Outcome(
        returncode=outcome.returncode,
        cost=outcome.cost,
        tail=outcome.tail,
        timed_out=outcome.timed_out,
        collected=tuple(data["collected"]),
        failed=frozenset(data["failed"]),
        collect_errors=frozenset(data["collect_errors"]),
        recorded=True,
    )


def covered(selectors: frozenset[str] | set[str], suite: tuple[str, ...]) -> frozenset[str]:
    """The suite ids that running ``pytest <selectors>`` would run.

    A selector is a node id, a parametrize-less test id (runs every parameter), a class or
    module id (runs everything under it) or a folder.
    """
    if not selectors:
        return frozenset()
    exact = set(selectors) & set(suite)
    prefixes = tuple(
        p
        for s in selectors
        for p in (s + "::", s + "[", s.rstrip("/") + "/")
        if s  # an empty line selects nothing, not the whole suite
    )
    return frozenset(exact | {t for t in suite if t.startswith(prefixes)})


def failing_ids(outcome: Outcome, suite: tuple[str, ...]) -> frozenset[str]:
    """Failed tests plus every suite test under a collector that failed to collect."""
    if "" in outcome.collect_errors:
        return frozenset(suite)
    return (
        outcome.failed | covered(outcome.collect_errors, suite) | _conftest_errors(outcome, suite)
    )


def _conftest_errors(outcome: Outcome, suite: tuple[str, ...]) -> frozenset[str]:
    # A broken conftest is reported against the conftest's path: everything in its folder fails.
    folders = {
        e.rsplit("/", 1)[0] + "/" if "/" in e else ""
        for e in outcome.collect_errors
        if e.endswith("conftest.py")
    }
    return frozenset(t for t in suite if any(t.startswith(f) for f in folders))
