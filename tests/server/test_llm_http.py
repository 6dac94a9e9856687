"""The chat-completions client against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from impact_ls.config import Settings
from impact_ls.server.llm_http import HttpCompletionClient, client_from_settings

KEY = "sk-test-7e1b9c0d5f2a4e8b"
MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


class Endpoint:
    """A chat-completions server that answers with ``status`` and ``payload`` (raw bytes)."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.status = 200
        self.payload = b""
        self.release = threading.Event()
        self.slow = False
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                endpoint.requests.append(Received(self.path, dict(self.headers.items()), body))
                if endpoint.slow:
                    endpoint.release.wait(10)
                try:
                    self.send_response(endpoint.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(endpoint.payload)))
                    self.end_headers()
                    self.wfile.write(endpoint.payload)
                except OSError:
                    pass  # the client timed out and left

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def reply(self, content: object) -> None:
        self.payload = json.dumps({"choices": [{"message": {"content": content}}]}).encode()

    def settings(self, **overrides: object) -> Settings:
        values: dict[str, object] = {
            "llm_base_url": f"http://127.0.0.1:{self.server.server_address[1]}/v1/",
            "llm_model": "qwen2.5-coder:1.5b",
            "llm_api_key_env": "IMPACT_TEST_LLM_KEY",
        }
        values.update(overrides)
        return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    ep = Endpoint()
    ep.thread.start()
    yield ep
    ep.release.set()
    ep.server.shutdown()
    ep.server.server_close()
    ep.thread.join()


def test_posts_one_openai_compatible_request(
    endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IMPACT_TEST_LLM_KEY", KEY)
    endpoint.reply('{"next_edits": []}')
    client = HttpCompletionClient(endpoint.settings())
    assert client.complete(MESSAGES, temperature=0.0, max_tokens=1024) == '{"next_edits": []}'
    assert len(endpoint.requests) == 1
    request = endpoint.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert json.loads(request.body) == {
        "model": "qwen2.5-coder:1.5b",
        "messages": MESSAGES,
        "temperature": 0.0,
        "max_tokens": 1024,
    }


def test_no_authorization_header_without_a_key(
    endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("IMPACT_TEST_LLM_KEY", raising=False)
    endpoint.reply("ok")
    assert (
        HttpCompletionClient(endpoint.settings()).complete(MESSAGES, temperature=0.0, max_tokens=8)
        == "ok"
    )
    assert "Authorization" not in endpoint.requests[0].headers
    endpoint.requests.clear()
    # No variable named at all: no header either, whatever the environment holds.
    monkeypatch.setenv("IMPACT_TEST_LLM_KEY", KEY)
    HttpCompletionClient(endpoint.settings(llm_api_key_env="")).complete(
        MESSAGES, temperature=0.0, max_tokens=8
    )
    assert "Authorization" not in endpoint.requests[0].headers


def test_key_is_read_at_construction(endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IMPACT_TEST_LLM_KEY", KEY)
    client = HttpCompletionClient(endpoint.settings())
    monkeypatch.setenv("IMPACT_TEST_LLM_KEY", "sk-changed-later")
    endpoint.reply("ok")
    client.complete(MESSAGES, temperature=0.0, max_tokens=8)
    assert endpoint.requests[0].headers["Authorization"] == f"Bearer {KEY}"


def test_http_error_raises(endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IMPACT_TEST_LLM_KEY", KEY)
    endpoint.status, endpoint.payload = 500, b'{"error": "boom"}'
    with pytest.raises(httpx.HTTPStatusError) as info:
        HttpCompletionClient(endpoint.settings()).complete(MESSAGES, temperature=0.0, max_tokens=8)
    assert KEY not in str(info.value)
    assert len(endpoint.requests) == 1


@pytest.mark.parametrize(
    "payload",
    [b"not json", b"{}", b'{"choices": []}', b'{"choices": [{"message": {"content": null}}]}'],
)
def test_malformed_response_raises(endpoint: Endpoint, payload: bytes) -> None:
    endpoint.payload = payload
    with pytest.raises(ValueError):
        HttpCompletionClient(endpoint.settings()).complete(MESSAGES, temperature=0.0, max_tokens=8)


def test_slow_server_times_out(endpoint: Endpoint) -> None:
    endpoint.slow = True
    endpoint.reply("late")
    client = HttpCompletionClient(endpoint.settings(llm_timeout_s=0.2))
    with pytest.raises(httpx.TimeoutException):
        client.complete(MESSAGES, temperature=0.0, max_tokens=8)
    endpoint.release.set()
    assert len(endpoint.requests) == 1


def test_key_never_logged(
    endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("IMPACT_TEST_LLM_KEY", KEY)
    caplog.set_level(logging.DEBUG)
    for name in ("httpx", "httpcore", "impact_ls"):
        caplog.set_level(logging.DEBUG, logger=name)
    client = HttpCompletionClient(endpoint.settings())
    endpoint.reply("fine")
    client.complete(MESSAGES, temperature=0.0, max_tokens=8)
    endpoint.status, endpoint.payload = 500, b"{}"
    with pytest.raises(httpx.HTTPStatusError):
        client.complete(MESSAGES, temperature=0.0, max_tokens=8)
    logged = "\n".join(f"{r.name} {r.getMessage()}" for r in caplog.records)
    assert "POST http://127.0.0.1" in logged  # logging did happen, at DEBUG, with the URL
    assert KEY not in logged
    assert KEY not in repr(client)
    assert repr(client).endswith("key=set)")


def test_client_from_settings() -> None:
    assert client_from_settings(Settings()) is None
    assert client_from_settings(Settings(llm_base_url="  ")) is None
    client = client_from_settings(Settings(llm_base_url="http://127.0.0.1:11434/v1/"))
    assert client is not None
    assert client.url == "http://127.0.0.1:11434/v1/chat/completions"


def test_importing_the_client_does_not_load_pygls() -> None:
    code = (
        "import sys, impact_ls.server.llm_http; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
