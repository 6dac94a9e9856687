"""``impact-ls serve``: stdio is covered by every other test here; TCP and bad flags are here."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _send(sock: socket.socket, message: dict[str, object]) -> None:
    body = json.dumps(message).encode()
    sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)


def _receive(sock: socket.socket, buffer: bytearray) -> dict[str, object]:
    while b"\r\n\r\n" not in buffer:
        buffer += sock.recv(65536)
    header, _, rest = bytes(buffer).partition(b"\r\n\r\n")
    length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
    while len(rest) < length:
        rest += sock.recv(65536)
    buffer[:] = rest[length:]
    return json.loads(rest[:length])


def test_serve_over_tcp_answers_initialize_and_exits_on_exit(shop: Path) -> None:
    port = _free_port()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "impact_ls", "serve", "--tcp", "--port", str(port)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # A bounded wait for start-up (at most 600 tries), not a speed assertion.
        for _ in range(600):
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except ConnectionRefusedError:
                time.sleep(0.05)
        else:
            pytest.fail("the server never listened on its TCP port")
        buffer = bytearray()
        with sock:
            _send(
                sock,
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {"capabilities": {}, "rootUri": shop.as_uri()},
                },
            )
            reply = _receive(sock, buffer)
            assert reply["id"] == 1
            result = reply["result"]
            assert isinstance(result, dict)
            assert result["serverInfo"]["name"] == "impact-ls"
            assert (
                "impact.showBlastRadius"
                in result["capabilities"]["executeCommandProvider"]["commands"]
            )
            _send(sock, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
            _send(sock, {"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
            while _receive(sock, buffer).get("id") != 2:
                pass  # progress and the like may come first
            _send(sock, {"jsonrpc": "2.0", "method": "exit"})
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_rejects_a_bad_port() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "impact_ls", "serve", "--tcp", "--port", "70000"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--port 70000: expected a TCP port between 1 and 65535" in done.stderr
