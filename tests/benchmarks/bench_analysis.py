"""Benchmark the analysis latency of one edit on a real project (django), on demand.

    python tests/benchmarks/bench_analysis.py --project django [--runs 30] [--profile]

Reuses ``bench_graph.fetch`` (the sdist under ``tests/benchmarks/.data/``) and works on a
hard-linked copy in ``.data/analysis/`` so that the graph benchmark dropping its cache never
races this one. The graph is built once (the cache is warm from the second run on), the LLM is
off and there is no git (an sdist is not a repository: co-change degrades with a note).

For each target function the edit adds a required first parameter (after ``self``/``cls``) — a
signature change whose every caller breaks — and ``Engine.analyze([FileEdit(...)], live=True)``
(the editor's path: jedi answers from its cache only) runs ``--runs`` times after one warm-up
run. Reported: median and p95 of CPU seconds (``time.process_time``) and wall seconds, and the
size of the blast radius. Aim: p95 ≤ 100 ms.

Peer, in the same runs: ``ty check`` of the edited file (a type checker asked about the same
edit, the work an editor's checker does on a keystroke), on a second hard-linked copy whose
edited file holds the edited text. Each run times both back to back, alternating which goes
first, so the shared machine's load hits both alike; ty's CPU is its process's user + system
time (all its threads). ``--no-peer`` skips it.
The table is printed and written into ``tests/benchmarks/README.md`` under "Analysis".
"""

from __future__ import annotations

import argparse
import ast
import cProfile
import datetime
import io
import os
import pstats
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE))

from bench_graph import DATA, README, fetch  # noqa: E402

from impact_ls.config import CACHE_DIR_NAME  # noqa: E402
from impact_ls.engine import Engine, FileEdit  # noqa: E402
from impact_ls.model import Report  # noqa: E402
from impact_ls.report.json_report import report_to_json  # noqa: E402

AIM_P95_S = 0.100
_EXTRA = "bench_required"
TY_VERSION = "0.0.108"
TY_VENV = DATA / "ty-venv"


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """A function whose signature the benchmark changes, and why it was chosen."""

    qid: str
    label: str


TARGETS: dict[str, tuple[str, tuple[Target, ...]]] = {
    "django": (
        "django",
        (
            Target(qid="django.utils.timezone.now", label="widely used"),
            Target(qid="django.utils.encoding.force_str", label="widely used"),
            Target(qid="django.db.models.query.QuerySet.filter", label="method, 2,700-line file"),
            Target(qid="django.utils.text.camel_case_to_spaces", label="leaf"),
        ),
    ),
    "click": (
        "click",
        (
            Target(qid="click.utils.echo", label="widely used"),
            Target(qid="click.termui.style", label="widely used"),
            Target(qid="click.utils.make_str", label="leaf"),
        ),
    ),
}


def private_copy(source: Path) -> Path:
    """A hard-linked copy of ``source`` under ``.data/analysis/`` without its cache folder."""
    target = DATA / "analysis" / source.name
    if not target.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(
            source,
            target,
            copy_function=os.link,
            ignore=shutil.ignore_patterns(CACHE_DIR_NAME),
        )
    return target


def ensure_ty() -> Path:
    """``ty`` (pinned) in a throwaway venv under ``.data/``; the path of its binary."""
    binary = TY_VENV / "bin" / "ty"
    if not binary.exists():
        subprocess.run([sys.executable, "-m", "venv", str(TY_VENV)], check=True)
        pip = [str(TY_VENV / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        subprocess.run([*pip, "--disable-pip-version-check", f"ty=={TY_VERSION}"], check=True)
    return binary


@dataclass(frozen=True, slots=True)
class TyPeer:
    """``ty check`` of one edited file, in a copy of the project that holds the edit."""

    binary: Path
    root: Path
    file: str

    @classmethod
    def of(cls, binary: Path, source: Path, edit: FileEdit) -> TyPeer:
        root = DATA / "analysis-ty" / source.name
        if not root.is_dir():
            root.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(
                source, root, copy_function=os.link, ignore=shutil.ignore_patterns(CACHE_DIR_NAME)
            )
        path = root / edit.file
        # unlinked first: the copy shares its inodes with the sdist, which must keep the baseline
        path.unlink()
        path.write_text(edit.current or "", encoding="utf-8")
        return cls(binary=binary, root=root, file=edit.file)

    def restore(self, source: Path) -> None:
        """Put the baseline back (a hard link again), for the next target's edit."""
        path = self.root / self.file
        path.unlink()
        os.link(source / self.file, path)

    def check(self) -> tuple[float, float]:
        """CPU and wall seconds of one ``ty check`` of the edited file."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall0 = time.perf_counter()
        done = subprocess.run(
            [str(self.binary), "check", "--python", sys.prefix, self.file],
            cwd=self.root,
            capture_output=True,
            check=False,
        )
        wall = time.perf_counter() - wall0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode not in (0, 1):  # 1: it found diagnostics
            raise RuntimeError(f"ty check failed: {done.stderr.decode(errors='replace')[:500]}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return cpu, wall


def add_required_parameter(text: str, qid: str, line: int) -> str:
    """``text`` with a required first parameter added to the definition at ``line``."""
    tree = ast.parse(text)
    name = qid.rpartition(".")[2]
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name == name
            and node.lineno <= line <= (node.end_lineno or node.lineno)
        ):
            break
    else:
        raise LookupError(f"no definition of {qid} at line {line}")
    positional = [*node.args.posonlyargs, *node.args.args]
    lines = text.splitlines(keepends=True)
    is_method = bool(positional) and positional[0].arg in ("self", "cls")
    if is_method:
        anchor = positional[0]
        row = lines[anchor.lineno - 1]
        col = anchor.end_col_offset or 0
        lines[anchor.lineno - 1] = row[:col] + f", {_EXTRA}" + row[col:]
    else:
        row = lines[node.lineno - 1]  # ``def name(`` sits on the def line in these projects
        col = row.index("(", row.index(f"def {name}"))
        has_params = bool(positional or node.args.vararg or node.args.kwonlyargs or node.args.kwarg)
        lines[node.lineno - 1] = (
            row[: col + 1] + _EXTRA + (", " if has_params else "") + row[col + 1 :]
        )
    edited = "".join(lines)
    ast.parse(edited)  # the edit must stay valid Python
    return edited


def _percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile (p95 of 30 runs is the 29th smallest)."""
    ordered = sorted(values)
    rank = max(1, -(-int(len(ordered) * fraction * 1000) // 1000))
    return ordered[min(len(ordered), rank) - 1]


def _summary(report: Report) -> dict[str, int]:
    return {
        "changes": len(report.changes),
        "must": len(report.triage.must_inspect),
        "may": len(report.triage.may_impact),
        "low": len(report.triage.low_risk),
        "tests": len(report.tests),
        "batches": len(report.batches),
        "unanalyzable": len(report.unanalyzable),
    }


def edit_of(engine: Engine, qid: str) -> list[FileEdit]:
    """The benchmark's edit of ``qid``: a required parameter added to the text on disk."""
    node = engine.index.graph.node(qid)
    if node is None:
        raise LookupError(f"{qid} is not in the graph")
    baseline = (engine.root / node.file).read_text(encoding="utf-8")
    current = add_required_parameter(baseline, qid, node.span.line)
    return [FileEdit(file=node.file, baseline=baseline, current=current)]


def measure(
    engine: Engine,
    target: Target,
    *,
    runs: int,
    profile: cProfile.Profile | None,
    dump: Path | None = None,
    ty: Path | None = None,
) -> dict[str, object]:
    """Time ``runs`` analyses of a required parameter added to ``target`` (and as many
    ``ty check`` runs of the edited file, interleaved, when ``ty`` is given)."""
    edits = edit_of(engine, target.qid)
    peer = TyPeer.of(ty, engine.root, edits[0]) if ty is not None else None
    peer_cpus: list[float] = []
    report = engine.analyze(edits, live=True)  # warm-up: first-use caches, co-change index
    if dump is not None:  # to check that an optimisation leaves every report byte-identical
        dump.mkdir(parents=True, exist_ok=True)
        (dump / f"{target.qid}.json").write_text(report_to_json(report), encoding="utf-8")
        (dump / f"{target.qid}.repr").write_text(repr(report), encoding="utf-8")
    cpus: list[float] = []
    walls: list[float] = []
    if peer is not None:
        peer.check()  # warm-up: the file system cache
    for run in range(runs):
        if peer is not None and run % 2:
            peer_cpus.append(peer.check()[0])
        if profile is not None:
            profile.enable()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        again = engine.analyze(edits, live=True)
        wall = time.perf_counter() - wall0
        cpu = time.process_time() - cpu0
        if profile is not None:
            profile.disable()
        cpus.append(cpu)
        walls.append(wall)
        assert again == report, "the same edit must give the same report"
        if peer is not None and not run % 2:
            peer_cpus.append(peer.check()[0])
    if peer is not None:
        peer.restore(engine.root)
    return {
        "qid": target.qid,
        "label": target.label,
        "file": edits[0].file,
        "callers": len(engine.index.graph.callers_of(target.qid)),
        "runs": runs,
        "cpu_median": statistics.median(cpus),
        "cpu_p95": _percentile(cpus, 0.95),
        "wall_median": statistics.median(walls),
        "wall_p95": _percentile(walls, 0.95),
        "ty_median": statistics.median(peer_cpus) if peer_cpus else None,
        **_summary(report),
    }


def render(
    project: str, stats: dict[str, int], build_s: float, rows: list[dict[str, object]]
) -> str:
    """A markdown table of one run's numbers and the aim."""
    out = [
        f"### {project} — {datetime.date.today().isoformat()}",
        "",
        f"{stats['files']} files → {stats['nodes']:,} nodes, {stats['edges']:,} edges; graph "
        f"warm (built once, {build_s:.1f} s wall), LLM off, no git (co-change off with a note); "
        f"{os.cpu_count()} cores shared and noisy; Python {sys.version.split()[0]}. "
        "Edit: a required first parameter added to the function. "
        f"Median and p95 over {rows[0]['runs'] if rows else 0} runs of `Engine.analyze` after "
        "one warm-up run. Peer: `ty check` of the edited file "
        f"(ty {TY_VERSION}), interleaved with ours run by run; its CPU median and ours / ty "
        "(medians).",
        "",
        "| function | kind | callers | must / may / low | tests | CPU median | CPU p95 "
        "| wall median | wall p95 | ty check CPU median | ours / ty | aim p95 ≤ 100 ms |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        ms = {k: float(r[k]) * 1000 for k in ("cpu_median", "cpu_p95", "wall_median", "wall_p95")}
        verdict = (
            "ok"
            if max(ms["cpu_p95"], ms["wall_p95"]) <= AIM_P95_S * 1000
            else ("ok (CPU)" if ms["cpu_p95"] <= AIM_P95_S * 1000 else "MISSED")
        )
        out.append(
            f"| `{r['qid']}` | {r['label']} | {r['callers']} | "
            f"{r['must']} / {r['may']} / {r['low']} | {r['tests']} | "
            f"{ms['cpu_median']:.1f} ms | {ms['cpu_p95']:.1f} ms | "
            f"{ms['wall_median']:.1f} ms | {ms['wall_p95']:.1f} ms | {_peer_cells(r)} | "
            f"{verdict} |"
        )
    return "\n".join(out) + "\n"


def _peer_cells(row: dict[str, object]) -> str:
    ty = row.get("ty_median")
    if ty is None:
        return "— | —"
    return f"{float(ty) * 1000:.0f} ms | {float(row['cpu_median']) / float(ty):.2f}"


def write_readme(project: str, table: str) -> None:
    """Replace this project's block under the "Analysis" heading of the README."""
    start, end = f"<!-- bench-analysis:{project} -->", f"<!-- /bench-analysis:{project} -->"
    text = README.read_text(encoding="utf-8") if README.exists() else "# Benchmarks\n"
    block = f"{start}\n{table}{end}"
    if start in text and end in text:
        text = re.sub(
            re.escape(start) + r".*?" + re.escape(end), lambda _: block, text, flags=re.DOTALL
        )
    elif "\n## Analysis\n" in text:
        head, _, tail = text.partition("\n## Analysis\n")
        text = f"{head}\n## Analysis\n\n{block}\n{tail}"
    else:
        text = text.rstrip("\n") + "\n\n## Analysis\n\n" + block + "\n"
    README.write_text(text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", choices=sorted(TARGETS), required=True)
    parser.add_argument("--runs", type=int, default=30, help="timed runs per target (≥ 20)")
    parser.add_argument("--only", help="measure only this qualname")
    parser.add_argument("--profile", action="store_true", help="cProfile the timed runs")
    parser.add_argument("--dump", type=Path, help="write each report (JSON and repr) here")
    parser.add_argument("--no-readme", action="store_true", help="do not update README.md")
    parser.add_argument("--no-peer", action="store_true", help="do not time `ty check`")
    args = parser.parse_args()
    ty = None if args.no_peer else ensure_ty()
    dist, targets = TARGETS[args.project]
    root = private_copy(fetch(dist))
    wall0 = time.perf_counter()
    engine = Engine.open(root)
    build_s = time.perf_counter() - wall0
    profile = cProfile.Profile() if args.profile else None
    rows = [
        measure(engine, target, runs=args.runs, profile=profile, dump=args.dump, ty=ty)
        for target in targets
        if args.only is None or target.qid == args.only
    ]
    table = render(root.name, engine.index.graph.stats(), build_s, rows)
    print(table)
    if profile is not None:
        buffer = io.StringIO()
        pstats.Stats(profile, stream=buffer).sort_stats("cumulative").print_stats(45)
        print(buffer.getvalue())
        buffer = io.StringIO()
        pstats.Stats(profile, stream=buffer).sort_stats("tottime").print_stats(30)
        print(buffer.getvalue())
    if not args.no_readme and args.only is None and not args.profile:
        write_readme(args.project, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
