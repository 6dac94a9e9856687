"""The ``impact-ls`` command line: analyze, tests, test, index, serve, demo, mcp, record.

The only place that configures logging. Each subcommand lives in its own ``_cmd_*`` function;
``main`` maps a usage error to one line and exit status 2, another deliberate ``ImpactError`` to
one line and status 1, and any other exception to one line naming it and status 1 (``--debug``
re-raises it with its traceback). A reader that closes the pipe early (``impact-ls tests |
head -1``) ends the command quietly with status 141, as ``git log | head`` does.

Without ``--root`` the project is the one enclosing the current folder (``rootdir.py``); when
that is not the current folder, one line on stderr says which root was used.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from impact_ls import __version__
from impact_ls.errors import ImpactError, UsageError
from impact_ls.record.command import add_record_parser
from impact_ls.rootdir import ProjectRoot, find_project_root, given_root

if TYPE_CHECKING:
    from impact_ls.engine import Engine, FileEdit
    from impact_ls.graph.project import ProjectIndex
    from impact_ls.model import Report

logger = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_PIPE = 128 + 13  # what a shell reports for a command that SIGPIPE ended


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so ``main`` owns every exit status."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message} (see '{self.prog} --help')")


def _note(message: str) -> None:
    """One line for the person at the terminal, on stderr so that stdout stays parseable."""
    sys.stderr.write(f"impact-ls: {message}\n")


def _root(value: str | None) -> Path:
    """The project root: ``--root``, else the project enclosing the current folder (said so)."""
    found: ProjectRoot = given_root(value) if value is not None else find_project_root(Path.cwd())
    if value is None and found.path != Path.cwd().resolve():
        _note(f"project root {found.path} ({found.how})")
    return found.path


_ROOT_HELP = (
    "project root (default: the enclosing git work tree, else the nearest folder upward with a "
    "pyproject.toml or setup.cfg, else the current folder)"
)


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
    analyze.add_argument("--root", help=_ROOT_HELP)
    analyze.add_argument("--base", default="HEAD", help="git revision to compare with")
    analyze.add_argument("--format", choices=("text", "json", "sarif", "html"), default="text")
    analyze.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE")
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
    tests.add_argument("--root", help=_ROOT_HELP)
    tests.add_argument("--base", default="HEAD")
    tests.add_argument("--min-conf", type=float, default=None, help="minimum confidence")

    test = sub.add_parser(
        "test",
        help="run exactly the affected tests with the project's interpreter",
        description="Run pytest on exactly the affected tests, with the configured 'python', "
        "else the project's .venv, else this interpreter; run nothing when nothing is affected.",
    )
    test.add_argument("--root", help=_ROOT_HELP)
    test.add_argument("--base", default="HEAD")
    test.add_argument("--min-conf", type=float, default=None, help="minimum confidence")
    test.add_argument("--python", help="interpreter with the project's pytest")
    test.add_argument("pytest_args", nargs=argparse.REMAINDER, metavar="-- PYTEST ARGS")

    index = sub.add_parser("index", help="build or refresh the cached code graph")
    index.add_argument("--root", help=_ROOT_HELP)
    index.add_argument("--format", choices=("json", "stats"), default="stats")
    index.add_argument("--jobs", type=int, default=0, help="extraction processes (default: cores)")

    serve = sub.add_parser("serve", help="run the language server (stdio by default)")
    serve.add_argument("--tcp", action="store_true", help="listen on TCP instead of stdio")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=2087)

    sub.add_parser("mcp", help="serve the analysis to coding agents over MCP (stdio)")

    demo = sub.add_parser("demo", help="show a blast radius on a bundled example project")
    demo.add_argument("--keep", action="store_true", help="keep the temporary project")
    demo.add_argument("--format", choices=("text", "json"), default="text")

    add_record_parser(sub)
    return parser


def _setup_logging(verbose: int, log_file: str | None) -> None:
    level = logging.WARNING - 10 * min(verbose, 2)
    try:
        handler: logging.Handler = (
            logging.FileHandler(log_file, encoding="utf-8")
            if log_file
            else logging.StreamHandler(sys.stderr)
        )
    except OSError as exc:
        raise UsageError(f"--log-file {log_file!r}: {exc.strerror or exc}") from exc
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    logging.getLogger("pygls.protocol").setLevel(logging.WARNING)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so that the exit flush of a closed pipe raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


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
        status = handler(args)
        if not sys.stdout.closed:  # the language server closes it on exit
            sys.stdout.flush()  # a closed pipe shows here, inside the handlers below
        return status
    except BrokenPipeError:
        # The reader has what it wanted (``| head -1``): end quietly, as git does.
        _quiet_stdout()
        return EXIT_PIPE
    except UsageError as exc:
        print(f"impact-ls: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ImpactError as exc:
        print(f"impact-ls: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if debug:
            raise
        logger.debug("unexpected error", exc_info=True)
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        print(
            f"impact-ls: error: unexpected {detail} (rerun with --debug for the traceback)",
            file=sys.stderr,
        )
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

    root = _root(args.root)
    engine = _open_engine(root)
    llm = None if args.no_llm else client_from_settings(engine.settings)
    report = _worktree_report(engine, base=args.base, files=args.files, llm=llm)
    if args.format == "json":
        rendered = report_to_json(report)
    elif args.format == "sarif":
        sarif = report_to_sarif(report, root_uri=root.as_uri() + "/")
        rendered = json.dumps(sarif, indent=2, sort_keys=True) + "\n"
    elif args.format == "html":
        from impact_ls.report.html import render_html

        rendered = render_html(report, root=engine.root)
    else:
        color = _use_color(args.color) and args.output is None
        rendered = render_text(report, color=color)
    _emit(rendered, args.output)
    if args.fail_on == "must" and report.triage.must_inspect:
        return EXIT_FAILED
    if args.fail_on == "may" and (report.triage.must_inspect or report.triage.may_impact):
        return EXIT_FAILED
    return EXIT_OK


def _emit(text: str, output: str | None) -> None:
    """``text`` to stdout, or to the file ``output`` (its folder must exist)."""
    if output is None:
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"-o {output}: cannot write the report ({exc.strerror or exc})") from exc


def _worktree_report(
    engine: Engine, *, base: str, files: Sequence[str] = (), llm: Any = None
) -> Report:
    """The working tree (or the FILEs) against ``base``; FILEs are checked before anything runs."""
    from impact_ls.errors import RevisionError

    if engine.repo is not None and engine.head() is None:
        if engine.settings.baseline == "saved":
            # No commit yet, and the command line has no editor buffers: the saved text *is* the
            # working tree, so there is nothing to compare (rather than an error the user cannot
            # fix by following its own advice).
            report = engine.analyze([], base="saved")
            note = (
                'baseline = "saved": on the command line the saved text is the working tree '
                "itself, so there is no change to analyze until the first commit"
            )
            return dataclasses.replace(
                report, audit=dataclasses.replace(report.audit, notes=(*report.audit.notes, note))
            )
        raise RevisionError(
            f"{engine.root} has no commits yet, so {base!r} names nothing to compare with; "
            "commit once (git add -A && git commit -m start), then analyze the next change"
        )
    edits = engine.worktree_edits(base=base)  # first: an unknown base is the error to report
    selection = _file_selection(engine, files, base=base)
    if selection is not None:
        edits = [e for e in edits if _selected(e, selection)]
    return engine.analyze(edits, base=base, llm=llm)


def _selected(edit: FileEdit, selection: Sequence[str]) -> bool:
    return any(edit.file == s or edit.file.startswith(s.rstrip("/") + "/") for s in selection)


def _file_selection(engine: Engine, files: Sequence[str], *, base: str) -> list[str] | None:
    """FILE arguments as root-relative paths (folders end in ``/``); None means every file.

    A FILE is read relative to the current folder, as git does, else relative to the root. One
    that is neither on disk nor in ``base`` (a file deleted since still counts), or that lies
    outside the root, is a usage error naming it.
    """
    selection: list[str] = []
    for given in files:
        path = Path(given).expanduser()
        candidates = [path] if path.is_absolute() else [Path.cwd() / path, engine.root / path]
        try:
            on_disk = next((c for c in candidates if c.exists()), None)
        except OSError as exc:  # a name too long for the file system, say
            raise UsageError(f"FILE {given}: {exc.strerror or exc}") from exc
        if on_disk is not None:
            resolved = on_disk.resolve()
            if resolved == engine.root:
                return None
            rel = engine.relpath(resolved)
            if rel is None:
                raise UsageError(f"FILE {given}: lies outside the project root {engine.root}")
            selection.append(rel + "/" if resolved.is_dir() else rel)
            continue
        deleted = (
            rel
            for candidate in candidates
            if (rel := engine.relpath(candidate)) is not None
            and engine.baseline_text(rel, base=base) is not None
        )
        rel = next(deleted, None)
        if rel is None:
            raise UsageError(f"FILE {given}: no such file (neither on disk nor at {base})")
        selection.append(rel)
    return selection or None


def _use_color(choice: str) -> bool:
    if choice == "auto":
        return sys.stdout.isatty() and "NO_COLOR" not in os.environ
    return choice == "always"


def _cmd_tests(args: argparse.Namespace) -> int:
    root = _root(args.root)
    _, tests, why = _selection(args, root)
    here = Path.cwd().resolve()
    if not tests:
        # ``pytest $(impact-ls tests)`` with nothing printed runs the whole suite: say why
        _note(f"no test selected: {why}")
    for test in tests:
        sys.stdout.write(f"{_test_from(test, root, here)}\n")
    return EXIT_OK


def _cmd_test(args: argparse.Namespace) -> int:
    from impact_ls.run_selected import run_selected

    root = _root(args.root)
    pytest_args = list(args.pytest_args)
    if pytest_args[:1] == ["--"]:
        pytest_args = pytest_args[1:]
    engine, tests, why = _selection(args, root)
    if not tests:
        sys.stdout.write(f"impact-ls: no affected test to run: {why}\n")
        return EXIT_OK
    return run_selected(root, engine.settings, tests, pytest_args, python=args.python)


def _selection(args: argparse.Namespace, root: Path) -> tuple[Engine, list[str], str]:
    """The engine, every selected node id at the asked confidence, and why none if so."""
    from impact_ls.report.empty import why_nothing_selected

    engine = _open_engine(root)
    report = _worktree_report(engine, base=args.base)
    for note in report.audit.notes:
        if note.startswith("baseline ="):
            _note(note)
    floor = engine.settings.test_map_min if args.min_conf is None else args.min_conf
    tests = [str(t) for t in report.selected_tests(floor)]
    if tests:
        return engine, tests, ""
    why = why_nothing_selected(
        report, base=args.base, collected=engine.collected_count(), min_conf=floor
    )
    return engine, tests, why


def _test_from(test: str, root: Path, here: Path) -> str:
    """A node id as pytest takes it from ``here``: relative to it when it is inside the root.

    So ``pytest $(impact-ls tests)`` also works from a subfolder of the project.
    """
    if here == root or root not in here.parents:
        return test
    path, sep, rest = test.partition("::")
    return os.path.relpath(root / path, here).replace(os.sep, "/") + sep + rest


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


def _cmd_mcp(args: argparse.Namespace) -> int:
    from impact_ls.agent.server import run_stdio

    run_stdio()
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
    "test": _cmd_test,
    "index": _cmd_index,
    "serve": _cmd_serve,
    "demo": _cmd_demo,
    "mcp": _cmd_mcp,
    "record": _cmd_record,
}
