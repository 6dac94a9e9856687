"""The ``impact-ls`` command line: analyze, tests, index, serve, demo.

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

if TYPE_CHECKING:
    from impact_ls.engine import Engine

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
        "--fail-on", choices=("never", "must", "may"), default="never",
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
    return parser


def _setup_logging(verbose: int, log_file: str | None) -> None:
    level = logging.WARNING - 10 * min(verbose, 2)
    handler: logging.Handler = (
        logging.FileHandler(log_file, encoding="utf-8") if log_file else logging.StreamHandler(sys.stderr)
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
    raise UsageError("index is not available yet")


def _cmd_serve(args: argparse.Namespace) -> int:
    raise UsageError("serve is not available yet")


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


_COMMANDS = {
    "analyze": _cmd_analyze,
    "tests": _cmd_tests,
    "index": _cmd_index,
    "serve": _cmd_serve,
    "demo": _cmd_demo,
}
