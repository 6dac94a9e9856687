"""Mutation benchmark of test selection: impact-ls against pytest-testmon, pytest-impacted and a
naive file-name match, on real libraries, on demand.

    python tests/benchmarks/bench_rts.py [--libs more-itertools,boltons,tomlkit]
        [--mutations 40] [--seed 0] [--only-ours] [--impact-python PATH] [--json OUT]

Per library (pinned sdists, see ``rts/projects.py``): a git tree whose HEAD is the clean code,
a venv with its test dependencies and the peers. Seeded ``ast`` mutations of five kinds
(``rts/mutate.py``) are applied one at a time to the working tree. Ground truth: the full suite
on the mutated tree; its failing node ids (failures, errors, and every test of a module or
folder that failed to collect), minus those failing on the clean tree too. The truth is cached
per (library version, mutation) in ``.data/rts/truth/`` so re-measuring a newer selector does
not rerun the suites. Then every selector runs on the same mutated tree (``rts/selectors.py``)
and the metrics (``rts/metrics.py``) are printed and written into ``tests/benchmarks/README.md``
between the ``bench-rts`` markers. Child processes run one at a time.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from rts.metrics import AIMS, kind_table, table  # noqa: E402
from rts.mutate import KINDS, Mutation, apply, candidates, choose  # noqa: E402
from rts.projects import DATA, LIBRARIES, Library, prepare, reset_tree, tool_versions  # noqa: E402
from rts.pytest_run import failing_ids, run_pytest  # noqa: E402
from rts.selectors import PEERS, SELECTORS, Context, select, set_up  # noqa: E402

README = HERE / "README.md"
MARK_START, MARK_END = "<!-- bench-rts -->", "<!-- /bench-rts -->"
DEFAULT_LIBS = ("boltons", "tomlkit", "more-itertools")


def _log(message: str) -> None:
    stamp = time.strftime("%H:%M:%S")
    sys.stderr.write(f"[{stamp}] {message}\n")
    sys.stderr.flush()


class TruthCache:
    """Ground truth per mutation key, one JSON file per library pin, saved after each entry."""

    def __init__(self, lib: Library) -> None:
        # The pytest arguments shape the suite (a deselected test), so they key the file too.
        args = hashlib.sha256(repr(lib.pytest_args).encode()).hexdigest()[:8]
        self.path = DATA / "truth" / f"{lib.key}-{args}.json"
        self.data: dict[str, Any] = (
            json.loads(self.path.read_text(encoding="utf-8")) if self.path.exists() else {}
        )

    def get(self, key: str) -> Any:
        """The cached entry for ``key``, or ``None``."""
        return self.data.get(key)

    def put(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key`` and write the file."""
        self.data[key] = value
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, sort_keys=True), encoding="utf-8")
        tmp.replace(self.path)


def _clear_run_state(lib: Library) -> None:
    # Hypothesis replays examples it saved from earlier failures: one mutation's failures
    # must not steer the next one's run.
    shutil.rmtree(lib.tree / ".hypothesis", ignore_errors=True)


def _baseline(lib: Library, cache: TruthCache) -> dict[str, Any]:
    base = cache.get("__baseline__")
    if base is None:
        _log(f"{lib.key}: full suite on the clean tree")
        _clear_run_state(lib)
        out = run_pytest(lib, [], timeout=3600)
        if not out.recorded:
            raise SystemExit(f"{lib.key}: the clean suite did not run:\n{out.tail}")
        base = {
            "suite": sorted(out.collected),
            "failing": sorted(failing_ids(out, out.collected)),
            "wall": out.cost.wall,
            "cpu": out.cost.cpu,
        }
        cache.put("__baseline__", base)
    return base


def _truth(lib: Library, m: Mutation, cache: TruthCache, base: dict[str, Any]) -> dict[str, Any]:
    hit = cache.get(m.key)
    if hit is not None:
        return dict(hit)
    _clear_run_state(lib)
    suite = tuple(base["suite"])
    out = run_pytest(lib, [], timeout=max(300.0, 10 * base["wall"]))
    if out.timed_out or not out.recorded:
        entry = {"valid": False, "why": "timeout" if out.timed_out else out.tail[-400:]}
    else:
        failing = failing_ids(out, suite) - set(base["failing"])
        entry = {"valid": True, "failing": sorted(failing), "wall": out.cost.wall}
    cache.put(m.key, entry)
    return entry


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def run_library(lib: Library, args: argparse.Namespace, names: list[str]) -> dict[str, Any]:
    """Mutate ``lib``, take the ground truth, run every selector; rows and setup costs."""
    prepare(lib)
    reset_tree(lib)
    cache = TruthCache(lib)
    base = _baseline(lib, cache)
    suite = tuple(base["suite"])
    found = candidates(lib.tree, lib.package_dir, lib.tree / lib.tests)
    mutations = choose(found, args.mutations, args.seed)
    ctx = Context(lib=lib, impact_python=args.impact_python, suite=suite)
    _log(f"{lib.key}: {len(suite)} tests, {len(mutations)} mutations; setting up selectors")
    set_up(ctx, peers=not args.only_ours)
    trees = [lib.tree] + ([ctx.record_tree] if ctx.record_tree else [])
    rows = []
    (DATA / f"rows-{lib.key}.jsonl").unlink(missing_ok=True)
    for i, m in enumerate(mutations, 1):
        original = (lib.tree / m.file).read_text(encoding="utf-8")
        mutated = apply(original, m.edits)
        for tree in trees:
            _write(tree / m.file, mutated)
        truth = _truth(lib, m, cache, base)
        row: dict[str, Any] = {
            "library": lib.key,
            "mutation": m.to_json(),
            "kind": m.kind,
            "suite_size": len(suite),
            "valid": truth["valid"],
            "failing": truth.get("failing", []),
            "invalid_reason": truth.get("why", ""),
            "selectors": {},
        }
        for name in names:
            _clear_run_state(lib)
            sel = select(name, ctx, [m.file])
            row["selectors"][name] = (
                None
                if sel is None
                else {
                    "selected": sorted(sel.selected),
                    "printed": sel.raw,
                    "wall": sel.cost.wall,
                    "cpu": sel.cost.cpu,
                    "error": sel.error,
                }
            )
        for tree in trees:
            reset_tree_at(tree)
        rows.append(row)
        with (DATA / f"rows-{lib.key}.jsonl").open("a", encoding="utf-8") as log:
            log.write(json.dumps(row) + "\n")
        picks = " ".join(
            f"{n}={len(row['selectors'][n]['selected'])}"
            for n in names
            if row["selectors"][n] is not None
        )
        _log(
            f"{lib.key} {i}/{len(mutations)} {m.kind} {m.target} failing="
            f"{len(row['failing']) if row['valid'] else 'invalid'} {picks}"
        )
    return {
        "library": lib.key,
        "suite_size": len(suite),
        "baseline_failing": base["failing"],
        "baseline_suite_wall": base["wall"],
        "candidates": {k: len(v) for k, v in found.items()},
        "setup_wall": ctx.setup or {},
        "record_note": ctx.record_note,
        "tools": tool_versions(lib),
        "rows": rows,
    }


def reset_tree_at(tree: Path) -> None:
    """``git checkout`` the tracked files of ``tree`` back to HEAD and check it is clean."""
    subprocess.run(["git", "checkout", "-q", "--", "."], cwd=tree, check=True)
    dirty = subprocess.run(
        ["git", "status", "--porcelain"], cwd=tree, capture_output=True, text=True, check=True
    ).stdout
    if dirty.strip():
        raise SystemExit(f"{tree} is not clean after a mutation:\n{dirty}")


def render(results: list[dict[str, Any]], names: list[str], args: argparse.Namespace) -> str:
    """The README section: setup line, overall, per library and per kind tables."""
    rows = [r for res in results for r in res["rows"]]
    notes = {"ours+record": next((r["record_note"] for r in results if r["record_note"]), "")}
    today = datetime.date.today().isoformat()
    tools = results[0]["tools"] if results else {}
    impact = subprocess.run(
        [str(args.impact_python), "-m", "impact_ls", "--version"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    lines = [
        f"### Test selection on mutations — {today}",
        "",
        f"{impact} ({args.impact_python}); pytest {tools.get('pytest')}, pytest-testmon "
        f"{tools.get('pytest-testmon')}, pytest-impacted {tools.get('pytest-impacted')}; "
        f"seed {args.seed}, {args.mutations} mutations per library; Python "
        f"{platform.python_version()}; 2 shared cores. {AIMS}.",
        "",
        "| library | tests | mutations | invalid | breaking | by kind (breaking) | clean-suite s |",
        "|---|---:|---:|---:|---:|---|---:|",
    ]
    for res in results:
        valid = [r for r in res["rows"] if r["valid"]]
        by_kind = ", ".join(
            f"{k} {sum(r['kind'] == k for r in valid)} "
            f"({sum(r['kind'] == k and bool(r['failing']) for r in valid)})"
            for k in KINDS
        )
        lines.append(
            f"| {res['library']} | {res['suite_size']} | {len(res['rows'])} "
            f"| {len(res['rows']) - len(valid)} | {sum(bool(r['failing']) for r in valid)} "
            f"| {by_kind} | {res['baseline_suite_wall']:.1f} |"
        )
    lines += ["", "**All libraries**", "", table(rows, names, notes), ""]
    for res in results:
        lines += [f"**{res['library']}**", "", table(res["rows"], names, notes), ""]
    lines += [
        "**By mutation kind** (all libraries; safety / mutation-safety / selection)",
        "",
        kind_table(rows, names, KINDS),
        "",
    ]
    setup = "; ".join(
        f"{res['library']}: " + ", ".join(f"{k} {v:.1f} s" for k, v in res["setup_wall"].items())
        for res in results
    )
    lines += [f"Set-up, once per library (wall): {setup}.", ""]
    return "\n".join(lines)


def _update_readme(section: str) -> None:
    text = README.read_text(encoding="utf-8")
    block = f"{MARK_START}\n{section}{MARK_END}"
    if MARK_START in text and MARK_END in text:
        head, rest = text.split(MARK_START, 1)
        _, tail = rest.split(MARK_END, 1)
        text = head + block + tail
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    README.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the tables, update the README, optionally dump JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--libs", default=",".join(DEFAULT_LIBS), help="comma-separated")
    parser.add_argument("--mutations", type=int, default=40, help="per library")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only-ours", action="store_true", help="skip testmon and impacted")
    parser.add_argument(
        "--impact-python",
        type=Path,
        default=Path(sys.executable),
        help="interpreter whose impact_ls is measured (default: this one)",
    )
    parser.add_argument("--json", type=Path, help="write every number and row here")
    parser.add_argument("--no-readme", action="store_true", help="do not rewrite README.md")
    args = parser.parse_args(argv)
    unknown = [n for n in args.libs.split(",") if n not in LIBRARIES]
    if unknown:
        parser.error(f"unknown libraries {unknown}; known: {sorted(LIBRARIES)}")
    names = [n for n in SELECTORS if not (args.only_ours and n in PEERS and n != "naive")]
    started = time.perf_counter()
    results = []
    for name in args.libs.split(","):
        results.append(run_library(LIBRARIES[name], args, names))
        # Written after each library, so a run cut short still leaves its finished part.
        section = render(results, names, args)
        section += f"Whole run: {(time.perf_counter() - started) / 60:.1f} min wall.\n"
        _report(section, results, args)
    sys.stdout.write(section)
    return 0


def _report(section: str, results: list[dict[str, Any]], args: argparse.Namespace) -> None:
    if not args.no_readme:
        _update_readme(section)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "args": vars(args)
                    | {"impact_python": str(args.impact_python), "json": str(args.json)},
                    "results": results,
                },
                indent=1,
            ),
            encoding="utf-8",
        )


if __name__ == "__main__":
    raise SystemExit(main())
