"""A real headless Neovim, configured with the README's snippet, lists call and type hierarchy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.test_neovim import REPO, _nvim

DRIVER = Path(__file__).with_name("drive_hierarchy.lua")

pytestmark = [pytest.mark.nvim, pytest.mark.slow]


def test_neovim_lists_call_and_type_hierarchy_in_the_quickfix(tmp_path: Path) -> None:
    nvim = _nvim()
    root = Path(shutil.copytree(REPO / "fixtures" / "hierarchy_shapes", tmp_path / "shapes"))
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
            str(REPO / "docs" / "neovim.lua"),
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
    # vim.lsp.buf.incoming_calls() on `def total_area`: one quickfix entry per call, at the call
    assert [(i["file"], i["lnum"], i["col"], i["text"]) for i in result["incoming"]] == [
        ("shapes/report.py", 14, 12, "report")
    ]
    # outgoing_calls() on `def report`: constructor calls show the class once per call
    assert sorted((i["text"], i["lnum"], i["col"]) for i in result["outgoing"]) == [
        ("Rectangle", 13, 37),
        ("Square", 13, 15),
        ("Square", 13, 26),
        ("total_area", 14, 12),
    ]
    # typehierarchy() on `class Rectangle(Polygon)`: Neovim shows "name detail"
    assert [(i["file"], i["lnum"], i["text"]) for i in result["subtypes"]] == [
        ("shapes/square.py", 17, "Square shapes.square.Square")
    ]
    assert [(i["file"], i["lnum"], i["text"]) for i in result["supertypes"]] == [
        ("shapes/base.py", 16, "Polygon shapes.base.Polygon")
    ]
