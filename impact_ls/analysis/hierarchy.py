"""What a class-declaration change reaches beyond its constructors and subclasses (issue 11).

Contract:
    ``inherited_uses(change, graph)`` → the graph edges that use, on the class or on one of its
    subclasses, a member the class inherited from a base it no longer lists
    (``class Config(dict)`` → ``class Config``: every ``cfg.get(…)``, ``cfg.update(…)`` and,
    where the graph has them, the implicit ``cfg[k]`` / ``for k in cfg`` / ``k in cfg`` calls).
    A use shows in the current graph as an edge to the would-be qualname ``Config.get``, which
    no class in the project MRO defines. The edges are looked for in the files that reference
    the class or a subclass (and theirs own), sorted by (file, line, column, kind, source,
    target).
    ``hierarchy_reads(change, graph)`` → the reads of each project base that was added or
    removed (``isinstance(x, Base)``, ``issubclass``, ``except Base``): class-member edges into
    the base, whose answer for instances of the class changes.
    ``still_provided(change, graph)`` → whether a deleted method's class may still have the
    name (it binds it itself, ``object`` has it, or a class of its project MRO defines it or
    lists a base that provides it or is unknown), and the project method that gives it.
    ``inherited_break(change, target, graph)`` → the ``Break`` of a use of ``target`` when it is
    provable: the member is one the removed base provides, the class does not define it itself,
    and every base the class still lists is a project class (an external base might provide it).
    A subclass's use is never proved (its other bases are not checked).

    What a removed base provides: a builtin type's ``dir()`` (``dict``, ``list``, ``Exception``…),
    the container it stands for when it is a ``collections.abc``/``typing`` ABC, the members of a
    project class of that name (and of its project bases); an unknown external base provides
    every name the class does not define itself.
Pure: reads the graph only.
"""

from __future__ import annotations

import ast
import builtins
import logging
from collections.abc import Iterable

from impact_ls.analysis.classify._shape import bases_of
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import Break, Change, ChangeType, Edge, EdgeKind, NodeKind, QualName

logger = logging.getLogger(__name__)

INHERITED_MEMBER = "inherited-member"

# The container each ABC (or typing alias) stands for: what its subclasses get from it.
_CONTAINERS: dict[str, type] = {
    "Mapping": dict,
    "MutableMapping": dict,
    "Dict": dict,
    "OrderedDict": dict,
    "defaultdict": dict,
    "DefaultDict": dict,
    "Counter": dict,
    "UserDict": dict,
    "ChainMap": dict,
    "Sequence": list,
    "MutableSequence": list,
    "List": list,
    "UserList": list,
    "deque": list,
    "Set": set,
    "AbstractSet": set,
    "MutableSet": set,
    "FrozenSet": frozenset,
    "NamedTuple": tuple,
    "Tuple": tuple,
    "UserString": str,
}
# Bases that give a class no members worth proving a break for.
_INERT = frozenset({"object", "Generic", "Protocol", "ABC"})
_OBJECT = frozenset(dir(object))
_USE_KINDS = frozenset({EdgeKind.CALL, EdgeKind.CLASS_MEMBER})
_MAX_SUBCLASSES = 64
# ``still_provided``'s answer: whether the name is still there, and the project method giving it
Provided = tuple[bool, QualName | None]


def inherited_uses(change: Change, graph: CodeGraph) -> list[Edge]:
    """Uses of members inherited from a removed base, on the class or its subclasses."""
    if change.change_type is not ChangeType.CLASS_DECL or not change.removed_bases:
        return []
    provided = _provided_by(change.removed_bases, graph)
    own = frozenset(change.own_members)
    classes = [change.entity, *_subclasses(change.entity, graph)]
    prefixes = {QualName(c): f"{c}." for c in classes}
    files = {graph.node(c).file for c in classes if graph.node(c) is not None}  # type: ignore[union-attr]
    for cls in classes:
        files.update(e.file for e in graph.dependents_unordered(cls))
    found: set[Edge] = set()
    for file in files:
        for edge in graph.edges_in_file(file):
            if edge.kind not in _USE_KINDS or "." not in edge.target:
                continue
            owner, _, name = edge.target.rpartition(".")
            if QualName(owner) not in prefixes or graph.node(edge.target) is not None:
                continue
            if owner == change.entity and name in own:
                continue  # the class binds it itself (an instance attribute, a field)
            if provided is not None and name not in provided:
                continue
            found.add(edge)
    logger.debug("inherited uses of %s: %d", change.entity, len(found))
    return sorted(found, key=_edge_key)


def inherited_break(change: Change, target: str, graph: CodeGraph) -> Break | None:
    """The break of a use of ``target`` (``Class.member``) when the class provably lost it."""
    owner, _, name = target.rpartition(".")
    if owner != change.entity or name in change.own_members or not change.removed_bases:
        return None
    provided = _provided_by(change.removed_bases, graph)
    if provided is not None and name not in provided:
        return None
    if not _bases_all_known(change, graph):
        return None
    bases = ", ".join(change.removed_bases)
    return Break(
        kind=INHERITED_MEMBER,
        detail=f"'{name}' was inherited from {bases}, which {change.short_name} no longer extends",
    )


def still_provided(change: Change, graph: CodeGraph) -> Provided:
    """Whether the instances of a deleted method's class may still have the name, and the
    project method that gives it to them when one does.

    They may when the class binds it itself (a field, ``self.name = …``), when ``object`` gives
    every class one (``__repr__``, ``__eq__``…), or when a class of its project MRO defines it
    or lists a base that provides it or is unknown (an installed base may). A call of the name
    then runs the inherited method: binding checks the call against that one's parameters.
    """
    if change.change_type is not ChangeType.DELETE:
        return False, None
    owner = graph.node(change.entity.rpartition(".")[0])
    if owner is None or owner.kind is not NodeKind.CLASS:
        return False, None
    name = change.short_name
    if name in change.own_members or name in _OBJECT:
        return True, None
    listed: tuple[str, ...] | None = change.bases_after
    frontier, seen = [owner.id], {owner.id}
    while frontier:
        qual = frontier.pop(0)  # breadth first: the nearest definer is the one that runs
        project = [e.target for e in graph.superclasses_of(qual) if _is_class(e.target, graph)]
        for base in project:
            if name in _own_members(QualName(base), graph):
                method = graph.node(f"{base}.{name}")
                if method is None or method.kind is NodeKind.CLASS:
                    return True, None  # a field or a nested class
                return True, method.id
            if base not in seen and len(seen) < _MAX_SUBCLASSES:
                seen.add(base)
                frontier.append(base)
        if qual != owner.id:
            listed = _listed_bases(graph, qual)
        if listed is None:
            return True, None  # bases it lists that cannot be read: one may provide it
        resolved = {base.rsplit(".", 1)[-1] for base in project}
        provided = _provided_by([b for b in listed if _name(b) not in resolved], graph)
        if provided is None or name in provided:
            return True, None
    return False, None


def _listed_bases(graph: CodeGraph, qual: str) -> tuple[str, ...] | None:
    """The bases a project class lists, read from its header; None when it does not parse."""
    node = graph.node(qual)
    if node is None:
        return None
    try:
        tree = ast.parse(f"{node.signature}\n    pass\n")
    except SyntaxError:
        return None
    return bases_of(tree.body[0] if tree.body else None)


def _is_class(qual: str, graph: CodeGraph) -> bool:
    node = graph.node(qual)
    return node is not None and node.kind is NodeKind.CLASS


def hierarchy_reads(change: Change, graph: CodeGraph) -> list[Edge]:
    """Reads (``isinstance``, ``except``…) of each project base the class gained or lost."""
    if change.change_type is not ChangeType.CLASS_DECL:
        return []
    out: set[Edge] = set()
    for base in (*change.removed_bases, *change.added_bases):
        qual = _project_class(base, graph)
        if qual is not None:
            out.update(graph.field_users_of(qual))
    return sorted(out, key=_edge_key)


def _bases_all_known(change: Change, graph: CodeGraph) -> bool:
    """Whether every base still listed is a project class (so the graph's MRO is complete)."""
    listed = [b for b in change.bases_after if _name(b) not in _INERT]
    resolved = [e for e in graph.superclasses_of(change.entity) if _is_class(e.target, graph)]
    return len(resolved) >= len(listed)


def _provided_by(bases: Iterable[str], graph: CodeGraph) -> frozenset[str] | None:
    """What the bases provide together; None when one of them is unknown (it may provide all)."""
    names: set[str] = set()
    for base in bases:
        found = _provided(base, graph)
        if found is None:
            return None
        names |= found
    return frozenset(names)


def _provided(base: str, graph: CodeGraph) -> frozenset[str] | None:
    name = _name(base)
    if name in _INERT:
        return frozenset()
    dotted = base.split("[", 1)[0]
    bare = "." not in dotted or dotted.startswith("builtins.")
    builtin = getattr(builtins, name, None) if bare else None
    if isinstance(builtin, type):
        return frozenset(dir(builtin))
    container = _CONTAINERS.get(name)
    if container is not None:
        return frozenset(dir(container))
    qual = _project_class(base, graph)
    if qual is not None:
        return _members(qual, graph, set())
    return None


def _members(qual: QualName, graph: CodeGraph, seen: set[QualName]) -> frozenset[str]:
    """The members a project class defines or inherits from its project bases."""
    if qual in seen:
        return frozenset()
    seen.add(qual)
    names = set(_own_members(qual, graph))
    for edge in graph.superclasses_of(qual):
        names |= _members(edge.target, graph, seen)
    return frozenset(names)


def _own_members(qual: QualName, graph: CodeGraph) -> frozenset[str]:
    """The members a project class defines itself: its definitions and its fields."""
    node = graph.node(qual)
    if node is None:
        return frozenset()
    prefix = f"{qual}."
    names = {
        n.id[len(prefix) :]
        for n in graph.nodes_in_file(node.file)
        if n.id.startswith(prefix) and "." not in n.id[len(prefix) :]
    }
    names.update(e.target[len(prefix) :] for e in _member_targets(qual, graph, prefix))
    return frozenset(names)


def _member_targets(qual: QualName, graph: CodeGraph, prefix: str) -> list[Edge]:
    """Edges in the class's own file naming one of its fields (``self.x`` reads and writes)."""
    node = graph.node(qual)
    if node is None:
        return []
    return [
        e
        for e in graph.edges_in_file(node.file)
        if e.kind is EdgeKind.CLASS_MEMBER
        and e.target.startswith(prefix)
        and "." not in e.target[len(prefix) :]
    ]


def _project_class(base: str, graph: CodeGraph) -> QualName | None:
    """The one project class a base names (by its last dotted part), else None."""
    classes = [n for n in graph.find_by_name(_name(base)) if n.kind is NodeKind.CLASS]
    return classes[0].id if len(classes) == 1 else None


def _subclasses(qual: QualName, graph: CodeGraph) -> list[QualName]:
    """Every project subclass of ``qual`` (transitively, at most ``_MAX_SUBCLASSES``)."""
    out: list[QualName] = []
    seen = {qual}
    frontier = [qual]
    while frontier and len(out) < _MAX_SUBCLASSES:
        current = frontier.pop()
        for edge in graph.subclasses_of(current):
            if edge.source not in seen:
                seen.add(edge.source)
                out.append(edge.source)
                frontier.append(edge.source)
    return sorted(out)[:_MAX_SUBCLASSES]


def _name(base: str) -> str:
    return base.split("[", 1)[0].rsplit(".", 1)[-1].strip()


def _edge_key(edge: Edge) -> tuple[str, int, int, str, str, str]:
    return (edge.file, edge.span.line, edge.span.col, edge.kind.value, edge.source, edge.target)
