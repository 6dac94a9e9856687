"""``impact-ls mcp`` over stdio, driven by the official SDK's client as an agent would use it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult

from tests.agent.conftest import SIGNATURE, mcp_client

pytestmark = pytest.mark.slow

TOOLS = {"blast_radius", "affected_tests", "callers", "explain"}


def _payload(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    # The text block carries the same JSON, in the same order, for clients without structure.
    text = result.content[0].text  # type: ignore[union-attr]
    assert json.loads(text) == result.structured_content
    return result.structured_content


def _error(result: CallToolResult) -> str:
    assert result.is_error
    return result.content[0].text  # type: ignore[union-attr,no-any-return]


async def test_tools_are_listed_with_input_and_output_schemas() -> None:
    async with mcp_client() as client:
        listed = (await client.list_tools()).tools
    assert {tool.name for tool in listed} == TOOLS
    for tool in listed:
        assert tool.description
        assert tool.input_schema["required"][0] == "root"
        assert tool.output_schema is not None
        # audit first: what was checked comes before the result and the instruction
        assert list(tool.output_schema["properties"]) == ["audit", "result", "next"]


async def test_blast_radius_puts_the_audit_first_and_facts_apart_from_selections(
    edited_shop: Path,
) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async with mcp_client() as client:
        schema = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        result = await client.call_tool(
            "blast_radius", {"root": str(edited_shop)}, progress_callback=on_progress
        )
    payload = _payload(result)
    jsonschema.validate(payload, schema["blast_radius"])
    assert list(payload) == ["audit", "result", "next"]
    assert "binding" in payload["audit"]["verified"] or "bound" in payload["audit"]["verified"]
    assert "Ranked, not proved" in payload["audit"]["heuristic"]
    facts, selections = payload["result"]["facts"], payload["result"]["selections"]
    [change] = facts["changes"]
    assert (change["before_sig"], change["after_sig"]) == SIGNATURE
    must = facts["must_inspect"]
    assert [s["location"] for s in must] == [
        "shop/cart.py:19",
        "shop/invoice.py:8",
        "tests/test_pricing.py:5",
        "tests/test_pricing.py:9",
    ]  # production sites before sites in tests
    assert [s["test"] for s in must] == [False, False, True, True]
    assert must[0]["breaks"] == [
        {"kind": "missing-argument", "detail": "missing required argument 'currency'"}
    ]
    assert {s["resolution"] for s in must} == {"resolved"}
    assert [s["entity"] for s in selections["may_impact"]] == ["tests.test_cart.test_cart_total"]
    selected = {t["test"] for t in selections["tests"]}
    assert "tests/test_pricing.py::test_price_adds_tax" in selected
    # it imports the module but runs nothing the edit changed
    assert "tests/test_pricing.py::test_discount" not in selected
    assert payload["result"]["truncated"] is False
    assert payload["next"]["action"] == "edit"
    assert payload["next"]["request"] == {
        "tool": "explain",
        "arguments": {"root": str(edited_shop.resolve()), "site": "shop/cart.py:19"},
    }
    # The first call indexes the project and says so.
    assert progress and progress[-1][0] == progress[-1][1]
    assert any(message and message.startswith("indexing") for _, _, message in progress)


async def test_blast_radius_cuts_lists_to_the_limit_and_counts_what_it_left_out(
    edited_shop: Path,
) -> None:
    async with mcp_client() as client:
        payload = _payload(
            await client.call_tool(
                "blast_radius", {"root": str(edited_shop), "limit": 1, "include_dag": True}
            )
        )
    result = payload["result"]
    assert len(result["facts"]["must_inspect"]) == 1
    assert result["counts"]["must_inspect"] == 4
    assert result["omitted"]["must_inspect"] == 3
    assert result["truncated"] is True
    assert payload["audit"]["truncated"] is True
    assert payload["next"]["action"] == "inspect"
    assert payload["next"]["request"]["arguments"]["limit"] == 4
    edges = result["dag"]["edges"]
    assert edges and set(edges[0]) == {"from", "to", "cause"}


async def test_unsaved_text_in_files_is_analyzed_and_then_forgotten(shop: Path) -> None:
    pricing = (shop / "shop" / "pricing.py").read_text(encoding="utf-8")
    unsaved = {"shop/pricing.py": pricing.replace(*SIGNATURE)}
    async with mcp_client() as client:
        with_buffer = _payload(
            await client.call_tool("blast_radius", {"root": str(shop), "files": unsaved})
        )
        clean = _payload(await client.call_tool("blast_radius", {"root": str(shop)}))
    assert with_buffer["result"]["counts"]["must_inspect"] == 4
    assert clean["result"]["facts"]["changes"] == []
    assert clean["next"] == {
        "action": "none",
        "reason": "no Python change against HEAD",
        "request": None,
    }
    assert (shop / "shop" / "pricing.py").read_text(encoding="utf-8") == pricing  # never written


async def test_affected_tests_give_node_ids_with_confidence_and_reason(edited_shop: Path) -> None:
    async with mcp_client() as client:
        every = _payload(await client.call_tool("affected_tests", {"root": str(edited_shop)}))
        strict = _payload(
            await client.call_tool("affected_tests", {"root": str(edited_shop), "min_conf": 0.9})
        )
    tests = {t["test"]: t for t in every["result"]["tests"]}
    assert set(tests) == {
        "tests/test_cart.py::test_cart_total",
        "tests/test_pricing.py::test_price_adds_tax",
        "tests/test_pricing.py::test_price_planted_failure",
    }  # not test_discount: it imports the module but runs nothing the edit changed
    assert tests["tests/test_pricing.py::test_price_adds_tax"]["conf"] == 1.0
    assert tests["tests/test_pricing.py::test_price_adds_tax"]["location"] == (
        "tests/test_pricing.py:4"
    )
    assert all(t["reason"] and t["changed_file"] == "shop/pricing.py" for t in tests.values())
    assert every["next"]["action"] == "run-tests"
    # each calls the changed function: as confident as a test can be
    assert {t["test"] for t in strict["result"]["tests"]} == set(tests)
    assert strict["result"]["min_conf"] == 0.9


async def test_callers_by_symbol_by_line_and_ambiguous_names(shop: Path) -> None:
    async with mcp_client() as client:
        by_symbol = _payload(
            await client.call_tool("callers", {"root": str(shop), "symbol": "shop.pricing.price"})
        )
        by_line = _payload(
            await client.call_tool(
                "callers", {"root": str(shop), "file": "shop/pricing.py", "line": 4}
            )
        )
        suffix = _payload(
            await client.call_tool("callers", {"root": str(shop), "symbol": "Cart.total"})
        )
        unknown = _payload(
            await client.call_tool("callers", {"root": str(shop), "symbol": "nowhere"})
        )
    result = by_symbol["result"]
    assert result["target"]["id"] == "shop.pricing.price"
    assert result["target"]["doc"] == "The gross price of ``amount`` at tax ``rate``."
    assert [(s["caller"], s["location"], s["resolution"]) for s in result["resolved"]] == [
        ("shop.cart.Cart.total", "shop/cart.py:19", "resolved"),
        ("shop.invoice.line", "shop/invoice.py:8", "resolved"),
        ("tests.test_pricing.test_price_adds_tax", "tests/test_pricing.py:5", "resolved"),
        ("tests.test_pricing.test_price_planted_failure", "tests/test_pricing.py:9", "resolved"),
    ]
    assert by_line["result"]["resolved"] == result["resolved"]
    assert suffix["result"]["target"]["id"] == "shop.cart.Cart.total"
    assert [s["caller"] for s in suffix["result"]["resolved"]] == [
        "tests.test_cart.test_cart_total"
    ]
    assert unknown["result"]["target"] is None
    assert unknown["next"]["action"] == "outside"


async def test_callers_of_a_name_defined_twice_returns_candidates(shop: Path) -> None:
    (shop / "shop" / "receipt.py").write_text(
        "def line(text):\n    return text\n", encoding="utf-8"
    )
    async with mcp_client() as client:
        payload = _payload(await client.call_tool("callers", {"root": str(shop), "symbol": "line"}))
    result = payload["result"]
    assert result["target"] is None
    assert [c["id"] for c in result["candidates"]] == ["shop.invoice.line", "shop.receipt.line"]
    assert payload["next"]["action"] == "clarify"
    assert payload["next"]["request"]["arguments"]["symbol"] == "shop.invoice.line"


async def test_explain_gives_the_cause_chain_from_the_edit_to_the_site(edited_shop: Path) -> None:
    async with mcp_client() as client:
        far = _payload(
            await client.call_tool(
                "explain", {"root": str(edited_shop), "site": "tests/test_cart.py:8"}
            )
        )
        elsewhere = _payload(
            await client.call_tool("explain", {"root": str(edited_shop), "site": "shop/cart.py:10"})
        )
    [chain] = far["result"]["chains"]
    assert chain["change"]["entity"] == "shop.pricing.price"
    assert [(s["distance"], s["entity"], s["location"]) for s in chain["steps"]] == [
        (1, "shop.cart.Cart.total", "shop/cart.py:19"),
        (2, "tests.test_cart.test_cart_total", "tests/test_cart.py:8"),
    ]
    assert chain["trace"] == [
        "shop.pricing.price -[CalledBy at shop/cart.py:19]-> shop.cart.Cart.total",
        "shop.cart.Cart.total -[CalledBy at tests/test_cart.py:8]-> "
        "tests.test_cart.test_cart_total",
    ]
    assert far["result"]["bucket"] == "may_impact"
    assert elsewhere["result"]["found"] is False
    assert elsewhere["result"]["candidates"][0]["location"] == "shop/cart.py:19"
    assert elsewhere["next"]["request"]["arguments"]["site"] == "shop/cart.py:19"


async def test_bad_input_is_a_tool_error_and_the_server_keeps_serving(
    edited_shop: Path, tmp_path: Path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "mod.py").write_text("def f():\n    pass\n", encoding="utf-8")
    async with mcp_client() as client:
        missing = _error(await client.call_tool("blast_radius", {"root": str(tmp_path / "nope")}))
        revision = _error(
            await client.call_tool(
                "blast_radius", {"root": str(edited_shop), "base": "no-such-rev"}
            )
        )
        not_git = _error(await client.call_tool("affected_tests", {"root": str(plain)}))
        site = _error(
            await client.call_tool("explain", {"root": str(edited_shop), "site": "cart.py"})
        )
        outside = _error(
            await client.call_tool(
                "blast_radius", {"root": str(edited_shop), "files": {"/etc/x.py": "x = 1\n"}}
            )
        )
        neither = _error(await client.call_tool("callers", {"root": str(edited_shop)}))
        still = _payload(await client.call_tool("blast_radius", {"root": str(edited_shop)}))
    assert "does not exist" in missing
    assert "'no-such-rev' names no commit" in revision
    assert "not inside a git repository" in not_git
    assert "expected 'file:line'" in site
    assert "lies outside the root" in outside
    assert "pass symbol, or file and line" in neither
    assert still["result"]["counts"]["must_inspect"] == 4
    # a plain folder still answers the graph-only question
    async with mcp_client() as client:
        graph_only = _payload(
            await client.call_tool("callers", {"root": str(plain), "symbol": "f"})
        )
    assert graph_only["result"]["target"]["id"] == "mod.f"


def test_mcp_subcommand_is_listed_in_help() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "impact_ls", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "mcp" in out


def _readme_configs() -> list[dict[str, Any]]:
    """The JSON client configurations of the README's MCP section."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## For coding agents (MCP)", 1)[1].split("\n## ", 1)[0]
    blocks = section.split("```json\n")[1:]
    return [json.loads(block.split("```", 1)[0]) for block in blocks]


async def test_the_readme_configurations_start_a_server_with_the_four_tools() -> None:
    configs = _readme_configs()
    assert len(configs) == 3  # Claude Code, Cursor, VS Code
    bin_dir = Path(sys.executable).parent
    for config in configs:
        [server] = (config.get("mcpServers") or config["servers"]).values()
        assert server.get("type", "stdio") == "stdio"
        command = bin_dir / server["command"]  # the README's command, from this venv
        params = StdioServerParameters(command=str(command), args=server["args"])
        async with Client(params, read_timeout_seconds=60) as client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
