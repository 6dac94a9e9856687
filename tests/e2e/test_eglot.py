"""A real Emacs with eglot, configured by docs/eglot.el, attaches impact-ls and shows it.

Emacs has no code lenses in eglot: the diagnostics and the code actions are all a user gets, so
this checks both, and that each action does what its title says.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from impact_ls.history.plant import plant_history

REPO = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("drive_eglot.el")

pytestmark = [pytest.mark.slow]


def _emacs() -> str:
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.skip("Emacs is not installed (apt-get install emacs-nox elpa-eglot; CI does)")
    probe = subprocess.run(
        [emacs, "--batch", "--eval", "(progn (package-activate-all) (require 'eglot))"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip("eglot is not installed (apt-get install elpa-eglot; CI does)")
    return emacs


def test_eglot_shows_the_warnings_and_every_action_works(tmp_path: Path) -> None:
    emacs = _emacs()
    root = plant_history(REPO / "fixtures" / "lsp_shop", tmp_path / "shop")
    out = tmp_path / "result.json"
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        # docs/eglot.el starts "impact-ls serve" from PATH, as a user's shell would
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "IMPACT_REPO": str(REPO),
        "IMPACT_EMACS_ROOT": str(root),
        "IMPACT_EMACS_OUT": str(out),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    run = subprocess.run(
        [emacs, "--batch", "-l", str(DRIVER)],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.exists(), run.stderr[-3000:]
    result = json.loads(out.read_text(encoding="utf-8"))
    assert "error" not in result, (
        result.get("error"),
        result.get("log", "")[-1500:],
        run.stderr[-1500:],
    )
    assert result["server"] == "impact-ls"
    [[line, column, kind, message]] = result["cart"]
    assert (line, column) == (19, 19)
    assert kind == "eglot-warning"
    # eglot puts the source and code first; then the break leads, as in every editor
    assert message.startswith("impact [must-inspect]: missing required argument 'currency' — ")
    actions = ["Show blast radius", "Run 3 affected tests"]
    assert result["edit_actions"] == [
        "Next edit: Cart.total — missing required argument 'currency'",
        *actions,
    ]
    assert result["next_edit"] == ["shop/cart.py", 19, 19]
    assert result["site_actions"] == [
        "Next edit: line — missing required argument 'currency'",
        *actions,
    ]
    assert result["second_edit"] == ["shop/invoice.py", 8, 12]
    assert result["blast_radius_mode"] == "grep-mode"
    assert (
        "shop/cart.py:19:20: MUST-INSPECT shop.cart.Cart.total: missing required argument "
        "'currency'" in result["blast_radius"]
    )
    # the run does not block Emacs (eglot would give up on a request after 10 s) ...
    assert result["while_running"] == "impact-ls: running the affected tests…"
    # ... and the three tests ran on the saved files, where one is planted to fail
    assert result["messages"] == [
        "impact-ls: running the affected tests…",
        "[eglot] Server reports (type=2): impact-ls: 1 of 3 tests failed",
    ]
