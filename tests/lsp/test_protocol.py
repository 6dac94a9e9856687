"""The JSON-RPC edge, byte for byte: malformed requests get an error reply, nothing pops up.

These tests talk to ``python -m impact_ls serve`` over real pipes with hand-written messages,
because a typed client cannot send what a buggy one does: no method, params of the wrong shape,
a body that is not JSON.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TIMEOUT_S = 30.0


class RawClient:
    """A client that writes framed JSON-RPC bodies and collects everything the server sends."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "impact_ls", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=root,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
        self.root = root
        self.inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self.stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        stream = self.proc.stdout
        while True:
            length = 0
            while (header := stream.readline()) not in (b"\r\n", b""):
                if header.lower().startswith(b"content-length:"):
                    length = int(header.split(b":")[1])
            if not header:
                return
            self.inbox.put(json.loads(stream.read(length)))

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def send_bytes(self, body: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps({"jsonrpc": "2.0", **message}).encode())

    def reply_to(self, msg_id: int | str) -> dict[str, Any]:
        """Wait for the response to ``msg_id``, keeping every other message in ``seen``."""
        deadline = TIMEOUT_S
        while True:
            try:
                message = self.inbox.get(timeout=deadline)
            except queue.Empty:
                raise AssertionError(f"no reply to request {msg_id!r}") from None
            self.seen.append(message)
            if message.get("id") == msg_id and "method" not in message:
                return message
            if "method" in message and "id" in message:
                # a server-to-client request (progress token, registration): accept it
                self.send({"id": message["id"], "result": None})

    def initialize(self) -> None:
        self.send(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "processId": None,
                    "rootUri": self.root.as_uri(),
                    "capabilities": {"window": {"workDoneProgress": True}},
                },
            }
        )
        assert "result" in self.reply_to(1)
        self.send({"method": "initialized", "params": {}})

    def pop_ups(self) -> list[str]:
        return [
            m["params"]["message"] for m in self.seen if m.get("method") == "window/showMessage"
        ]

    def close(self) -> None:
        try:
            self.send({"id": "bye", "method": "shutdown"})
            self.reply_to("bye")
            self.send({"method": "exit"})
            self.proc.wait(timeout=TIMEOUT_S)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                if stream is not None:
                    stream.close()

    def log(self) -> str:
        return b"".join(self.stderr).decode("utf-8", "replace")

    def wait_log(self, text: str) -> None:
        """Wait until the server's stderr (read on another thread) holds ``text``."""
        deadline = time.monotonic() + TIMEOUT_S
        while text not in self.log():
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared in the log:\n{self.log()}")
            time.sleep(0.05)


@pytest.fixture
def raw(shop: Path) -> Iterator[RawClient]:
    client = RawClient(shop)
    try:
        yield client
    finally:
        client.close()


def test_a_request_before_initialize_is_refused_not_dropped(raw: RawClient) -> None:
    raw.send({"id": 5, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "x"}}})
    error = raw.reply_to(5)["error"]
    assert error["code"] == -32002  # ServerNotInitialized
    assert "before initialize" in error["message"]
    raw.initialize()  # and the session starts normally afterwards


def test_a_request_without_a_method_gets_invalid_request(raw: RawClient) -> None:
    raw.initialize()
    raw.send({"id": 7, "params": {}})
    assert raw.reply_to(7)["error"] == {"code": -32600, "message": "a request needs a method"}
    raw.send({"id": 8, "method": 42, "params": {}})
    assert raw.reply_to(8)["error"]["code"] == -32600
    assert raw.pop_ups() == []


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"textDocument": 5}, "$.textDocument"),
        ({"textDocument": {"url": "file:///x.py"}}, "$.textDocument.uri"),
        ({}, "$.textDocument"),
    ],
    ids=["not-an-object", "no-uri", "empty"],
)
def test_a_code_lens_request_with_bad_params_gets_invalid_params(
    raw: RawClient, params: dict[str, Any], field: str
) -> None:
    raw.initialize()
    raw.send({"id": 9, "method": "textDocument/codeLens", "params": params})
    error = raw.reply_to(9)["error"]
    assert error["code"] == -32602
    assert error["message"].startswith("invalid params for textDocument/codeLens: ")
    assert field in error["message"]
    assert raw.pop_ups() == []


def test_bad_params_of_other_requests_are_answered_too(raw: RawClient) -> None:
    raw.initialize()
    bad = {
        10: ("textDocument/codeAction", {"textDocument": {"uri": "file:///x.py"}, "range": 3}),
        11: ("workspace/executeCommand", {"arguments": []}),
        12: ("textDocument/prepareCallHierarchy", None),
    }
    for msg_id, (method, params) in bad.items():
        raw.send({"id": msg_id, "method": method, "params": params})
    for msg_id in bad:
        assert raw.reply_to(msg_id)["error"]["code"] == -32602
    assert raw.pop_ups() == []


def test_an_unknown_method_is_method_not_found_without_a_pop_up(raw: RawClient) -> None:
    raw.initialize()
    raw.send({"id": 13, "method": "impact/frobnicate", "params": {}})
    assert raw.reply_to(13)["error"]["code"] == -32601
    assert raw.pop_ups() == []


def test_notifications_that_cannot_be_handled_are_logged_not_shown(raw: RawClient) -> None:
    raw.initialize()
    never_opened = (raw.root / "shop" / "cart.py").as_uri()
    raw.send(
        {
            "method": "textDocument/didChange",
            "params": {
                "textDocument": {"uri": never_opened, "version": 2},
                "contentChanges": [{"text": "x = 1\n"}],
            },
        }
    )
    raw.send({"method": "textDocument/didOpen", "params": {"textDocument": "garbage"}})
    raw.send({"method": "textDocument/didClose", "params": {"textDocument": {"uri": never_opened}}})
    raw.send_bytes(b"{this is not json")
    # still answering, and nothing popped up meanwhile
    raw.send(
        {
            "id": 14,
            "method": "textDocument/codeLens",
            "params": {"textDocument": {"uri": never_opened}},
        }
    )
    assert raw.reply_to(14)["result"] is None
    assert raw.pop_ups() == []
    raw.wait_log(f"didChange for {never_opened}, which is not open: ignored")
    raw.wait_log("ignored a malformed textDocument/didOpen notification")
    assert "Error in server" not in json.dumps(raw.seen)
