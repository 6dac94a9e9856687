"""The pure shaping of a Report into MCP results, on hand-built values."""

from __future__ import annotations

from impact_ls.agent.blast import affected_tests_output, blast_radius_output, explain_output
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import (
    Bucket,
    Change,
    ChangeType,
    Node,
    NodeKind,
    QualName,
    Relation,
    Report,
    Span,
    TestHit,
    TestId,
    Triage,
    TriageEntry,
)

SEED = QualName("pkg.core.run")


def _entry(entity: str, file: str, line: int, bucket: Bucket, **extra: object) -> TriageEntry:
    return TriageEntry(
        entity=QualName(entity),
        file=file,
        line=line,
        range=((line, 4), (line, 12)),
        conf=0.5,
        distance=1,
        relation=Relation.CALLED_BY,
        reason=f"{entity} must be re-checked",
        seed=SEED,
        change_type=ChangeType.METHOD_BODY,
        bucket=bucket,
        via=SEED,
        **extra,  # type: ignore[arg-type]
    )


GRAPH = CodeGraph.of(
    [
        Node(
            id=QualName("tests.test_core.test_run"),
            kind=NodeKind.TEST,
            file="tests/test_core.py",
            span=Span(line=3, end_line=4),
            test_id=TestId("tests/test_core.py::test_run"),
        ),
        Node(
            id=QualName("pkg.app.main"),
            kind=NodeKind.FUNCTION,
            file="pkg/app.py",
            span=Span(line=1, end_line=9),
        ),
    ]
)
REPORT = Report(
    root=".",
    base="HEAD",
    changes=(
        Change(
            change_type=ChangeType.METHOD_BODY, entity=SEED, file="pkg/core.py", line_range=(1, 3)
        ),
    ),
    triage=Triage(
        may_impact=(
            _entry("tests.test_core.test_run", "tests/test_core.py", 4, Bucket.MAY_IMPACT),
            _entry("pkg.app.main", "pkg/app.py", 7, Bucket.MAY_IMPACT, name_matched=True),
            _entry("pkg.plugins.load", "pkg/plugins.py", 2, Bucket.MAY_IMPACT, unanalyzable=True),
        )
    ),
    tests=(TestHit(file="pkg/core.py", test=TestId("tests/test_core.py::test_run"), conf=0.56),),
)


def test_sites_in_tests_rank_last_and_each_says_how_it_was_found() -> None:
    out = blast_radius_output(REPORT, GRAPH, root="/p", limit=10, include_dag=False)
    may = out.result.selections.may_impact
    assert [(s.entity, s.resolution, s.test) for s in may] == [
        ("pkg.app.main", "name-matched", False),
        ("pkg.plugins.load", "unanalyzable", False),
        ("tests.test_core.test_run", "resolved", True),
    ]
    assert out.result.facts.must_inspect == []
    assert out.next.action == "run-tests"
    assert out.next.request is not None and out.next.request.tool == "affected_tests"


def test_a_cut_list_is_counted() -> None:
    out = blast_radius_output(REPORT, GRAPH, root="/p", limit=2, include_dag=False)
    assert len(out.result.selections.may_impact) == 2
    assert out.result.counts["may_impact"] == 3
    assert out.result.omitted == {"may_impact": 1}
    assert out.result.truncated and out.audit.truncated


def test_no_change_says_so() -> None:
    out = blast_radius_output(
        Report(root=".", base="v1"), GRAPH, root="/p", limit=5, include_dag=False
    )
    assert out.next.action == "none"
    assert out.next.reason == "no Python change against v1"


def test_a_test_without_a_site_gets_its_path_weight_as_reason() -> None:
    out = affected_tests_output(REPORT, GRAPH, root="/p", min_conf=0.45, limit=5)
    [test] = out.result.tests
    assert test.location == "tests/test_core.py:3"
    assert test.reason == "tests.test_core.test_run must be re-checked"  # the site's own cause
    bare = Report(root=".", base="HEAD", changes=REPORT.changes, tests=REPORT.tests)
    [test] = affected_tests_output(bare, GRAPH, root="/p", min_conf=0.45, limit=5).result.tests
    assert test.reason == (
        "selected at confidence 0.56: it calls, instantiates or subclasses what reaches the change"
    )


def test_explain_inside_a_definition_finds_its_site_and_elsewhere_offers_candidates() -> None:
    inside = explain_output(REPORT, GRAPH, root="/p", file="pkg/app.py", line=3)
    assert inside.result.found
    assert inside.result.chains[0].trace == [
        "pkg.core.run -[CalledBy at pkg/app.py:7]-> pkg.app.main"
    ]
    away = explain_output(REPORT, GRAPH, root="/p", file="pkg/other.py", line=3)
    assert not away.result.found
    assert away.next.action == "clarify"
    assert [c.entity for c in away.result.candidates] == [
        "tests.test_core.test_run",
        "pkg.app.main",
        "pkg.plugins.load",
    ]
