"""Benchmark ``impact-ls record`` against a plain pytest run of the same suite, on demand.

    python tests/benchmarks/bench_record.py [--project more-itertools==10.5.0] [--rounds 3]
                                            [--no-readme] [--json]

Downloads the pinned sdist into ``tests/benchmarks/.data/`` (git-ignored), unpacks it and makes
it a git repository of one commit (a record stores HEAD; a project without a pytest config gets
an empty ``pytest.ini``, else pytest would take impact-ls's own). Then, in one session, after one
warm-up run of each (bytecode, fact cache, the coverage copy): ``rounds`` alternating runs of plain
``python -m pytest -q -p no:cacheprovider``, of the same under ``coverage run --source=.`` (the
peer: coverage.py's own line tracing, no contexts) and of ``impact-ls record``, with the same
interpreter, each a fresh process. Wall is ``perf_counter``; CPU is ``RUSAGE_CHILDREN`` (the
process and everything it waited for: pytest under impact-ls, the index workers). Both runs set
``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``: the suites need no plugins and this environment's own
(pytest-lsp, hypothesis, …) would only add the same start-up cost to both. Medians are reported
with the size of ``record.sqlite3`` and what it holds; the table goes into
``tests/benchmarks/README.md`` between the ``bench:record`` markers.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data"
README = HERE / "README.md"
sys.path.insert(0, str(HERE.parent.parent))

from impact_ls.record.store import RecordStore  # noqa: E402


def fetch(spec: str) -> Path:
    """The unpacked sdist of ``spec`` (``name==version``) under ``.data/``, as a git repo."""
    downloads = DATA / "dl"
    downloads.mkdir(parents=True, exist_ok=True)
    name, _, version = spec.partition("==")
    pattern = f"{name.replace('-', '[-_]')}-{version}.tar.gz"
    archives = [p for p in downloads.iterdir() if re.fullmatch(pattern, p.name, re.IGNORECASE)]
    if not archives:
        subprocess.run(
            [
                *(sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps"),
                *("--quiet", "-d", str(downloads), spec),
            ],
            check=True,
        )
        archives = [p for p in downloads.iterdir() if re.fullmatch(pattern, p.name, re.I)]
    archive = archives[0]
    target = DATA / archive.name.removesuffix(".tar.gz")
    if not target.is_dir():
        with tarfile.open(archive) as tar:
            tar.extractall(DATA, filter="data")
    if not (target / ".git").exists():
        # Without a pytest config of its own, pytest would climb to impact-ls's pyproject.toml.
        if not _has_pytest_config(target):
            (target / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@invalid"]
        subprocess.run([*git, "init", "-q"], cwd=target, check=True)
        subprocess.run([*git, "add", "-A"], cwd=target, check=True)
        subprocess.run([*git, "commit", "-qm", f"sdist {spec}"], cwd=target, check=True)
    return target


def _has_pytest_config(root: Path) -> bool:
    checks = {
        "pytest.ini": "",
        "pyproject.toml": "[tool.pytest.ini_options]",
        "tox.ini": "[pytest]",
        "setup.cfg": "[tool:pytest]",
    }
    for name, marker in checks.items():
        path = root / name
        if path.is_file() and marker in path.read_text(encoding="utf-8", errors="replace"):
            return True
    return False


def measured(command: list[str], root: Path) -> tuple[float, float, str]:
    """Run ``command`` in ``root``; return (wall s, CPU s of it and its children, stdout)."""
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{command} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return wall, cpu, done.stdout


def run(spec: str, rounds: int) -> dict[str, object]:
    root = fetch(spec)
    pytest = ["-m", "pytest", "-q", "-p", "no:cacheprovider"]
    plain = [sys.executable, *pytest]
    data_file = str(DATA / "bench-record.coverage")
    coverage = [sys.executable, "-m", "coverage", "run", f"--data-file={data_file}", "--source=."]
    coverage += pytest
    record = [sys.executable, "-m", "impact_ls", "record", "--root", str(root)]
    commands = (("pytest", plain), ("coverage", coverage), ("record", record))
    for _, command in commands:
        measured(command, root)  # warm-up: bytecode, fact cache, the coverage copy
    walls: dict[str, list[float]] = {name: [] for name, _ in commands}
    cpus: dict[str, list[float]] = {name: [] for name, _ in commands}
    summary = ""
    for _ in range(rounds):
        for name, command in commands:
            wall, cpu, out = measured(command, root)
            walls[name].append(wall)
            cpus[name].append(cpu)
            if name == "pytest":
                summary = out.strip().splitlines()[-1]
    store = RecordStore.open_existing(root)
    assert store is not None
    data = store.data_run()
    assert data is not None
    size = store.size_bytes()
    store.close()
    wall = {k: statistics.median(v) for k, v in walls.items()}
    cpu = {k: statistics.median(v) for k, v in cpus.items()}
    return {
        "project": spec,
        "date": datetime.date.today().isoformat(),
        "python": sys.version.split()[0],
        "rounds": rounds,
        "pytest_summary": summary,
        "wall_s": wall,
        "cpu_s": cpu,
        "wall_ratio": wall["record"] / wall["pytest"],
        "cpu_ratio": cpu["record"] / cpu["pytest"],
        "coverage_cpu_ratio": cpu["coverage"] / cpu["pytest"],
        "tests": data.recorded,
        "collected": data.collected,
        "files": data.files,
        "entities": data.entities,
        "pairs": data.pairs,
        "db_bytes": size,
    }


def render(r: dict[str, object]) -> str:
    wall, cpu = r["wall_s"], r["cpu_s"]
    assert isinstance(wall, dict) and isinstance(cpu, dict)
    db = int(r["db_bytes"])  # type: ignore[call-overload]
    return "\n".join(
        [
            f"{r['project']} sdist, Python {r['python']}, {r['date']}, median of {r['rounds']} "
            f"alternating runs (pytest: `{r['pytest_summary']}`)",
            "",
            "| run | wall s | CPU s |",
            "|---|---:|---:|",
            f"| plain `python -m pytest` | {wall['pytest']:.2f} | {cpu['pytest']:.2f} |",
            "| `python -m coverage run --source=. -m pytest` (no contexts) | "
            f"{wall['coverage']:.2f} | {cpu['coverage']:.2f} |",
            f"| `impact-ls record` | {wall['record']:.2f} | {cpu['record']:.2f} |",
            f"| record / pytest | {r['wall_ratio']:.2f}× | {r['cpu_ratio']:.2f}× |",
            f"| coverage run / pytest | | {r['coverage_cpu_ratio']:.2f}× |",
            "",
            f"Recorded {r['tests']} of {r['collected']} collected tests over {r['files']} files: "
            f"{r['entities']} entities, {r['pairs']} test-entity pairs; `record.sqlite3` is "
            f"{db / 1024:.0f} KiB.",
        ]
    )


def write_readme(table: str) -> None:
    text = README.read_text(encoding="utf-8")
    begin, end = "<!-- bench:record -->", "<!-- /bench:record -->"
    block = f"{begin}\n{table}\n{end}"
    if begin in text:
        text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    else:
        text += f"\n## Recorded coverage: `impact-ls record` overhead\n\n{block}\n"
    README.write_text(text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", default="more-itertools==10.5.0")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-readme", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.project, args.rounds)
    if args.json:
        print(json.dumps(result, indent=1))
    table = render(result)
    print(table)
    if not args.no_readme:
        write_readme(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
