"""The single LLM step (spec §4): pick the next edit location from the impact map, or fall back.

Contract:
    inputs   the changes, the impact ``Dag``, the ``Triage`` and the ordered ``Batch`` list, plus an
             optional ``CompletionClient`` supplied by ``server/`` or ``cli.py``.
    output   ``NextEdits``: the model's ordered ``{entity, reason}`` list (``source="llm"``), or —
             with no client, on any client error, on a timeout or on a reply that is not exactly
             the requested JSON naming only entities of the map — ``failed=True`` with the
             deterministic batch order (``fallback="batch_order"``). With any MUST-INSPECT site
             the first next edit is one: the model's MUST entities come first (in its order),
             and a reply naming none of them falls back to the batch order.
    caps     exactly one call, temperature 0, ``max_tokens`` 1024, no retry; ≤ 50 entities in the
             map; every signature one line of ≤ 200 characters.
    privacy  the prompt holds a one-line change plan, the DAG as ``{entity, kind, signature}`` nodes
             and cause-labelled edges, the batch list, and the signatures of MUST-INSPECT nodes.
             Never a statement body, never a file: signatures are cut at the colon that ends a
             ``def``/``class`` header, so a one-line ``def f(): return x`` cannot leak ``return x``.

The step is split in three (STYLE.md "Pure core, I/O shell"): ``build_prompt`` and ``parse_reply``
are pure; the one HTTP call hides behind ``CompletionClient``; ``decide_next_edits`` ties them.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Collection, Sequence
from typing import Protocol

from impact_ls import config
from impact_ls.model import (
    Batch,
    Change,
    Dag,
    NextAction,
    NextEdit,
    NextEdits,
    QualName,
    TestHit,
    Triage,
    TriageEntry,
)

logger = logging.getLogger(__name__)

FALLBACK_BATCH_ORDER = "batch_order"
SOURCE_LLM = "llm"

_SYSTEM = (
    "You choose the next edit locations for a code change. You are given a change plan, an "
    "impact map (a DAG of affected entities with one-line signatures and cause-labelled edges, "
    "plus the batches that must be edited together) and the signatures of the sites that must "
    "be inspected. You never see code bodies and you must not ask for them. "
    'Reply with exactly one JSON object and nothing else: {"next_edits": [{"entity": '
    '"<an entity copied exactly from the map>", "reason": "<one line>"}]}. '
    "Order the list by which edit to make first. Name only entities that appear in the map."
)

_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)
_WS = re.compile(r"\s+")
_OPEN = re.compile(r"([(\[{]) ")
_CLOSE = re.compile(r",? ([)\]}])")


class CompletionClient(Protocol):
    """One chat-completion call; ``server/llm_http.py`` implements it over HTTP."""

    def complete(
        self, messages: list[dict[str, str]], *, temperature: float, max_tokens: int
    ) -> str:
        """Return the assistant message text; raise any ``Exception`` on failure."""
        ...


def _header_end(text: str) -> int:
    """Index just past the colon that closes a ``def``/``class`` header, or -1 if none."""
    depth = 0
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if text.startswith(quote, i):
                i += len(quote)
                quote = ""
                continue
        elif ch in "\"'":
            quote = ch * 3 if text.startswith(ch * 3, i) else ch
            i += len(quote)
            continue
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif ch == ":" and depth == 0:
            return i + 1
        i += 1
    return -1


def _one_line(signature: str, limit: int) -> str:
    """A signature as one line of at most ``limit`` characters, with any inline body removed."""
    text = _WS.sub(" ", signature).strip()
    if "\n" in signature:
        # A header wrapped over lines reads "f( a, b, )" once joined; "f(a, b)" is what it means.
        text = _CLOSE.sub(r"\1", _OPEN.sub(r"\1", text))
    if re.match(r"(async\s+def|def|class)\s", text):
        end = _header_end(text)
        if end > 0:
            text = text[:end]
    if len(text) > limit:
        text = text[: max(0, limit - 1)] + "…"
    return text


def _change_line(change: Change, limit: int) -> str:
    what = change.what
    if not what and change.before_sig != change.after_sig:
        what = f"{_one_line(change.before_sig, limit)} → {_one_line(change.after_sig, limit)}"
    line = f"{change.change_type}: {change.entity}"
    return f"{line} ({_one_line(what, limit)})" if what else line


def _map_entities(
    changes: Sequence[Change],
    dag: Dag,
    triage: Triage,
    batches: Sequence[Batch],
    max_entities: int,
) -> list[QualName]:
    """The entities the model may name, most important first, capped at ``max_entities``.

    The seeds come first: every DAG edge starts at one, so without them the map has no causes.
    """
    ordered: dict[QualName, None] = {}
    for entity in (
        *(c.entity for c in changes),
        *(e.entity for e in triage.must_inspect),
        *(m for b in batches for m in b.members),
        *(e.entity for e in triage.may_impact),
        *(n.entity for n in dag.nodes),
    ):
        ordered.setdefault(entity, None)
    return list(ordered)[:max_entities]


def build_prompt(
    changes: Sequence[Change],
    dag: Dag,
    triage: Triage,
    batches: Sequence[Batch],
    *,
    max_entities: int = config.LLM_MAX_ENTITIES,
    summary_chars: int = config.LLM_SUMMARY_CHARS,
) -> list[dict[str, str]]:
    """Build the system and user messages: change plan, signature-only DAG, MUST signatures."""
    entities = _map_entities(changes, dag, triage, batches, max_entities)
    kept = set(entities)
    nodes = [n for n in dag.nodes if n.entity in kept]
    edges = [e for e in dag.edges if e.source in kept and e.target in kept]
    obligations: list[dict[str, object]] = []
    kept_members = 0
    for batch in batches:
        members = [m for m in batch.members if m in kept]
        kept_members += len(members)
        if members:
            obligations.append({"batch_id": batch.batch_id, "members": members})
    cut = (
        dag.truncated
        or len(nodes) < len(dag.nodes)
        or len(edges) < len(dag.edges)
        or sum(b.size for b in batches) > kept_members
    )
    impact_map: dict[str, object] = {
        "dag": {
            "nodes": [
                {
                    "entity": n.entity,
                    "kind": n.kind,
                    "signature": _one_line(n.signature, summary_chars),
                }
                for n in nodes
            ],
            "edges": [
                {"from": e.source, "to": e.target, "cause": _one_line(e.cause, summary_chars)}
                for e in edges
            ],
        },
        "obligations": {"change": obligations},
        "truncated": cut,
    }
    signature_of = {n.entity: n.signature for n in dag.nodes}
    must_lines: list[str] = []
    seen: set[QualName] = set()
    for entry in triage.must_inspect:
        if entry.entity in kept and entry.entity not in seen:
            seen.add(entry.entity)
            sig = _one_line(signature_of.get(entry.entity, ""), summary_chars)
            must_lines.append(f"- {entry.entity}: {sig}" if sig else f"- {entry.entity}")
    plan = "; ".join(_change_line(c, summary_chars) for c in changes) or "(none)"
    user = "\n".join(
        [
            f"Change plan: {plan}",
            "",
            "Impact map (JSON):",
            json.dumps(impact_map, sort_keys=True, ensure_ascii=False, separators=(",", ":")),
            "",
            "MUST-INSPECT signatures:",
            *(must_lines or ["(none)"]),
        ]
    )
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def parse_reply(text: str, *, allowed: Collection[str]) -> NextEdits | None:
    """Parse the model's JSON reply; ``None`` unless well formed and naming only map entities."""
    body = text.strip()
    fenced = _FENCE.search(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("next_edits"), list):
        return None
    items: list[NextEdit] = []
    seen: set[str] = set()
    for raw in data["next_edits"]:
        if not isinstance(raw, dict):
            return None
        entity, reason = raw.get("entity"), raw.get("reason")
        if not isinstance(entity, str) or not isinstance(reason, str) or entity not in allowed:
            return None
        if entity in seen:
            continue
        seen.add(entity)
        items.append(
            NextEdit(entity=QualName(entity), reason=_one_line(reason, config.LLM_SUMMARY_CHARS))
        )
    if not items:
        return None
    return NextEdits(items=tuple(items[: config.LLM_MAX_ENTITIES]), source=SOURCE_LLM)


def _batch_order(triage: Triage, batches: Sequence[Batch]) -> tuple[NextEdit, ...]:
    """MUST entities in batch order, then MAY; entities outside every batch keep triage order."""
    items: list[NextEdit] = []
    seen: set[QualName] = set()
    in_batches = [m for b in batches for m in b.members]
    for bucket in (triage.must_inspect, triage.may_impact):
        first: dict[QualName, TriageEntry] = {}
        for entry in bucket:
            first.setdefault(entry.entity, entry)
        for entity in [*in_batches, *first]:
            found = first.get(entity)
            if found is not None and entity not in seen:
                seen.add(entity)
                items.append(NextEdit(entity=entity, reason=found.reason))
    return tuple(items)


def decide_next_edits(
    changes: Sequence[Change],
    dag: Dag,
    triage: Triage,
    batches: Sequence[Batch],
    *,
    client: CompletionClient | None,
    max_entities: int = config.LLM_MAX_ENTITIES,
    summary_chars: int = config.LLM_SUMMARY_CHARS,
) -> NextEdits:
    """Ask the model once for the next edits; any failure yields the batch order, marked failed.

    With no MUST-INSPECT or MAY-IMPACT site there is nothing to order: no call is made and the
    result is the empty, not-failed ``NextEdits()``.
    """
    fallback = NextEdits(
        items=_batch_order(triage, batches),
        failed=True,
        fallback=FALLBACK_BATCH_ORDER,
        source=FALLBACK_BATCH_ORDER,
    )
    if not triage.must_inspect and not triage.may_impact:
        return NextEdits()
    if client is None:
        logger.debug("next edit: no LLM endpoint configured; batch order stands")
        return fallback
    messages = build_prompt(
        changes, dag, triage, batches, max_entities=max_entities, summary_chars=summary_chars
    )
    allowed = set(_map_entities(changes, dag, triage, batches, max_entities))
    try:
        reply = client.complete(
            messages, temperature=config.LLM_TEMPERATURE, max_tokens=config.LLM_MAX_TOKENS
        )
    except Exception as exc:  # spec §4: any failure is a no-op, never a retry
        logger.info(
            "next edit: LLM call failed (%s: %s); batch order stands", type(exc).__name__, exc
        )
        return fallback
    parsed = parse_reply(reply, allowed=allowed) if isinstance(reply, str) else None
    if parsed is None:
        logger.info("next edit: LLM reply is not the requested JSON; batch order stands")
        return fallback
    must = {e.entity for e in triage.must_inspect}
    if must:
        # A site that must change comes before one that may: the model orders within each.
        first = [i for i in parsed.items if i.entity in must]
        if not first:
            logger.info("next edit: LLM named no must-inspect site; batch order stands")
            return fallback
        parsed = NextEdits(
            items=(*first, *(i for i in parsed.items if i.entity not in must)),
            source=parsed.source,
        )
    logger.debug("next edit: LLM chose %d entities", len(parsed.items))
    return parsed


def next_action(
    changes: Sequence[Change],
    triage: Triage,
    tests: Sequence[TestHit],
    next_edits: NextEdits | None = None,
) -> NextAction:
    """The one hint at the end of a report: ``edit``, ``run-tests`` or ``none``, with a reason.

    ``edit`` when a MUST-INSPECT site exists (naming the first of ``next_edits`` that is one, else
    the first MUST site), ``run-tests`` when no site must change but tests are affected, ``none``
    otherwise.
    """
    if not changes:
        return NextAction(action="none", reason="no change against the baseline")
    must = {e.entity for e in triage.must_inspect}
    may = {e.entity for e in triage.may_impact}
    test_ids = {t.test for t in tests}
    if must:
        items = next_edits.items if next_edits is not None else ()
        first = next((i for i in items if i.entity in must), None)
        if first is None:
            entry = triage.must_inspect[0]
            first = NextEdit(entity=entry.entity, reason=entry.reason)
        return NextAction(
            action="edit",
            reason=f"{_count(len(must), 'must-inspect site')}; start with {first.entity}: "
            f"{first.reason}",
        )
    review = f"; review {_count(len(may), 'may-impact site')}" if may else ""
    if test_ids:
        return NextAction(
            action="run-tests",
            reason=f"no site must change; re-run {_count(len(test_ids), 'affected test')}{review}",
        )
    return NextAction(action="none", reason=f"no site must change and no test is affected{review}")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
