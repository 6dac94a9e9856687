"""The ``impact-ls`` command line: analyze, tests, index, serve, demo, record.

The only place that configures logging. Each subcommand lives in its own ``_cmd_*`` function;
``main`` maps a deliberate ``ImpactError`` to a clear message and exit status 2, and any other
exception to a logged traceback and exit status 1 (``--debug`` re-raises it).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from impact_ls import __version__
from impact_ls.errors import ImpactError, RootNotFoundError, UsageError
from impact_ls.record.command import add_record_parser

if TYPE_CHECKING:
    from impact_ls.engine import Engine
    from impact_ls.graph.project import ProjectIndex

logger = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so ``main`` owns every exit status."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message} (see '{self.prog} --help')")


def _root(value: str) -> Path:
    path = Path(value).expanduser()
    if not path.is_dir():
        raise RootNotFoundError(f"--root {value!r} is not an existing directory")
    return path.resolve()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = _Parser(
        prog="impact-ls",
        description="Show what else the edit you are making reaches: callers, overriders, "
        "importers, tests and files that change together.",
    )
    parser.add_argument("--version", action="version", version=f"impact-ls {__version__}")
    parser.add_argument("--log-file", help="write logs here instead of stderr")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv)")
    parser.add_argument("--debug", action="store_true", help="re-raise unexpected errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    analyze = sub.add_parser("analyze", help="blast radius of the working tree against a revision")
    analyze.add_argument("--root", default=".", help="project root (default: .)")
    analyze.add_argument("--base", default="HEAD", help="git revision to compare with")
    analyze.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    analyze.add_argument("--no-llm", action="store_true", help="skip the next-edit LLM call")
    analyze.add_argument(
        "--fail-on",
        choices=("never", "must", "may"),
        default="never",
        help="exit 1 when a site of this bucket (or worse) is found",
    )
    analyze.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    analyze.add_argument("files", nargs="*", metavar="FILE", help="only these changed files")

    tests = sub.add_parser("tests", help="affected pytest node ids, one per line")
    tests.add_argument("--root", default=".")
    tests.add_argument("--base", default="HEAD")
    tests.add_argument("--min-conf", type=float, default=None, help="minimum confidence")

    index = sub.add_parser("index", help="build or refresh the cached code graph")
    index.add_argument("--root", default=".")
    index.add_argument("--format", choices=("json", "stats"), default="stats")
    index.add_argument("--jobs", type=int, default=0, help="extraction processes (default: cores)")

    serve = sub.add_parser("serve", help="run the language server (stdio by default)")
    serve.add_argument("--tcp", action="store_true", help="listen on TCP instead of stdio")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=2087)

    demo = sub.add_parser("demo", help="show a blast radius on a bundled example project")
    demo.add_argument("--keep", action="store_true", help="keep the temporary project")
    demo.add_argument("--format", choices=("text", "json"), default="text")

    add_record_parser(sub)
    return parser


def _setup_logging(verbose: int, log_file: str | None) -> None:
    level = logging.WARNING - 10 * min(verbose, 2)
    handler: logging.Handler = (
        logging.FileHandler(log_file, encoding="utf-8")
        if log_file
        else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    logging.getLogger("pygls.protocol").setLevel(logging.WARNING)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit status."""
    parser = build_parser()
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        args = parser.parse_args(argv)
        _setup_logging(args.verbose, args.log_file)
        if args.command is None:
            parser.print_help()
            return EXIT_USAGE
        handler = _COMMANDS[args.command]
        return handler(args)
    except UsageError as exc:
        print(f"impact-ls: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ImpactError as exc:
        print(f"impact-ls: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return 130
    except Exception:
        if debug:
            raise
        logger.exception("impact-ls failed unexpectedly; rerun with --debug for the traceback")
        return EXIT_FAILED


def _open_engine(root: Path, overrides: dict[str, object] | None = None) -> Engine:
    from impact_ls.engine import Engine  # deferred: --help and --version stay fast

    engine = Engine.open(root, overrides or {}, progress=_progress_bar("indexing"))
    for warning in engine.warnings:
        logger.warning("%s", warning)
    return engine


def _cmd_analyze(args: argparse.Namespace) -> int:
    from impact_ls.report.json_report import report_to_json
    from impact_ls.report.sarif import report_to_sarif
    from impact_ls.report.text import render_text
    from impact_ls.server.llm_http import client_from_settings

    engine = _open_engine(_root(args.root))
    llm = None if args.no_llm else client_from_settings(engine.settings)
    report = engine.analyze_worktree(base=args.base, files=args.files, llm=llm)
    if args.format == "json":
        sys.stdout.write(report_to_json(report))
    elif args.format == "sarif":
        sys.stdout.write(json.dumps(report_to_sarif(report), indent=2, sort_keys=True) + "\n")
    else:
        sys.stdout.write(render_text(report, color=_use_color(args.color)))
    if args.fail_on == "must" and report.triage.must_inspect:
        return EXIT_FAILED
    if args.fail_on == "may" and (report.triage.must_inspect or report.triage.may_impact):
        return EXIT_FAILED
    return EXIT_OK


def _use_color(choice: str) -> bool:
    if choice == "auto":
        return sys.stdout.isatty() and "NO_COLOR" not in os.environ
    return choice == "always"


def _cmd_tests(args: argparse.Namespace) -> int:
    engine = _open_engine(_root(args.root))
    report = engine.analyze_worktree(base=args.base)
    floor = engine.settings.test_map_min if args.min_conf is None else args.min_conf
    for test in sorted({hit.test for hit in report.tests if hit.conf >= floor}):
        sys.stdout.write(f"{test}\n")
    return EXIT_OK


def _cmd_index(args: argparse.Namespace) -> int:
    from impact_ls.config import settings_from_pyproject
    from impact_ls.graph.project import ProjectIndex

    root = _root(args.root)
    if args.jobs < 0:
        raise UsageError(f"--jobs {args.jobs}: expected 0 (one per core) or a positive number")
    settings, warnings = settings_from_pyproject(root)
    for warning in warnings:
        logger.warning("%s", warning)
    index = ProjectIndex(root, settings)
    index.build(progress=_progress_bar("indexing"), jobs=args.jobs)
    for note in index.notes:
        logger.info("%s", note)
    if args.format == "json":
        sys.stdout.write(json.dumps(_index_json(index), indent=1, sort_keys=True) + "\n")
    else:
        sys.stdout.write(_index_stats_text(index))
    return EXIT_OK


def _index_json(index: ProjectIndex) -> dict[str, object]:
    """The graph as ``{"nodes": [...], "edges": [...]}`` plus dynamic refs and skips, sorted."""
    graph = index.graph
    nodes = []
    for node in sorted(graph.nodes(), key=lambda n: (n.file, n.span.line, n.id)):
        item: dict[str, object] = {
            "id": node.id,
            "kind": node.kind.value,
            "file": node.file,
            "line": node.span.line,
            "end_line": node.span.end_line or node.span.line,
            "signature": node.signature,
        }
        if node.test_id:
            item["test_id"] = node.test_id
        nodes.append(item)
    edges = []
    for edge in sorted(
        graph.edges(),
        key=lambda e: (e.file, e.span.line, e.span.col, e.kind.value, e.source, e.target),
    ):
        entry: dict[str, object] = {
            "from": edge.source,
            "to": edge.target,
            "kind": edge.kind.value,
            "file": edge.file,
            "line": edge.span.line,
            "col": edge.span.col,
        }
        if edge.name_matched:
            entry["name_matched"] = True
        if edge.member:
            entry["member"] = edge.member
        if edge.args is not None:
            entry["args"] = {
                "positional": edge.args.positional,
                "keywords": list(edge.args.keywords),
                "star": edge.args.star,
                "double_star": edge.args.double_star,
            }
        edges.append(entry)
    dynamic = [
        {
            "from": ref.source,
            "name": ref.name,
            "kind": ref.kind.value,
            "file": ref.file,
            "line": ref.span.line,
            "reason": ref.reason,
        }
        for ref in sorted(
            graph.dynamic_refs(), key=lambda r: (r.file, r.span.line, r.span.col, r.name)
        )
    ]
    skipped = [{"file": s.path, "reason": s.reason} for s in index.skipped]
    return {"nodes": nodes, "edges": edges, "dynamic": dynamic, "skipped": skipped}


def _index_stats_text(index: ProjectIndex) -> str:
    """Counts by kind, skipped files with reasons, cache use and CPU/wall time, one per line."""
    graph, stats = index.graph, index.stats
    node_kinds: dict[str, int] = {}
    for node in graph.nodes():
        node_kinds[node.kind.value] = node_kinds.get(node.kind.value, 0) + 1
    edge_kinds: dict[str, int] = {}
    for edge in graph.edges():
        edge_kinds[edge.kind.value] = edge_kinds.get(edge.kind.value, 0) + 1
    dynamic = sum(1 for _ in graph.dynamic_refs())

    def by_kind(counts: dict[str, int]) -> str:
        return ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items()))

    lines = [
        f"root      {index.root}",
        f"files     {stats.files} ({stats.extracted} extracted with {stats.jobs} job(s), "
        f"{stats.from_cache} from cache, {stats.skipped} skipped)",
        f"nodes     {sum(node_kinds.values())} ({by_kind(node_kinds)})",
        f"edges     {sum(edge_kinds.values())} ({by_kind(edge_kinds)})",
        f"dynamic   {dynamic}",
        f"cache     {index.cache_location}",
    ]
    phases = ", ".join(f"{name} {seconds:.2f}" for name, seconds in stats.phases)
    lines.append(f"time      cpu {stats.cpu_s:.2f} s, wall {stats.wall_s:.2f} s ({phases})")
    if index.skipped:
        lines.append(f"skipped   {len(index.skipped)}")
        lines.extend(f"  {s.path}: {s.reason}" for s in index.skipped)
    notes = [n for n in index.notes if not n.startswith("skipped ")]
    lines.extend(f"note      {note}" for note in notes)
    return "\n".join(lines) + "\n"


def _cmd_serve(args: argparse.Namespace) -> int:
    from impact_ls.server.server import build_server

    server = build_server()
    if args.tcp:
        if not 0 < args.port < 65536:
            raise UsageError(f"--port {args.port}: expected a TCP port between 1 and 65535")
        logger.warning("impact-ls listening on %s:%d (one client)", args.host, args.port)
        server.start_tcp(args.host, args.port)
    else:
        server.start_io()
    return EXIT_OK


def _cmd_demo(args: argparse.Namespace) -> int:
    from impact_ls.demo import run_demo

    return run_demo(keep=args.keep, output_format=args.format, color=_use_color("auto"))


def _progress_bar(label: str) -> Callable[[int, int], None] | None:
    """A one-line progress bar on stderr when it is a terminal; None (quiet) when piped."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        width = 30
        filled = width * done // total if total else width
        sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def _cmd_record(args: argparse.Namespace) -> int:
    from impact_ls.record.command import run_record

    return run_record(args, root=_root(args.root))


_COMMANDS = {
    "analyze": _cmd_analyze,
    "tests": _cmd_tests,
    "index": _cmd_index,
    "serve": _cmd_serve,
    "demo": _cmd_demo,
    "record": _cmd_record,
}
