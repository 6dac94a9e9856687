"""Configuration: initializationOptions, didChangeConfiguration, pyproject, baselines, watchers."""

from __future__ import annotations

import subprocess
from pathlib import Path

from lsprotocol import types

from .lsp_helpers import Doc, capabilities, diagnostics, indexed, serve, until

SIG_OLD = "def price(amount, rate):"
SIG_NEW = "def price(amount, rate, currency):"


def _may(client, shop: Path) -> list[types.Diagnostic]:  # type: ignore[no-untyped-def]
    return diagnostics(client, shop / "tests/test_cart.py", code="may-impact")


async def test_did_change_configuration_turns_may_impact_off_and_to_hint(shop: Path) -> None:
    async with serve(shop) as client:
        pricing = Doc(client, shop / "shop/pricing.py")
        pricing.replace(SIG_OLD, SIG_NEW)
        [may] = await until(lambda: _may(client, shop), what="may-impact")
        assert may.severity == types.DiagnosticSeverity.Information
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"impactLs": {"maySeverity": "off"}})
        )
        await until(lambda: not _may(client, shop), what="may-impact to go")
        assert len(diagnostics(client, shop / "shop/cart.py", code="must-inspect")) == 1
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"impactLs": {"maySeverity": "hint"}})
        )
        [hint] = await until(lambda: _may(client, shop), what="may-impact as a hint")
        assert hint.severity == types.DiagnosticSeverity.Hint
        assert client.messages == []


async def test_pulled_configuration_when_the_notification_carries_none(shop: Path) -> None:
    async with serve(shop) as client:
        pricing = Doc(client, shop / "shop/pricing.py")
        pricing.replace(SIG_OLD, SIG_NEW)
        await until(lambda: _may(client, shop), what="may-impact")
        client.set_configuration({"maySeverity": "off"}, section="impactLs")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        await until(lambda: not _may(client, shop), what="may-impact to go")


async def test_initialization_options_apply_and_bad_keys_give_one_warning(shop: Path) -> None:
    options = {"impactLs": {"maySeverity": "hint", "bogusKey": 1, "debounceMs": "soon"}}
    async with serve(shop, options=options) as client:
        [message] = await until(lambda: client.messages, what="the settings warning")
        assert message.type == types.MessageType.Warning
        assert "unknown setting 'bogusKey' ignored" in message.message
        assert "setting 'debounceMs'='soon': expected a non-negative integer" in message.message
        assert message.message.endswith("(defaults kept)")
        pricing = Doc(client, shop / "shop/pricing.py")
        pricing.replace(SIG_OLD, SIG_NEW)
        [hint] = await until(lambda: _may(client, shop), what="may-impact")
        assert hint.severity == types.DiagnosticSeverity.Hint


async def test_pyproject_settings_apply_and_client_settings_win(shop: Path) -> None:
    pyproject = shop / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8") + '\n[tool.impact-ls]\nmay-severity = "off"\n',
        encoding="utf-8",
    )
    async with serve(shop) as client:
        pricing = Doc(client, shop / "shop/pricing.py")
        pricing.replace(SIG_OLD, SIG_NEW)
        await until(lambda: diagnostics(client, shop / "shop/cart.py"), what="warnings")
        assert _may(client, shop) == []
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"maySeverity": "information"})
        )
        await until(lambda: _may(client, shop), what="the client setting to win")


async def test_baseline_head_flags_an_uncommitted_saved_edit_and_saved_does_not(shop: Path) -> None:
    pricing_path = shop / "shop/pricing.py"
    pricing_path.write_text(
        pricing_path.read_text(encoding="utf-8").replace(SIG_OLD, SIG_NEW), encoding="utf-8"
    )
    invoice = shop / "shop/invoice.py"
    async with serve(shop) as client:
        await until(lambda: indexed(client), what="indexing")
        Doc(client, pricing_path)  # the edit is saved on disk but not committed
        [warning] = await until(lambda: diagnostics(client, invoice), what="warnings vs HEAD")
        assert "(added param currency)" in warning.message
    async with serve(shop, options={"baseline": "saved"}) as client:
        await until(lambda: indexed(client), what="indexing")
        pricing = Doc(client, pricing_path)
        pricing.replace(SIG_NEW, "def price(amount, rate, currency, unit):")
        [warning] = await until(
            lambda: diagnostics(client, invoice), what="warnings vs the saved text"
        )
        assert "(added param unit)" in warning.message


async def test_watched_files_are_registered_and_a_moved_head_refreshes_baselines(
    shop: Path,
) -> None:
    async with serve(shop, caps=capabilities(watch=True)) as client:
        [registration] = await until(lambda: client.registrations, what="registration")  # type: ignore[attr-defined]
        [reg] = registration.registrations
        assert reg.method == "workspace/didChangeWatchedFiles"
        assert [w["globPattern"] for w in reg.register_options["watchers"]] == [  # type: ignore[index]
            "**/*.py",
            "**/.git/HEAD",
            "**/.git/refs/heads/**",
            "**/pyproject.toml",
        ]
        pricing = Doc(client, shop / "shop/pricing.py")
        pricing.replace(SIG_OLD, SIG_NEW)
        await until(lambda: diagnostics(client, shop / "shop/invoice.py"), what="warnings")
        # the edit is saved and committed: HEAD moves and the buffer equals the new baseline
        pricing.save()
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "currency"],
            cwd=shop,
            check=True,
        )
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[
                    types.FileEvent(
                        uri=(shop / ".git/refs/heads/main").as_uri(),
                        type=types.FileChangeType.Changed,
                    ),
                ]
            )
        )
        await until(
            lambda: not diagnostics(client, shop / "shop/invoice.py"), what="warnings to go"
        )


async def test_a_file_changed_on_disk_patches_the_graph(shop: Path) -> None:
    async with serve(shop, caps=capabilities(watch=True)) as client:
        pricing = Doc(client, shop / "shop/pricing.py")
        pricing.replace(SIG_OLD, SIG_NEW)
        invoice = shop / "shop/invoice.py"
        await until(lambda: diagnostics(client, invoice, code="must-inspect"), what="warnings")
        # another tool fixes the call on disk; the editor only reports the file change
        invoice.write_text(
            invoice.read_text(encoding="utf-8").replace(
                "price(amount, 0.2)", 'price(amount, 0.2, "EUR")'
            ),
            encoding="utf-8",
        )
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=invoice.as_uri(), type=types.FileChangeType.Changed)]
            )
        )
        await until(
            lambda: not diagnostics(client, invoice, code="must-inspect"), what="the fix to count"
        )
        assert len(diagnostics(client, shop / "shop/cart.py", code="must-inspect")) == 1


async def test_without_a_file_watcher_opening_a_document_notices_a_moved_head(shop: Path) -> None:
    async with serve(shop) as client:  # Neovim's capabilities: no dynamic file watching
        assert client.registrations == []  # type: ignore[attr-defined]
        pricing = Doc(client, shop / "shop/pricing.py")
        pricing.replace(SIG_OLD, SIG_NEW)
        invoice = shop / "shop/invoice.py"
        await until(lambda: diagnostics(client, invoice), what="warnings")
        pricing.save()
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "currency"],
            cwd=shop,
            check=True,
        )
        Doc(client, shop / "shop/cart.py")
        await until(lambda: not diagnostics(client, invoice), what="warnings to go")
