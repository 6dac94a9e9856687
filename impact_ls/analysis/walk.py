"""Reverse graph walk (spec §3.3): the entities one change can reach over its relations.

Contract:
    input    one ``Change``, the current ``CodeGraph``, ``max_depth`` (spec: 3) and ``max_nodes``
             (spec: 200).
    output   ``WalkResult``: the members sorted by (distance, file, line, entity), ``truncated``
             and the number of ``omitted`` entities when the node cap cut.
    method   breadth-first, backwards from the *baseline* entity (``relations.walk_seeds``) over
             only the relations ``relations.select_relations`` picks for the change type — the
             walk never takes a blanket hop count over every edge kind. The seed may no longer
             be a node: a deleted function's dangling incoming edges still name it. Hops at
             distance 2 and beyond continue from the members with the same relation set (callers
             of callers for ``CalledBy``).
    member   the dependent entity (the edge's source: the function, method, class or module that
             holds the site), its first site's file and line, its distance, every admitting
             relation, ``via`` (the lexically smallest predecessor at distance - 1), every
             evidence ``Site`` and ``name_matched`` (true when every site is a name-matched
             edge). Members never include a seed; ``add``, ``incomplete`` and a non-escaping
             body change yield no members.
    caps     entities farther than ``max_depth`` are never collected; beyond ``max_nodes`` the
             nearest are kept and ``omitted`` counts exactly the entities within depth that
             were cut.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from impact_ls.analysis.relations import (
    dependent_ids,
    dependents_via,
    select_relations,
    walk_seeds,
)
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import Change, Member, QualName, Relation, Site

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class WalkResult:
    """The members one change reaches, nearest first, and whether the node cap cut."""

    members: tuple[Member, ...] = ()
    truncated: bool = False
    omitted: int = 0
    omitted_direct: int = 0  # of ``omitted``, those at distance 1


@dataclass(slots=True)
class _Reach:
    """Evidence gathered for one entity at the distance where it was first reached."""

    relations: set[Relation] = field(default_factory=set)
    vias: set[QualName] = field(default_factory=set)
    sites: set[Site] = field(default_factory=set)


def walk_dependents(
    change: Change, graph: CodeGraph, *, max_depth: int, max_nodes: int
) -> WalkResult:
    """Walk backwards from ``change``'s baseline entity over its selected relations only."""
    relations = select_relations(change)
    if not relations or max_depth < 1:
        return WalkResult()
    seeds = walk_seeds(change, graph)
    seen: set[QualName] = set(seeds)
    frontier: list[QualName] = list(seeds)
    members: list[Member] = []
    omitted = omitted_direct = 0
    for distance in range(1, max_depth + 1):
        at_seed = distance == 1
        room = max_nodes - len(members)
        if room <= 0:
            # Everything from here on is cut: only how many entities there are is reported
            # (django's ``QuerySet.filter`` reaches 1,905 beyond its 200 shown).
            reached: set[QualName] = set()
            for relation in relations:
                reached |= dependent_ids(relation, frontier, graph, change=change, at_seed=at_seed)
            reached -= seen
            omitted += len(reached)
            if not reached:
                break
            seen |= reached
            frontier = list(reached)
            continue
        level = _level(frontier, relations, seen, graph, change=change, at_seed=at_seed)
        if not level:
            break
        first = {entity: min(reach.sites, key=_site_key) for entity, reach in level.items()}
        nearest = sorted(level, key=lambda e: (first[e].file, first[e].span.line, e))
        members.extend(_member(e, level[e], distance, change) for e in nearest[:room])
        cut = max(0, len(nearest) - room)
        omitted += cut
        if at_seed:
            omitted_direct = cut
        seen.update(level)
        frontier = nearest
    logger.debug(
        "walk %s (%s): %d members, %d omitted",
        change.entity,
        change.change_type.value,
        len(members) + omitted,
        omitted,
    )
    return WalkResult(
        members=tuple(members),
        truncated=omitted > 0,
        omitted=omitted,
        omitted_direct=omitted_direct,
    )


def _level(
    frontier: list[QualName],
    relations: tuple[Relation, ...],
    seen: set[QualName],
    graph: CodeGraph,
    *,
    change: Change,
    at_seed: bool,
) -> dict[QualName, _Reach]:
    """The entities one hop beyond ``frontier`` not seen before, with their evidence."""
    level: dict[QualName, _Reach] = {}
    for current in frontier:
        for relation in relations:
            for hop in dependents_via(relation, current, graph, change=change, at_seed=at_seed):
                if hop.entity in seen:
                    continue
                reach = level.get(hop.entity)
                if reach is None:
                    reach = level[hop.entity] = _Reach()
                reach.relations.add(hop.relation)
                reach.vias.add(current)
                reach.sites.add(hop.site)
    return level


def _member(entity: QualName, reach: _Reach, distance: int, change: Change) -> Member:
    sites = tuple(sorted(reach.sites, key=_site_key))
    return Member(
        entity=entity,
        file=sites[0].file,
        line=sites[0].span.line,
        distance=distance,
        relations=tuple(sorted(reach.relations, key=lambda r: r.value)),
        via=min(reach.vias),
        sites=sites,
        seed=change.entity,
        name_matched=all(s.name_matched for s in sites),
    )


def _site_key(site: Site) -> tuple[str, int, int, int, int, str, bool]:
    """A total order on sites: file, position, relation, then name-matched last."""
    span = site.span
    relation = site.relation.value if site.relation is not None else ""
    return (
        site.file,
        span.line,
        span.col,
        span.end_line,
        span.end_col,
        relation,
        site.name_matched,
    )
