"""The pipeline end to end on the real graph of a small project: each stage shows in the report."""

from __future__ import annotations

from dataclasses import replace

from impact_ls.analysis.pipeline import SourceChange, analyze
from impact_ls.config import Settings
from impact_ls.graph.builder import GraphBuilder
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import ChangeType, CoChange
from impact_ls.report.json_report import report_to_json

AUTH = "def login(user):\n    return user\n\n\ndef logout(user):\n    return None\n"
AUTH_AFTER = AUTH.replace("def login(user):", "def login(user, mfa):")
FILES = {
    "pkg/__init__.py": "",
    "pkg/auth.py": AUTH,
    "pkg/api.py": "from pkg.auth import login\n\n\ndef handle(u):\n    return login(u)\n",
    "pkg/views.py": "from pkg.api import handle\n\n\ndef page(u):\n    return handle(u)\n",
    "tests/test_api.py": "from pkg.api import handle\n\n\ndef test_handle():\n    handle('u')\n",
}


def _graph(files: dict[str, str]) -> CodeGraph:
    builder = GraphBuilder()
    for path, text in sorted(files.items()):
        builder.update(path, text)
    return builder.graph


def _run(after: str = AUTH_AFTER, settings: Settings | None = None, **kw):
    graph = _graph({**FILES, "pkg/auth.py": after})
    source = SourceChange(file="pkg/auth.py", module="pkg.auth", before=AUTH, after=after)
    return analyze(graph=graph, sources=[source], settings=settings or Settings(), **kw)


def test_a_signature_change_flows_through_every_stage():
    report, test_map = _run()
    assert [(c.change_type, c.entity) for c in report.changes] == [
        (ChangeType.METHOD_SIGNATURE, "pkg.auth.login")
    ]
    must = [(e.entity, e.file, e.line) for e in report.triage.must_inspect]
    assert must == [("pkg.api.handle", "pkg/api.py", 5)]
    assert report.triage.must_inspect[0].breaks[0].detail == "missing required argument 'mfa'"
    farther = [e for e in (*report.triage.may_impact, *report.triage.low_risk) if e.distance == 2]
    assert sorted(e.entity for e in farther) == ["pkg.views.page", "tests.test_api.test_handle"]
    assert report.batches[0].members[:2] == ("pkg.auth.login", "pkg.api.handle")
    assert report.dag.nodes[0].entity == "pkg.auth.login"
    assert any(e.target == "pkg.api.handle" for e in report.dag.edges)
    assert [t.test for t in report.tests] == ["tests/test_api.py::test_handle"]
    assert test_map == f"pkg/auth.py tests/test_api.py::test_handle {report.tests[0].conf!r}\n"
    assert report.next.action == "edit"
    assert report.next_edits.failed and report.next_edits.fallback == "batch_order"
    assert not report.audit.truncated and report.audit.notes == ()


def test_identical_input_gives_identical_bytes():
    assert report_to_json(_run()[0]) == report_to_json(_run()[0])


def test_no_edit_is_no_change():
    report, test_map = _run(after=AUTH)
    assert report.changes == () and test_map == ""
    assert report.next.action == "none"


def test_cochange_is_asked_with_the_changed_files_and_the_task_text_and_sorted():
    asked = []

    def cochange_of(files, task_text):
        asked.append((tuple(files), task_text))
        return (
            CoChange(file="pkg/views.py", score=0.2),
            CoChange(file="pkg/api.py", score=0.4),
            # history remembers what the tree no longer has, and files that are not Python
            CoChange(file="pkg/deleted.py", score=0.9),
            CoChange(file="CHANGES.rst", score=0.8),
        )

    report, _ = _run(cochange_of=cochange_of)
    assert asked == [(("pkg/auth.py",), "login")]
    assert [(c.file, c.score) for c in report.cochange] == [
        ("pkg/api.py", 0.4),
        ("pkg/views.py", 0.2),
    ]


def test_caps_and_unparsable_regions_are_said_in_the_audit():
    api = FILES["pkg/api.py"]
    api_after = api.replace("def handle(u):", "def handle(u, v):")
    graph = _graph({**FILES, "pkg/auth.py": AUTH_AFTER, "pkg/api.py": api_after})
    sources = [
        SourceChange(file="pkg/auth.py", module="pkg.auth", before=AUTH, after=AUTH_AFTER),
        SourceChange(file="pkg/api.py", module="pkg.api", before=api, after=api_after),
    ]
    report, _ = analyze(graph=graph, sources=sources, settings=Settings(max_changes=1))
    assert [c.entity for c in report.changes] == ["pkg.api.handle"] and report.audit.truncated
    assert "2 changes; analyzed the first 1" in report.audit.notes
    capped, _ = _run(settings=Settings(max_walk_nodes=1))
    assert capped.audit.truncated
    assert any("walk capped" in note for note in capped.audit.notes)
    broken, _ = _run(after=AUTH.replace("def login(user):", "def login(user,"))
    assert broken.stale
    assert any(c.change_type is ChangeType.INCOMPLETE for c in broken.changes)
    assert (
        "part of the edit does not parse yet; its region is reported as incomplete"
        in broken.audit.notes
    )


def test_notes_from_the_caller_join_the_audit_once_and_sorted():
    report, _ = _run(notes=("z note", "a note", "z note"))
    assert report.audit.notes == ("a note", "z note")
    assert replace(report, audit=report.audit) == report


def test_a_body_edit_that_cannot_escape_selects_no_test_and_no_site():
    with_local = AUTH.replace("    return user\n", "    value = user\n    return value\n", 1)
    renamed = with_local.replace("value", "who")
    graph = _graph({**FILES, "pkg/auth.py": renamed})
    source = SourceChange(file="pkg/auth.py", module="pkg.auth", before=with_local, after=renamed)
    report, test_map = analyze(graph=graph, sources=[source], settings=Settings())
    assert [(c.change_type, c.escapes) for c in report.changes] == [(ChangeType.METHOD_BODY, False)]
    assert report.tests == () and test_map == ""
    assert report.triage.must_inspect == report.triage.may_impact == ()


def test_a_cap_that_cuts_direct_callers_says_so():
    cli = "from pkg.auth import login\n\n\ndef main():\n    login('root')\n"
    graph = _graph({**FILES, "pkg/auth.py": AUTH_AFTER, "pkg/cli.py": cli})
    source = SourceChange(file="pkg/auth.py", module="pkg.auth", before=AUTH, after=AUTH_AFTER)
    report, _ = analyze(graph=graph, sources=[source], settings=Settings(max_walk_nodes=1))
    assert (
        "pkg.auth.login: walk capped at max-walk-nodes = 1; 3 dependents not kept, 1 of them direct"
        in report.audit.notes
    )
