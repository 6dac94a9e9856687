"""``impact.renderBlastRadius``: the page the VS Code "Show as graph" webview shows."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from .lsp_helpers import Doc, command, diagnostics, serve, until


async def test_the_page_of_an_open_document_is_the_report_it_shows(shop: Path) -> None:
    async with serve(shop) as client:
        caps = client.init_result.capabilities  # type: ignore[attr-defined]
        assert "impact.renderBlastRadius" in caps.execute_command_provider.commands
        pricing = Doc(client, shop / "shop/pricing.py")
        pricing.replace("def price(amount, rate):", "def price(amount, rate, currency):")
        await until(lambda: diagnostics(client, shop / "shop/invoice.py"), what="warnings")
        page = await command(client, "impact.renderBlastRadius", pricing.uri)
        report = await command(client, "impact.showBlastRadius", pricing.uri)
        with pytest.raises(JsonRpcInvalidParams, match="outside the workspace"):
            await command(client, "impact.renderBlastRadius", "file:///elsewhere/x.py")
    assert page["root"] == str(shop.resolve())
    html = page["html"]
    assert html.startswith("<!DOCTYPE html>")
    assert html.count('class="node must_inspect"') == len(report["triage"]["must_inspect"]) == 4
    assert f'href="{(shop.resolve() / "shop/cart.py").as_uri()}"' in html
    assert 'data-file="shop/cart.py" data-line="19"' in html
