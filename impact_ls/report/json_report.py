"""The report as JSON: one schema for the CLI, the LSP command result and coding agents (DESIGN §4).

``report_to_dict`` maps a ``Report`` onto the schema; ``report_to_json`` serializes it with sorted
keys, two-space indent, raw UTF-8 and a trailing newline, so identical reports give identical
bytes.

Shape notes: ``obligations`` is derived (batches as ``{batch_id, members}``, the validation set as
the sorted unique test ids); ``next_edits`` is ``{"next_edits": [...]}`` when the model answered
and ``{"next_edit": "failed", "fallback": "batch_order", "next_edits": [...]}`` when the
deterministic batch order stands. Scores are rounded to 4 decimals.
"""

from __future__ import annotations

import json
from typing import Any

from impact_ls.model import (
    NextEdits,
    Report,
    TriageEntry,
)

_DECIMALS = 4


def _score(value: float) -> float:
    return round(float(value), _DECIMALS)


def _entry(entry: TriageEntry) -> dict[str, Any]:
    (line, col), (end_line, end_col) = entry.range
    return {
        "entity": entry.entity,
        "file": entry.file,
        "line": entry.line,
        "range": [[line, col], [end_line, end_col]],
        "conf": _score(entry.conf),
        "distance": entry.distance,
        "relation": str(entry.relation),
        "reason": entry.reason,
        "seed": entry.seed,
        "change_type": str(entry.change_type),
        "unanalyzable": entry.unanalyzable,
        "name_matched": entry.name_matched,
        "breaks": [{"kind": b.kind, "detail": b.detail} for b in entry.breaks],
    }


def _next_edits(next_edits: NextEdits) -> dict[str, Any]:
    items = [{"entity": i.entity, "reason": i.reason} for i in next_edits.items]
    if next_edits.failed:
        return {
            "next_edit": "failed",
            "fallback": next_edits.fallback or "batch_order",
            "next_edits": items,
        }
    return {"next_edits": items}


def report_to_dict(report: Report) -> dict[str, Any]:
    """The DESIGN §4 JSON object of ``report`` (plain dicts, lists, strings and numbers)."""
    return {
        "version": report.version,
        "root": report.root,
        "base": report.base,
        "stale": report.stale,
        "audit": {
            "verified": report.audit.verified,
            "heuristic": report.audit.heuristic,
            "truncated": report.audit.truncated,
            "notes": list(report.audit.notes),
        },
        "changes": [
            {
                "change_type": str(c.change_type),
                "entity": c.entity,
                "file": c.file,
                "line_range": list(c.line_range),
                "before_sig": c.before_sig,
                "after_sig": c.after_sig,
                "what": c.what,
            }
            for c in report.changes
        ],
        "triage": {
            "must_inspect": [_entry(e) for e in report.triage.must_inspect],
            "may_impact": [_entry(e) for e in report.triage.may_impact],
            "low_risk": [_entry(e) for e in report.triage.low_risk],
        },
        "batches": [
            {"batch_id": b.batch_id, "members": list(b.members), "size": b.size, "split": b.split}
            for b in report.batches
        ],
        "tests": [
            {"file": t.file, "test": t.test, "conf": _score(t.conf), "evidence": str(t.evidence)}
            for t in report.tests
        ],
        "cochange": [{"file": c.file, "score": _score(c.score)} for c in report.cochange],
        "unanalyzable": [
            {"file": u.file, "line": u.line, "reason": u.reason, "entity": u.entity, "name": u.name}
            for u in report.unanalyzable
        ],
        "obligations": {
            "change": [
                {"batch_id": b.batch_id, "members": list(b.members)} for b in report.batches
            ],
            "validate": sorted({t.test for t in report.tests}),
        },
        "dag": {
            "nodes": [
                {
                    "entity": n.entity,
                    "kind": n.kind,
                    "file": n.file,
                    "line": n.line,
                    "signature": n.signature,
                    "batch_id": n.batch_id,
                }
                for n in report.dag.nodes
            ],
            "edges": [
                {"from": e.source, "to": e.target, "cause": e.cause} for e in report.dag.edges
            ],
            "truncated": report.dag.truncated,
        },
        "next_edits": _next_edits(report.next_edits),
        "next": {"action": report.next.action, "reason": report.next.reason},
    }


def report_to_json(report: Report) -> str:
    """``report`` as deterministic JSON text: sorted keys, indent 2, UTF-8, trailing newline."""
    return json.dumps(report_to_dict(report), sort_keys=True, indent=2, ensure_ascii=False) + "\n"
