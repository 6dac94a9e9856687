"""The pytest plugin ``impact-ls record`` loads into the project's own pytest (``-p``).

It runs in the project's interpreter, which need not have impact_ls or coverage installed: it
imports only pytest, the standard library and the copy of coverage.py that ``runtime.py`` puts
beside it on ``PYTHONPATH``, so it never imports impact_ls. Coverage switches its dynamic context
to the test's node id (relative to the project root, as ``pytest $(impact-ls tests)`` takes it) at
the setup, call and teardown of each test, and back to ``""`` between tests; what runs while
modules are imported for collection is left in that empty context.

Environment: ``IMPACT_LS_RECORD_OUT`` (a folder for this process's files), ``_ROOT`` (the project
root, which coverage measures), ``_OMIT`` (``os.pathsep``-separated coverage omit patterns).
Files, suffixed with this process's id so xdist workers do not collide: the coverage data
(``coverage.*``), ``progress-<pid>`` (``collected N``, then one ``done`` line per finished test) and
``summary-<pid>.json`` (collected count, exit status, each test's outcome), written last.

When the process that started pytest goes away (impact-ls killed), the run stops within a second
instead of running the suite for nobody.
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import sys
import threading
import time
import warnings
from collections.abc import Generator
from typing import Any

import pytest

ENV_OUT = "IMPACT_LS_RECORD_OUT"
ENV_ROOT = "IMPACT_LS_RECORD_ROOT"
ENV_OMIT = "IMPACT_LS_RECORD_OMIT"
# Exit status when the parent is gone: the run's results have no reader any more.
_ORPHANED = 70
_WATCH_S = 0.5
# Coverage warnings that say nothing useful here and would break a ``filterwarnings = error``.
_QUIET = (
    "no-data-collected",
    "module-not-measured",
    "module-not-imported",
    "no-ctracer",
    "no-sysmon",
    "couldnt-parse",
)


class _Recorder:
    """One process's coverage measurement with one dynamic context per test."""

    def __init__(self, out: str, root: str, omit: list[str], *, rootdir: str) -> None:
        import coverage

        self.out = out
        # pytest's node ids are relative to its rootdir, which may lie above or below the root.
        self.offset = os.path.relpath(rootdir, root).replace(os.sep, "/")
        self.pid = os.getpid()
        self.cov = coverage.Coverage(
            data_file=os.path.join(out, "coverage"),
            data_suffix=True,
            source=[root],
            omit=omit,
            config_file=False,
            branch=False,
        )
        self.cov.set_option("run:disable_warnings", list(_QUIET))
        # sys.monitoring (the default from 3.14) cannot switch contexts; without the C tracer
        # (another Python than the one this copy was built for) coverage falls back to its
        # pure-Python tracer by itself. An older coverage without the option uses ctrace anyway.
        with contextlib.suppress(Exception):
            self.cov.set_option("run:core", "ctrace")
        self.collected = 0
        self.outcomes: dict[str, str] = {}
        self._progress = open(  # noqa: SIM115 - kept open for the whole session
            os.path.join(out, f"progress-{self.pid}"), "a", encoding="utf-8"
        )

    def start(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.cov.start()

    def switch(self, context: str) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.cov.switch_context(context)

    def note(self, line: str) -> None:
        self._progress.write(line + "\n")
        self._progress.flush()

    def node_id(self, nodeid: str) -> str:
        """pytest's ``nodeid`` with its path made relative to the project root."""
        if self.offset == ".":
            return nodeid
        path, sep, rest = nodeid.partition("::")
        path = posixpath.normpath(f"{self.offset}/{path}")
        return f"{path}{sep}{rest}"

    def finish(self, exitstatus: int) -> None:
        error = ""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.cov.stop()
                self.cov.save()
        except Exception as exc:  # reported to impact-ls, which keeps the old data
            error = f"coverage could not save its data: {exc}"
        summary = {
            "collected": self.collected,
            "exitstatus": int(exitstatus),
            "outcomes": self.outcomes,
            "python": sys.version.split()[0],
            "error": error,
        }
        path = os.path.join(self.out, f"summary-{self.pid}.json")
        with open(path + ".tmp", "w", encoding="utf-8") as handle:
            json.dump(summary, handle)
        os.replace(path + ".tmp", path)
        self._progress.close()


_recorder: _Recorder | None = None


def _watch_parent() -> None:
    parent = os.getppid()
    while True:
        time.sleep(_WATCH_S)
        if os.getppid() != parent:
            os._exit(_ORPHANED)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Start measuring (once per process; xdist workers start their own)."""
    global _recorder  # noqa: PLW0603 - pytest hooks share state only through the module
    out = os.environ.get(ENV_OUT)
    if not out or _recorder is not None:
        return
    root = os.environ.get(ENV_ROOT) or str(config.invocation_params.dir)
    omit = [p for p in os.environ.get(ENV_OMIT, "").split(os.pathsep) if p]
    _recorder = _Recorder(out, root, omit, rootdir=str(config.rootpath))
    threading.Thread(target=_watch_parent, name="impact-ls-record-watch", daemon=True).start()
    _recorder.start()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Say how many tests will run, for the progress bar and the completeness count."""
    if _recorder is not None:
        _recorder.collected = len(session.items)
        _recorder.note(f"collected {len(session.items)}")


def _in_context(item: pytest.Item) -> Generator[None, Any, None]:
    if _recorder is not None:
        _recorder.switch(_recorder.node_id(item.nodeid))
    yield


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, Any, None]:
    """Fixtures set up for ``item`` count as executed by it."""
    yield from _in_context(item)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, None]:
    """The test body."""
    yield from _in_context(item)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, Any, None]:
    """Finalizers run for ``item``; afterwards the context is empty until the next test."""
    yield from _in_context(item)
    if _recorder is not None:
        _recorder.switch("")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Keep each test's worst outcome over its phases."""
    if _recorder is None:
        return
    test = _recorder.outcomes
    node = _recorder.node_id(report.nodeid)
    if report.failed:
        test[node] = "failed"
    elif report.skipped and test.get(node) != "failed":
        test[node] = "skipped"
    else:
        test.setdefault(node, "passed")


def pytest_runtest_logfinish(nodeid: str) -> None:
    """One finished test, for the progress bar."""
    if _recorder is not None:
        _recorder.note("done")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop measuring, save the data, then write the summary that says the run finished."""
    if _recorder is not None:
        _recorder.finish(exitstatus)
