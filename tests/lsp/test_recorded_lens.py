"""The editor's "Run N affected tests" lens selects from recorded coverage as the CLI does."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from impact_ls.config import Settings
from impact_ls.history.plant import plant_history
from impact_ls.record.run import RecordRequest, record_suite

from .lsp_helpers import Doc, command, lenses, serve, until_async

RECORD_SHOP = Path(__file__).resolve().parents[2] / "fixtures" / "record_shop"
RUN_TESTS = "impact.runAffectedTests"


@pytest.fixture
def recorded_shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = plant_history(RECORD_SHOP, tmp_path / "shop")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = record_suite(RecordRequest(root=root, python=sys.executable), Settings())
    assert result.stored, result.message
    return root


@pytest.mark.slow
async def test_the_run_tests_lens_offers_the_test_that_ran_the_edited_plugin(
    recorded_shop: Path,
) -> None:
    async with serve(recorded_shop) as client:
        doubler = Doc(client, recorded_shop / "shop/doubler.py")
        doubler.replace("value * 2", "value * 3")

        async def run_lens() -> tuple[str, list[object]] | None:
            for lens in await lenses(client, doubler):
                if lens.command and lens.command.command == RUN_TESTS:
                    return lens.command.title, list(lens.command.arguments or [])
            return None

        # No static path leads from shop.doubler to a test: only the record finds it.
        await until_async(
            run_lens,
            (
                "Run 1 affected test",
                [{"uri": doubler.uri, "tests": ["tests/test_plugins.py::test_double"]}],
            ),
            what="the run-tests lens",
        )
        report = await command(client, "impact.showBlastRadius", doubler.uri)
        assert [(t["test"], t["evidence"]) for t in report["tests"]] == [
            ("tests/test_plugins.py::test_double", "recorded")
        ]
