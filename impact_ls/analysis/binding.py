"""Binding (DESIGN §3): the deterministic break check that makes a site MUST-INSPECT.

Contract: ``bind_sites(members, changes, graph)`` → ``Breaks``: for every site of every
distance-1 member of the walk, the ``Break``s it provably suffers from its seed's change (the
first change of that entity); farther members are never bound. Triage reads the verdicts with
``Breaks.at(member, site)``. The rule for one site is ``find_breaks(change, args=, relation=)``:
empty when the site still works or when nothing can be proved.

- ``method-signature``: the site's argument shape is bound to ``change.after_params`` by Python's
  rules (positional-only, keyword-only, defaults, ``*args``/``**kwargs`` in the signature, the
  implicit first argument of a bound method): ``missing-argument``, ``too-many-positional``,
  ``unknown-keyword``, and ``removed-parameter`` for a keyword that named a parameter of
  ``before_params`` that is gone.
- ``constructor``/``class-decl``: an instantiation site (``InstantiatedBy``/``ConstructedBy``) is
  bound to the new ``__init__`` parameters; every failure is a ``constructor-mismatch``.
- ``delete``: any reference is a ``deleted-symbol`` break, unless the deleted method's class may
  still have the name (``hierarchy.still_provided``: it binds it itself, ``object`` has it, or
  a class of its project MRO defines it or lists a base that provides it or is unknown); a call
  of a name a project base still defines is bound to that method's parameters instead (its
  failures, ``now runs Base.m: …``); ``field`` with an empty ``after_sig``
  (the field is gone): ``removed-field``; ``import``: a site importing a name in
  ``removed_names`` (``pkg.auth.login as login`` or ``os``): ``removed-import``. Without the
  site's imported name every ImportedBy site of an import change that removed names breaks,
  since the walk reaches them from those names.
- ``method-signature`` at an ``Overrides`` site (a method overriding the changed one):
  ``override-mismatch`` when a resolved call of the base that fits its new parameters, and did
  not fit the old ones, does not bind to the override's (``overrides.override_break``).
- Not provable → no break: a site with ``*``/``**`` arguments, a name-matched site, a site whose
  shape is unknown, a body/add/incomplete change.

Pure: the graph is read only to find the name an import site takes from the changed module,
and an override's parameters and its base's callers.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from impact_ls.analysis.arguments import (
    UNKNOWN_KEYWORD,
    bind_arguments,
)
from impact_ls.analysis.hierarchy import (
    INHERITED_MEMBER,
    Provided,
    inherited_break,
    still_provided,
)
from impact_ls.analysis.overrides import (
    OVERRIDE_MISMATCH,
    base_calls,
    keeps_signature,
    override_break,
)
from impact_ls.analysis.relations import reached_removal
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import (
    ArgShape,
    Break,
    CallShape,
    Change,
    ChangeType,
    Edge,
    EdgeKind,
    Member,
    QualName,
    Relation,
    Site,
)

logger = logging.getLogger(__name__)

REMOVED_PARAMETER = "removed-parameter"
DELETED_SYMBOL = "deleted-symbol"
REMOVED_FIELD = "removed-field"
CONSTRUCTOR_MISMATCH = "constructor-mismatch"
REMOVED_IMPORT = "removed-import"
CALL_SHAPE = "call-shape"

_SHAPE_DETAIL: Mapping[CallShape, str] = MappingProxyType(
    {
        CallShape.NOW_ASYNC: "now async: the call returns a coroutine and must be awaited",
        CallShape.NO_LONGER_ASYNC: "no longer async: the result must not be awaited",
        CallShape.NOW_GENERATOR: "now a generator: the call returns an iterator, the body "
        "runs only when it is iterated",
        CallShape.NO_LONGER_GENERATOR: "no longer a generator: the call runs at once and "
        "returns its value",
        CallShape.NOW_PROPERTY: "now a property: read it, do not call it",
        CallShape.NO_LONGER_PROPERTY: "no longer a property: a read gives the bound method; "
        "call it",
    }
)
_PROPERTY_FLIPS = frozenset({CallShape.NOW_PROPERTY, CallShape.NO_LONGER_PROPERTY})
# Breaks that do not depend on the arguments: provable at a ``*args`` site too.
_ARGUMENT_FREE = frozenset(
    {DELETED_SYMBOL, REMOVED_FIELD, REMOVED_IMPORT, CALL_SHAPE, INHERITED_MEMBER, OVERRIDE_MISMATCH}
)
# A deleted class's subclass statement is a reference; a method it overrode is not one.
_NOT_REFERENCES = frozenset({Relation.OVERRIDES, Relation.OVERRIDDEN_BY})

_INSTANTIATION = (Relation.INSTANTIATED_BY, Relation.CONSTRUCTED_BY)
_CALLS = (Relation.CALLED_BY, Relation.CALLERS)
_IMPORT_KINDS = (EdgeKind.IMPORT, EdgeKind.REEXPORT, EdgeKind.TYPE_REF)

SiteKey = tuple[QualName, QualName, Site]


@dataclass(frozen=True, slots=True)
class Breaks:
    """What binding proved: the breaks of each bound site, keyed by (seed, member, site)."""

    by_site: Mapping[SiteKey, tuple[Break, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )

    def at(self, member: Member, site: Site) -> tuple[Break, ...]:
        """The breaks of ``site`` of ``member``; empty when none was proved or it was not bound."""
        return self.by_site.get((member.seed, member.entity, site), ())


def bind_sites(members: Sequence[Member], changes: Sequence[Change], graph: CodeGraph) -> Breaks:
    """Bind every site of every distance-1 member to its seed's change."""
    change_of: dict[QualName, Change] = {}
    for each in changes:
        change_of.setdefault(each.entity, each)
    found: dict[SiteKey, tuple[Break, ...]] = {}
    overrides = _OverrideMemo()
    # whether a deleted method's class still has the name: one graph search per change, not
    # one per call site of it
    provided_of: dict[QualName, Provided] = {}
    for member in members:
        seed_change = change_of.get(member.seed)
        if member.distance != 1 or seed_change is None:
            continue
        # several removed names: the cap folded removals into this one (one test per member)
        folded = len(seed_change.removed_names) > 1
        for site in member.sites:
            change = (
                reached_removal(seed_change, member.via, site.target) if folded else seed_change
            )
            provided = None
            if change.change_type is ChangeType.DELETE:
                provided = provided_of.get(change.entity)
                if provided is None:
                    provided = provided_of[change.entity] = still_provided(change, graph)
            relation = site.relation or member.relations[0]
            # binding needs the name an import site takes to tell which removal hits it.
            imported = (
                _imported_at(graph, member.entity, site)
                if change.change_type is ChangeType.IMPORT
                else None
            )
            breaks = find_breaks(
                change,
                args=site.args,
                relation=relation,
                name_matched=site.name_matched,
                imported=imported,
                target=site.target,
                graph=graph,
                provided=provided,
            )
            if relation is Relation.OVERRIDES and not site.name_matched:
                breaks = (*breaks, *_override_breaks(change, member.entity, graph, overrides))
            if breaks:
                found[(member.seed, member.entity, site)] = breaks
    logger.debug("binding: %d broken sites", len(found))
    return Breaks(MappingProxyType(found))


@dataclass(slots=True)
class _OverrideMemo:
    """Verdicts per (base, override) and the base's calls, found once per analysis."""

    verdicts: dict[tuple[QualName, QualName], tuple[Break, ...]] = field(default_factory=dict)
    calls: dict[QualName, list[Edge]] = field(default_factory=dict)


def _override_breaks(
    change: Change, override: QualName, graph: CodeGraph, memo: _OverrideMemo
) -> tuple[Break, ...]:
    """``overrides.override_break`` once per (change, override): its sites share the verdict."""
    key = (change.entity, override)
    if key not in memo.verdicts:
        calls = memo.calls.get(change.entity)
        if calls is None:
            calls = memo.calls[change.entity] = base_calls(change.entity, graph)
        found = override_break(change, override, graph, calls=calls)
        memo.verdicts[key] = (found,) if found is not None else ()
    return memo.verdicts[key]


def _imported_at(graph: CodeGraph, entity: QualName, site: Site) -> str | None:
    """The qualname the import edge evidenced at ``site`` points at, if the graph has it."""
    for edge in graph.dependencies(entity, kinds=_IMPORT_KINDS):
        if edge.file == site.file and edge.span == site.span:
            return edge.target
    return None


def find_breaks(
    change: Change,
    *,
    args: ArgShape | None,
    relation: Relation,
    name_matched: bool = False,
    bound: bool = True,
    imported: str | None = None,
    target: str | None = None,
    graph: CodeGraph | None = None,
    provided: Provided | None = None,
) -> tuple[Break, ...]:
    """The breaks one site suffers from ``change``; empty when none can be proved.

    ``args`` is the site's argument shape (None for a reference that is not a call).
    ``relation`` is how the walk reached the site. A ``name_matched`` site (its receiver type is
    unknown) proves nothing. ``bound`` says the site calls through an instance or class, so a
    method's first parameter is supplied implicitly; pass False for ``Class.method(obj, …)``.
    ``imported`` is the name (or qualname) an importing site takes from the changed module.
    ``target`` is what the site's edge points at and ``graph`` the current graph: a class
    declaration's inherited-member uses need both (``hierarchy.inherited_break``).
    ``provided`` is ``hierarchy.still_provided(change, graph)`` when the caller has it already
    (it is the same for every site of a deleted method).
    """
    if name_matched:
        return ()
    kind = change.change_type
    if kind is ChangeType.DELETE:
        if relation in _NOT_REFERENCES:
            return ()
        if provided is None:
            provided = still_provided(change, graph) if graph is not None else (False, None)
        still, method = provided
        if still:
            if method is None or graph is None or relation not in _CALLS:
                return ()
            return _inherited_call_breaks(method, graph, args, bound=bound)
        detail = f"references '{change.entity}', which no longer exists"
        return (Break(kind=DELETED_SYMBOL, detail=detail),)
    if kind is ChangeType.FIELD:
        # constructing or subclassing the class does not read the field; reading it does
        if change.after_sig or relation not in (Relation.USED_BY, Relation.IMPORTED_BY):
            return ()
        noun = "attribute" if change.what.startswith("removed attribute") else "field"
        return (Break(kind=REMOVED_FIELD, detail=f"{noun} '{change.short_name}' was removed"),)
    if kind is ChangeType.IMPORT:
        return _import_breaks(change, imported)
    if kind is ChangeType.CLASS_DECL and relation is Relation.USED_BY:
        found = inherited_break(change, target, graph) if target and graph else None
        return (found,) if found is not None else ()
    if kind in (ChangeType.CONSTRUCTOR, ChangeType.CLASS_DECL):
        if relation not in _INSTANTIATION and kind is ChangeType.CLASS_DECL:
            return ()
        if relation in _INSTANTIATION:
            breaks = _signature_breaks(change, args, skip_first=True)
            return tuple(Break(kind=CONSTRUCTOR_MISMATCH, detail=b.detail) for b in breaks)
        # a direct __init__ call: super().__init__(…) is bound, Base.__init__(self, …) is not
        return _signature_breaks(change, args, skip_first=bound) if relation in _CALLS else ()
    if kind is ChangeType.METHOD_SIGNATURE:
        shape = _shape_breaks(change, args, relation)
        if relation not in _CALLS:
            return shape
        bound_call = change.binds_first_param and bound
        return (*shape, *_signature_breaks(change, args, skip_first=bound_call))
    return ()


def _shape_breaks(change: Change, args: ArgShape | None, relation: Relation) -> tuple[Break, ...]:
    """Breaks of a call-shape flip: whatever the site's arguments, it calls or reads wrongly."""
    out: list[Break] = []
    for flip in change.call_shape:
        if flip in _PROPERTY_FLIPS:
            # the current graph shows a call of the new property as a read, a read of the new
            # method as a reference: each site that names it is wrong now
            if relation in (*_CALLS, Relation.USED_BY):
                out.append(Break(kind=CALL_SHAPE, detail=_SHAPE_DETAIL[flip]))
        elif relation in _CALLS and args is not None:
            out.append(Break(kind=CALL_SHAPE, detail=_SHAPE_DETAIL[flip]))
    return tuple(out)


def binding_checked(
    change: Change, *, args: ArgShape | None, relation: Relation, name_matched: bool
) -> bool:
    """Whether ``find_breaks`` bound this site's arguments to the new parameters at all.

    True for a resolved call (or instantiation) of a changed parameter list whose arguments are
    provable: an empty verdict there means the call still binds, not that nothing is known.
    A change that keeps the parameters (a decorator, a call-shape flip) is not what binding
    checks: whether ``Class.method(…)`` still works after ``@classmethod`` went depends on the
    receiver, which the site does not record.
    """
    if name_matched or args is None or not args.provable or change.after_params is None:
        return False
    if change.before_params == change.after_params or change.call_shape:
        return False
    if change.change_type is ChangeType.METHOD_SIGNATURE:
        return relation in _CALLS
    return change.change_type is ChangeType.CONSTRUCTOR and relation in _INSTANTIATION


def is_shape_independent(found: Break) -> bool:
    """Whether a break holds whatever the site's arguments are (``*args`` sites included)."""
    return found.kind in _ARGUMENT_FREE


def _import_breaks(change: Change, imported: str | None) -> tuple[Break, ...]:
    bound = {raw: raw.rsplit(" as ", 1)[-1].strip() for raw in change.removed_names}
    if imported is None:
        # the walk reaches ImportedBy sites from the removed names themselves: each one imports one
        if not bound:
            return ()
        names = ", ".join(sorted(set(bound.values())))
        return (Break(kind=REMOVED_IMPORT, detail=f"{change.entity} no longer imports {names}"),)
    name = imported.rsplit(".", 1)[-1]
    for raw, local in sorted(bound.items()):
        target = raw.split(" as ", 1)[0].strip()
        if name == local or imported in (target, f"{change.entity}.{local}"):
            return (
                Break(kind=REMOVED_IMPORT, detail=f"{change.entity} no longer imports {local}"),
            )
    return ()


def _inherited_call_breaks(
    method: QualName, graph: CodeGraph, args: ArgShape | None, *, bound: bool
) -> tuple[Break, ...]:
    """A call of a deleted method that now runs the one ``method`` a base defines, bound to
    that one's parameters when they are its signature as written (``overrides.keeps_signature``;
    a method without parameters in the graph is one we cannot read)."""
    node = graph.node(method)
    if (
        node is None
        or not node.params
        or not keeps_signature(node.decorators)
        or args is None
        or not args.provable
    ):
        return ()
    return tuple(
        Break(kind=b.kind, detail=f"now runs {method}: {b.detail}")
        for b in bind_arguments(node.params, args, skip_first=bound)
    )


def _signature_breaks(
    change: Change, args: ArgShape | None, *, skip_first: bool
) -> tuple[Break, ...]:
    if args is None or not args.provable or change.after_params is None:
        return ()
    breaks = bind_arguments(change.after_params, args, skip_first=skip_first)
    if not breaks or change.before_params is None:
        return breaks
    before = {p.name for p in change.before_params}
    after = {p.name for p in change.after_params}
    removed = before - after
    out: list[Break] = []
    for found in breaks:
        keyword = _unknown_keyword(found)
        if keyword is not None and keyword in removed:
            out.append(
                Break(
                    kind=REMOVED_PARAMETER,
                    detail=f"keyword '{keyword}' names a removed parameter",
                )
            )
        else:
            out.append(found)
    return tuple(out)


def _unknown_keyword(found: Break) -> str | None:
    if found.kind != UNKNOWN_KEYWORD or "'" not in found.detail:
        return None
    return found.detail.split("'")[1]
