"""Why a selection is empty: one line for ``impact-ls tests`` (stderr) and ``impact-ls test``.

``pytest $(impact-ls tests)`` with nothing printed runs the *whole* suite, so an empty selection
must never be silent. ``why_nothing_selected`` names the first reason that holds, in this order:
no Python file changed; pytest collects no test in the project; every change stays inside its
function (classify's escape gate: renamed locals, docstrings); every selected test is below the
confidence floor asked for; else the changes reach no collected test.
"""

from __future__ import annotations

from impact_ls.model import ChangeType, Report


def why_nothing_selected(report: Report, *, base: str, collected: int, min_conf: float) -> str:
    """The reason no test is selected (``collected``: how many tests pytest collects)."""
    changes = report.changes
    if not changes:
        return f"no Python file changed against {base}, so no test is affected"
    if collected == 0:
        return (
            "pytest collects no test in this project (see testpaths and python_files in its "
            "pytest configuration), so there is nothing to select"
        )
    contained = [c for c in changes if c.change_type is ChangeType.METHOD_BODY and not c.escapes]
    if len(contained) == len(changes):
        return (
            f"{_count(len(changes), 'change')} {_verb(len(changes), 'stays', 'stay')} inside "
            f"{_verb(len(changes), 'its function', 'their functions')} (only locals, comments "
            "or docstrings changed), so no test can observe them"
        )
    weaker = {h.test for h in (report.selection or report.tests)}
    if weaker:
        return (
            f"{_count(len(weaker), 'selected test')} {_verb(len(weaker), 'has', 'have')} a "
            f"confidence below {min_conf:g} (lower --min-conf to run them)"
        )
    files = sorted({c.file for c in changes})
    shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    return (
        f"{_count(len(changes), 'change')} in {shown} {_verb(len(changes), 'reaches', 'reach')} "
        "no test pytest collects (none calls it, imports it at collection or was recorded "
        "running it)"
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _verb(n: int, one: str, many: str) -> str:
    return one if n == 1 else many
