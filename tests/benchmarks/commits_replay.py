"""Replay mined cases: the parent tree plus the seed's new text, analyzed by a warm ``Engine``.

One git work tree per repository (``git worktree add`` of the local clone, under
``.data/trees/``) is moved from parent to parent with ``git checkout --force --detach``, so its
history ends at the parent (no leakage: the commit itself and everything after it are not
ancestors of HEAD) and the fact cache under ``<tree>/.impact_ls/`` stays warm. For each case the
seed file's text at the commit is written over the checked-out file, ``Engine.refresh`` patches
the graph and moves the co-change index to the new HEAD (timed), and
``Engine.analyze_worktree`` — what ``impact-ls analyze --no-llm`` runs — gives the report
(timed, wall and CPU; run again under each ablation without moving the tree).

``prediction`` turns a report into our ranked file list: MUST-INSPECT entries first, then
MAY-IMPACT entries, each bucket by conf descending in report order, each file at its first
place, the seed left out. A test file that calls the changed signature is a triage site like any
other and counts there. ``with_test_ids`` adds the test files of every selected test
(``tests[].test_file``): an informational variant, since ``tests[]`` is what to re-run — a
superset chosen for recall — not what to edit.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from commits_ablation import ablated

from impact_ls.engine import Engine
from impact_ls.report.json_report import report_to_dict


@dataclass(frozen=True, slots=True, kw_only=True)
class Prediction:
    """Our ranked files for one case, and the MUST-INSPECT files alone."""

    ranked: tuple[str, ...]
    must: tuple[str, ...]
    with_test_ids: tuple[str, ...]
    changes: int
    unanalyzable: tuple[str, ...]


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout


def prepare_tree(clone: Path, tree: Path, parent: str) -> None:
    """A detached work tree of ``clone`` at ``parent`` (created on first use, else moved)."""
    tree = tree.resolve()
    if not (tree / ".git").exists():
        tree.parent.mkdir(parents=True, exist_ok=True)
        _git(clone, "worktree", "prune")
        _git(clone, "worktree", "add", "--force", "--detach", str(tree), parent)
    checkout(tree, parent)


def checkout(tree: Path, rev: str) -> None:
    """Force the work tree to ``rev``, dropping the previous case's edit and untracked files."""
    _git(tree, "checkout", "-q", "--force", "--detach", rev)
    # Not -x: the ignored .impact_ls/ fact cache must survive the move.
    _git(tree, "clean", "-fdq")


def seed_text(clone: Path, sha: str, path: str) -> bytes:
    """The seed file's bytes at the case's commit."""
    return subprocess.run(
        ["git", "cat-file", "blob", f"{sha}:{path}"], cwd=clone, capture_output=True, check=True
    ).stdout


def _test_file(test_id: str) -> str:
    return test_id.split("::", 1)[0]


def prediction(report: dict[str, Any], seed: str) -> Prediction:
    """Our ranked files (see the module docstring) from a report in the DESIGN §4 shape."""
    triage = report["triage"]
    scored: list[tuple[int, float, int, str]] = []
    order = 0
    for bucket, key in ((0, "must_inspect"), (1, "may_impact")):
        for entry in triage[key]:
            scored.append((bucket, -float(entry["conf"]), order, entry["file"]))
            order += 1
    with_ids = list(scored)
    for hit in report.get("tests", ()):
        test_file = hit.get("test_file") or _test_file(hit["test"])
        with_ids.append((1, -float(hit["conf"]), order, test_file))
        order += 1

    def files(rows: list[tuple[int, float, int, str]]) -> tuple[str, ...]:
        out: dict[str, None] = {}
        for _, _, _, file in sorted(rows):
            if file != seed:
                out.setdefault(file, None)
        return tuple(out)

    must = files([r for r in scored if r[0] == 0])
    flagged = {u["file"] for u in report.get("unanalyzable", ())}
    flagged |= {e["file"] for e in triage["may_impact"] if e.get("unanalyzable")}
    return Prediction(
        ranked=files(scored),
        must=must,
        with_test_ids=files(with_ids),
        changes=len(report["changes"]),
        unanalyzable=tuple(sorted(flagged - {seed})),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Timing:
    """Wall and CPU seconds of one step (CPU of this process: the analysis runs in it)."""

    wall_s: float = 0.0
    cpu_s: float = 0.0


@dataclass(slots=True)
class Replayer:
    """A warm engine on one repository's work tree."""

    clone: Path
    tree: Path
    settings: dict[str, Any] | None = None  # overrides of the project's ``[tool.impact-ls]``
    engine: Engine | None = None
    build_s: float = 0.0

    def move_to(self, parent: str, seed: str, text: bytes) -> Timing:
        """Check out ``parent``, write the seed's new text, refresh the engine; its cost."""
        prepare_tree(self.clone, self.tree, parent)
        (self.tree / seed).write_bytes(text)
        wall, cpu = time.perf_counter(), time.process_time()
        if self.engine is None:
            self.engine = Engine.open(self.tree, self.settings)
            self.engine.history()
            self.build_s = time.perf_counter() - wall
            return Timing()
        self.engine.refresh()
        self.engine.history()
        return Timing(wall_s=time.perf_counter() - wall, cpu_s=time.process_time() - cpu)

    def analyze(
        self, seed: str, channel: str | None = None, *, expect_call: bool = True
    ) -> tuple[Prediction, dict[str, Any], Timing]:
        """Analyze the work tree (the ``analyze --no-llm`` path) with ``channel`` ablated."""
        assert self.engine is not None, "move_to first"
        wall, cpu = time.perf_counter(), time.process_time()
        with ablated(channel, expect_call=expect_call):
            report = self.engine.analyze_worktree()
        timing = Timing(wall_s=time.perf_counter() - wall, cpu_s=time.process_time() - cpu)
        data = report_to_dict(report)
        return prediction(data, seed), data, timing
