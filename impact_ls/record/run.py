"""Run the suite once under coverage in the project's interpreter and store what each test ran.

``record_suite(request, settings)``: take the project's record lock → index the graph (the file
hashes and spans the records will describe) → a ``running`` row → the child
``PY -m pytest -p _impact_ls_record ARGS`` in its own session, output to ``record.log`` in the
cache folder → poll it (progress, timeout, Ctrl-C) → judge the outcome → map each test's executed
lines to entities → replace the stored data in one transaction, or keep the previous data and
say why. Outcomes:

- pytest exit 0, or 1 (some tests failed: they are recorded all the same) → ``complete``;
- exit 5 (no tests collected) → ``no-tests``; 2, 3, 4 (interrupted, internal or usage error) or
  no summary from the plugin → ``failed``; the timeout → ``timeout``; Ctrl-C or SIGTERM →
  ``interrupted``; pytest dying of a signal → ``killed``. Each keeps the previous data.

A file whose bytes changed while the suite ran is left out of the record (its lines may belong
to either version). Never raises for a failed run; raises ``RecordError`` only when the record
cannot start (another record holds the lock, nowhere to store the data).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from impact_ls.config import Settings
from impact_ls.errors import RecordError
from impact_ls.graph.project import ProjectIndex
from impact_ls.history.repo import GitRepo
from impact_ls.model import NodeKind, QualName, TestId
from impact_ls.record.entities import LineOwners
from impact_ls.record.lock import LOCK_NAME, RecordLock
from impact_ls.record.runtime import PLUGIN_MODULE, prepare_runtime
from impact_ls.record.store import (
    RecordedFile,
    Recording,
    RecordStore,
    RunCounts,
    RunInfo,
    RunStatus,
)

logger = logging.getLogger(__name__)

# (phase, done, total): phase "indexing" (files) or "testing" (tests).
RecordProgress = Callable[[str, int, int], None]

# The plugin reads these (plugin.py cannot import impact_ls; a test keeps both in step).
ENV_OUT = "IMPACT_LS_RECORD_OUT"
ENV_ROOT = "IMPACT_LS_RECORD_ROOT"
ENV_OMIT = "IMPACT_LS_RECORD_OMIT"
LOG_NAME = "record.log"
_POLL_S = 0.2
_GRACE_S = 3.0
_TAIL_LINES = 20
_PYTEST_EXIT = {
    2: "pytest was interrupted (errors during collection stop the run before any test; "
    "pass -- --continue-on-collection-errors to record the rest)",
    3: "pytest hit an internal error",
    4: "pytest rejected its arguments",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordRequest:
    """What to record: the project root, its interpreter, pytest's arguments, a time limit."""

    root: Path
    python: str
    pytest_args: tuple[str, ...] = ()
    timeout_s: float | None = None  # None or 0: no limit


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordResult:
    """The outcome of one record."""

    status: RunStatus
    message: str
    counts: RunCounts
    stored: bool  # the new data replaced the previous
    previous: RunInfo | None  # the stored data as it was before this run
    database: Path
    log: Path
    output_tail: str = ""
    wall_s: float = 0.0
    child_cpu_s: float = 0.0
    notes: tuple[str, ...] = ()


@dataclass(slots=True)
class _Child:
    """What the child process did."""

    returncode: int | None = None
    stopped: RunStatus | None = None  # TIMEOUT or INTERRUPTED when we stopped it
    cpu_s: float = 0.0
    summaries: list[dict[str, Any]] = field(default_factory=list)


def resolve_python(root: Path, settings: Settings, explicit: str | None = None) -> str:
    """The interpreter to record with: ``--python``, else ``Settings.python``, else the project's
    ``.venv`` or ``venv``, else the one impact-ls runs in; ``RecordError`` if it does not exist."""
    if explicit:
        return _existing(explicit, base=Path.cwd(), origin="--python")
    if settings.python:
        return _existing(settings.python, base=root, origin="the 'python' setting")
    for venv in (".venv", "venv"):
        for candidate in (root / venv / "bin" / "python", root / venv / "Scripts" / "python.exe"):
            if candidate.is_file():
                return str(candidate)
    return sys.executable


def _existing(value: str, *, base: Path, origin: str) -> str:
    path = Path(value).expanduser()
    if not path.is_absolute() and len(path.parts) > 1:
        path = base / path
    found = str(path) if path.is_file() else shutil.which(value)
    if found is None or not os.access(found, os.X_OK):
        raise RecordError(
            f"{origin} names {value!r}, which is not an interpreter here; pass the path of the "
            "project's python (for example --python .venv/bin/python)"
        )
    return found


def record_suite(
    request: RecordRequest, settings: Settings, *, progress: RecordProgress | None = None
) -> RecordResult:
    """Run the suite once under coverage and store what each test executed (module docstring)."""
    started = time.monotonic()
    store = RecordStore.open_for_writing(request.root)
    try:
        with RecordLock(store.path.parent / LOCK_NAME):
            return _record_locked(request, settings, store, progress, started)
    finally:
        store.close()


def _record_locked(
    request: RecordRequest,
    settings: Settings,
    store: RecordStore,
    progress: RecordProgress | None,
    started: float,
) -> RecordResult:
    root = request.root.resolve()
    index = ProjectIndex(root, settings)
    index.build(progress=None if progress is None else _phase(progress, "indexing"))
    repo = GitRepo.discover(root)
    previous = store.data_run()
    run_id = store.begin_run(
        head=repo.head_sha() if repo else None,
        python=request.python,
        args=shlex.join(request.pytest_args),
        pid=os.getpid(),
    )
    cache = store.path.parent
    log = cache / LOG_NAME
    outcome = _Outcome(store=store, run_id=run_id, previous=previous, log=log, started=started)
    try:
        runtime, temporary = prepare_runtime(cache)
        out = Path(tempfile.mkdtemp(prefix="impact-ls-record-"))
        try:
            child = _run_child(
                request, root, runtime=runtime, out=out, log=log, cache=cache, progress=progress
            )
            return outcome.judge(child, lambda: _recording(out, index, child.summaries))
        finally:
            shutil.rmtree(out, ignore_errors=True)
            if temporary:
                shutil.rmtree(runtime, ignore_errors=True)
    except BaseException as exc:
        if not outcome.finished:
            status = (
                RunStatus.INTERRUPTED if isinstance(exc, KeyboardInterrupt) else RunStatus.FAILED
            )
            outcome.finish(status, None, f"record stopped: {exc!r}", RunCounts())
        raise


def _phase(progress: RecordProgress, phase: str) -> Callable[[int, int], None]:
    return lambda done, total: progress(phase, done, total)


def _run_child(
    request: RecordRequest,
    root: Path,
    *,
    runtime: Path,
    out: Path,
    log: Path,
    cache: Path,
    progress: RecordProgress | None,
) -> _Child:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(runtime), env.get("PYTHONPATH")) if p)
    env[ENV_OUT] = str(out)
    env[ENV_ROOT] = str(root)
    env[ENV_OMIT] = os.pathsep.join(_omit(root, cache))
    # COVERAGE_CORE=sysmon cannot switch contexts; =ctrace exits when the C tracer is missing.
    env.pop("COVERAGE_CORE", None)
    command = [request.python, "-m", "pytest", "-p", PLUGIN_MODULE, *request.pytest_args]
    logger.info("recording: %s (in %s)", shlex.join(command), root)
    child = _Child()
    cpu_before = _children_cpu()
    with open(log, "wb") as output:
        try:
            proc = subprocess.Popen(
                command,
                cwd=root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=os.name != "nt",
                creationflags=getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0),
            )
        except OSError as exc:
            raise RecordError(f"cannot start {request.python}: {exc}") from exc
        child.returncode, child.stopped = _wait(proc, request.timeout_s, out, progress)
    child.cpu_s = _children_cpu() - cpu_before
    child.summaries = _summaries(out)
    return child


def _omit(root: Path, cache: Path) -> list[str]:
    return [
        str(cache / "*"),
        str(root / ".impact_ls" / "*"),
        "*/site-packages/*",
        "*/dist-packages/*",
        *(str(root / venv / "*") for venv in (".venv", "venv", ".tox", ".nox")),
    ]


def _wait(
    proc: subprocess.Popen[bytes],
    timeout_s: float | None,
    out: Path,
    progress: RecordProgress | None,
) -> tuple[int | None, RunStatus | None]:
    deadline = time.monotonic() + timeout_s if timeout_s else None
    ticker = _Ticker(out)

    def show() -> None:
        if progress is not None:
            done, total = ticker.read()
            if total:
                progress("testing", min(done, total), total)

    try:
        while True:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = proc.wait(timeout=_POLL_S)
                show()  # the last tests may have finished since the previous poll
                return code, None
            show()
            if deadline is not None and time.monotonic() > deadline:
                _stop(proc)
                return proc.returncode, RunStatus.TIMEOUT
    except KeyboardInterrupt:
        _stop(proc)
        return proc.returncode, RunStatus.INTERRUPTED


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """End pytest and whatever it started: SIGTERM to its process group, then SIGKILL."""
    for sig, grace in ((signal.SIGTERM, _GRACE_S), (getattr(signal, "SIGKILL", None), None)):
        if proc.poll() is not None:
            return
        try:
            if os.name == "nt" or sig is None:  # pragma: no cover - Windows
                proc.kill()
            else:
                os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue


class _Ticker:
    """Reads the plugin's progress files as they grow: (tests done, tests collected)."""

    def __init__(self, out: Path) -> None:
        self._out = out
        self._offsets: dict[Path, int] = {}
        self._done = 0
        self._total = 0

    def read(self) -> tuple[int, int]:
        for path in self._out.glob("progress-*"):
            try:
                with open(path, "rb") as handle:
                    handle.seek(self._offsets.get(path, 0))
                    chunk = handle.read()
            except OSError:
                continue
            complete = chunk[: chunk.rfind(b"\n") + 1]
            self._offsets[path] = self._offsets.get(path, 0) + len(complete)
            for line in complete.decode("utf-8", "replace").splitlines():
                if line == "done":
                    self._done += 1
                elif line.startswith("collected ") and line[10:].isdigit():
                    self._total = max(self._total, int(line[10:]))
        return self._done, self._total


def _children_cpu() -> float:
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return 0.0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _summaries(out: Path) -> list[dict[str, Any]]:
    found = []
    for path in sorted(out.glob("summary-*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            logger.info("unreadable record summary %s: %s", path, exc)
            continue
        if isinstance(data, dict):
            found.append(data)
    return found


@dataclass(frozen=True, slots=True, kw_only=True)
class _Mapped:
    recording: Recording
    collected: int
    failed: int
    notes: tuple[str, ...]


def _recording(out: Path, index: ProjectIndex, summaries: list[dict[str, Any]]) -> _Mapped:
    """The tests that ran and the entities each executed, from the coverage data in ``out``.

    ``RecordError`` when coverage's data does not read back.
    """
    from coverage import CoverageData  # deferred: only a record reads coverage data
    from coverage.exceptions import CoverageException

    outcomes: dict[str, str] = {}
    for summary in summaries:
        outcomes.update(summary.get("outcomes") or {})
    executed: dict[TestId, set[QualName]] = defaultdict(set)
    entities: dict[QualName, tuple[str, NodeKind]] = {}
    files: dict[str, RecordedFile] = {}
    changed: set[str] = set()
    for data_file in sorted(out.glob("coverage*")):
        data = CoverageData(basename=str(data_file))
        try:
            data.read()
            measured_files = sorted(data.measured_files())
        except (CoverageException, sqlite3.Error, OSError) as exc:
            raise RecordError(f"coverage's data {data_file.name} does not read: {exc}") from exc
        for measured in measured_files:
            rel = index.relpath(measured)
            sha = None if rel is None else index.content_hash(rel)
            if rel is None or sha is None or rel in changed:
                continue
            if rel not in files and _sha_now(index.root / rel) != sha:
                changed.add(rel)
                continue
            owners = LineOwners(index.graph.nodes_in_file(rel))
            used = False
            for line, contexts in data.contexts_by_lineno(measured).items():
                entity = owners.owner(line)
                if entity is None:
                    continue
                for context in contexts:
                    if context:
                        executed[TestId(context)].add(entity)
                        entities[entity] = (rel, owners.kind(entity))
                        used = True
            if used:
                files[rel] = RecordedFile(path=rel, sha=sha, module=index.module_for(rel))
    tests = {TestId(t) for t in outcomes} | executed.keys()
    notes: tuple[str, ...] = ()
    if changed:
        notes = (
            f"{len(changed)} file(s) changed while the suite ran and were left out: "
            + ", ".join(sorted(changed)[:5]),
        )
    recording = Recording(
        tests=tuple(sorted(tests)),
        files=tuple(files.values()),
        entities=entities,
        executed={test: frozenset(found) for test, found in executed.items()},
    )
    return _Mapped(
        recording=recording,
        collected=max((int(s.get("collected") or 0) for s in summaries), default=0),
        failed=sum(1 for outcome in outcomes.values() if outcome == "failed"),
        notes=notes,
    )


def _sha_now(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


@dataclass(slots=True, kw_only=True)
class _Outcome:
    """Judges a finished child and closes its ``runs`` row, storing the data when it counts."""

    store: RecordStore
    run_id: int
    previous: RunInfo | None
    log: Path
    started: float
    finished: bool = False

    def judge(self, child: _Child, mapped: Callable[[], _Mapped]) -> RecordResult:
        code = child.returncode
        if child.stopped is not None or code is None or code < 0:
            status = child.stopped or RunStatus.KILLED
            return self._kept(status, code, self._stopped_message(status, code), child)
        error = next((str(s["error"]) for s in child.summaries if s.get("error")), "")
        if code == 5:
            return self._kept(RunStatus.NO_TESTS, code, "pytest collected no tests", child)
        if code not in (0, 1) or not child.summaries or error:
            why = (
                _PYTEST_EXIT.get(code)
                or error
                or (
                    f"pytest exited with {code} before the record plugin finished "
                    "(is pytest installed in that interpreter?)"
                )
            )
            return self._kept(RunStatus.FAILED, code, why, child)
        try:
            found = mapped()
        except RecordError as exc:
            return self._kept(RunStatus.FAILED, code, str(exc), child)
        recording = found.recording
        counts = RunCounts(
            collected=found.collected,
            recorded=len(recording.tests),
            failed=found.failed,
            files=len(recording.files),
            entities=len(recording.entities),
            pairs=recording.pairs,
        )
        message = (
            f"recorded {counts.recorded} of {counts.collected} collected tests over "
            f"{counts.files} files ({counts.entities} entities, {counts.pairs} test-entity pairs)"
        )
        if counts.failed:
            message += f"; {counts.failed} failed and are recorded all the same"
        self.finish(RunStatus.COMPLETE, code, message, counts, recording)
        return self._result(RunStatus.COMPLETE, message, counts, child, found.notes, stored=True)

    def _stopped_message(self, status: RunStatus, code: int | None) -> str:
        if status is RunStatus.TIMEOUT:
            return "pytest ran past the timeout and was stopped (raise it with --timeout S)"
        if status is RunStatus.INTERRUPTED:
            return "the record was interrupted"
        try:
            name = signal.Signals(-(code or 0)).name
        except ValueError:
            name = f"signal {-(code or 0)}"
        return f"pytest was killed by {name}"

    def _kept(self, status: RunStatus, code: int | None, why: str, child: _Child) -> RecordResult:
        previous = self.previous
        if previous is None:
            kept = "nothing was recorded before, so there is no recorded data yet"
        else:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(previous.started))
            kept = f"the previous record ({when}, {previous.recorded} tests) is kept"
        message = f"{why}; {kept}"
        self.finish(status, code, message, RunCounts())
        return self._result(status, message, RunCounts(), child, (), stored=False)

    def finish(
        self,
        status: RunStatus,
        code: int | None,
        message: str,
        counts: RunCounts,
        recording: Recording | None = None,
    ) -> None:
        self.store.finish_run(
            self.run_id,
            status=status,
            exit_code=code,
            message=message,
            counts=counts,
            recording=recording,
        )
        self.finished = True

    def _result(
        self,
        status: RunStatus,
        message: str,
        counts: RunCounts,
        child: _Child,
        notes: tuple[str, ...],
        *,
        stored: bool,
    ) -> RecordResult:
        return RecordResult(
            status=status,
            message=message,
            counts=counts,
            stored=stored,
            previous=self.previous,
            database=self.store.path,
            log=self.log,
            output_tail="" if stored else _tail(self.log),
            wall_s=time.monotonic() - self.started,
            child_cpu_s=child.cpu_s,
            notes=notes,
        )


def _tail(log: Path) -> str:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-_TAIL_LINES:])
