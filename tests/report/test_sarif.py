"""SARIF 2.1.0 output: the official schema, rules, 1-based regions, encoded URIs, golden file."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import impact_ls
from impact_ls.model import Report
from impact_ls.report.sarif import report_to_sarif

Reports = dict[str, Callable[[], Report]]
CASES = ("report_empty", "report_signature_change")
_LEVELS = {"none", "note", "warning", "error"}
# The SARIF 2.1.0 schema our output names in "$schema", vendored (see schema/NOTICE.md).
SCHEMA = Path(__file__).with_name("schema") / "sarif-2.1.0.json"


@cache
def _validator() -> jsonschema.Draft7Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())


def assert_valid_sarif(log: dict[str, Any]) -> None:
    """Fail with every schema violation of ``log``, each with its JSON path."""
    errors = sorted(_validator().iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{e.json_path}: {e.message}" for e in errors)


def _check_structure(log: dict[str, Any]) -> None:
    """The required properties of SARIF 2.1.0 (sarifLog, run, tool, result, region)."""
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    assert isinstance(log["runs"], list) and len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert isinstance(driver["name"], str) and driver["name"]
    rule_ids = [rule["id"] for rule in driver["rules"]]
    assert len(set(rule_ids)) == len(rule_ids)
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"]
        assert rule["defaultConfiguration"]["level"] in _LEVELS
    for result in run["results"]:
        assert result["message"]["text"]
        assert result["level"] in _LEVELS
        assert rule_ids[result["ruleIndex"]] == result["ruleId"]
        for location in (*result["locations"], *result.get("relatedLocations", ())):
            physical = location["physicalLocation"]
            assert physical["artifactLocation"]["uri"]
            assert not physical["artifactLocation"]["uri"].startswith("/")
            region = physical["region"]
            assert region["startLine"] >= 1
            assert region.get("startColumn", 1) >= 1
            end = (region.get("endLine", region["startLine"]), region.get("endColumn", 1))
            if "endColumn" in region:
                assert end > (region["startLine"], region["startColumn"])
    json.dumps(log)  # plain JSON values only


@pytest.mark.parametrize("case", CASES)
def test_sarif_validates_against_the_sarif_2_1_0_schema(case: str, reports: Reports) -> None:
    assert_valid_sarif(report_to_sarif(reports[case]()))
    assert_valid_sarif(report_to_sarif(reports[case](), root_uri="file:///home/me/my%20shop/"))


def test_the_schema_check_catches_what_it_should(reports: Reports) -> None:
    # The check itself can fail: a wrong level, a column of 0 and a raw non-ASCII path.
    log = report_to_sarif(reports["report_signature_change"]())
    result = log["runs"][0]["results"][0]
    result["level"] = "fatal"
    physical = result["locations"][0]["physicalLocation"]
    physical["region"]["startColumn"] = 0
    physical["artifactLocation"]["uri"] = "acme/módulo.py"
    errors = list(_validator().iter_errors(log))
    assert {e.json_path for e in errors} == {
        "$.runs[0].results[0].level",
        "$.runs[0].results[0].locations[0].physicalLocation.region.startColumn",
        "$.runs[0].results[0].locations[0].physicalLocation.artifactLocation.uri",
    }


def test_non_ascii_and_spaces_in_paths_are_percent_encoded(reports: Reports) -> None:
    report = reports["report_signature_change"]()
    entry = dataclasses.replace(report.triage.must_inspect[0], file="acme/módulo de pago.py")
    change = dataclasses.replace(report.changes[0], file="acme/ñandú.py")
    report = dataclasses.replace(
        report,
        changes=(change,),
        triage=dataclasses.replace(report.triage, must_inspect=(entry,)),
    )
    log = report_to_sarif(report)
    assert_valid_sarif(log)
    result = log["runs"][0]["results"][0]
    artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": "acme/m%C3%B3dulo%20de%20pago.py", "uriBaseId": "%SRCROOT%"}
    related = result["relatedLocations"][0]["physicalLocation"]["artifactLocation"]
    assert related["uri"] == "acme/%C3%B1and%C3%BA.py"


def test_the_root_is_given_as_the_base_of_every_uri(reports: Reports) -> None:
    log = report_to_sarif(reports["report_signature_change"](), root_uri="file:///srv/shop/")
    assert log["runs"][0]["originalUriBaseIds"] == {"%SRCROOT%": {"uri": "file:///srv/shop/"}}
    assert "originalUriBaseIds" not in report_to_sarif(reports["report_empty"]())["runs"][0]


@pytest.mark.parametrize("case", CASES)
def test_sarif_matches_golden(
    case: str, reports: Reports, golden: Callable[[str, str], None]
) -> None:
    log = report_to_sarif(reports[case]())
    _check_structure(log)
    text = json.dumps(log, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    golden(f"{case}.sarif.json", text)


def test_driver_and_rules(reports: Reports) -> None:
    driver = report_to_sarif(reports["report_signature_change"]())["runs"][0]["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("impact-ls", impact_ls.__version__)
    assert [(r["id"], r["defaultConfiguration"]["level"]) for r in driver["rules"]] == [
        ("must-inspect", "warning"),
        ("may-impact", "note"),
        ("unanalyzable", "note"),
    ]


def test_results_map_buckets_to_rules(reports: Reports) -> None:
    results = report_to_sarif(reports["report_signature_change"]())["runs"][0]["results"]
    assert [
        (r["ruleId"], r["level"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
        for r in results
    ] == [
        ("must-inspect", "warning", "pkg/api/handlers.py"),
        ("must-inspect", "warning", "pkg/views.py"),
        ("unanalyzable", "note", "pkg/registry.py"),
        ("may-impact", "note", "pkg/session.py"),
        # pkg/registry.py:7 is listed once although it is both a MAY site and unanalyzable.
        ("unanalyzable", "note", "pkg/plugins/__init__.py"),
    ]


def test_must_result_region_message_and_seed(reports: Reports) -> None:
    result = report_to_sarif(reports["report_signature_change"]())["runs"][0]["results"][1]
    # What broke there first: a code-scanning list that cuts the line keeps the point.
    assert result["message"]["text"] == (
        "missing required argument 'mfa_code' — method-signature changed (added param mfa_code) "
        "→ login_view must re-bind via CalledBy"
    )
    location = result["locations"][0]
    # The report's [[41, 8], [41, 30]] (0-based columns) is 1-based in SARIF.
    assert location["physicalLocation"]["region"] == {
        "startLine": 41,
        "startColumn": 9,
        "endLine": 41,
        "endColumn": 31,
    }
    assert location["logicalLocations"] == [{"fullyQualifiedName": "pkg.views.login_view"}]
    assert result["relatedLocations"] == [
        {
            "id": 0,
            "physicalLocation": {
                "artifactLocation": {"uri": "pkg/auth.py", "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": 12, "endLine": 16},
            },
            "message": {"text": "edited: LoginService.login, added param mfa_code"},
        }
    ]


def test_empty_range_keeps_only_the_start(reports: Reports) -> None:
    report = reports["report_signature_change"]()
    entry = dataclasses.replace(report.triage.must_inspect[0], range=((17, 4), (17, 4)))
    report = dataclasses.replace(
        report, triage=dataclasses.replace(report.triage, must_inspect=(entry,))
    )
    region = report_to_sarif(report)["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
        "region"
    ]
    assert region == {"startLine": 17, "startColumn": 5}


def test_empty_report_has_no_results(reports: Reports) -> None:
    log = report_to_sarif(reports["report_empty"]())
    _check_structure(log)
    assert log["runs"][0]["results"] == []
