"""Sample reports for the renderer tests (fixture ``reports``) and the ``golden`` check."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from impact_ls.model import (
    Audit,
    Batch,
    Break,
    Bucket,
    Change,
    ChangeType,
    CoChange,
    Dag,
    DagEdge,
    DagNode,
    Evidence,
    NextAction,
    NextEdit,
    NextEdits,
    QualName,
    Relation,
    Report,
    TestHit,
    TestId,
    Triage,
    TriageEntry,
    Unanalyzable,
)

GOLDEN = Path(__file__).resolve().parent.parent / "golden"

SEED = QualName("pkg.auth.LoginService.login")
CAUSE = "method-signature changed (added param mfa_code) → {site} must re-bind via CalledBy"


def assert_golden(config: pytest.Config, name: str, text: str) -> None:
    """Compare ``text`` with ``tests/golden/<name>``, or rewrite it under ``--update-golden``."""
    path = GOLDEN / name
    if config.getoption("--update-golden"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.is_file(), f"{path} is missing: run pytest --update-golden and review the diff"
    assert text == path.read_text(encoding="utf-8")


def _entry(
    entity: str,
    file: str,
    line: int,
    cols: tuple[int, int],
    *,
    bucket: Bucket,
    conf: float,
    distance: int = 1,
    relation: Relation = Relation.CALLED_BY,
    reason: str = "",
    unanalyzable: bool = False,
    breaks: tuple[Break, ...] = (),
) -> TriageEntry:
    return TriageEntry(
        entity=QualName(entity),
        file=file,
        line=line,
        range=((line, cols[0]), (line, cols[1])),
        conf=conf,
        distance=distance,
        relation=relation,
        reason=reason or CAUSE.format(site=entity.rsplit(".", 1)[-1]),
        seed=SEED,
        change_type=ChangeType.METHOD_SIGNATURE,
        bucket=bucket,
        unanalyzable=unanalyzable,
        breaks=breaks,
    )


def signature_change_report() -> Report:
    """``login`` gained a required ``mfa_code``: two callers break, two may, two are low risk."""
    must = (
        _entry(
            "pkg.api.handlers.login_endpoint",
            "pkg/api/handlers.py",
            17,
            (11, 48),
            bucket=Bucket.MUST_INSPECT,
            conf=0.9,
            breaks=(Break(kind="missing-required", detail="missing required argument 'mfa_code'"),),
        ),
        _entry(
            "pkg.views.login_view",
            "pkg/views.py",
            41,
            (8, 30),
            bucket=Bucket.MUST_INSPECT,
            conf=0.85,
            breaks=(Break(kind="missing-required", detail="missing required argument 'mfa_code'"),),
        ),
    )
    may = (
        _entry(
            "pkg.registry.dispatch",
            "pkg/registry.py",
            7,
            (11, 38),
            bucket=Bucket.MAY_IMPACT,
            conf=0.5,
            reason="string-keyed getattr of 'login'",
            unanalyzable=True,
        ),
        _entry(
            "pkg.session.Session.validate",
            "pkg/session.py",
            23,
            (15, 40),
            bucket=Bucket.MAY_IMPACT,
            conf=0.4567,
            distance=2,
            reason="method-signature changed (added param mfa_code) → validate must be re-checked "
            "via CalledBy",
        ),
    )
    low = (
        _entry(
            "pkg.cli.main", "pkg/cli.py", 88, (4, 20), bucket=Bucket.LOW_RISK, conf=0.2, distance=3
        ),
        _entry(
            "pkg.admin.audit_login",
            "pkg/admin.py",
            5,
            (0, 0),
            bucket=Bucket.LOW_RISK,
            conf=0.12,
            distance=3,
        ),
    )
    batches = (
        Batch(batch_id=0, members=(SEED, must[0].entity, must[1].entity, may[1].entity)),
        Batch(batch_id=1, members=(may[0].entity,)),
    )
    tests = (
        TestHit(
            file="pkg/auth.py", test=TestId("tests/test_auth.py::TestLogin::test_mfa"), conf=1.0
        ),
        TestHit(
            file="pkg/auth.py",
            test=TestId("tests/test_views.py::test_login_view"),
            conf=0.56,
            evidence=Evidence.RECORDED,
        ),
    )
    dag = Dag(
        nodes=(
            DagNode(
                entity=must[0].entity,
                kind="function",
                file="pkg/api/handlers.py",
                line=15,
                signature="def login_endpoint(request: Request) -> Response:",
                batch_id=0,
            ),
            DagNode(
                entity=must[1].entity,
                kind="function",
                file="pkg/views.py",
                line=38,
                signature="def login_view(request):",
                batch_id=0,
            ),
            DagNode(
                entity=may[1].entity,
                kind="method",
                file="pkg/session.py",
                line=20,
                signature="def validate(self, token):",
                batch_id=0,
            ),
            DagNode(
                entity=may[0].entity,
                kind="function",
                file="pkg/registry.py",
                line=5,
                signature="def dispatch(name, *args):",
                batch_id=1,
            ),
        ),
        edges=tuple(DagEdge(source=SEED, target=e.entity, cause=e.reason) for e in (*must, *may)),
    )
    return Report(
        root=".",
        base="HEAD",
        audit=Audit(
            verified="call sites bound against the new signature of pkg.auth.LoginService.login",
            heuristic="co-change scores from 12 commits; test confidence by edge weight",
            truncated=False,
            notes=("jedi confirmed 1 of 2 name-matched candidates",),
        ),
        changes=(
            Change(
                change_type=ChangeType.METHOD_SIGNATURE,
                entity=SEED,
                file="pkg/auth.py",
                line_range=(12, 16),
                before_sig="def login(self, user):",
                after_sig="def login(self, user, mfa_code):",
                what="added param mfa_code",
            ),
        ),
        triage=Triage(must_inspect=must, may_impact=may, low_risk=low),
        batches=batches,
        tests=tests,
        cochange=(
            CoChange(file="pkg/session.py", score=0.42),
            CoChange(file="docs/auth.md", score=0.1234),
        ),
        unanalyzable=(
            Unanalyzable(
                file="pkg/registry.py",
                line=7,
                reason="string-keyed getattr of 'login'",
                entity=may[0].entity,
                name="login",
            ),
            Unanalyzable(
                file="pkg/plugins/__init__.py",
                line=1,
                reason="module-level __getattr__ may serve any name",
                entity=QualName("pkg.plugins"),
                name="login",
            ),
        ),
        dag=dag,
        next_edits=NextEdits(
            items=(
                NextEdit(entity=must[1].entity, reason="login_view calls login without mfa_code"),
                NextEdit(entity=must[0].entity, reason="login_endpoint must forward mfa_code"),
            ),
            source="llm",
        ),
        next=NextAction(
            action="edit",
            reason="2 must-inspect sites; start with pkg.views.login_view: login_view calls "
            "login without mfa_code",
        ),
    )


def fallback_report() -> Report:
    """The same report when the LLM step failed and the batch order stands."""
    report = signature_change_report()
    must, may = report.triage.must_inspect, report.triage.may_impact
    order = (must[0], must[1], may[1], may[0])
    return dataclasses.replace(
        report,
        next_edits=NextEdits(
            items=tuple(NextEdit(entity=e.entity, reason=e.reason) for e in order),
            failed=True,
            fallback="batch_order",
            source="batch_order",
        ),
    )


def empty_report() -> Report:
    """No change against the baseline."""
    return Report(root=".", base="HEAD")


CASES: dict[str, Callable[[], Report]] = {
    "report_signature_change": signature_change_report,
    "report_fallback": fallback_report,
    "report_empty": empty_report,
}


@pytest.fixture
def reports() -> dict[str, Callable[[], Report]]:
    """Builders of the sample reports by golden case name; each call builds fresh values."""
    return dict(CASES)


@pytest.fixture
def golden(pytestconfig: pytest.Config) -> Callable[[str, str], None]:
    """``golden(name, text)`` compares with ``tests/golden/<name>`` (or rewrites it)."""
    return lambda name, text: assert_golden(pytestconfig, name, text)
