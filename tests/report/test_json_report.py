"""The JSON report: DESIGN §4 schema, deterministic bytes, golden files, reading back."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from impact_ls.model import Report
from impact_ls.report.json_report import report_from_dict, report_to_dict, report_to_json

Reports = dict[str, Callable[[], Report]]
CASES = ("report_empty", "report_fallback", "report_signature_change")


@pytest.mark.parametrize("case", CASES)
def test_json_matches_golden(
    case: str, reports: Reports, golden: Callable[[str, str], None]
) -> None:
    golden(f"{case}.json", report_to_json(reports[case]()))


@pytest.mark.parametrize("case", CASES)
def test_identical_reports_give_identical_bytes(case: str, reports: Reports) -> None:
    first = report_to_json(reports[case]()).encode("utf-8")
    second = report_to_json(reports[case]()).encode("utf-8")
    assert first == second
    assert first.endswith(b"}\n")


def test_json_is_sorted_pretty_and_raw_utf8(reports: Reports) -> None:
    text = report_to_json(reports["report_signature_change"]())
    assert text.startswith('{\n  "audit": {\n')
    assert "→" in text and "\\u2192" not in text
    assert text == json.dumps(json.loads(text), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def test_top_level_schema(reports: Reports) -> None:
    d = report_to_dict(reports["report_signature_change"]())
    assert set(d) == {
        "version",
        "root",
        "base",
        "stale",
        "audit",
        "changes",
        "triage",
        "batches",
        "tests",
        "cochange",
        "unanalyzable",
        "obligations",
        "dag",
        "next_edits",
        "next",
    }
    assert (d["version"], d["root"], d["base"], d["stale"]) == (1, ".", "HEAD", False)
    assert set(d["audit"]) == {"verified", "heuristic", "truncated", "notes"}
    assert d["changes"] == [
        {
            "change_type": "method-signature",
            "entity": "pkg.auth.LoginService.login",
            "file": "pkg/auth.py",
            "line_range": [12, 16],
            "before_sig": "def login(self, user):",
            "after_sig": "def login(self, user, mfa_code):",
            "what": "added param mfa_code",
        }
    ]
    assert set(d["triage"]) == {"must_inspect", "may_impact", "low_risk"}
    assert [len(d["triage"][b]) for b in ("must_inspect", "may_impact", "low_risk")] == [2, 2, 2]


def test_triage_entry_fields(reports: Reports) -> None:
    entry = report_to_dict(reports["report_signature_change"]())["triage"]["must_inspect"][1]
    assert entry == {
        "entity": "pkg.views.login_view",
        "file": "pkg/views.py",
        "line": 41,
        "range": [[41, 8], [41, 30]],
        "conf": 0.85,
        "distance": 1,
        "relation": "CalledBy",
        "reason": "method-signature changed (added param mfa_code) → login_view must re-bind "
        "via CalledBy",
        "seed": "pkg.auth.LoginService.login",
        "change_type": "method-signature",
        "unanalyzable": False,
        "name_matched": False,
        "breaks": [{"kind": "missing-required", "detail": "missing required argument 'mfa_code'"}],
    }
    may = report_to_dict(reports["report_signature_change"]())["triage"]["may_impact"]
    assert [(m["entity"], m["unanalyzable"], m["conf"]) for m in may] == [
        ("pkg.registry.dispatch", True, 0.5),
        ("pkg.session.Session.validate", False, 0.4567),
    ]


def test_batches_tests_cochange_unanalyzable_obligations(reports: Reports) -> None:
    d = report_to_dict(reports["report_signature_change"]())
    assert d["batches"] == [
        {
            "batch_id": 0,
            "members": [
                "pkg.auth.LoginService.login",
                "pkg.api.handlers.login_endpoint",
                "pkg.views.login_view",
                "pkg.session.Session.validate",
            ],
            "size": 4,
            "split": False,
        },
        {"batch_id": 1, "members": ["pkg.registry.dispatch"], "size": 1, "split": False},
    ]
    assert d["tests"] == [
        {
            "file": "pkg/auth.py",
            "test": "tests/test_auth.py::TestLogin::test_mfa",
            "test_file": "tests/test_auth.py",
            "conf": 1.0,
            "evidence": "static",
        },
        {
            "file": "pkg/auth.py",
            "test": "tests/test_views.py::test_login_view",
            "test_file": "tests/test_views.py",
            "conf": 0.56,
            "evidence": "recorded",
        },
    ]
    assert d["cochange"] == [
        {"file": "pkg/session.py", "score": 0.42},
        {"file": "docs/auth.md", "score": 0.1234},
    ]
    assert d["unanalyzable"][0] == {
        "file": "pkg/registry.py",
        "line": 7,
        "reason": "string-keyed getattr of 'login'",
        "entity": "pkg.registry.dispatch",
        "name": "login",
    }
    assert d["obligations"] == {
        "change": [{"batch_id": b["batch_id"], "members": b["members"]} for b in d["batches"]],
        "validate": [
            "tests/test_auth.py::TestLogin::test_mfa",
            "tests/test_views.py::test_login_view",
        ],
    }


def test_dag_shape(reports: Reports) -> None:
    dag = report_to_dict(reports["report_signature_change"]())["dag"]
    assert set(dag) == {"nodes", "edges", "truncated"}
    assert dag["nodes"][1] == {
        "entity": "pkg.views.login_view",
        "kind": "function",
        "file": "pkg/views.py",
        "line": 38,
        "signature": "def login_view(request):",
        "batch_id": 0,
    }
    assert dag["edges"][0] == {
        "from": "pkg.auth.LoginService.login",
        "to": "pkg.api.handlers.login_endpoint",
        "cause": "method-signature changed (added param mfa_code) → login_endpoint must re-bind "
        "via CalledBy",
    }
    assert dag["truncated"] is False


def test_next_edits_success_and_failure_shapes(reports: Reports) -> None:
    ok = report_to_dict(reports["report_signature_change"]())
    assert ok["next_edits"] == {
        "next_edits": [
            {"entity": "pkg.views.login_view", "reason": "login_view calls login without mfa_code"},
            {
                "entity": "pkg.api.handlers.login_endpoint",
                "reason": "login_endpoint must forward mfa_code",
            },
        ]
    }
    failed = report_to_dict(reports["report_fallback"]())["next_edits"]
    assert set(failed) == {"next_edit", "fallback", "next_edits"}
    assert (failed["next_edit"], failed["fallback"]) == ("failed", "batch_order")
    assert [e["entity"] for e in failed["next_edits"]] == [
        "pkg.api.handlers.login_endpoint",
        "pkg.views.login_view",
        "pkg.session.Session.validate",
        "pkg.registry.dispatch",
    ]
    assert ok["next"] == {
        "action": "edit",
        "reason": "2 must-inspect sites; start with pkg.views.login_view: login_view calls "
        "login without mfa_code",
    }


def test_empty_report(reports: Reports) -> None:
    d = report_to_dict(reports["report_empty"]())
    assert d["changes"] == [] and d["batches"] == [] and d["dag"]["nodes"] == []
    assert d["next_edits"] == {"next_edits": []}
    assert d["next"] == {"action": "none", "reason": "no change"}
    assert d["obligations"] == {"change": [], "validate": []}


@pytest.mark.parametrize("case", CASES)
def test_report_round_trips_through_json(case: str, reports: Reports) -> None:
    report = reports[case]()
    back = report_from_dict(json.loads(report_to_json(report)))
    assert isinstance(back, Report)
    assert back == report
