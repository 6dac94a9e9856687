"""Benchmark the language server through a real LSP client over stdio, on demand.

    python tests/benchmarks/bench_lsp.py --project click [--edits 40] [--no-peer] [--no-readme]
    python tests/benchmarks/bench_lsp.py --project django

The project's sdist comes from ``bench_graph.fetch`` (``tests/benchmarks/.data/``); it is copied
to a temp dir and committed to a fresh git repository, so baselines are ``HEAD`` as in real use.
One run measures:

* **usable, cold / warm**: spawn → ``initialize`` answered → indexing progress ended, without and
  then with the ``.impact_ls`` cache;
* **didChange → publishDiagnostics**: each sample makes the target's signature end in a required
  keyword-only parameter ``pN`` with one incremental change and waits for the first diagnostic
  that names ``pN`` (``debounceMs = 0``, LLM off: the latency after the debounce); median, p95;
* **peak RSS** of the server process (``VmHWM``; extraction workers are separate processes);
* **peer**: jedi-language-server's ``textDocument/references`` on the same function (first and
  warm second call, and how many references it finds), installed into a throwaway venv under
  ``.data/`` — never into the project's environment.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))

from bench_graph import DATA, README, fetch  # noqa: E402

AIMS_P95_MS = {"click": 50.0, "django": 150.0}
AIM_WARM_S = 3.0
AIM_RSS_MB = 500.0
SERVER_FLAGS: list[str] = []  # e.g. ["-vv", "--log-file", "/tmp/impact-ls.log"] to see timings


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """What to edit: the file, the exact signature line, and the function name for the peer."""

    dist: str
    file: str
    signature: str


TARGETS = {
    "click": Target(
        dist="click",
        file="src/click/_compat.py",
        signature="def term_len(x: str) -> int:",
    ),
    "django": Target(
        dist="django",
        file="django/utils/encoding.py",
        signature='def force_str(s, encoding="utf-8", strings_only=False, errors="strict"):',
    ),
}


@dataclass(slots=True)
class Recorder:
    """What the client saw, with monotonic timestamps."""

    diagnostics: list[tuple[float, str, list[str]]] = field(default_factory=list)
    progress_end: float | None = None
    messages: list[str] = field(default_factory=list)


def _client(recorder: Recorder) -> LanguageClient:
    client = LanguageClient("bench-lsp", "1")

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _diags(ls: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        recorder.diagnostics.append(
            (time.perf_counter(), params.uri, [d.message for d in params.diagnostics])
        )

    @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
    def _create(ls: LanguageClient, params: types.WorkDoneProgressCreateParams) -> None:
        return None

    @client.feature(types.PROGRESS)
    def _progress(ls: LanguageClient, params: types.ProgressParams) -> None:
        value = params.value
        if isinstance(value, dict) and value.get("kind") == "end" and recorder.progress_end is None:
            recorder.progress_end = time.perf_counter()

    @client.feature(types.WINDOW_SHOW_MESSAGE)
    def _message(ls: LanguageClient, params: types.ShowMessageParams) -> None:
        recorder.messages.append(params.message)

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def _log(ls: LanguageClient, params: types.LogMessageParams) -> None:
        return None

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def _register(ls: LanguageClient, params: types.RegistrationParams) -> None:
        return None

    @client.feature(types.WORKSPACE_CONFIGURATION)
    def _configuration(ls: LanguageClient, params: types.ConfigurationParams) -> list[Any]:
        return [None for _ in params.items]

    return client


def _capabilities() -> types.ClientCapabilities:
    return types.ClientCapabilities(
        window=types.WindowClientCapabilities(work_done_progress=True),
        text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(related_information=True)
        ),
    )


async def _start(
    command: list[str], root: Path, recorder: Recorder, options: dict[str, Any] | None
) -> tuple[LanguageClient, float]:
    client = _client(recorder)
    started = time.perf_counter()
    # A session of its own, so that _stop can kill whatever the server started (jedi's helpers).
    await client.start_io(*command, cwd=str(root), start_new_session=True)
    await client.initialize_async(
        types.InitializeParams(
            capabilities=_capabilities(),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options=options,
        )
    )
    client.initialized(types.InitializedParams())
    return client, started


async def _stop(client: LanguageClient) -> float | None:
    """Shut the server down; return the seconds from ``exit`` to the end of its process."""
    await asyncio.wait_for(client.shutdown_async(None), 30)
    proc = client._server
    assert proc is not None
    client.exit(None)
    sent = time.perf_counter()
    # Poll returncode rather than awaiting proc.wait(): that also waits for every pipe to close,
    # and jedi's helper processes keep jedi-language-server's stderr open after it is gone.
    while proc.returncode is None and time.perf_counter() - sent < 10:
        await asyncio.sleep(0.002)
    exited = time.perf_counter() - sent if proc.returncode is not None else None
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # the server's session: it and what it started
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(client.stop(), 5)
    return exited


def _vm_hwm_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    return int(status.split("VmHWM:")[1].split()[0]) / 1024


def _position(text: str, offset: int) -> types.Position:
    before = text[:offset]
    return types.Position(line=before.count("\n"), character=offset - (before.rfind("\n") + 1))


async def _until(condition: Any, timeout: float, what: str) -> None:
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.002)


async def impact_session(root: Path, target: Target, *, edits: int) -> dict[str, Any]:
    """One server session: time to usable, then ``edits`` signature edits; returns the numbers."""
    recorder = Recorder()
    command = [sys.executable, "-m", "impact_ls", *SERVER_FLAGS, "serve"]
    client, started = await _start(command, root, recorder, {"impactLs": {"debounceMs": 0}})
    initialized = time.perf_counter()
    await _until(lambda: recorder.progress_end is not None, 900, "indexing")
    assert recorder.progress_end is not None
    result: dict[str, Any] = {
        "initialize_s": initialized - started,
        "usable_s": recorder.progress_end - started,
    }
    path = root / target.file
    text = path.read_text(encoding="utf-8")
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=0, text=text
            )
        )
    )
    offset = text.index(target.signature)
    close = target.signature.index(")")
    insert_at = offset + close  # just before the ")" of the parameter list
    latencies: list[float] = []
    sites: list[int] = []
    previous = ""
    for i in range(1, edits + 1):
        added = f", *, p{i}"  # a required keyword-only parameter: every call breaks
        start = _position(text, insert_at)
        end = _position(text, insert_at + len(previous))
        text = text[:insert_at] + added + text[insert_at + len(previous) :]
        previous = added
        seen = len(recorder.diagnostics)
        sent = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=i),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(start=start, end=end), text=added
                    )
                ],
            )
        )
        pattern = re.compile(rf"\bp{i}\b")

        def reflected(seen: int = seen, pattern: re.Pattern[str] = pattern) -> bool:
            return any(
                any(pattern.search(m) for m in msgs) for _, _, msgs in recorder.diagnostics[seen:]
            )

        await _until(reflected, 120, f"diagnostics of edit {i}")
        first = next(
            t for t, _, msgs in recorder.diagnostics[seen:] if any(pattern.search(m) for m in msgs)
        )
        latencies.append(first - sent)
        await asyncio.sleep(0.05)  # let the rest of this analysis' publications arrive
        sites.append(
            sum(
                1
                for _, _, msgs in recorder.diagnostics[seen:]
                for m in msgs
                if pattern.search(m) and "must re-bind" in m
            )
        )
    assert client._server is not None
    result["rss_mb"] = _vm_hwm_mb(client._server.pid)
    result["exit_s"] = await _stop(client)
    ordered = sorted(latencies)
    result["latency_ms"] = {
        "median": statistics.median(ordered) * 1000,
        "p95": ordered[max(0, round(0.95 * len(ordered)) - 1)] * 1000,
        "max": ordered[-1] * 1000,
        "samples": len(ordered),
    }
    result["must_sites_per_edit"] = max(sites) if sites else 0
    return result


def _peer_venv() -> Path:
    venv = DATA / "jls-venv"
    python = venv / "bin" / "python"
    if not (venv / "bin" / "jedi-language-server").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "jedi-language-server"], check=True
        )
    return venv


async def peer_references(root: Path, target: Target) -> dict[str, Any]:
    """jedi-language-server's textDocument/references on the target (first and second call)."""
    venv = _peer_venv()
    recorder = Recorder()
    client, started = await _start(
        [str(venv / "bin" / "jedi-language-server")], root, recorder, None
    )
    usable = time.perf_counter() - started
    path = root / target.file
    text = path.read_text(encoding="utf-8")
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=path.as_uri(), language_id="python", version=0, text=text
            )
        )
    )
    name = re.match(r"def (\w+)", target.signature)
    assert name is not None
    position = _position(text, text.index(target.signature) + len("def "))
    params = types.ReferenceParams(
        text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
        position=position,
        context=types.ReferenceContext(include_declaration=False),
    )
    timings = []
    found = 0
    for _ in range(2):
        sent = time.perf_counter()
        refs = await asyncio.wait_for(client.text_document_references_async(params), 900)
        timings.append(time.perf_counter() - sent)
        found = len(refs or [])
    await _stop(client)
    return {
        "usable_s": usable,
        "first_ms": timings[0] * 1000,
        "warm_ms": timings[1] * 1000,
        "references": found,
        "symbol": name.group(1),
    }


def _prepare(project: str) -> tuple[Path, Path]:
    source = fetch(TARGETS[project].dist)
    tmp = Path(tempfile.mkdtemp(prefix=f"bench-lsp-{project}-"))
    root = tmp / project
    shutil.copytree(source, root, ignore=shutil.ignore_patterns(".impact_ls"))
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
    }
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "sdist"],
    ):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)
    return tmp, root


async def run(project: str, *, edits: int, peer: bool) -> dict[str, Any]:
    """Cold session, warm session (with the edits), then the peer."""
    target = TARGETS[project]
    tmp, root = _prepare(project)
    try:
        files = sum(1 for _ in root.rglob("*.py"))
        cold = await impact_session(root, target, edits=3)
        warm = await impact_session(root, target, edits=edits)
        result: dict[str, Any] = {"project": project, "files": files, "cold": cold, "warm": warm}
        if peer:
            result["peer"] = await peer_references(root, target)
        return result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _ms(seconds: float | None) -> str:
    return "did not exit within 10 s" if seconds is None else f"{seconds * 1000:.0f} ms"


def render(r: dict[str, Any]) -> str:
    """A markdown table of one run."""
    project = r["project"]
    warm, cold = r["warm"], r["cold"]
    lat = warm["latency_ms"]
    aim = AIMS_P95_MS.get(project, 150.0)

    def ok(value: float, limit: float) -> str:
        return "✓" if value <= limit else "✗"

    rows = [
        ("usable server, cold (no cache)", f"{cold['usable_s']:.2f} s", ""),
        (
            "usable server, warm (cache)",
            f"{warm['usable_s']:.2f} s",
            f"≤ {AIM_WARM_S:g} s {ok(warm['usable_s'], AIM_WARM_S)}",
        ),
        (
            f"didChange → publishDiagnostics median ({lat['samples']} edits)",
            f"{lat['median']:.1f} ms",
            "",
        ),
        (
            "didChange → publishDiagnostics p95",
            f"{lat['p95']:.1f} ms",
            f"≤ {aim:g} ms {ok(lat['p95'], aim)}",
        ),
        ("MUST-INSPECT sites per edit", str(warm["must_sites_per_edit"]), ""),
        ("exit after the exit notification", _ms(warm["exit_s"]), ""),
        (
            "server peak RSS (VmHWM)",
            f"{max(warm['rss_mb'], cold['rss_mb']):.0f} MB",
            f"≤ {AIM_RSS_MB:g} MB {ok(max(warm['rss_mb'], cold['rss_mb']), AIM_RSS_MB)}",
        ),
    ]
    if "peer" in r:
        p = r["peer"]
        rows.append(
            (
                f"peer: jedi-language-server references of {p['symbol']}, first call",
                f"{p['first_ms']:.0f} ms",
                f"{p['references']} references",
            )
        )
        rows.append(
            ("peer: jedi-language-server references, second call", f"{p['warm_ms']:.0f} ms", "")
        )
    lines = [
        f"{project}: {r['files']} .py files — {datetime.date.today().isoformat()}, "
        f"{os.cpu_count()} cores, Python {sys.version.split()[0]}",
        "",
        "| measure | value | aim / note |",
        "|---|---|---|",
        *(f"| {a} | {b} | {c} |" for a, b, c in rows),
    ]
    return "\n".join(lines) + "\n"


def write_readme(project: str, table: str) -> None:
    """Replace this project's LSP section of the README (between its markers) with ``table``."""
    start, end = f"<!-- bench:lsp:{project} -->", f"<!-- /bench:lsp:{project} -->"
    text = README.read_text(encoding="utf-8") if README.exists() else "# Benchmarks\n"
    block = f"{start}\n{table}{end}"
    if start in text and end in text:
        text = text[: text.index(start)] + block + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip("\n") + f"\n\n### Language server: {project}\n\n{block}\n"
    README.write_text(text, encoding="utf-8")


def main() -> int:
    """Run the benchmark for one project and print (and record) its table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", choices=sorted(TARGETS), default="click")
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--no-peer", action="store_true", help="skip jedi-language-server")
    parser.add_argument("--no-readme", action="store_true", help="do not update README.md")
    parser.add_argument("--json", action="store_true", help="print the raw numbers too")
    args = parser.parse_args()
    result = asyncio.run(run(args.project, edits=args.edits, peer=not args.no_peer))
    table = render(result)
    sys.stdout.write(table)
    if args.json:
        sys.stdout.write(json.dumps(result, indent=1) + "\n")
    if not args.no_readme:
        write_readme(args.project, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
