"""The commands: blast radius, affected tests (real pytest), reindex, open/show locations."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from .lsp_helpers import Doc, command, diagnostics, indexed, lenses, serve, until, until_async

SIG_OLD = "def price(amount, rate):"
SIG_NEW = "def price(amount, rate, currency):"
AFFECTED = [
    "tests/test_cart.py::test_cart_total",
    "tests/test_pricing.py::test_price_adds_tax",
    "tests/test_pricing.py::test_price_planted_failure",
]


async def _edited(client, shop: Path) -> Doc:  # type: ignore[no-untyped-def]
    pricing = Doc(client, shop / "shop/pricing.py")
    pricing.replace(SIG_OLD, SIG_NEW)
    await until(lambda: diagnostics(client, shop / "shop/invoice.py"), what="warnings")
    return pricing


async def test_show_blast_radius_of_a_document_and_of_the_workspace(shop: Path) -> None:
    async with serve(shop) as client:
        pricing = await _edited(client, shop)
        report = await command(client, "impact.showBlastRadius", pricing.uri)
        assert report["version"] == 1
        assert [(c["change_type"], c["entity"]) for c in report["changes"]] == [
            ("method-signature", "shop.pricing.price")
        ]
        assert [(e["file"], e["line"]) for e in report["triage"]["must_inspect"]] == [
            ("shop/cart.py", 19),
            ("shop/invoice.py", 8),
            ("tests/test_pricing.py", 5),
            ("tests/test_pricing.py", 9),
        ]
        assert report["obligations"]["validate"] == AFFECTED
        # the whole workspace: the open buffer stands for its file; the disk is unchanged
        workspace = await command(client, "impact.showBlastRadius")
        assert workspace["changes"] == report["changes"]
        assert workspace["triage"]["must_inspect"] == report["triage"]["must_inspect"]
        # a file that is not open: its working-tree change on disk (none here)
        clean = await command(client, "impact.showBlastRadius", (shop / "shop/cart.py").as_uri())
        assert clean["changes"] == []


async def test_show_blast_radius_of_a_changed_file_that_is_not_open(shop: Path) -> None:
    path = shop / "shop/pricing.py"
    path.write_text(path.read_text(encoding="utf-8").replace(SIG_OLD, SIG_NEW), encoding="utf-8")
    async with serve(shop) as client:
        await until(lambda: indexed(client), what="indexing")
        report = await command(client, "impact.showBlastRadius", {"uri": path.as_uri()})
        assert [c["after_sig"] for c in report["changes"]] == [SIG_NEW]
        assert len(report["triage"]["must_inspect"]) == 4


async def test_run_affected_tests_runs_pytest_and_marks_the_planted_failure(shop: Path) -> None:
    async with serve(shop) as client:
        pricing = await _edited(client, shop)
        run_lens = next(
            lens
            for lens in await lenses(client, pricing)
            if lens.command and lens.command.command == "impact.runAffectedTests"
        )
        assert run_lens.command is not None
        result = await command(
            client, run_lens.command.command, *(run_lens.command.arguments or [])
        )
        # pytest runs the files on disk; the signature edit is only in the buffer
        assert result["outcome"] == "failed"
        assert (result["passed"], result["failed"], result["errors"]) == (2, 1, 0)
        assert result["selected"] == AFFECTED
        [failure] = result["failures"]
        assert failure["test"] == "tests/test_pricing.py::test_price_planted_failure"
        test_file = shop / "tests/test_pricing.py"
        [failed] = diagnostics(client, test_file, code="test-failed")
        assert failed.severity == types.DiagnosticSeverity.Error
        assert failed.range.start.line == 7
        assert "planted: the tax is 11, not 12" in failed.message
        # the MUST-INSPECT warnings of that file are still there beside it
        assert len(diagnostics(client, test_file, code="must-inspect")) == 2
        assert any(m.message == "impact-ls: 1 of 3 tests failed" for m in client.messages)
        begins = [
            r
            for values in client.progress_reports.values()
            for r in values
            if isinstance(r, types.WorkDoneProgressBegin)
        ]
        assert any(
            b.title == "impact-ls: running 3 affected tests" and b.cancellable for b in begins
        )
        # the default selection is the open documents' affected tests
        again = await command(client, "impact.runAffectedTests")
        assert again["selected"] == AFFECTED
        # a passing selection clears the failure diagnostic
        only = {"tests": ["tests/test_pricing.py::test_price_adds_tax"]}
        passing = await command(client, "impact.runAffectedTests", only)
        assert (passing["outcome"], passing["passed"]) == ("passed", 1)
        assert diagnostics(client, test_file, code="test-failed") == []


CHAIN = {
    # f1 <- f2 <- f3 <- f4 <- f5 <- test_deep: the walk stops at f4 (3 hops); the test search
    # goes on, unless its budget stops it first.
    "chain/__init__.py": "",
    "chain/calls.py": "def f1(a):\n    return a\n\n\n"
    + "".join(f"def f{i}(a):\n    return f{i - 1}(a)\n\n\n" for i in range(2, 6)),
    "tests/test_chain.py": "from chain.calls import f1, f5\n\n\n"
    "def test_direct():\n    assert f1(2) == 2\n\n\n"
    "def test_deep():\n    assert f5(3) == 3\n",
}


async def test_a_lens_whose_search_hit_the_editor_budget_runs_the_complete_selection(
    tmp_path: Path,
) -> None:
    root = tmp_path / "chain"
    for name, text in CHAIN.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    both = ["tests/test_chain.py::test_deep", "tests/test_chain.py::test_direct"]
    for options, title, arguments in [
        # the bounded search finds the direct test only, and says there may be more
        ({"maxTestNodesLive": 1}, "Run 1+ affected tests", {"complete": True}),
        # a budget that does not cut: the lens lists its tests
        (None, "Run 2 affected tests", {"tests": both}),
    ]:
        async with serve(root, options=options) as client:
            await until(lambda: indexed(client), what="indexing")
            calls = Doc(client, root / "chain/calls.py")
            calls.replace("def f1(a):", "def f1(a, b):")

            async def run_lens(doc: Doc = calls, client: Any = client) -> Any:
                for lens in await lenses(client, doc):
                    if lens.command and lens.command.command == "impact.runAffectedTests":
                        return lens.command.title, list(lens.command.arguments or [])
                return None

            expected = (title, [{"uri": calls.uri, **arguments}])
            await until_async(run_lens, expected, what="the run-tests lens")
            result = await command(client, "impact.runAffectedTests", expected[1][0])
            assert result["selected"] == both
            assert (result["outcome"], result["passed"]) == ("passed", 2)


async def test_a_missing_pytest_is_reported_not_crashed(shop: Path) -> None:
    options = {
        "impactLs": {"pytestCommand": [sys.executable, "-m", "pytest_is_not_installed_here"]}
    }
    async with serve(shop, options=options) as client:
        result = await command(client, "impact.runAffectedTests", {"tests": AFFECTED[:1]})
        assert result["outcome"] == "error"
        assert result["message"].startswith("pytest is not installed for ")
        assert any(
            m.type == types.MessageType.Warning and "pytest is not installed" in m.message
            for m in client.messages
        )
        assert await command(client, "impact.showBlastRadius") is not None  # still serving


async def test_a_hanging_test_is_stopped_at_the_configured_timeout(shop: Path) -> None:
    (shop / "tests/test_hang.py").write_text(
        "import time\n\n\ndef test_hang():\n    time.sleep(120)\n", encoding="utf-8"
    )
    async with serve(shop, options={"testTimeoutS": 1}) as client:
        result = await command(
            client, "impact.runAffectedTests", {"tests": ["tests/test_hang.py::test_hang"]}
        )
        assert result["outcome"] == "timeout"
        assert (
            result["message"]
            == "pytest timed out after 1 s (impactLs.testTimeoutS); it was stopped"
        )


async def test_cancelling_the_progress_stops_pytest(shop: Path) -> None:
    (shop / "tests/test_hang.py").write_text(
        "import time\n\n\ndef test_hang():\n    time.sleep(120)\n", encoding="utf-8"
    )
    async with serve(shop) as client:
        running = asyncio.ensure_future(
            command(client, "impact.runAffectedTests", {"tests": ["tests/test_hang.py::test_hang"]})
        )

        def test_token() -> object:
            return next(
                (
                    token
                    for token, values in client.progress_reports.items()
                    if values
                    and isinstance(values[0], types.WorkDoneProgressBegin)
                    and values[0].title.startswith("impact-ls: running")
                ),
                None,
            )

        token = await until(test_token, what="the test run's progress")
        client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
        result = await running
        assert result["outcome"] == "cancelled"
        assert result["message"] == "pytest was cancelled; it was stopped"


async def test_reindex_picks_up_new_files(shop: Path) -> None:
    async with serve(shop) as client:
        first = await command(client, "impact.reindex")
        assert first == {"reindexed": [shop.as_uri()], "files": 6}
        (shop / "shop/extra.py").write_text("def extra():\n    return 1\n", encoding="utf-8")
        second = await command(client, "impact.reindex", shop.as_uri())
        assert second["files"] == 7


async def test_open_and_show_locations_use_show_document(shop: Path) -> None:
    target = (shop / "shop/cart.py").as_uri()
    rng = {"start": {"line": 18, "character": 19}, "end": {"line": 18, "character": 43}}
    async with serve(shop) as client:
        assert await command(client, "impact.openLocation", {"uri": target, "range": rng}) == {
            "uri": target,
            "shown": True,
        }
        shown = await command(
            client,
            "impact.showLocations",
            target,
            {"line": 0, "character": 0},
            [{"uri": target, "range": rng}],
        )
        assert shown["shown"] is True
        assert [d.uri for d in client.shown_documents] == [target, target]


BAD_ARGUMENTS = [
    ("impact.showBlastRadius", [123], "expected a document URI string"),
    ("impact.showBlastRadius", ["file:///elsewhere/x.py"], "is outside the workspace folders"),
    ("impact.runAffectedTests", [{"tests": "tests/test_x.py"}], "'tests' must be a list"),
    ("impact.runAffectedTests", [{"tests": ["--collect-only"]}], "not pytest node ids"),
    ("impact.runAffectedTests", [42], "expected {'uri'"),
    ("impact.runAffectedTests", [{"complete": True}], "'complete' is true or false"),
    ("impact.runAffectedTests", [{"uri": "file:///x.py", "complete": 1}], "'complete' is true"),
    ("impact.openLocation", [], "expected a location argument"),
    ("impact.openLocation", [{"uri": "file:///x.py", "range": {"start": 1}}], "malformed range"),
    ("impact.showLocations", ["file:///x.py"], "expected [uri, position, locations]"),
]


async def test_malformed_command_arguments_are_invalid_params(shop: Path) -> None:
    async with serve(shop) as client:
        for name, args, message in BAD_ARGUMENTS:
            with pytest.raises(JsonRpcInvalidParams) as caught:
                await command(client, name, *args)
            assert message in str(caught.value), (name, args)
        # an object without a uri means "everything", as no argument does
        assert (await command(client, "impact.reindex", {"no": "uri"}))["reindexed"] == [
            shop.as_uri()
        ]
        # an unknown command is an error too, and the server is still there
        with pytest.raises(JsonRpcInvalidParams, match="is not defined"):
            await command(client, "impact.noSuchCommand")
        assert (await command(client, "impact.showBlastRadius"))["version"] == 1
