"""Lifecycle and live analysis: indexing progress, diagnostics that come and go, lenses, actions."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from .lsp_helpers import (
    Doc,
    actions,
    capabilities,
    diagnostics,
    indexed,
    lenses,
    lines_of,
    serve,
    until,
)

SIG_OLD = "def price(amount, rate):"
SIG_NEW = "def price(amount, rate, currency):"
CART_CALL = "price(amount, self.rate)"
INVOICE_CALL = "price(amount, 0.2)"


async def test_initialize_advertises_sync_lenses_actions_and_every_command(shop: Path) -> None:
    async with serve(shop) as client:
        caps = client.init_result.capabilities  # type: ignore[attr-defined]
        sync = caps.text_document_sync
        assert isinstance(sync, types.TextDocumentSyncOptions)
        assert sync.change == types.TextDocumentSyncKind.Incremental
        assert sync.open_close and sync.save
        assert caps.workspace is not None and caps.workspace.workspace_folders is not None
        assert caps.workspace.workspace_folders.change_notifications is True
        assert caps.code_lens_provider is not None
        assert caps.code_action_provider is not None
        assert caps.execute_command_provider is not None
        assert sorted(caps.execute_command_provider.commands) == [
            "impact.openLocation",
            "impact.reindex",
            "impact.renderBlastRadius",
            "impact.runAffectedTests",
            "impact.showBlastRadius",
            "impact.showLocations",
        ]


async def test_indexing_reports_begin_percentage_and_end(shop: Path) -> None:
    async with serve(shop) as client:
        await until(lambda: indexed(client), what="indexing to end")
        [reports] = [v for v in client.progress_reports.values() if v]
        assert isinstance(reports[0], types.WorkDoneProgressBegin)
        assert reports[0].title == "impact-ls: indexing shop"
        percentages = [r.percentage for r in reports if isinstance(r, types.WorkDoneProgressReport)]
        assert percentages and percentages[-1] == 100
        assert percentages == sorted(percentages)
        assert isinstance(reports[-1], types.WorkDoneProgressEnd)
        assert reports[-1].message == "indexed 6 files"


async def test_signature_edit_warns_in_other_files_until_fixed_or_undone(shop: Path) -> None:
    cart, invoice = shop / "shop/cart.py", shop / "shop/invoice.py"
    async with serve(shop) as client:
        pricing = Doc(client, shop / "shop/pricing.py")
        pricing.replace(SIG_OLD, SIG_NEW)
        await until(lambda: diagnostics(client, invoice), what="warnings in invoice.py")
        [at_cart] = diagnostics(client, cart)
        assert at_cart.severity == types.DiagnosticSeverity.Warning
        assert at_cart.code == "must-inspect"
        assert at_cart.source == "impact"
        assert at_cart.range == types.Range(
            start=types.Position(line=18, character=19), end=types.Position(line=18, character=43)
        )
        # what broke leads, so a Problems panel that cuts the line keeps it
        assert at_cart.message == (
            "missing required argument 'currency' — method-signature changed (added param "
            "currency) → shop.cart.Cart.total must re-bind via CalledBy"
        )
        [related] = at_cart.related_information or []
        assert related.location.uri == pricing.uri
        assert related.location.range.start.line == 3
        assert related.message == f"changed: {SIG_NEW}"
        [at_invoice] = diagnostics(client, invoice)
        assert at_invoice.range.start == types.Position(line=7, character=12)
        [summary] = diagnostics(client, pricing.path)
        assert summary.severity == types.DiagnosticSeverity.Hint
        assert summary.message.startswith(
            "Blast radius of price (method-signature): 4 must-inspect"
        )

        # fixing the call in cart.py removes its warning (the caller stays a MAY-IMPACT:
        # it still calls a changed signature); the invoice warning stays
        cart_doc = Doc(client, cart)
        cart_doc.replace(CART_CALL, 'price(amount, self.rate, "EUR")')
        await until(
            lambda: not diagnostics(client, cart, code="must-inspect"), what="cart.py warning to go"
        )
        [may] = diagnostics(client, cart, code="may-impact")
        assert (may.code, may.severity) == ("may-impact", types.DiagnosticSeverity.Information)
        assert len(diagnostics(client, invoice, code="must-inspect")) == 1

        # undoing the signature edit clears everything it caused
        pricing.replace(SIG_NEW, SIG_OLD)
        await until(lambda: not diagnostics(client, invoice), what="invoice.py to clear")
        await until(lambda: not diagnostics(client, pricing.path), what="the summary to clear")
        await until(
            lambda: not diagnostics(client, cart, code="may-impact"), what="cart.py to clear"
        )
        # what is left in cart.py is the summary of its own (still unsaved) edit
        [own] = diagnostics(client, cart)
        assert own.message.startswith("Blast radius of Cart.total (method-body)")


async def test_closing_the_edited_document_clears_its_diagnostics(shop: Path) -> None:
    async with serve(shop) as client:
        pricing = Doc(client, shop / "shop/pricing.py")
        pricing.replace(SIG_OLD, SIG_NEW)
        await until(lambda: diagnostics(client, shop / "shop/cart.py"), what="warnings")
        pricing.close()
        await until(
            lambda: not diagnostics(client, shop / "shop/cart.py"), what="warnings to clear"
        )
        assert not diagnostics(client, shop / "shop/invoice.py")


async def test_may_impact_is_information_by_default(shop: Path) -> None:
    async with serve(shop) as client:
        pricing = Doc(client, shop / "shop/pricing.py")
        pricing.replace(SIG_OLD, SIG_NEW)
        test_cart = shop / "tests/test_cart.py"
        [may] = await until(lambda: diagnostics(client, test_cart), what="may-impact")
        assert may.severity == types.DiagnosticSeverity.Information
        assert may.code == "may-impact"


async def test_a_region_that_does_not_parse_keeps_the_last_report_marked_stale(shop: Path) -> None:
    cart = shop / "shop/cart.py"
    async with serve(shop) as client:
        pricing = Doc(client, shop / "shop/pricing.py")
        pricing.replace(SIG_OLD, SIG_NEW)
        await until(lambda: diagnostics(client, cart), what="warnings")
        pricing.replace(SIG_NEW, "def price(amount, rate, currency")  # typing: no ")" yet
        stale = await until(
            lambda: [d for d in diagnostics(client, cart) if "stale" in d.message], what="stale"
        )
        assert stale[0].message.endswith("(stale: the edit does not parse yet)")
        assert stale[0].range.start.line == 18
        pricing.replace("def price(amount, rate, currency", SIG_NEW)
        await until(
            lambda: [d for d in diagnostics(client, cart) if "stale" not in d.message],
            what="fresh warnings",
        )


async def test_lenses_on_the_changed_definition(shop: Path) -> None:
    async with serve(shop) as client:
        pricing = Doc(client, shop / "shop/pricing.py")
        pricing.replace(SIG_OLD, SIG_NEW)
        await until(lambda: diagnostics(client, shop / "shop/invoice.py"), what="warnings")
        found = await lenses(client, pricing)
        assert [
            (lens.range.start.line, lens.command.title, lens.command.command)
            for lens in found
            if lens.command
        ] == [
            (3, "Blast radius: 4 must · 1 may · 1 batch", "impact.showBlastRadius"),
            (3, "Run 3 affected tests", "impact.runAffectedTests"),
            (3, "Batch 1 · 6 sites: Cart.total → line → …", "impact.showLocations"),
        ]
        batch = found[2].command
        assert batch is not None and batch.arguments is not None
        uri, position, locations = batch.arguments
        assert uri == pricing.uri
        assert position == {"line": 3, "character": 0}
        assert [loc["uri"].rsplit("/", 2)[-2:] for loc in locations] == [
            ["shop", "pricing.py"],
            ["shop", "cart.py"],
            ["shop", "invoice.py"],
            ["tests", "test_pricing.py"],
            ["tests", "test_pricing.py"],
            ["tests", "test_cart.py"],
        ]
        # a clean document has no lenses
        assert await lenses(client, Doc(client, shop / "shop/invoice.py")) == []


async def test_clients_that_support_it_are_asked_to_refresh_lenses(shop: Path) -> None:
    async with serve(shop, caps=capabilities(lens_refresh=True)) as client:
        pricing = Doc(client, shop / "shop/pricing.py")
        pricing.replace(SIG_OLD, SIG_NEW)
        await until(lambda: diagnostics(client, shop / "shop/invoice.py"), what="warnings")
        await until(lambda: client.lens_refreshes, what="a workspace/codeLens/refresh")  # type: ignore[attr-defined]


async def test_next_edit_action_opens_the_first_site(shop: Path) -> None:
    async with serve(shop) as client:
        pricing = Doc(client, shop / "shop/pricing.py")
        pricing.replace(SIG_OLD, SIG_NEW)
        await until(lambda: diagnostics(client, shop / "shop/invoice.py"), what="warnings")
        found = await actions(client, pricing, line=3, character=6)
        titles = [a.title for a in found]
        assert titles == [
            "Next edit: Cart.total — missing required argument 'currency'",
            "Show blast radius",
            "Run 3 affected tests",
        ]
        command = found[0].command
        assert command is not None
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command.command, arguments=command.arguments)
        )
        [shown] = client.shown_documents
        assert shown.uri == (shop / "shop/cart.py").as_uri()
        assert shown.take_focus is True
        assert shown.selection == types.Range(
            start=types.Position(line=18, character=19), end=types.Position(line=18, character=43)
        )
        # at that MUST site the next action leads on
        cart = Doc(client, shop / "shop/cart.py")
        at_site = await actions(client, cart, line=18, character=25)
        assert next(a.title for a in at_site).startswith("Next edit: line — ")
        # nowhere near a change: no action
        assert await actions(client, pricing, line=10) == []


async def test_every_must_site_offers_all_three_actions_and_next_edit_visits_them_all(
    shop: Path,
) -> None:
    async with serve(shop) as client:
        pricing = Doc(client, shop / "shop/pricing.py")
        pricing.replace(SIG_OLD, SIG_NEW)
        await until(lambda: diagnostics(client, shop / "shop/invoice.py"), what="warnings")
        docs: dict[str, Doc] = {}
        # follow "Next edit" from the definition, site after site, as an eglot user would
        found = await actions(client, pricing, line=3, character=6)
        visited: list[tuple[str, int]] = []
        for _ in range(6):
            command = found[0].command
            assert command is not None and command.command == "impact.openLocation"
            [where] = command.arguments or []
            path = Path(where["uri"].removeprefix("file://"))
            line = where["range"]["start"]["line"]
            visited.append((path.relative_to(shop).as_posix(), line))
            doc = docs.get(str(path)) or docs.setdefault(str(path), Doc(client, path))
            found = await actions(
                client, doc, line=line, character=where["range"]["start"]["character"]
            )
            titles = [a.title for a in found]
            assert titles[0].startswith("Next edit: "), titles
            assert titles[1:] == ["Show blast radius", "Run 3 affected tests"]
            show = found[1].command
            assert show is not None and list(show.arguments or []) == [pricing.uri]
        # the four MUST sites in order, then round again: never the MAY site (test_cart.py)
        assert visited[:4] == [
            ("shop/cart.py", 18),
            ("shop/invoice.py", 7),
            ("tests/test_pricing.py", 4),
            ("tests/test_pricing.py", 8),
        ]
        assert visited[4:] == visited[:2]


async def test_multi_root_workspaces_are_analyzed_separately(shop: Path, shop_no_git: Path) -> None:
    async with serve(shop, shop_no_git) as client:
        one = Doc(client, shop / "shop/pricing.py")
        two = Doc(client, shop_no_git / "shop/pricing.py")
        one.replace(SIG_OLD, SIG_NEW)
        two.replace(SIG_OLD, "def price(amount):")
        await until(lambda: diagnostics(client, shop / "shop/cart.py"), what="root one")
        [other] = await until(
            lambda: diagnostics(client, shop_no_git / "shop/cart.py"), what="root two"
        )
        assert "removed param rate" in other.message or "rate" in other.message
        assert lines_of(diagnostics(client, shop / "shop/invoice.py")) == [7]


async def test_workspace_folders_can_be_added_and_removed(shop: Path, shop_no_git: Path) -> None:
    async with serve(shop) as client:
        folder = types.WorkspaceFolder(uri=shop_no_git.as_uri(), name="plain")
        client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(added=[folder], removed=[])
            )
        )
        pricing = Doc(client, shop_no_git / "shop/pricing.py")
        pricing.replace(SIG_OLD, SIG_NEW)
        cart = shop_no_git / "shop/cart.py"
        await until(lambda: diagnostics(client, cart), what="warnings in the added folder")
        client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(added=[], removed=[folder])
            )
        )
        await until(lambda: not diagnostics(client, cart), what="the removed folder to clear")


async def test_exit_during_indexing_is_prompt_and_clean(tmp_path: Path) -> None:
    big = tmp_path / "big"
    for i in range(1500):
        package = big / f"pkg{i // 100}"
        package.mkdir(parents=True, exist_ok=True)
        (package / f"mod{i}.py").write_text(
            "".join(f"def f{j}(a, b):\n    return g{j}(a) + b\n\n\n" for j in range(20)),
            encoding="utf-8",
        )
    async with serve(big) as client:
        Doc(client, big / "pkg0" / "mod0.py")
    # serve() sent shutdown and exit and waited for the process (bounded by its timeout)
    assert client._server is not None and client._server.returncode == 0
