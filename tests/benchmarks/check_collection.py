"""Check the pytest collection model against a real ``pytest --collect-only`` on real projects.

```
python tests/benchmarks/check_collection.py                    # the pinned projects below
python tests/benchmarks/check_collection.py --project boltons  # one of them
```

Each project's sdist (pinned) is downloaded with ``pip download --no-binary :all: --no-deps``
into ``tests/benchmarks/.data/dl`` and unpacked; a working copy goes to a temporary folder
outside this repository (so this repository's own pytest configuration, found by walking up,
does not apply). There the graph is built (``ProjectIndex``), the collection modelled exactly as
the engine does (``CollectedTests``: the project's pytest config, hints read from disk) and
compared with the node ids ``python -m pytest --collect-only -q`` prints (entry-point plugins
off, parametrization suffixes stripped: the model's function-level id runs every
parametrization). Files pytest could not import (a missing optional dependency) are left out
of both sides and counted. The peer in the same run is the graph alone — each test node at its
defining id, what the test map reported before the model — so the table shows what the model
adds. Numbers go to ``tests/benchmarks/README.md`` between the ``check-collection`` markers.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from impact_ls.config import Settings  # noqa: E402
from impact_ls.graph.collected import CollectedTests  # noqa: E402
from impact_ls.graph.collection import Collection  # noqa: E402
from impact_ls.graph.project import ProjectIndex  # noqa: E402

DATA = HERE / ".data"
README = HERE / "README.md"
MARK = "check-collection"

# pinned sdists with class-based tests (unittest cases in more-itertools, inherited pytest
# classes in boltons, plain functions in tomlkit, environment-dependent modules in attrs)
PROJECTS = {
    "more-itertools": "11.2.1",
    "boltons": "26.2.0",
    "tomlkit": "0.15.2",
    "attrs": "26.1.0",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Result:
    """One project's comparison."""

    project: str
    version: str
    pytest_items: int
    pytest_ids: frozenset[str]
    model_ids: frozenset[str]
    alone_ids: frozenset[str]
    errored: tuple[str, ...]
    model_s: float

    def row(self, ids: frozenset[str]) -> tuple[int, int, int]:
        """(matched, missing, extra) of ``ids`` against pytest's."""
        return (
            len(ids & self.pytest_ids),
            len(self.pytest_ids - ids),
            len(ids - self.pytest_ids),
        )


def fetch(name: str, version: str) -> Path:
    """The unpacked sdist of ``name==version`` under ``.data/``, downloaded the first time."""
    downloads = DATA / "dl"
    downloads.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[-_.]+", "_", name).lower()

    def archive() -> Path | None:
        for path in sorted(downloads.glob("*.tar.gz")):
            base = path.name.removesuffix(".tar.gz")
            if re.sub(r"[-_.]+", "_", base).lower() == f"{stem}_{version.replace('.', '_')}":
                return path
        return None

    found = archive()
    if found is None:
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
                f"{name}=={version}",
            ],
            check=True,
        )
        found = archive()
        if found is None:
            raise SystemExit(f"pip downloaded no sdist for {name}=={version}")
    target = DATA / found.name.removesuffix(".tar.gz")
    if not target.is_dir():
        with tarfile.open(found) as tar:
            tar.extractall(DATA, filter="data")
    return target


def pytest_collect(root: Path) -> tuple[int, frozenset[str], tuple[str, ...]]:
    """(items, function-level ids, files that failed to import) from a real collect-only."""
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    lines = [line for line in result.stdout.splitlines() if "::" in line and line[:1] != " "]
    errored = sorted(set(re.findall(r"^ERROR (\S+\.py)", result.stdout, flags=re.M)))
    ids = frozenset(re.sub(r"\[.*\]$", "", line.strip()) for line in lines)
    return len(lines), ids, tuple(errored)


def run(project: str) -> Result:
    """Model and pytest on a fresh copy of ``project`` at its pinned version."""
    version = PROJECTS[project]
    source = fetch(project, version)
    with tempfile.TemporaryDirectory(prefix="check-collection-") as tmp:
        root = Path(tmp) / source.name
        shutil.copytree(source, root)
        index = ProjectIndex.open(root, Settings(jedi_confirm=False))
        tests = CollectedTests(
            root,
            text_of=lambda f: (root / f).read_text(encoding="utf-8", errors="replace"),
            digest_of=lambda f: None,
        )
        started = time.process_time()  # CPU: the machine is shared, wall time is noise
        with index.lock:
            collection = tests.collection(index.graph)
        model_s = time.process_time() - started
        items, pytest_ids, errored = pytest_collect(root)
    keep = set(errored)

    def usable(ids: list[str]) -> frozenset[str]:
        return frozenset(i for i in ids if i.split("::", 1)[0] not in keep)

    return Result(
        project=project,
        version=version,
        pytest_items=items,
        pytest_ids=pytest_ids,
        model_ids=usable(collection.ids()),
        alone_ids=usable(Collection.of_graph(index.graph).ids()),
        errored=errored,
        model_s=model_s,
    )


def render(results: list[Result]) -> str:
    """The README table for ``results``."""
    today = datetime.date.today().isoformat()
    lines = [
        f"### Collection model vs `pytest --collect-only` — {today}",
        "",
        f"pytest {_pytest_version()}, Python {sys.version.split()[0]}; ids compared at function "
        "level (parametrization stripped). *Graph alone* is the peer: each test node at its "
        "defining id.",
        "",
        "| project | pytest items | pytest ids | model: matched / missing / extra | "
        "graph alone: matched / missing / extra | not at defining id | model CPU |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        model = " / ".join(str(n) for n in r.row(r.model_ids))
        alone = " / ".join(str(n) for n in r.row(r.alone_ids))
        moved = len(r.pytest_ids - r.alone_ids)
        lines.append(
            f"| {r.project} {r.version} | {r.pytest_items:,} | {len(r.pytest_ids):,} | {model} | "
            f"{alone} | {moved:,} | {r.model_s * 1000:.0f} ms |"
        )
    for r in results:
        if r.errored:
            lines.append(
                f"\n{r.project}: {len(r.errored)} file(s) pytest could not import, left out."
            )
    return "\n".join(lines) + "\n"


def details(result: Result, limit: int) -> str:
    """The first ``limit`` missing and extra ids of one project."""
    out = []
    for label, ids in (
        ("missing", result.pytest_ids - result.model_ids),
        ("extra", result.model_ids - result.pytest_ids),
    ):
        for test_id in sorted(ids)[:limit]:
            out.append(f"  {label}: {test_id}")
    return "\n".join(out)


def write_readme(table: str) -> None:
    """Replace the section between the markers (appended the first time)."""
    start, end = f"<!-- {MARK} -->", f"<!-- /{MARK} -->"
    text = README.read_text(encoding="utf-8")
    block = f"{start}\n{table}{end}"
    if start in text and end in text:
        text = re.sub(
            re.escape(start) + r".*?" + re.escape(end), lambda _: block, text, flags=re.DOTALL
        )
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    README.write_text(text, encoding="utf-8")


def _pytest_version() -> str:
    import pytest

    return pytest.__version__


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", choices=sorted(PROJECTS), action="append")
    parser.add_argument("--no-readme", action="store_true", help="do not update README.md")
    parser.add_argument("--show", type=int, default=10, help="missing/extra ids to print")
    args = parser.parse_args()
    results = [run(p) for p in (args.project or list(PROJECTS))]
    table = render(results)
    print(table)
    for result in results:
        shown = details(result, args.show)
        if shown:
            print(f"{result.project}:\n{shown}")
    if not args.no_readme:
        write_readme(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
