"""A pytest plugin (``-p rts_recorder``) that writes what a run collected and what failed.

The child pytest of every benchmark run loads it from ``PYTHONPATH``; it writes JSON to the
path in ``RTS_RECORD_FILE``: the node ids left after selection (``collected``: what the run
would execute, after testmon's or pytest-impacted's deselection), the ids that failed in setup,
call or teardown (``failed``, xfail-strict passes included), and the collectors that failed
(``collect_errors``: a module that does not import, a broken conftest).
"""

from __future__ import annotations

import json
import os
from typing import Any

_state: dict[str, Any] = {"collected": [], "failed": set(), "collect_errors": set()}


def pytest_collectreport(report: Any) -> None:
    """Remember collectors that failed (import errors of test modules or conftests)."""
    if report.failed:
        _state["collect_errors"].add(report.nodeid)


def pytest_collection_finish(session: Any) -> None:
    """Remember the items left after every plugin's deselection."""
    _state["collected"] = [item.nodeid for item in session.items]


def pytest_runtest_logreport(report: Any) -> None:
    """Remember tests that failed in any phase."""
    if report.failed:
        _state["failed"].add(report.nodeid)


def pytest_unconfigure(config: Any) -> None:
    """Write the record once the session is over."""
    path = os.environ.get("RTS_RECORD_FILE")
    if not path:
        return
    with open(path, "w", encoding="utf-8") as out:
        json.dump(
            {
                "collected": _state["collected"],
                "failed": sorted(_state["failed"]),
                "collect_errors": sorted(_state["collect_errors"]),
            },
            out,
        )
