"""Bad input and load: unknown documents, files outside the workspace, no git, a burst of edits,
a dead or lying LLM endpoint. None of it may crash the server."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from lsprotocol import types

from .lsp_helpers import (
    Doc,
    actions,
    command,
    diagnostics,
    indexed,
    lenses,
    serve,
    until,
    until_async,
)

SIG_OLD = "def price(amount, rate):"
SIG_NEW = "def price(amount, rate, currency):"


async def test_requests_for_unknown_documents_answer_nothing(shop: Path) -> None:
    unknown = types.TextDocumentIdentifier(uri=(shop / "shop/never_opened.py").as_uri())
    async with serve(shop) as client:
        assert (
            await client.text_document_code_lens_async(types.CodeLensParams(text_document=unknown))
            is None
        )
        pos = types.Position(line=0, character=0)
        assert (
            await client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=unknown,
                    range=types.Range(start=pos, end=pos),
                    context=types.CodeActionContext(diagnostics=[]),
                )
            )
            is None
        )
        # a change or close for a document that was never opened is ignored, without a pop-up
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=unknown.uri, version=3),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text="x = 1\n")],
            )
        )
        client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=unknown))
        assert (await command(client, "impact.showBlastRadius"))["changes"] == []
        assert client.messages == []  # no "Error in server: KeyError: 'file:///…'" toast
        # and a real edit afterwards is analyzed as usual
        pricing = Doc(client, shop / "shop/pricing.py")
        pricing.replace(SIG_OLD, SIG_NEW)
        await until(lambda: diagnostics(client, shop / "shop/invoice.py"), what="warnings")
        assert client.messages == []


async def test_a_file_outside_the_workspace_is_not_analyzed(shop: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "pricing.py"
    outside.parent.mkdir()
    outside.write_text((shop / "shop/pricing.py").read_text(encoding="utf-8"), encoding="utf-8")
    async with serve(shop) as client:
        stray = Doc(client, outside)
        stray.replace(SIG_OLD, SIG_NEW)
        assert await lenses(client, stray) == []
        # an edit inside the workspace afterwards is analyzed: the stray one was simply skipped
        inside = Doc(client, shop / "shop/pricing.py")
        inside.replace(SIG_OLD, SIG_NEW)
        await until(lambda: diagnostics(client, shop / "shop/invoice.py"), what="warnings")
        assert outside.as_uri() not in client.diagnostics


async def test_a_folder_without_git_uses_the_text_on_disk_as_baseline(shop_no_git: Path) -> None:
    async with serve(shop_no_git) as client:
        pricing = Doc(client, shop_no_git / "shop/pricing.py")
        pricing.replace(SIG_OLD, SIG_NEW)
        [warning] = await until(
            lambda: diagnostics(client, shop_no_git / "shop/cart.py"), what="warnings without git"
        )
        assert warning.code == "must-inspect"
        report = await command(client, "impact.showBlastRadius", pricing.uri)
        assert any("git" in note for note in report["audit"]["notes"])


async def test_no_workspace_folder_at_all(shop: Path) -> None:
    async with serve() as client:
        doc = Doc(client, shop / "shop/pricing.py")
        doc.replace(SIG_OLD, SIG_NEW)
        assert await lenses(client, doc) == []
        with pytest.raises(Exception, match="no workspace folder is open"):
            await command(client, "impact.showBlastRadius")


async def test_two_hundred_changes_in_two_seconds(shop: Path) -> None:
    async with serve(shop) as client:
        await until(lambda: indexed(client), what="indexing")
        pricing = Doc(client, shop / "shop/pricing.py")
        current = SIG_OLD
        for i in range(200):
            new = f"def price(amount, rate, currency_{i}):"
            pricing.replace(current, new)
            current = new
            if i == 100:
                # the server stays responsive while the burst goes on
                answered = await asyncio.wait_for(lenses(client, pricing), 10)
                assert isinstance(answered, list)
            await asyncio.sleep(0.005)  # 200 changes in about a second
        invoice = shop / "shop/invoice.py"
        [final] = await until(
            lambda: [d for d in diagnostics(client, invoice) if "currency_199" in d.message],
            what="diagnostics of the final text",
        )
        assert final.message.startswith(
            "missing required argument 'currency_199' — method-signature changed "
            "(added param currency_199)"
        )
        assert len(diagnostics(client, invoice)) == 1
        found = await lenses(client, pricing)
        assert found[0].command is not None
        assert found[0].command.title == "Blast radius: 4 must · 1 may · 1 batch"


# --------------------------------------------------------------------------- the LLM endpoint


class _Endpoint:
    """A chat-completions endpoint on 127.0.0.1 that answers with a fixed status and body."""

    def __init__(self, status: int, body: object) -> None:
        self.hits: list[dict[str, object]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                outer.hits.append(json.loads(self.rfile.read(length)))
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> _Endpoint:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _reply(content: str) -> dict[str, object]:
    return {"choices": [{"message": {"role": "assistant", "content": content}}]}


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A local port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    yield port


async def _next_edit_titles(client, shop: Path, pricing: Doc) -> list[str]:  # type: ignore[no-untyped-def]
    return [
        a.title
        for a in await actions(client, pricing, line=3, character=6)
        if a.title.startswith("Next edit")
    ]


async def test_a_dead_llm_endpoint_falls_back_to_the_batch_order(
    shop: Path, closed_port: int
) -> None:
    options = {
        "llmBaseUrl": f"http://127.0.0.1:{closed_port}/v1",
        "llmModel": "m",
        "llmTimeoutS": 2,
    }
    async with serve(shop, options=options) as client:
        pricing = Doc(client, shop / "shop/pricing.py")
        pricing.replace(SIG_OLD, SIG_NEW)
        await until(lambda: diagnostics(client, shop / "shop/invoice.py"), what="warnings")
        report = await command(client, "impact.showBlastRadius")
        assert report["next_edits"]["next_edit"] == "failed"
        assert report["next_edits"]["fallback"] == "batch_order"
        [title] = await _next_edit_titles(client, shop, pricing)
        assert title.startswith("Next edit: Cart.total — ")


async def test_an_llm_that_answers_garbage_falls_back_and_is_called_once(shop: Path) -> None:
    with _Endpoint(200, _reply("I think you should edit the cart")) as endpoint:
        options = {"llmBaseUrl": endpoint.url, "llmModel": "m"}
        async with serve(shop, options=options) as client:
            pricing = Doc(client, shop / "shop/pricing.py")
            pricing.replace(SIG_OLD, SIG_NEW)
            await until(lambda: diagnostics(client, shop / "shop/invoice.py"), what="warnings")
            await until(lambda: endpoint.hits, what="the LLM call")
            [title] = await _next_edit_titles(client, shop, pricing)
            assert title.startswith("Next edit: Cart.total — ")
            assert len(endpoint.hits) == 1
            prompt = json.dumps(endpoint.hits[0])
            assert "round(amount" not in prompt  # signatures only, never a body


async def test_an_llm_answer_orders_the_next_edit(shop: Path) -> None:
    answer = json.dumps(
        {"next_edits": [{"entity": "shop.invoice.line", "reason": "fix the invoice first"}]}
    )
    with _Endpoint(200, _reply(answer)) as endpoint:
        options = {"impactLs": {"llmBaseUrl": endpoint.url, "llmModel": "m"}}
        async with serve(shop, options=options) as client:
            pricing = Doc(client, shop / "shop/pricing.py")
            pricing.replace(SIG_OLD, SIG_NEW)
            await until(lambda: endpoint.hits, what="the LLM call")
            expected = ["Next edit: line — fix the invoice first"]
            await until_async(
                lambda: _next_edit_titles(client, shop, pricing), expected, what="the LLM's order"
            )


async def test_a_file_over_max_file_bytes_is_said_in_the_editor_log(shop: Path) -> None:
    big = shop / "shop" / "generated.py"
    big.write_text(
        "from shop.pricing import price\n\n\ndef table():\n    return price(1, 2)\n"
        + "# padding\n" * 300,
        encoding="utf-8",
    )
    async with serve(shop, options={"maxFileBytes": 2000}) as client:
        await until(lambda: indexed(client), what="indexing")

        def logged(text: str) -> list[str]:
            return [m.message for m in client.log_messages if text in m.message]

        [line] = await until(lambda: logged("generated.py"), what="the skip in the log")
        assert line.startswith("impact-ls: skipped shop/generated.py: larger than 2000 bytes")
        assert line.endswith("(raise maxFileBytes to include it)")
        # opening and editing it says so once more, once, and shows nothing else
        doc = Doc(client, big)
        doc.replace("def table():", "def table(x):")
        await until(lambda: logged("is not analyzed"), what="the open file's note")
        doc.replace("def table(x):", "def table(y):")
        await asyncio.sleep(0.5)
        assert len(logged("is not analyzed")) == 1
        assert client.messages == []
        assert await lenses(client, doc) == []
