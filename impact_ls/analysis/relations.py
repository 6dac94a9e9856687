"""Relation-set selection (spec §3.2): which relations a change type may perturb, and how each
relation is read off the code graph.

Contract:
    ``RELATION_TABLE`` is the fixed table of spec §3.2; ``select_relations`` looks a change up in
    it and applies the method-body escape gate (a body change that writes no parameter, no
    attribute of ``self``/a parameter, no global and no ``return``/``yield`` walks nothing —
    ``Change.escapes`` carries classify's verdict). A change type never walks a relation outside
    its row: the walk asks ``dependents_via`` for the selected relations only.

    ``dependents_via(relation, entity, graph, change=..., at_seed=...)`` returns one ``Hop`` per
    graph edge that admits a dependent of ``entity`` through ``relation``:

    ============================  ==============================================================
    relation                      graph query
    ============================  ==============================================================
    CalledBy, Callers             ``callers_of`` (call edges; name-matched edges kept, flagged)
    Overrides                     ``overriders_of`` (methods overriding ``entity``)
    OverriddenBy                  ``methods_overridden_by`` (forward: the base methods)
    UsedBy                        ``field_users_of`` (class-member edges) plus type-ref edges
    ConstructedBy, InstantiatedBy ``instantiations_of`` the class (a constructor or field change
                                  at the seed means its owning class)
    SubclassOf                    ``subclasses_of`` the class (owning class as above)
    SuperclassOf                  ``superclasses_of`` the class (forward: the bases)
    ImportedBy                    ``importers_of`` (import/type-ref/re-export, chains followed)
    ============================  ==============================================================

    For a forward relation the dependent is the edge's target and the site is the target's
    definition; otherwise the dependent is the edge's source and the site is the edge's evidence.
    ``walk_seeds`` names where a change's walk starts: the baseline entity, plus for an import
    change each removed name re-exported from the changed module (``pkg.mod.b``), and for a
    deletion or removed field each removal the change cap folded into it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from impact_ls.analysis.hierarchy import hierarchy_reads, inherited_uses
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.graph.fastinit import fast_init
from impact_ls.model import (
    CallShape,
    Change,
    ChangeType,
    Edge,
    EdgeKind,
    NodeKind,
    QualName,
    Relation,
    Site,
)

logger = logging.getLogger(__name__)

RELATION_TABLE: Mapping[ChangeType, tuple[Relation, ...]] = MappingProxyType(
    {
        ChangeType.METHOD_SIGNATURE: (
            Relation.CALLED_BY,
            Relation.OVERRIDES,
            Relation.OVERRIDDEN_BY,
            Relation.USED_BY,
        ),
        ChangeType.METHOD_BODY: (Relation.CALLERS,),
        ChangeType.FIELD: (
            Relation.USED_BY,
            Relation.CONSTRUCTED_BY,
            Relation.SUBCLASS_OF,
            Relation.IMPORTED_BY,
        ),
        ChangeType.CLASS_DECL: (
            Relation.INSTANTIATED_BY,
            Relation.SUBCLASS_OF,
            Relation.SUPERCLASS_OF,
            Relation.USED_BY,
        ),
        ChangeType.CONSTRUCTOR: (Relation.INSTANTIATED_BY,),
        ChangeType.IMPORT: (Relation.IMPORTED_BY,),
        ChangeType.ADD: (),
        ChangeType.DELETE: (
            Relation.CALLED_BY,
            Relation.USED_BY,
            Relation.IMPORTED_BY,
            Relation.INSTANTIATED_BY,
            Relation.OVERRIDES,
            Relation.OVERRIDDEN_BY,
            Relation.SUBCLASS_OF,
        ),
        ChangeType.INCOMPLETE: (),
    }
)

# Relations whose dependents sit at the head of the edge (the changed entity is the source).
_FORWARD = frozenset({Relation.OVERRIDDEN_BY, Relation.SUPERCLASS_OF})
_CLASS_RELATIONS = frozenset(
    {
        Relation.CONSTRUCTED_BY,
        Relation.INSTANTIATED_BY,
        Relation.SUBCLASS_OF,
        Relation.SUPERCLASS_OF,
    }
)
_CONSTRUCTORS = frozenset({"__init__", "__new__"})
_CALLS = frozenset({EdgeKind.CALL})
_OVERRIDE = frozenset({EdgeKind.OVERRIDE})
_PROPERTY_FLIPS = frozenset({CallShape.NOW_PROPERTY, CallShape.NO_LONGER_PROPERTY})


@dataclass(frozen=True, slots=True, kw_only=True)
class Hop:
    """One dependent reached from an entity through one relation, with its evidence."""

    entity: QualName
    relation: Relation
    site: Site


def select_relations(change: Change) -> tuple[Relation, ...]:
    """The relations ``change`` may perturb: its table row, less what its gates close.

    The escape gate empties a body change that no caller can observe. ``UsedBy`` (reads of the
    entity) is kept for a method-signature change only when the method became or stopped being
    a ``@property`` (its reads and calls trade places), for a field change always, and for a
    class declaration only when its bases changed (inherited members, ``isinstance`` reads).
    ``ImportedBy`` is kept for a field change only when the field is gone (``from m import X``).
    """
    kind = change.change_type
    if kind is ChangeType.METHOD_BODY and not change.escapes:
        return ()
    row = RELATION_TABLE.get(kind, ())
    closed: set[Relation] = set()
    if kind is ChangeType.METHOD_SIGNATURE and not set(change.call_shape) & _PROPERTY_FLIPS:
        closed.add(Relation.USED_BY)
    if kind is ChangeType.CLASS_DECL and change.bases_before == change.bases_after:
        closed.add(Relation.USED_BY)
    if kind is ChangeType.FIELD and change.after_sig:
        closed.add(Relation.IMPORTED_BY)
    return tuple(r for r in row if r not in closed)


def removes_names(change: Change) -> bool:
    """A deletion or a removed field: every name in its ``removed_names`` is gone (more than
    its own when the change cap folded neighbouring removals into it)."""
    kind = change.change_type
    return kind is ChangeType.DELETE or (kind is ChangeType.FIELD and not change.after_sig)


def reached_removal(change: Change, via: QualName, target: QualName | None) -> Change:
    """The removal a distance-1 site reached, when the change cap folded others into ``change``
    (its walk started from each of them): ``change`` narrowed to the site's ``target``, else to
    the member's ``via``. Any other change is returned as it is."""
    if not removes_names(change) or len(change.removed_names) < 2:
        return change
    name = target if target in change.removed_names else via
    if name not in change.removed_names:
        return change
    if name == change.entity:
        return replace(change, removed_names=(name,))
    return replace(
        change,
        entity=QualName(name),
        removed_names=(name,),
        what=f"removed {name.rsplit('.', 1)[-1]}",
        before_sig="",
        before_params=None,
        stale_exports=(),
    )


def walk_seeds(change: Change, graph: CodeGraph) -> tuple[QualName, ...]:
    """Where the reverse walk of ``change`` starts: the baseline entity, and the removed names
    of an import or of a removal that others were folded into."""
    seeds = {change.entity}
    if removes_names(change):
        seeds.update(QualName(n) for n in change.removed_names)
    elif change.change_type is ChangeType.IMPORT and change.removed_names:
        module = _module_of(change, graph)
        for raw in change.removed_names:
            # ``from x import y as z`` binds ``z``; classify may hand us either spelling.
            name = raw.rsplit(" as ", 1)[-1].strip()
            if name:
                seeds.add(QualName(f"{module}.{name}"))
    return tuple(sorted(seeds))


# a walk builds one of each per evidence edge (742 for the callers of ``QuerySet.filter``)
_new_hop = fast_init(Hop)
_new_site = fast_init(Site)


def dependents_via(
    relation: Relation,
    entity: QualName,
    graph: CodeGraph,
    *,
    change: Change,
    at_seed: bool,
) -> list[Hop]:
    """Every dependent of ``entity`` admitted by ``relation``, one ``Hop`` per evidence edge."""
    forward = relation in _FORWARD
    return [
        _new_hop(
            edge.target if forward else edge.source,
            relation,
            _site(edge, relation, graph, forward),
        )
        for edge in _admitted(relation, entity, graph, change=change, at_seed=at_seed)
    ]


def dependent_ids(
    relation: Relation,
    entities: Iterable[QualName],
    graph: CodeGraph,
    *,
    change: Change,
    at_seed: bool,
) -> set[QualName]:
    """The dependents ``dependents_via`` would reach from any of ``entities``, without their
    evidence (for counting); name-matched calls count unless already refuted, and none is
    queued for confirmation."""
    if relation in (Relation.CALLED_BY, Relation.CALLERS):
        return graph.sources_into(entities, _CALLS, unrefuted=True)
    if relation is Relation.OVERRIDES:
        return graph.sources_into(entities, _OVERRIDE, unrefuted=False)
    if relation is Relation.OVERRIDDEN_BY:
        return graph.targets_from(entities, _OVERRIDE)
    found: set[QualName] = set()
    for entity in entities:
        edges = _admitted(relation, entity, graph, change=change, at_seed=at_seed)
        found.update(edge.target if relation in _FORWARD else edge.source for edge in edges)
    return found


def _admitted(
    relation: Relation, entity: QualName, graph: CodeGraph, *, change: Change, at_seed: bool
) -> list[Edge]:
    """The edges through which ``relation`` admits dependents of ``entity``."""
    target = entity
    if relation in _CLASS_RELATIONS:
        owner = _class_target(entity, graph, change=change, at_seed=at_seed)
        if owner is None:
            return []
        target = owner
    return _edges(relation, target, graph, change=change, at_seed=at_seed)


def _edges(
    relation: Relation, target: QualName, graph: CodeGraph, *, change: Change, at_seed: bool
) -> list[Edge]:
    # the walk orders what it finds itself
    if relation in (Relation.CALLED_BY, Relation.CALLERS):
        return graph.callers_of(target, confirmed=True, ordered=False)
    if relation is Relation.OVERRIDES:
        return graph.overriders_of(target, ordered=False)
    if relation is Relation.OVERRIDDEN_BY:
        return graph.methods_overridden_by(target, ordered=False)
    if relation is Relation.USED_BY and change.change_type is ChangeType.CLASS_DECL and at_seed:
        return sorted(
            {*inherited_uses(change, graph), *hierarchy_reads(change, graph)}, key=_edge_key
        )
    if relation is Relation.USED_BY:
        used = target
        if change.change_type is ChangeType.FIELD and not at_seed:
            node = graph.node(target)
            # A subclass reached through SubclassOf shadows or reads the field under its own name.
            if node is not None and node.kind is NodeKind.CLASS:
                used = QualName(f"{target}.{change.short_name}")
        return sorted(
            [*graph.field_users_of(used), *graph.dependents(used, kinds=(EdgeKind.TYPE_REF,))],
            key=_edge_key,
        )
    if relation in (Relation.CONSTRUCTED_BY, Relation.INSTANTIATED_BY):
        return graph.instantiations_of(target)
    if relation is Relation.SUBCLASS_OF:
        return graph.subclasses_of(target)
    if relation is Relation.SUPERCLASS_OF:
        return graph.superclasses_of(target)
    if relation is Relation.IMPORTED_BY:
        return graph.importers_of(target)
    return []


def _class_target(
    entity: QualName, graph: CodeGraph, *, change: Change, at_seed: bool
) -> QualName | None:
    """The class a class-level relation is asked about, or ``None`` if there is none."""
    node = graph.node(entity)
    if not at_seed or change.change_type in (ChangeType.CLASS_DECL, ChangeType.DELETE):
        # A deleted class is no node any more; its dangling instantiate/inherit edges still count.
        return entity if node is None or node.kind is NodeKind.CLASS else None
    if node is not None and node.kind is NodeKind.CLASS:
        return entity
    parent, _, name = entity.rpartition(".")
    if not parent:
        return None
    if change.change_type is ChangeType.CONSTRUCTOR and name not in _CONSTRUCTORS:
        return entity
    parent_node = graph.node(parent)
    if parent_node is not None and parent_node.kind is not NodeKind.CLASS:
        return None  # a module constant has no constructor and no subclasses
    return QualName(parent)


def _site(edge: Edge, relation: Relation, graph: CodeGraph, forward: bool) -> Site:
    if forward:
        node = graph.node(edge.target)
        if node is not None:
            return _new_site(node.file, node.span, None, edge.name_matched, relation)
    return _new_site(edge.file, edge.span, edge.args, edge.name_matched, relation, edge.target)


def _module_of(change: Change, graph: CodeGraph) -> str:
    for node in graph.nodes_in_file(change.file):
        if node.kind is NodeKind.MODULE:
            return node.id
    entity = graph.node(change.entity)
    if entity is not None and entity.kind is NodeKind.MODULE:
        return entity.id
    # Without a module node the entity's parent is the best guess (``pkg.mod.name`` → ``pkg.mod``).
    return change.entity.rpartition(".")[0] or change.entity


def _edge_key(edge: Edge) -> tuple[str, int, int, str, str, str]:
    return (edge.file, edge.span.line, edge.span.col, edge.kind.value, edge.source, edge.target)
