"""Paired A/B of ``bench_analysis.py``'s per-edit analysis between two code trees, on demand.

    python tests/benchmarks/ab_analysis.py TREE_A TREE_B [--project django] [--runs 30]

On a shared machine the load moves CPU times by a third between minutes, so two trees measured
one after the other compare the minutes as much as the code. Here each tree gets a worker
process (``PYTHONPATH`` = the tree, so its own ``impact_ls`` runs) that opens the engine once;
then every timed run goes to both workers back to back, in alternating order, so both see the
same load. The edits are ``bench_analysis.py``'s (a required first parameter per target), the
engine path the editor's (``live=True``). Printed per target: CPU median / p95 of each tree
(``time.process_time`` in the worker) and the ratio of the medians, B / A. A tree is any
checkout of this repository (``git worktree add /tmp/base <commit>``); the project copy under
``.data/analysis/`` is shared, its cache written by whichever worker opens it first.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_analysis import TARGETS, private_copy  # noqa: E402
from bench_graph import fetch  # noqa: E402

_WORKER = """
import json, sys, time
tree, project = sys.argv[1], sys.argv[2]
sys.path[:0] = [tree, tree + "/tests/benchmarks"]
import impact_ls
assert impact_ls.__file__.startswith(tree), impact_ls.__file__
import bench_analysis as bench
from impact_ls.engine import Engine
engine = Engine.open(bench.private_copy(bench.fetch(bench.TARGETS[project][0])))
edits = {t.qid: bench.edit_of(engine, t.qid) for t in bench.TARGETS[project][1]}
for edit in edits.values():
    engine.analyze(edit, live=True)  # the warm-up run
print("ready", flush=True)
for line in sys.stdin:
    start = time.process_time()
    engine.analyze(edits[line.strip()], live=True)
    print(json.dumps(time.process_time() - start), flush=True)
"""


class _Worker:
    """One tree's engine in its own process, timing one analysis per request."""

    def __init__(self, tree: Path, project: str) -> None:
        self.tree = tree
        self.process = subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(tree), project],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(tree)},
        )
        if self._line() != "ready":
            raise SystemExit(f"{tree}: the worker did not start (see its error above)")

    def _line(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def run(self, qid: str) -> float:
        assert self.process.stdin is not None
        self.process.stdin.write(qid + "\n")
        self.process.stdin.flush()
        return float(json.loads(self._line()))

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree_a", type=Path)
    parser.add_argument("tree_b", type=Path)
    parser.add_argument("--project", choices=sorted(TARGETS), default="django")
    parser.add_argument("--runs", type=int, default=30, help="timed runs per target and tree")
    args = parser.parse_args()
    private_copy(fetch(TARGETS[args.project][0]))  # fetched once, before both workers
    # one at a time: the first to open the copy writes its cache, the second reads it
    workers = [_Worker(tree.resolve(), args.project) for tree in (args.tree_a, args.tree_b)]
    print("| function | A median / p95 | B median / p95 | B / A |\n|---|---:|---:|---:|")
    for target in TARGETS[args.project][1]:
        times: list[list[float]] = [[], []]
        for run in range(args.runs):
            order = (0, 1) if run % 2 == 0 else (1, 0)
            for side in order:
                times[side].append(workers[side].run(target.qid) * 1000)
        a, b = (statistics.median(t) for t in times)
        print(
            f"| `{target.qid}` | {a:.1f} / {_p95(times[0]):.1f} ms "
            f"| {b:.1f} / {_p95(times[1]):.1f} ms | {b / a:.2f} |",
            flush=True,
        )
    for worker in workers:
        worker.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
