"""Dependency-consistent batches (spec §3.8): what must be edited and validated together.

Contract:
    input    the ``Triage``, the changes, the current ``CodeGraph``, ``max_batches`` (spec: 32)
             and ``max_members`` (spec: 50).
    output   ``Batch`` values with ``batch_id`` = position: the connected components of the seeds
             (every change but ``incomplete``) and the MUST-INSPECT and MAY-IMPACT entities under
             hard edges, direction ignored.
    edges    two entities are joined by a ``call``, ``instantiate``, ``import``, ``reexport``,
             ``inherit``, ``override``, ``class-member``, ``type-ref``, ``tests`` or ``fixture``
             edge between them, or by the walk edge that admitted an entry (entry ↔ its ``via``;
             a distance-1 entry ↔ its seed, since an import or constructor walk starts from a
             derived name). ``contains`` is not a dependency and joins nothing; a hidden-channel
             entry has no edge of its own and joins only through the graph.
    order    inside a batch by distance from the seed (seeds 0 first, then their callers), then
             entity; batches by their nearest member's distance, then first member. A singleton
             is still a batch. A component over ``max_members`` is cut into consecutive chunks
             of ``max_members`` (nearest first), each flagged ``split``; batches past
             ``max_batches`` are dropped (logged).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import networkx

from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import Batch, Change, ChangeType, EdgeKind, QualName, Triage

logger = logging.getLogger(__name__)

_HARD = frozenset(
    {
        EdgeKind.CALL,
        EdgeKind.INSTANTIATE,
        EdgeKind.IMPORT,
        EdgeKind.REEXPORT,
        EdgeKind.INHERIT,
        EdgeKind.OVERRIDE,
        EdgeKind.CLASS_MEMBER,
        EdgeKind.TYPE_REF,
        EdgeKind.TESTS,
        EdgeKind.FIXTURE,
    }
)


def build_batches(
    triage: Triage,
    changes: Sequence[Change],
    graph: CodeGraph,
    *,
    max_batches: int,
    max_members: int,
) -> tuple[Batch, ...]:
    """Group the seeds and the MUST and MAY entities into ordered change units."""
    distance: dict[QualName, int] = {}
    for change in changes:
        if change.change_type is not ChangeType.INCOMPLETE:
            distance[change.entity] = 0
    entries = (*triage.must_inspect, *triage.may_impact)
    for entry in entries:
        distance[entry.entity] = min(distance.get(entry.entity, entry.distance), entry.distance)

    joined: networkx.Graph[QualName] = networkx.Graph()
    joined.add_nodes_from(distance)
    for qid in distance:
        joined.add_edges_from(
            (qid, edge.target)
            for edge in graph.dependencies(qid, kinds=_HARD)
            if edge.target in distance
        )
    for entry in entries:
        if entry.unanalyzable:
            continue
        if entry.via is not None and entry.via in distance:
            joined.add_edge(entry.entity, entry.via)
        elif entry.distance == 1 and entry.seed in distance:
            joined.add_edge(entry.entity, entry.seed)

    components = networkx.connected_components(joined)
    ordered = sorted(
        (sorted(members, key=lambda q: (distance[q], q)) for members in components),
        key=lambda members: (distance[members[0]], members[0]),
    )
    batches: list[Batch] = []
    for members in ordered:
        split = len(members) > max_members > 0
        step = max_members if max_members > 0 else len(members)
        for start in range(0, len(members), step):
            chunk = tuple(members[start : start + step])
            batches.append(Batch(batch_id=len(batches), members=chunk, split=split))
    if len(batches) > max_batches:
        logger.debug("batches capped: %d of %d kept", max_batches, len(batches))
    logger.debug("batches: %d from %d entities", min(len(batches), max_batches), len(distance))
    return tuple(batches[:max_batches])
