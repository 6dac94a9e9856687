"""``impact-ls mcp``: the blast radius as a Model Context Protocol server over stdio.

Four tools on the official ``mcp`` SDK (``MCPServer``), JSON in and JSON out, each with the
output schema of its ``shapes`` model: ``blast_radius``, ``affected_tests``, ``callers`` and
``explain``. Every call runs on a worker thread; indexing a root for the first time reports
progress (``notifications/progress`` when the client sent a progress token). A missing root, a
bad revision or a folder outside git is a tool error (``isError`` with a message saying what to
do), never a crash of the server. The next-edit LLM is not called: the agent is the model.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from impact_ls import __version__
from impact_ls.agent import blast
from impact_ls.agent.callers import callers_output
from impact_ls.agent.engines import Engines, Progress, analyze
from impact_ls.agent.shapes import (
    AffectedTestsOutput,
    BlastRadiusOutput,
    CallersOutput,
    ExplainOutput,
)
from impact_ls.errors import ImpactError, UsageError

logger = logging.getLogger(__name__)

T = TypeVar("T")
Ctx = Context[Any, Any]

INSTRUCTIONS = (
    "impact-ls answers 'what else does this edit reach?' for a Python project in git: the "
    "call sites a signature change breaks, what may be affected, the tests to re-run, and why. "
    "Call blast_radius after editing (pass unsaved text in files), explain for one site, "
    "affected_tests before running pytest, callers for who calls a definition."
)
_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

Root = Annotated[str, Field(description="The project folder (absolute path, inside git).")]
Base = Annotated[str, Field(description="The git revision to compare with.")]
Limit = Annotated[int | None, Field(description="Items per list (small by default).")]


def _parse_site(site: str) -> tuple[str, int]:
    path, sep, line = site.strip().rpartition(":")
    if not sep or not path or not line.isdigit() or int(line) < 1:
        raise UsageError(f"site {site!r}: expected 'file:line', e.g. 'pkg/mod.py:12'")
    return path, int(line)


async def _off_loop(ctx: Ctx, work: Callable[[Progress], T]) -> T:
    """Run ``work`` on a worker thread; forward its progress; turn ImpactError into ToolError."""
    last = [-1]

    def progress(done: int, total: int, message: str) -> None:
        pct = 100 * done // total if total else 100
        if pct == last[0]:
            return
        last[0] = pct
        anyio.from_thread.run(ctx.report_progress, float(done), float(total), message)

    try:
        return await anyio.to_thread.run_sync(lambda: work(progress))
    except ImpactError as exc:
        raise ToolError(str(exc)) from exc


def build_server(engines: Engines | None = None) -> MCPServer[Any]:
    """A fresh MCP server with the four impact-ls tools."""
    engines = engines or Engines()
    app: MCPServer[Any] = MCPServer(
        "impact-ls", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    _add_blast_radius(app, engines)
    _add_affected_tests(app, engines)
    _add_callers(app, engines)
    _add_explain(app, engines)
    return app


def _add_blast_radius(app: MCPServer[Any], engines: Engines) -> None:
    @app.tool(annotations=_READ_ONLY)
    async def blast_radius(
        *,
        root: Root,
        ctx: Ctx,
        base: Base = "HEAD",
        files: Annotated[
            dict[str, str] | None,
            Field(description="Unsaved editor text: path (relative to root) → current text."),
        ] = None,
        limit: Limit = None,
        include_dag: Annotated[
            bool, Field(description="Also return the cause-labelled impact DAG.")
        ] = False,
    ) -> BlastRadiusOutput:
        """The blast radius of the working tree against base: changes, the sites that must
        change (proved), what may be affected (ranked), tests, co-change, batches in order."""
        size = blast.bound(limit, blast.DEFAULT_LIMIT, 1, blast.MAX_LIMIT)

        def work(progress: Progress) -> BlastRadiusOutput:
            with engines.engine(root, progress, base=base) as engine:
                report = analyze(engine, base=base, files=files)
                progress(1, 1, "analyzed")
                with engine.index.lock:
                    return blast.blast_radius_output(
                        report,
                        engine.index.graph,
                        root=str(engine.root),
                        limit=size,
                        include_dag=include_dag,
                    )

        return await _off_loop(ctx, work)


def _add_affected_tests(app: MCPServer[Any], engines: Engines) -> None:
    @app.tool(annotations=_READ_ONLY)
    async def affected_tests(
        *,
        root: Root,
        ctx: Ctx,
        base: Base = "HEAD",
        min_conf: Annotated[
            float | None, Field(description="Lowest confidence kept (default: the project's).")
        ] = None,
        limit: Limit = None,
    ) -> AffectedTestsOutput:
        """The pytest node ids the working-tree change can break, with confidence and reason."""
        size = blast.bound(limit, blast.DEFAULT_TESTS_LIMIT, 1, blast.MAX_TESTS_LIMIT)
        if min_conf is not None and not 0 <= min_conf <= 1:
            raise ToolError(f"min_conf {min_conf}: expected a number between 0 and 1")

        def work(progress: Progress) -> AffectedTestsOutput:
            with engines.engine(root, progress, base=base) as engine:
                report = analyze(engine, base=base, files=None)
                floor = engine.settings.test_map_min if min_conf is None else min_conf
                with engine.index.lock:
                    return blast.affected_tests_output(
                        report,
                        engine.index.graph,
                        root=str(engine.root),
                        min_conf=floor,
                        limit=size,
                    )

        return await _off_loop(ctx, work)


def _add_callers(app: MCPServer[Any], engines: Engines) -> None:
    @app.tool(annotations=_READ_ONLY)
    async def callers(
        *,
        root: Root,
        ctx: Ctx,
        symbol: Annotated[
            str | None,
            Field(description="Qualified name, e.g. pkg.mod.Class.method or Class.method."),
        ] = None,
        file: Annotated[str | None, Field(description="Instead of symbol: a file …")] = None,
        line: Annotated[int | None, Field(description="… and a 1-based line in it.")] = None,
        limit: Limit = None,
    ) -> CallersOutput:
        """Call sites of a definition with file:line evidence, resolved apart from name-matched."""
        if not symbol and (file is None or line is None):
            raise ToolError("callers: pass symbol, or file and line")
        if line is not None and line < 1:
            raise ToolError(f"line {line}: expected a 1-based line number")
        size = blast.bound(limit, blast.DEFAULT_LIMIT, 1, blast.MAX_LIMIT)

        def work(progress: Progress) -> CallersOutput:
            with engines.engine(root, progress) as engine:
                rel = engine.relpath(file) if file is not None else None
                if file is not None and rel is None:
                    raise UsageError(f"file {file!r} lies outside the root {engine.root}")
                with engine.index.lock:
                    return callers_output(
                        engine.index.graph,
                        root=str(engine.root),
                        symbol=symbol,
                        file=rel,
                        line=line,
                        limit=size,
                    )

        return await _off_loop(ctx, work)


def _add_explain(app: MCPServer[Any], engines: Engines) -> None:
    @app.tool(annotations=_READ_ONLY)
    async def explain(
        *,
        root: Root,
        site: Annotated[str, Field(description="file:line of a site, e.g. pkg/views.py:41.")],
        ctx: Ctx,
        base: Base = "HEAD",
    ) -> ExplainOutput:
        """The cause chain from the edit to the site at file:line: each hop, relation, break."""

        def work(progress: Progress) -> ExplainOutput:
            path, line = _parse_site(site)
            with engines.engine(root, progress, base=base) as engine:
                rel = engine.relpath(path)
                if rel is None:
                    raise UsageError(f"site {site!r} lies outside the root {engine.root}")
                report = analyze(engine, base=base, files=None)
                with engine.index.lock:
                    return blast.explain_output(
                        report, engine.index.graph, root=str(engine.root), file=rel, line=line
                    )

        return await _off_loop(ctx, work)


def run_stdio() -> None:
    """Serve MCP over stdin/stdout until the client closes the stream."""
    build_server().run("stdio")
