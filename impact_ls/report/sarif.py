"""The report as SARIF 2.1.0, for code-scanning UIs (GitHub, GitLab, VS Code's SARIF viewer).

Three rules: ``must-inspect`` (level ``warning``), ``may-impact`` and ``unanalyzable`` (``note``).
Each MUST/MAY site becomes one result at its call or reference range; its message leads with what
broke there (``missing required argument 'mfa_code' — <cause label>``, ``wording.site_message``),
with the edited definition as a related location. MAY sites flagged unanalyzable go under the
``unanalyzable`` rule, as do the report's unanalyzable sites not already listed. Report columns are
0-based with an exclusive end; SARIF columns are 1-based, so both ends shift by one. An end that
does not lie after the start is left out (the region then covers the start line).

Artifact URIs are root-relative URI references, percent-encoded (``acme/m%C3%B3dulo.py``), with
``uriBaseId`` ``%SRCROOT%``; given the root's ``file:`` URI, the run's ``originalUriBaseIds``
says where that is. The output validates against the SARIF 2.1.0 JSON schema (tested).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from impact_ls import __version__
from impact_ls.model import Change, QualName, Report, TriageEntry
from impact_ls.report.wording import change_summary, short_entity, site_message

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
SRCROOT = "%SRCROOT%"

_RULES: tuple[dict[str, Any], ...] = (
    {
        "id": "must-inspect",
        "name": "MustInspect",
        "shortDescription": {"text": "This site breaks or must change because of the edit."},
        "fullDescription": {
            "text": "A direct dependent whose binding to the edited definition is proven broken "
            "(missing or unknown argument, removed name or field)."
        },
        "defaultConfiguration": {"level": "warning"},
    },
    {
        "id": "may-impact",
        "name": "MayImpact",
        "shortDescription": {"text": "This site may be affected by the edit."},
        "fullDescription": {
            "text": "A dependent reached through the graph, a co-change partner or an affected "
            "test, without a provable break."
        },
        "defaultConfiguration": {"level": "note"},
    },
    {
        "id": "unanalyzable",
        "name": "Unanalyzable",
        "shortDescription": {"text": "Static analysis cannot see whether this site is affected."},
        "fullDescription": {
            "text": "The edited name is reached through a string, reflection or a module "
            "__getattr__; check this site by hand."
        },
        "defaultConfiguration": {"level": "note"},
    },
)
_RULE_INDEX = {rule["id"]: i for i, rule in enumerate(_RULES)}


def _region(range_: tuple[tuple[int, int], tuple[int, int]], line: int) -> dict[str, int]:
    (start_line, start_col), (end_line, end_col) = range_
    if start_line < 1:
        return {"startLine": max(1, line)}
    region = {"startLine": start_line, "startColumn": start_col + 1}
    if (end_line, end_col) > (start_line, start_col):
        region |= {"endLine": end_line, "endColumn": end_col + 1}
    return region


def artifact_uri(file: str) -> str:
    """A root-relative path as a URI reference: UTF-8 percent-encoded, ``/`` kept."""
    return quote(file, safe="/")


def _location(file: str, region: dict[str, int]) -> dict[str, Any]:
    artifact = {"uri": artifact_uri(file), "uriBaseId": SRCROOT}
    return {"physicalLocation": {"artifactLocation": artifact, "region": region}}


def _result(
    rule_id: str,
    message: str,
    location: dict[str, Any],
    *,
    entity: str = "",
    seed: Change | None = None,
) -> dict[str, Any]:
    if entity:
        location = location | {"logicalLocations": [{"fullyQualifiedName": entity}]}
    result: dict[str, Any] = {
        "ruleId": rule_id,
        "ruleIndex": _RULE_INDEX[rule_id],
        "level": _RULES[_RULE_INDEX[rule_id]]["defaultConfiguration"]["level"],
        "message": {"text": message},
        "locations": [location],
    }
    if seed is not None:
        region = {"startLine": max(1, seed.line_range[0]), "endLine": max(1, seed.line_range[1])}
        related = _location(seed.file, region)
        result["relatedLocations"] = [
            {
                "id": 0,
                **related,
                "message": {"text": f"edited: {short_entity(seed.entity)}, {change_summary(seed)}"},
            }
        ]
    return result


def _entry_result(
    rule_id: str, entry: TriageEntry, seeds: dict[QualName, Change]
) -> dict[str, Any]:
    return _result(
        rule_id,
        site_message(entry),
        _location(entry.file, _region(entry.range, entry.line)),
        entity=entry.entity,
        seed=seeds.get(entry.seed),
    )


def report_to_sarif(report: Report, *, root_uri: str | None = None) -> dict[str, Any]:
    """``report`` as a SARIF 2.1.0 log with one run of the ``impact-ls`` tool.

    ``root_uri`` (``file:///…/``, ending in ``/``) fills ``originalUriBaseIds``; without it a
    consumer resolves ``%SRCROOT%`` itself, as code-scanning uploads do with the checkout.
    """
    seeds = {c.entity: c for c in report.changes}
    results = [_entry_result("must-inspect", e, seeds) for e in report.triage.must_inspect]
    flagged: set[tuple[str, int]] = set()
    for entry in report.triage.may_impact:
        if entry.unanalyzable:
            flagged.add((entry.file, entry.line))
            results.append(_entry_result("unanalyzable", entry, seeds))
        else:
            results.append(_entry_result("may-impact", entry, seeds))
    for site in report.unanalyzable:
        if (site.file, site.line) not in flagged:
            flagged.add((site.file, site.line))
            location = _location(site.file, {"startLine": max(1, site.line)})
            results.append(_result("unanalyzable", site.reason, location, entity=site.entity))
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "impact-ls",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [dict(rule) for rule in _RULES],
            }
        },
        "results": results,
    }
    if root_uri is not None:
        run["originalUriBaseIds"] = {SRCROOT: {"uri": root_uri}}
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
