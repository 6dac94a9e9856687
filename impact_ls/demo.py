"""``impact-ls demo``: a newcomer's first minute, on a bundled project with planted git history.

Copies ``demo_project/`` into a temporary git repository (history from its ``history.toml``),
adds a required ``mfa_code`` parameter to ``LoginService.login`` and prints the blast radius —
the broken calls, the override, the tests to re-run and the file that history says changes along.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from impact_ls.engine import Engine
from impact_ls.history.plant import plant_history
from impact_ls.report.json_report import report_to_json
from impact_ls.report.text import render_text

DEMO_SOURCE = Path(__file__).parent / "demo_project"
EDITED_FILE = "acme/auth.py"
BEFORE = '    def login(self, user, password):\n        """Return a session token'
AFTER = '    def login(self, user, password, mfa_code):\n        """Return a session token'


def make_demo_project(dest: Path) -> Path:
    """Plant the demo project with its history in ``dest`` and make the signature edit."""
    root = plant_history(DEMO_SOURCE, dest)
    path = root / EDITED_FILE
    text = path.read_text(encoding="utf-8")
    if BEFORE not in text:
        raise RuntimeError(f"demo project changed: {EDITED_FILE} lacks the line to edit")
    path.write_text(text.replace(BEFORE, AFTER, 1), encoding="utf-8")
    return root


def run_demo(*, keep: bool, output_format: str, color: bool) -> int:
    """Run the demo and print its report; returns the exit status.

    The project lives in a temporary folder that is deleted when the demo ends, unless ``keep``;
    the page says which, so a printed path is never one that is already gone.
    """
    workdir = Path(tempfile.mkdtemp(prefix="impact-ls-demo-"))
    try:
        root = make_demo_project(workdir / "acme-shop")
        engine = Engine.open(root)
        report = engine.analyze_worktree(base="HEAD")
        if output_format == "json":
            if keep:
                sys.stderr.write(f"impact-ls: the demo project is kept in {root}\n")
            sys.stdout.write(report_to_json(report))
            return 0
        where = (
            f"kept in {root}"
            if keep
            else "in a temporary folder deleted when the demo ends (--keep keeps it)"
        )
        sys.stdout.write(
            f"impact-ls demo: a small project with git history, {where}.\n"
            f"The edit: {EDITED_FILE}, LoginService.login gains a required parameter:\n"
            "    - def login(self, user, password):\n"
            "    + def login(self, user, password, mfa_code):\n\n"
        )
        sys.stdout.write(render_text(report, color=color))
        if keep:
            sys.stdout.write(
                f"\nThe project is kept in {root}. Try:\n"
                f"    cd {root}\n"
                "    impact-ls analyze              # this page again\n"
                "    impact-ls tests                # the affected tests, one per line\n"
                "    git diff                       # the edit\n"
            )
        return 0
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
