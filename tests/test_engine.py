"""The engine: git baselines, subfolder roots, and degraded history without git or commits."""

import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from impact_ls.demo import AFTER, BEFORE, DEMO_SOURCE, EDITED_FILE
from impact_ls.engine import Engine, FileEdit
from impact_ls.errors import RevisionError


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def _copy_demo(dest: Path) -> Path:
    shutil.copytree(DEMO_SOURCE, dest, ignore=shutil.ignore_patterns("history.toml"))
    return dest


def _edit(root: Path) -> None:
    path = root / EDITED_FILE
    path.write_text(path.read_text(encoding="utf-8").replace(BEFORE, AFTER, 1), encoding="utf-8")


def _must_sites(report) -> set[tuple[str, int]]:
    return {(e.file, e.line) for e in report.triage.must_inspect}


def test_a_root_below_the_repository_top_speaks_root_paths(tmp_path: Path):
    repo = tmp_path / "mono"
    root = _copy_demo(repo / "services" / "shop")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "import")
    _edit(root)
    engine = Engine.open(root)
    assert engine.baseline_text(EDITED_FILE) is not None
    report = engine.analyze_worktree()
    assert [c.file for c in report.changes] == [EDITED_FILE]
    assert {("acme/api.py", 9), ("acme/cli.py", 9)} <= _must_sites(report)


def test_without_git_edits_still_analyze_and_history_says_why(tmp_path: Path):
    root = _copy_demo(tmp_path / "shop")
    before = (root / EDITED_FILE).read_text(encoding="utf-8")
    _edit(root)
    engine = Engine.open(root)
    assert engine.baseline_text(EDITED_FILE) is None
    report = engine.analyze(
        [FileEdit(file=EDITED_FILE, baseline=before, current=(root / EDITED_FILE).read_text())]
    )
    assert {("acme/api.py", 9), ("acme/cli.py", 9)} <= _must_sites(report)
    assert report.cochange == ()
    assert any("not a git repository" in note for note in report.audit.notes)
    with pytest.raises(RevisionError, match="not a git repository"):
        engine.analyze_worktree()


def test_an_empty_repository_degrades_to_no_cochange(tmp_path: Path):
    root = _copy_demo(tmp_path / "shop")
    _git(root, "init", "-q")
    before = (root / EDITED_FILE).read_text(encoding="utf-8")
    _edit(root)
    engine = Engine.open(root)
    report = engine.analyze(
        [FileEdit(file=EDITED_FILE, baseline=before, current=(root / EDITED_FILE).read_text())]
    )
    assert report.cochange == ()
    assert report.audit.notes, "an empty history must be noted in the audit"
    assert {("acme/api.py", 9)} <= _must_sites(report)


def test_analysis_writes_the_test_map_and_never_touches_sources(tmp_path: Path):
    root = _copy_demo(tmp_path / "shop")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "import")
    _edit(root)
    snapshot = {p: p.read_bytes() for p in root.rglob("*.py")}
    Engine.open(root).analyze_worktree()
    assert {p: p.read_bytes() for p in root.rglob("*.py")} == snapshot
    lines = (root / ".impact_ls" / "test_map.txt").read_text(encoding="utf-8").splitlines()
    assert "acme/auth.py tests/test_auth.py::test_login_returns_token 1.0" in lines
    assert (root / ".impact_ls" / ".gitignore").read_text(encoding="utf-8").endswith("\n*\n")


def _confirm_project(tmp_path: Path) -> Path:
    root = tmp_path / "confirm"
    shutil.copytree(Path(__file__).parent.parent / "fixtures" / "graph_confirm", root)
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "import")
    shapes = root / "shapes.py"
    text = shapes.read_text(encoding="utf-8")
    shapes.write_text(
        text.replace(
            "class Session:\n    def open(self):", "class Session:\n    def open(self, mode):"
        ),
        encoding="utf-8",
    )
    return root


def _sites(entries) -> list[tuple[str, int, bool]]:
    return sorted((e.file, e.line, e.name_matched) for e in entries)


def test_jedi_turns_a_confirmed_name_matched_caller_into_a_must_site(tmp_path: Path):
    engine = Engine.open(_confirm_project(tmp_path), {"jedi_budget_s": 120})
    report = engine.analyze_worktree()
    # handler = [make_session()][0]; handler.open(): jedi sees a Session, so the call must bind.
    assert _sites(report.triage.must_inspect) == [("app.py", 6, False)]
    assert report.triage.must_inspect[0].breaks[0].detail == "missing required argument 'mode'"
    # anything.open(): jedi cannot tell; the candidate stays, marked, as a MAY site.
    assert _sites(report.triage.may_impact) == [("app.py", 7, True)]
    assert (
        "jedi checked 2 name-matched call candidates: 1 confirmed, 0 refuted, 1 undecided"
        in report.audit.notes
    )


def test_a_live_analysis_defers_jedi_and_the_next_one_uses_its_verdicts(tmp_path: Path):
    engine = Engine.open(_confirm_project(tmp_path))
    edits = engine.worktree_edits()
    first = engine.analyze(edits, live=True)
    assert first.triage.must_inspect == ()
    assert _sites(first.triage.may_impact) == [("app.py", 6, True), ("app.py", 7, True)]
    finished = threading.Event()
    assert engine.confirm_pending(lambda decided: finished.set())
    assert finished.wait(120)
    second = engine.analyze(edits, live=True)
    assert _sites(second.triage.must_inspect) == [("app.py", 6, False)]
    assert not engine.confirm_pending(lambda decided: None)  # every candidate decided now


def test_the_collector_held_during_an_analysis_runs_again_after_it(tmp_path: Path):
    import gc

    root = _copy_demo(tmp_path / "shop")
    before = (root / EDITED_FILE).read_text(encoding="utf-8")
    _edit(root)
    engine = Engine.open(root)
    edit = FileEdit(file=EDITED_FILE, baseline=before, current=(root / EDITED_FILE).read_text())
    assert gc.isenabled()
    assert engine.analyze([edit]).changes
    assert gc.isenabled()
    with pytest.raises(TypeError):  # an analysis that fails (here: not a text) leaves it on
        engine.analyze([FileEdit(file=EDITED_FILE, baseline=before, current=3)])  # type: ignore[arg-type]
    assert gc.isenabled()


# The override is deleted: the call now binds to ``Base.get`` (missing ``default``), and only
# the baseline holds the edge into ``Store.get`` that tells the walk who called it.
_STORE_BASELINE = """\
class Base:
    def get(self, key, default):
        return default


class Store(Base):
    def get(self, key):
        return key
"""
_STORE_CURRENT = _STORE_BASELINE.replace(
    "    def get(self, key):\n        return key\n", "    pass\n"
)
_CALLER = "from pkg.store import Store\n\n\ndef fetch(key):\n    return Store().get(key)\n"


def test_keystrokes_over_an_unchanged_graph_keep_the_baseline_callers_until_one_changes(
    tmp_path: Path,
):
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "store.py").write_text(_STORE_CURRENT, encoding="utf-8")
    (root / "pkg" / "api.py").write_text(_CALLER, encoding="utf-8")
    engine = Engine.open(root)
    edit = FileEdit(file="pkg/store.py", baseline=_STORE_BASELINE, current=_STORE_CURRENT)
    # each keystroke of the same baseline over the same graph sees the caller again
    for _ in range(3):
        report = engine.analyze([edit], live=True)
        assert _must_sites(report) == {("pkg/api.py", 5)}
    # the call now runs the base's ``get``, which wants a ``default`` it is not given
    assert [b.detail for e in report.triage.must_inspect for b in e.breaks] == [
        "now runs pkg.store.Base.get: missing required argument 'default'"
    ]
    (root / "pkg" / "api.py").write_text(_CALLER.replace(".get(key)", ""), "utf-8")
    engine.refresh()  # the caller saved without the call
    assert _must_sites(engine.analyze([edit], live=True)) == set()
