"""Benchmark the cached code graph on a real project (django or click), on demand.

    python tests/benchmarks/bench_graph.py --project django [--jobs N] [--no-jedi] [--no-readme]

Downloads the project's pinned sdist (django 5.2.19, click 8.5.1) into ``tests/benchmarks/.data/``
(git-ignored) with ``pip download --no-binary :all: --no-deps``, unpacks it, and measures in one
run:

* plain ``ast.parse`` of every indexed file (the floor any indexer pays);
* a cold index (no cache) and its ratio to ``ast.parse``; a warm start (cache present) as a
  ratio to cold; one-file ``update`` of a large file against ``ast.parse`` of that file;
* peak RSS of a fresh process doing a cold (one job) and a warm build;
* "callers of X" from the graph against jedi's ``Script.get_references`` (warm, second call),
  with how many call sites each finds.

CPU is ``time.process_time`` of this process plus the CPU that extraction workers report.
The table is printed and written into ``tests/benchmarks/README.md`` with the date.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import datetime
import gc
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data"
README = HERE / "README.md"
sys.path.insert(0, str(HERE.parent.parent))

from impact_ls.config import CACHE_DIR_NAME, Settings  # noqa: E402
from impact_ls.graph.modules import source_roots  # noqa: E402
from impact_ls.graph.project import IndexStats, ProjectIndex  # noqa: E402
from impact_ls.graph.workspace import Skipped, discover_files, read_source  # noqa: E402

AIMS = {
    "cold / ast.parse": 3.0,
    "warm / cold": 0.2,
    "update / ast.parse(file)": 1.5,
    "peak RSS MB": 400.0,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """A project to benchmark: its PyPI name, the file to update and the callers to look up."""

    dist: str
    version: str
    update_file: str
    queries: tuple[str, ...]


TARGETS = {
    "django": Target(
        dist="django",
        version="5.2.19",
        update_file="django/db/models/query.py",
        queries=(
            "django.utils.timezone.now",
            "django.db.models.query.QuerySet.filter",
            "django.utils.encoding.force_str",
        ),
    ),
    "click": Target(
        dist="click",
        version="8.5.1",
        update_file="src/click/core.py",
        queries=("click.utils.echo", "click.core.Context.invoke", "click.termui.style"),
    ),
}

# the versions every benchmark measures (bench_analysis and bench_lsp fetch through here too)
PINNED = {target.dist: target.version for target in TARGETS.values()}


def fetch(dist: str) -> Path:
    """The unpacked sdist of ``dist`` (its pinned version) under ``.data/``, downloaded once."""
    version = PINNED.get(dist)
    pattern = f"{dist}-{version}.tar.gz" if version else f"{dist}-*.tar.gz"
    downloads = DATA / "dl"
    downloads.mkdir(parents=True, exist_ok=True)
    archives = sorted(downloads.glob(pattern))
    if not archives:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-binary",
                ":all:",
                "--no-deps",
                "--quiet",
                "-d",
                str(downloads),
                f"{dist}=={version}" if version else dist,
            ],
            check=True,
        )
        archives = sorted(downloads.glob(pattern))
    archive = archives[-1]
    target = DATA / archive.name.removesuffix(".tar.gz")
    if not target.is_dir():
        with tarfile.open(archive) as tar:
            tar.extractall(DATA, filter="data")
    return target


def timed(fn: Callable[[], object]) -> tuple[float, float, object]:
    """Run ``fn``; return (cpu seconds, wall seconds, result)."""
    cpu0, wall0 = time.process_time(), time.perf_counter()
    result = fn()
    return time.process_time() - cpu0, time.perf_counter() - wall0, result


def drop_cache(root: Path) -> None:
    shutil.rmtree(root / CACHE_DIR_NAME, ignore_errors=True)


def peak_rss_mb(root: Path, *, cold: bool) -> float:
    """Peak RSS of a fresh process that builds the index (cold with one job, or warm)."""
    if cold:
        drop_cache(root)
    code = (
        "import resource, sys\n"
        f"sys.path.insert(0, {str(HERE.parent.parent)!r})\n"
        "from pathlib import Path\n"
        "from impact_ls.config import Settings\n"
        "from impact_ls.graph.project import ProjectIndex\n"
        f"index = ProjectIndex.open(Path({str(root)!r}), Settings(), jobs={1 if cold else 0})\n"
        # VmHWM, not ru_maxrss: Linux carries the parent's high-water mark across fork+exec.
        "try:\n"
        "    status = open('/proc/self/status').read().split('VmHWM:')[1]\n"
        "    print(int(status.split()[0]))\n"
        "except (OSError, IndexError):\n"
        "    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return int(out.split()[-1]) / 1024  # Linux reports KiB


def jedi_callers(root: Path, index: ProjectIndex, qid: str) -> tuple[float, int] | None:
    """Seconds of jedi's second ``get_references`` call on ``qid`` and the call sites it finds."""
    import jedi

    node = index.graph.node(qid)
    if node is None:
        return None
    path = root / node.file
    text = path.read_text(encoding="utf-8")
    line_text = text.splitlines()[node.span.line - 1]
    match = re.search(rf"\bdef\s+({re.escape(node.name)})\b", line_text)
    if match is None:
        return None
    # Give jedi the source roots too (src/ layouts), so it resolves imports the way we do.
    extra = [str(root / r) for r in source_roots(index.files()) if r]
    project = jedi.Project(root, added_sys_path=extra)

    def references() -> list[jedi.api.classes.Name]:
        script = jedi.Script(code=text, path=path, project=project)
        return script.get_references(node.span.line, match.start(1), scope="project")

    references()
    _, wall, refs = timed(references)
    calls = 0
    for ref in refs:  # type: ignore[attr-defined]
        code = ref.get_line_code()
        rest = code[ref.column + len(node.name) :] if ref.column is not None else ""
        if rest.lstrip().startswith("("):
            calls += 1
    return wall, calls


def body_edit(text: str, i: int) -> str:
    """``text`` with a local assignment typed into the first method body (a keystroke's edit)."""
    match = re.search(r"^( {8,})return ", text, flags=re.MULTILINE)
    if match is None:
        return text + f"\n_bench_marker_{i} = {i}\n"
    indent = match.group(1)
    return text[: match.start()] + f"{indent}_bench_marker = {i}\n" + text[match.start() :]


def typical(runs: list[IndexStats]) -> IndexStats:
    """The run of median CPU (the lower middle one of an even count), phases and all."""
    return sorted(runs, key=lambda s: s.cpu_s)[(len(runs) - 1) // 2]


def run(project: str, *, jobs: int, use_jedi: bool, repeat: int = 1) -> dict[str, object]:
    target = TARGETS[project]
    root = fetch(target.dist)
    settings = Settings()
    files = discover_files(root, settings).files
    texts = {}
    for rel in files:
        text = read_source(root, rel, settings)
        if not isinstance(text, Skipped):
            texts[rel] = text
    lines = sum(t.count("\n") for t in texts.values())

    def parse_all() -> None:
        for rel, text in texts.items():
            with contextlib.suppress(SyntaxError):
                ast.parse(text, filename=rel)

    parses = [timed(parse_all) for _ in range(repeat)]
    parse_cpu = statistics.median(p[0] for p in parses)
    parse_wall = statistics.median(p[1] for p in parses)

    colds: list[IndexStats] = []
    for _ in range(repeat):
        drop_cache(root)
        colds.append(ProjectIndex(root, settings).build(jobs=jobs))
        gc.collect()
    warms: list[IndexStats] = []
    for _ in range(repeat):
        warm = ProjectIndex(root, settings)  # the last one stays for the update and queries
        warms.append(warm.build(jobs=jobs))
        gc.collect()
    cold_stats, warm_stats = typical(colds), typical(warms)

    update_text = texts[target.update_file]
    update_walls: list[float] = []
    update_cpus: list[float] = []
    parse_file_walls: list[float] = []
    re_resolved: list[int] = []
    for i in range(5 * repeat):
        edited = body_edit(update_text, i)
        cpu, wall, _ = timed(lambda edited=edited: warm.update(target.update_file, edited))
        update_walls.append(wall)
        update_cpus.append(cpu)
        re_resolved.append(len(warm._builder.last_resolved))
        _, pwall, _ = timed(lambda edited=edited: ast.parse(edited))
        parse_file_walls.append(pwall)
    warm.update(target.update_file, update_text)

    queries = []
    for qid in target.queries:
        graph = warm.graph
        graph.callers_of(qid)
        _, q_wall, edges = timed(lambda qid=qid, graph=graph: graph.callers_of(qid))
        jedi_result = jedi_callers(root, warm, qid) if use_jedi else None
        queries.append(
            {
                "qid": qid,
                "graph_s": q_wall,
                "graph_sites": len(edges),  # type: ignore[arg-type]
                "graph_name_matched": sum(e.name_matched for e in edges),  # type: ignore[attr-defined]
                "jedi_s": jedi_result[0] if jedi_result else None,
                "jedi_sites": jedi_result[1] if jedi_result else None,
            }
        )

    rss_warm = peak_rss_mb(root, cold=False)
    rss_cold = peak_rss_mb(root, cold=True)
    graph_stats = warm.graph.stats()
    return {
        "project": root.name,
        "files": len(texts),
        "lines": lines,
        "nodes": graph_stats["nodes"],
        "edges": graph_stats["edges"],
        "jobs": cold_stats.jobs,
        "cores": os.cpu_count(),
        "repeat": repeat,
        "parse_cpu": parse_cpu,
        "parse_wall": parse_wall,
        "cold_cpu": statistics.median(s.cpu_s for s in colds),
        "cold_wall": statistics.median(s.wall_s for s in colds),
        "cold_cpu_samples": [s.cpu_s for s in colds],
        "cold_phases": cold_stats.phases,
        "warm_cpu": statistics.median(s.cpu_s for s in warms),
        "warm_wall": statistics.median(s.wall_s for s in warms),
        "warm_cpu_samples": [s.cpu_s for s in warms],
        "warm_phases": warm_stats.phases,
        "warm_extracted": warm_stats.extracted,
        "update_file": target.update_file,
        "update_lines": update_text.count("\n"),
        "update_wall": statistics.median(update_walls),
        "update_cpu": statistics.median(update_cpus),
        "update_cpu_samples": update_cpus,
        "update_re_resolved": max(re_resolved),
        "parse_file_wall": statistics.median(parse_file_walls),
        "rss_cold_mb": rss_cold,
        "rss_warm_mb": rss_warm,
        "queries": queries,
    }


def _ok(value: float, aim: float, *, higher_is_better: bool = False) -> str:
    good = value >= aim if higher_is_better else value <= aim
    return "ok" if good else "MISSED"


def render(r: dict[str, object]) -> str:
    """A markdown table of one run's numbers and their aims."""
    f = float
    cold_ratio_cpu = f(r["cold_cpu"]) / f(r["parse_cpu"])
    cold_ratio_wall = f(r["cold_wall"]) / f(r["parse_wall"])
    warm_ratio_cpu = f(r["warm_cpu"]) / f(r["cold_cpu"])
    warm_ratio_wall = f(r["warm_wall"]) / f(r["cold_wall"])
    update_ratio = f(r["update_wall"]) / f(r["parse_file_wall"])
    rss = max(f(r["rss_cold_mb"]), f(r["rss_warm_mb"]))

    def phases(key: str) -> str:
        return ", ".join(f"{n} {s:.2f}" for n, s in r[key])  # type: ignore[attr-defined]

    out = [
        f"### {r['project']} — {datetime.date.today().isoformat()}",
        "",
        f"{r['files']} files, {r['lines']:,} lines → {r['nodes']:,} nodes, {r['edges']:,} edges; "
        f"{r['cores']} cores, cold index with {r['jobs']} extraction job(s); "
        f"Python {sys.version.split()[0]}.",
        "",
        "| measure | CPU s | wall s | ratio (CPU / wall) | aim |",
        "|---|---:|---:|---:|---|",
        f"| ast.parse, all files | {f(r['parse_cpu']):.2f} | {f(r['parse_wall']):.2f} | 1 | |",
        f"| cold index (no cache) | {f(r['cold_cpu']):.2f} | {f(r['cold_wall']):.2f} | "
        f"{cold_ratio_cpu:.2f}× / {cold_ratio_wall:.2f}× ast.parse | ≤ 3× "
        f"({_ok(cold_ratio_cpu, 3.0)}) |",
        f"| warm start (cache) | {f(r['warm_cpu']):.2f} | {f(r['warm_wall']):.2f} | "
        f"{warm_ratio_cpu:.2f}× / {warm_ratio_wall:.2f}× cold | ≤ 0.2× "
        f"({_ok(warm_ratio_wall, 0.2)}) |",
        f"| update `{r['update_file']}` ({r['update_lines']} lines) | {f(r['update_cpu']):.3f} | "
        f"{f(r['update_wall']):.3f} | {update_ratio:.2f}× its ast.parse "
        f"({f(r['parse_file_wall']):.3f} s); {r['update_re_resolved']} file(s) re-resolved "
        f"| ≤ 1.5× ({_ok(update_ratio, 1.5)}) |",
        f"| peak RSS, fresh process | | | cold/1 job {f(r['rss_cold_mb']):.0f} MB, "
        f"warm {f(r['rss_warm_mb']):.0f} MB | ≤ 400 MB ({_ok(rss, 400.0)}) |",
        "",
        f"Phases, cold: {phases('cold_phases')}. Warm: {phases('warm_phases')} "
        f"({r['warm_extracted']} re-extracted).",
        "",
        "| callers of | graph | sites (name-matched) | jedi get_references (2nd call) "
        "| call sites | speed-up |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for q in r["queries"]:  # type: ignore[attr-defined]
        if q["jedi_s"] is None:
            jedi_cells = "n/a | n/a | n/a"
        else:
            speedup = q["jedi_s"] / max(q["graph_s"], 1e-9)
            jedi_cells = (
                f"{q['jedi_s']:.2f} s | {q['jedi_sites']} | {speedup:,.0f}× "
                f"({_ok(speedup, 100, higher_is_better=True)})"
            )
        out.append(
            f"| `{q['qid']}` | {q['graph_s'] * 1e6:.0f} µs | {q['graph_sites']} "
            f"({q['graph_name_matched']}) | {jedi_cells} |"
        )
    return "\n".join(out) + "\n"


def write_readme(project: str, table: str) -> None:
    """Replace this project's section of the README (between its markers) with ``table``."""
    start, end = f"<!-- bench:{project} -->", f"<!-- /bench:{project} -->"
    text = README.read_text(encoding="utf-8") if README.exists() else "# Benchmarks\n"
    block = f"{start}\n{table}{end}"
    if start in text and end in text:
        text = re.sub(
            re.escape(start) + r".*?" + re.escape(end), lambda _: block, text, flags=re.DOTALL
        )
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    README.write_text(text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", choices=sorted(TARGETS), required=True)
    parser.add_argument("--jobs", type=int, default=0, help="extraction jobs (default: cores)")
    parser.add_argument("--no-jedi", action="store_true", help="skip the jedi comparison")
    parser.add_argument("--no-readme", action="store_true", help="do not update README.md")
    parser.add_argument("--json", action="store_true", help="also print the raw numbers")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="measure parse, cold, warm (and 5 updates) N times; report medians (noisy machines)",
    )
    args = parser.parse_args()
    result = run(args.project, jobs=args.jobs, use_jedi=not args.no_jedi, repeat=args.repeat)
    table = render(result)
    print(table)
    if args.json:
        print(json.dumps(result, indent=1, default=str))
    if not args.no_readme:
        write_readme(args.project, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
