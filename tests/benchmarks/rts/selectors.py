"""The test selectors compared on each mutated tree, each returning the suite ids it selects.

* ``ours``: ``impact-ls tests --root TREE`` with the interpreter given (``--impact-python``);
* ``ours+record``: the same on a clone of the tree where ``impact-ls record`` ran once on the
  clean code, when that subcommand exists (else the column says why not);
* ``testmon``: pytest-testmon's database built once on the clean tree, restored before every
  mutation, then ``pytest --testmon --collect-only``: what is left after its deselection;
* ``impacted``: ``pytest --impacted --impacted-git-mode=unstaged --collect-only``;
* ``naive``: the test files whose names match the changed module (``test_<stem>*.py``).

Setup (index, record, testmon's database) happens once per library and is timed apart.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .projects import Library, child_env
from .pytest_run import Cost, Outcome, covered, run, run_pytest

SELECTORS = ("ours", "ours+record", "testmon", "impacted", "naive")
PEERS = ("testmon", "impacted", "naive")
SELECTOR_TIMEOUT_S = 900


@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    """What a selector chose for one mutation (suite ids), its cost, and an error if it failed."""

    selected: frozenset[str]
    cost: Cost
    error: str = ""
    raw: int = 0


@dataclass(slots=True, kw_only=True)
class Context:
    """Per-library state the selectors share: paths, the suite, setup results."""

    lib: Library
    impact_python: Path
    suite: tuple[str, ...]
    record_note: str = ""
    record_tree: Path | None = None
    setup: dict[str, float] | None = None


def _impact(ctx: Context, args: list[str], root: Path, extra_path: Path | None = None) -> Outcome:
    # --root right after the subcommand: what follows a ``--`` goes to pytest
    cmd = [str(ctx.impact_python), "-m", "impact_ls", args[0], "--root", str(root), *args[1:]]
    return run(cmd, cwd=root, timeout=SELECTOR_TIMEOUT_S, env=child_env(extra_path))


def record_available(impact_python: Path) -> bool:
    """Whether this impact_ls has the ``record`` subcommand."""
    proc = subprocess.run(
        [str(impact_python), "-m", "impact_ls", "record", "--help"],
        capture_output=True,
        check=False,
    )
    return proc.returncode == 0


def set_up(ctx: Context, *, peers: bool) -> None:
    """Warm our cache, record coverage if we can, build testmon's database (once each)."""
    lib = ctx.lib
    setup: dict[str, float] = {}
    index = _impact(ctx, ["index"], lib.tree)
    setup["ours: index (cold)"] = index.cost.wall
    if record_available(ctx.impact_python):
        clone = lib.home / "tree-record"
        shutil.rmtree(clone, ignore_errors=True)
        subprocess.run(["git", "clone", "-q", str(lib.tree), str(clone)], check=True)
        shutil.copy(lib.tree / ".git" / "info" / "exclude", clone / ".git" / "info" / "exclude")
        # The venv imports the package from the main tree; the clone's copy must win. The
        # suite is the truth's (its config, its deselections), rooted at the clone: without
        # --rootdir pytest would root the ids at the folder of an empty pytest.ini above it.
        rec = _impact(
            ctx,
            ["record", "--python", str(lib.python), "--", *_record_args(lib, clone)],
            clone,
            extra_path=clone / lib.import_root,
        )
        setup["ours: record"] = rec.cost.wall
        if rec.returncode == 0:
            ctx.record_tree = clone
        else:
            ctx.record_note = f"n/a: impact-ls record failed (exit {rec.returncode})"
    else:
        ctx.record_note = "n/a: impact-ls record not available"
    if peers:
        clean = lib.home / "testmondata.clean"
        if not clean.exists():
            for stale in lib.tree.glob(".testmondata*"):
                stale.unlink()
            built = run_pytest(lib, ["--testmon"], timeout=3600, cacheprovider=True)
            setup["testmon: build database"] = built.cost.wall
            shutil.copy(lib.tree / ".testmondata", clean)
    ctx.setup = setup


def _record_args(lib: Library, clone: Path) -> list[str]:
    """pytest's arguments for the record run: the truth's config and deselections, in ``clone``."""
    config = lib.config
    if config.is_relative_to(lib.tree):
        config = clone / config.relative_to(lib.tree)
    return [f"--rootdir={clone}", "-c", str(config), "-o", "addopts=", *lib.pytest_args]


def _from_lines(out: Outcome, suite: tuple[str, ...]) -> Selection:
    ids = {line.strip() for line in out.stdout.splitlines() if line.strip()}
    error = "" if out.returncode == 0 else f"exit {out.returncode}: {out.tail[-300:]}"
    return Selection(selected=covered(ids, suite), cost=out.cost, error=error, raw=len(ids))


def _from_collection(out: Outcome, suite: tuple[str, ...]) -> Selection:
    # Exit 1 with collection errors is the mutation showing, not the selector failing.
    fine = out.returncode in (0, 5) or (out.returncode == 1 and bool(out.collect_errors))
    error = "" if out.recorded and fine else f"exit {out.returncode}: {out.tail[-300:]}"
    # A collection error shown by the selector's run is a failure the user sees: it counts
    # as selecting that module's tests.
    chosen = covered(set(out.collected) | set(out.collect_errors), suite)
    return Selection(selected=chosen, cost=out.cost, error=error, raw=len(out.collected))


def select(name: str, ctx: Context, changed: list[str]) -> Selection | None:
    """Run selector ``name`` on the mutated tree; ``None`` when it is not available."""
    lib = ctx.lib
    if name == "ours":
        return _from_lines(_impact(ctx, ["tests"], lib.tree), ctx.suite)
    if name == "ours+record":
        if ctx.record_tree is None:
            return None
        return _from_lines(_impact(ctx, ["tests"], ctx.record_tree), ctx.suite)
    if name == "testmon":
        shutil.copy(lib.home / "testmondata.clean", lib.tree / ".testmondata")
        out = run_pytest(
            lib,
            ["--testmon", "--collect-only"],
            timeout=SELECTOR_TIMEOUT_S,
            cacheprovider=True,
        )
        return _from_collection(out, ctx.suite)
    if name == "impacted":
        out = run_pytest(
            lib,
            [
                "--impacted",
                f"--impacted-module={lib.package}",
                "--impacted-git-mode=unstaged",
                f"--impacted-tests-dir={lib.tests}",
                "--collect-only",
            ],
            timeout=SELECTOR_TIMEOUT_S,
        )
        return _from_collection(out, ctx.suite)
    if name == "naive":
        return Selection(selected=naive(changed, ctx.suite), cost=Cost(wall=0.0, cpu=0.0))
    raise ValueError(name)


def naive(changed: list[str], suite: tuple[str, ...]) -> frozenset[str]:
    """Suite ids in test files named after a changed module (``test_<stem>`` or
    ``<stem>_test``, ``test_<stem>_*``); a package ``__init__`` counts by the package name."""
    stems = set()
    for path in changed:
        p = PurePosixPath(path)
        stem = p.parent.name if p.stem == "__init__" else p.stem
        stems.add(stem.lstrip("_"))
    chosen = set()
    for test in suite:
        name = PurePosixPath(test.split("::", 1)[0]).stem
        core = name.removeprefix("test_").removesuffix("_test")
        if any(core == s or core.startswith(s + "_") for s in stems):
            chosen.add(test)
    return frozenset(chosen)
