"""The report as JSON: one schema for the CLI, the LSP command result and coding agents (DESIGN §4).

``report_to_dict`` maps a ``Report`` onto the schema; ``report_to_json`` serializes it with sorted
keys, two-space indent, raw UTF-8 and a trailing newline, so identical reports give identical
bytes. ``report_from_dict`` reads the schema back: the CI action reads what ``impact-ls analyze
--format json`` wrote, and the graph page renders the blast-radius command's result.

Shape notes: ``tests`` lists the report's pairs (at most ``max-test-pairs``, the most confident;
``audit.notes`` says when it cut), each with ``reason`` when a test is selected for more than a
call path (an import-time break); ``obligations`` is derived (batches as ``{batch_id, members}``,
the validation set as the sorted unique ids of the *whole* selection); ``next_edits`` is
``{"next_edits": [...]}`` when the model answered and
``{"next_edit": "failed", "fallback": "batch_order", "next_edits": [...]}`` when the
deterministic batch order stands. Scores are rounded to 4 decimals.
"""

from __future__ import annotations

import json
from typing import Any

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

_DECIMALS = 4


def _score(value: float) -> float:
    return round(float(value), _DECIMALS)


def _test_entry(hit: TestHit) -> dict[str, Any]:
    out: dict[str, Any] = {
        "file": hit.file,
        "test": hit.test,
        "test_file": hit.test_file,
        "conf": _score(hit.conf),
        "evidence": str(hit.evidence),
    }
    if hit.reason:  # an import-time break, a conftest hook: why beyond a call path
        out["reason"] = hit.reason
    return out


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
        "tests": [_test_entry(t) for t in report.tests],
        "cochange": [{"file": c.file, "score": _score(c.score)} for c in report.cochange],
        "unanalyzable": [
            {"file": u.file, "line": u.line, "reason": u.reason, "entity": u.entity, "name": u.name}
            for u in report.unanalyzable
        ],
        "obligations": {
            "change": [
                {"batch_id": b.batch_id, "members": list(b.members)} for b in report.batches
            ],
            # every selected id, also those the shortened ``tests`` list leaves out
            "validate": report.selected_tests(),
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


def _entry_from(d: dict[str, Any], bucket: Bucket) -> TriageEntry:
    (line, col), (end_line, end_col) = d["range"]
    return TriageEntry(
        entity=QualName(d["entity"]),
        file=d["file"],
        line=d["line"],
        range=((line, col), (end_line, end_col)),
        conf=d["conf"],
        distance=d["distance"],
        relation=Relation(d["relation"]),
        reason=d["reason"],
        seed=QualName(d.get("seed", "")),
        change_type=ChangeType(d.get("change_type", ChangeType.METHOD_BODY)),
        bucket=bucket,
        unanalyzable=d.get("unanalyzable", False),
        name_matched=d.get("name_matched", False),
        breaks=tuple(Break(kind=b["kind"], detail=b["detail"]) for b in d.get("breaks", ())),
    )


def _next_edits_from(d: dict[str, Any]) -> NextEdits:
    items = tuple(
        NextEdit(entity=QualName(i["entity"]), reason=i["reason"]) for i in d.get("next_edits", ())
    )
    if d.get("next_edit") == "failed":
        fallback = d.get("fallback", "batch_order")
        return NextEdits(items=items, failed=True, fallback=fallback, source=fallback)
    # A successful decision always names at least one entity; an empty one is "nothing to order".
    return NextEdits(items=items, source="llm" if items else "batch_order")


def _change_from(c: dict[str, Any]) -> Change:
    return Change(
        change_type=ChangeType(c["change_type"]),
        entity=QualName(c["entity"]),
        file=c["file"],
        line_range=(c["line_range"][0], c["line_range"][1]),
        before_sig=c.get("before_sig", ""),
        after_sig=c.get("after_sig", ""),
        what=c.get("what", ""),
    )


def _dag_from(dag: dict[str, Any]) -> Dag:
    return Dag(
        nodes=tuple(
            DagNode(
                entity=QualName(n["entity"]),
                kind=n["kind"],
                file=n["file"],
                line=n["line"],
                signature=n["signature"],
                batch_id=n.get("batch_id"),
            )
            for n in dag.get("nodes", ())
        ),
        edges=tuple(
            DagEdge(source=QualName(e["from"]), target=QualName(e["to"]), cause=e["cause"])
            for e in dag.get("edges", ())
        ),
        truncated=dag.get("truncated", False),
    )


def report_from_dict(d: dict[str, Any]) -> Report:
    """Read a ``report_to_dict`` object back into a ``Report`` (derived fields are recomputed)."""
    audit = d.get("audit", {})
    triage = d.get("triage", {})
    nxt = d.get("next", {})
    return Report(
        version=d.get("version", 1),
        root=d["root"],
        base=d["base"],
        stale=d.get("stale", False),
        audit=Audit(
            verified=audit.get("verified", ""),
            heuristic=audit.get("heuristic", ""),
            truncated=audit.get("truncated", False),
            notes=tuple(audit.get("notes", ())),
        ),
        changes=tuple(_change_from(c) for c in d.get("changes", ())),
        triage=Triage(
            **{
                bucket.value: tuple(_entry_from(e, bucket) for e in triage.get(bucket.value, ()))
                for bucket in Bucket
            }
        ),
        batches=tuple(
            Batch(
                batch_id=b["batch_id"],
                members=tuple(QualName(m) for m in b["members"]),
                split=b.get("split", False),
            )
            for b in d.get("batches", ())
        ),
        tests=tuple(
            TestHit(
                file=t["file"],
                test=TestId(t["test"]),
                conf=t["conf"],
                evidence=Evidence(t.get("evidence", "static")),
                reason=t.get("reason", ""),
            )
            for t in d.get("tests", ())
        ),
        cochange=tuple(CoChange(file=c["file"], score=c["score"]) for c in d.get("cochange", ())),
        unanalyzable=tuple(
            Unanalyzable(
                file=u["file"],
                line=u["line"],
                reason=u["reason"],
                entity=QualName(u.get("entity", "")),
                name=u.get("name", ""),
            )
            for u in d.get("unanalyzable", ())
        ),
        dag=_dag_from(d.get("dag", {})),
        next_edits=_next_edits_from(d.get("next_edits", {})),
        next=NextAction(action=nxt.get("action", "none"), reason=nxt.get("reason", "")),
    )
