"""MCP test fixtures: planted copies of ``fixtures/lsp_shop`` and the SDK client over stdio."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from impact_ls.history.plant import plant_history

SHOP = Path(__file__).resolve().parents[2] / "fixtures" / "lsp_shop"
SIGNATURE = ("def price(amount, rate):", "def price(amount, rate, currency):")


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """The lsp_shop fixture as a git repository with its planted history (a clean tree)."""
    return plant_history(SHOP, tmp_path / "shop")


@pytest.fixture
def edited_shop(shop: Path) -> Path:
    """The shop with ``price`` gaining a required parameter in the working tree."""
    pricing = shop / "shop" / "pricing.py"
    pricing.write_text(pricing.read_text(encoding="utf-8").replace(*SIGNATURE), encoding="utf-8")
    return shop


@contextlib.asynccontextmanager
async def mcp_client() -> AsyncIterator[Client]:
    """``impact-ls mcp`` in a subprocess, driven by the SDK's own client over stdio."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "impact_ls", "mcp"],
        env={"PYTHONDONTWRITEBYTECODE": "1", "PATH": os.environ.get("PATH", "")},
    )
    async with Client(params, read_timeout_seconds=60) as client:
        yield client
