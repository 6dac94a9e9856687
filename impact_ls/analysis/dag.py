"""The impact DAG (spec §3.9): the obligations as cause-labelled edges from each seed to its sites.

Contract (edge causes are ``causes.cause_label``):
    ``build_dag(changes, triage, batches, tests, graph, max_nodes=..., max_edges=...,
    max_tokens=...)`` returns a ``Dag``:
    nodes    the seeds (every change but ``incomplete``), then MUST-INSPECT and MAY-IMPACT
             entities, then the affected tests, each ``{entity, kind, file, line, signature,
             batch_id}``, in topological order: by distance from the seed (seeds 0, tests
             last), then bucket, confidence descending, entity. LOW-RISK entities are not nodes.
    edges    ``source → target`` with the entry's cause label, from the entry's ``via`` when that
             is a node, else from its seed; from each seed to each test of its file
             (``TestedBy``). An edge that would point backwards in node order is dropped, so the
             graph is acyclic and the seed precedes its callers.
    caps     at most ``max_nodes`` nodes and ``max_edges`` edges (farthest dropped first), and at
             most ``max_tokens`` tokens of serialized JSON (``estimate_tokens``: ceil of
             characters / 4, over ``json.dumps`` of ``{"nodes": [...], "edges": [{"from", "to",
             "cause"}]}``). Over the token cap the longest signatures are shortened first (down
             to 40 characters, ending in ``…``), then the farthest non-seed nodes are dropped
             with their edges. ``truncated`` is set whenever anything was cut.
"""

from __future__ import annotations

import json
import logging
import re
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from impact_ls.analysis.causes import cause_label
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import (
    Batch,
    Change,
    ChangeType,
    Dag,
    DagEdge,
    DagNode,
    Node,
    QualName,
    Relation,
    TestHit,
    Triage,
    TriageEntry,
)

logger = logging.getLogger(__name__)

_MIN_SIGNATURE = 40
# One token ≈ four characters of JSON, the usual rule of thumb for GPT-style tokenizers on code and
# identifiers: no tokenizer download, the same number everywhere.
_CHARS_PER_TOKEN = 4
# The serialized DAG is its items' JSON joined by ", " inside this frame (json.dumps defaults).
_FRAME = len('{"nodes": [], "edges": []}')
_SEPARATOR = len(", ")
_ENCODER = json.JSONEncoder(ensure_ascii=False)
_ESCAPED = re.compile('[\x00-\x1f"\\\\]')  # what the encoder writes as more than itself
_TEST_DISTANCE = 1_000  # tests sort after every walked site
_SEED, _MUST, _MAY, _TEST = range(4)


@dataclass(frozen=True, slots=True)
class _Rank:
    distance: int
    bucket: int
    conf: float
    entity: str

    def key(self) -> tuple[int, int, float, str]:
        return (self.distance, self.bucket, -self.conf, self.entity)


def build_dag(
    changes: Sequence[Change],
    triage: Triage,
    batches: Sequence[Batch],
    tests: Sequence[TestHit],
    graph: CodeGraph,
    *,
    max_nodes: int,
    max_edges: int,
    max_tokens: int,
) -> Dag:
    """The cause-labelled impact DAG of the seeds, MUST and MAY sites and tests, within caps."""
    batch_of: dict[QualName, int] = {}
    for batch in batches:
        for entity in batch.members:
            batch_of.setdefault(entity, batch.batch_id)
    nodes: dict[QualName, DagNode] = {}
    ranks: dict[QualName, _Rank] = {}
    seeds = [c for c in changes if c.change_type is not ChangeType.INCOMPLETE]
    for change in seeds:
        if change.entity not in nodes:
            nodes[change.entity] = _seed_node(change, graph, batch_of)
            ranks[change.entity] = _Rank(0, _SEED, 1.0, change.entity)
    entries = [(_MUST, e) for e in triage.must_inspect] + [(_MAY, e) for e in triage.may_impact]
    for bucket, entry in entries:
        rank = _Rank(entry.distance, bucket, entry.conf, entry.entity)
        if entry.entity not in ranks or rank.key() < ranks[entry.entity].key():
            ranks[entry.entity] = rank
        if entry.entity not in nodes:
            nodes[entry.entity] = _entry_node(entry, graph, batch_of)
    test_entity = _add_test_nodes(tests, graph, nodes, ranks)

    order = sorted(nodes, key=lambda q: ranks[q].key())
    position = {q: i for i, q in enumerate(order)}
    edges: dict[tuple[QualName, QualName], DagEdge] = {}
    for _, entry in entries:
        source = entry.via if entry.via in nodes and entry.via != entry.entity else entry.seed
        _add_edge(edges, position, source, entry.entity, entry.reason)
    for hit in tests:
        for change in seeds:
            if change.file == hit.file:
                cause = cause_label(change, site=hit.test, relation=Relation.TESTED_BY)
                _add_edge(edges, position, change.entity, test_entity[hit.test], cause)

    kept = order[:max_nodes]
    dag = _assemble(kept, nodes, edges, position, max_edges)
    keep = set(kept)
    truncated = len(kept) < len(order) or len(dag.edges) < sum(
        1 for s, t in edges if s in keep and t in keep
    )
    fit = _Fit(
        kept=kept,
        edges=edges,
        position=position,
        max_edges=max_edges,
        max_tokens=max_tokens,
        seed_count=len(seeds),
    )
    dag, cut = _fit_tokens(dag, fit)
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug(
            "dag: %d nodes, %d edges, ~%d tokens", len(dag.nodes), len(dag.edges), _tokens(dag)
        )
    return replace(dag, truncated=truncated or cut)


def _add_test_nodes(
    tests: Sequence[TestHit],
    graph: CodeGraph,
    nodes: dict[QualName, DagNode],
    ranks: dict[QualName, _Rank],
) -> dict[str, QualName]:
    """Add a node per affected test (after every site); return each test id's node entity."""
    test_nodes: dict[str, Node] | None = None  # by test id, read only for hits without entity
    test_entity: dict[str, QualName] = {}
    for hit in tests:
        if hit.entity is not None:
            known = graph.node(hit.entity)
        else:
            if test_nodes is None:
                test_nodes = {n.test_id: n for n in graph.tests() if n.test_id is not None}
            known = test_nodes.get(hit.test)
        entity = known.id if known is not None else QualName(hit.test)
        test_entity[hit.test] = entity
        rank = _Rank(_TEST_DISTANCE, _TEST, hit.conf, entity)
        if entity not in ranks or rank.key() < ranks[entity].key():
            ranks[entity] = rank
        if entity not in nodes:
            nodes[entity] = DagNode(
                entity=entity,
                kind="test",
                file=known.file if known is not None else hit.test.split("::", 1)[0],
                line=known.span.line if known is not None else 0,
                signature=known.signature if known is not None else "",
                batch_id=None,
            )
    return test_entity


def _add_edge(
    edges: dict[tuple[QualName, QualName], DagEdge],
    position: Mapping[QualName, int],
    source: QualName,
    target: QualName,
    cause: str,
) -> None:
    if source not in position or target not in position:
        return
    if position[source] >= position[target]:
        return  # would point backwards (or loop): keep the DAG acyclic, seed before callers
    edges.setdefault((source, target), DagEdge(source=source, target=target, cause=cause))


def _assemble(
    kept: Sequence[QualName],
    nodes: Mapping[QualName, DagNode],
    edges: Mapping[tuple[QualName, QualName], DagEdge],
    position: Mapping[QualName, int],
    max_edges: int,
) -> Dag:
    keep = set(kept)
    inside = [e for (s, t), e in edges.items() if s in keep and t in keep]
    # The farthest targets lose their edges first.
    inside.sort(key=lambda e: (position[e.target], position[e.source]))
    chosen = sorted(inside[:max_edges], key=lambda e: (position[e.source], position[e.target]))
    return Dag(nodes=tuple(nodes[q] for q in kept), edges=tuple(chosen))


@dataclass(frozen=True, slots=True, kw_only=True)
class _Fit:
    """What the token cap cuts within: the node order kept, every edge, the caps."""

    kept: Sequence[QualName]
    edges: Mapping[tuple[QualName, QualName], DagEdge]
    position: Mapping[QualName, int]
    max_edges: int
    max_tokens: int
    seed_count: int


def _fit_tokens(dag: Dag, fit: _Fit) -> tuple[Dag, bool]:
    # Every candidate below is measured by arithmetic on each item's JSON length: building and
    # serialising each candidate DAG cost a third of a django edit's analysis.
    bases = [_json_length(_node_payload(n, "")) - len('""') for n in dag.nodes]
    signatures = [n.signature for n in dag.nodes]
    edge_lengths = [_json_length(_edge_payload(e)) for e in dag.edges]
    edge_chars = sum(edge_lengths) + _SEPARATOR * max(len(edge_lengths) - 1, 0)

    # A signature with nothing to escape is its characters and two quotes long, cut or not
    # (the cut's "…" stands in for one character): the binary search below asks ~1,600 times.
    plain = [_ESCAPED.search(s) is None for s in signatures]

    def node_lengths(limit: int) -> list[int]:
        return [
            b + (min(len(s), limit) + 2 if p else _string_length(s, limit))
            for b, s, p in zip(bases, signatures, plain, strict=True)
        ]

    def fits(limit: int) -> bool:
        node_chars = sum(node_lengths(limit)) + _SEPARATOR * max(len(bases) - 1, 0)
        return _tokens_of_length(_FRAME + node_chars + edge_chars) <= fit.max_tokens

    longest = max(map(len, signatures), default=0)
    if fits(longest):
        return dag, False
    limit = longest
    if longest > _MIN_SIGNATURE:
        # The highest signature length that fits: every longer signature is cut to it.
        limit = _largest(_MIN_SIGNATURE, longest, fits)
        if fits(limit):
            return _shorten(dag, limit), True
    shortened = _shorten(dag, limit)
    count = _longest_prefix(node_lengths(limit), fit)
    by_entity = {n.entity: n for n in shortened.nodes}
    return _assemble(fit.kept[:count], by_entity, fit.edges, fit.position, fit.max_edges), True


def _longest_prefix(node_lengths: Sequence[int], fit: _Fit) -> int:
    """The most nodes of the order whose DAG fits ``max_tokens``; the seeds always stay.

    ``node_lengths`` are the JSON lengths of the nodes in order, signatures as cut.

    ``kept`` is a prefix of the node order, so the DAG of its first ``count`` nodes holds the
    edges whose target is among them — a prefix of the edges sorted by (target, source)
    position, cut at ``max_edges`` as ``_assemble`` cuts it.
    """
    node_sums = [0]
    for length in node_lengths:
        node_sums.append(node_sums[-1] + length)
    kept, position = fit.kept, fit.position
    inside = sorted(
        (position[t], position[s], _json_length(_edge_payload(e)))
        for (s, t), e in fit.edges.items()
        if position[t] < len(kept)
    )
    edge_targets = [t for t, _, _ in inside]
    edge_sums = [0]
    for _, _, length in inside:
        edge_sums.append(edge_sums[-1] + length)

    def fits(count: int) -> bool:
        edge_count = min(fit.max_edges, bisect_left(edge_targets, count))
        chars = (
            _FRAME
            + node_sums[count]
            + _SEPARATOR * max(count - 1, 0)
            + edge_sums[edge_count]
            + _SEPARATOR * max(edge_count - 1, 0)
        )
        return _tokens_of_length(chars) <= fit.max_tokens

    return _largest(min(fit.seed_count, len(kept)), len(kept), fits)


def _largest(low: int, high: int, fits: Callable[[int], bool]) -> int:
    """The largest value in ``low``..``high`` that ``fits`` (monotone), ``low`` if none above."""
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if fits(mid) else (low, mid - 1)
    return low


def _shorten(dag: Dag, limit: int) -> Dag:
    return replace(
        dag,
        nodes=tuple(
            replace(n, signature=_cut(n.signature, limit)) if len(n.signature) > limit else n
            for n in dag.nodes
        ),
    )


def _cut(signature: str, limit: int) -> str:
    return signature if len(signature) <= limit else signature[: limit - 1] + "…"


def _string_length(signature: str, limit: int) -> int:
    return len(_ENCODER.encode(_cut(signature, limit)))


def _tokens(dag: Dag) -> int:
    """The token estimate of the DAG's JSON: ``{"nodes": [...], "edges": [...]}``.

    Exactly ``estimate_tokens(json.dumps(payload, ensure_ascii=False))``: with the default
    separators the payload is its items joined by ``", "`` inside a fixed frame.
    """
    nodes = [_json_length(_node_payload(n, n.signature)) for n in dag.nodes]
    edges = [_json_length(_edge_payload(e)) for e in dag.edges]
    chars = (
        _FRAME
        + sum(nodes)
        + _SEPARATOR * max(len(nodes) - 1, 0)
        + sum(edges)
        + _SEPARATOR * max(len(edges) - 1, 0)
    )
    return _tokens_of_length(chars)


def _node_payload(node: DagNode, signature: str) -> dict[str, object]:
    return {
        "entity": node.entity,
        "kind": node.kind,
        "file": node.file,
        "line": node.line,
        "signature": signature,
        "batch_id": node.batch_id,
    }


def _edge_payload(edge: DagEdge) -> dict[str, object]:
    return {"from": edge.source, "to": edge.target, "cause": edge.cause}


_KEY_COST: dict[str, int] = {}


def _json_length(payload: dict[str, object]) -> int:
    """``len(json.dumps(payload, ensure_ascii=False))`` of a flat payload, by arithmetic where
    a value writes as itself: a DAG of 200 nodes measured ~600 payloads per keystroke."""
    total = 2 + _SEPARATOR * max(len(payload) - 1, 0)  # the braces, ", " between items
    for key, value in payload.items():
        cost = _KEY_COST.get(key)
        if cost is None:  # the payloads' few fixed keys
            cost = _KEY_COST[key] = len(_ENCODER.encode(key)) + len(": ")
        total += cost
        if type(value) is str and _ESCAPED.search(value) is None:
            total += len(value) + 2
        elif type(value) is int:
            total += len(repr(value))
        else:  # None, bools, str subclasses, text with escapes: as the encoder writes them
            total += len(_ENCODER.encode(value))
    return total


def _seed_node(change: Change, graph: CodeGraph, batch_of: Mapping[QualName, int]) -> DagNode:
    node = graph.node(change.entity)
    if node is not None:
        kind = node.kind.value
    elif change.change_type is ChangeType.FIELD:
        kind = "field"
    elif change.change_type is ChangeType.DELETE:
        kind = "deleted"
    else:
        kind = "symbol"
    signature = change.after_sig or change.before_sig or (node.signature if node else "")
    return DagNode(
        entity=change.entity,
        kind=kind,
        file=change.file,
        line=change.line_range[0],
        signature=signature,
        batch_id=batch_of.get(change.entity),
    )


def _entry_node(entry: TriageEntry, graph: CodeGraph, batch_of: Mapping[QualName, int]) -> DagNode:
    node = graph.node(entry.entity)
    return DagNode(
        entity=entry.entity,
        kind=node.kind.value if node is not None else "symbol",
        file=node.file if node is not None else entry.file,
        line=node.span.line if node is not None else entry.line,
        signature=node.signature if node is not None else "",
        batch_id=batch_of.get(entry.entity),
    )


def estimate_tokens(text: str) -> int:
    """``ceil(len(text) / 4)``: the token count the DAG's cap is checked against."""
    return _tokens_of_length(len(text))


def _tokens_of_length(chars: int) -> int:
    return -(-chars // _CHARS_PER_TOKEN)
