"""Import-time breaks: the modules an edit stops from importing, and the tests that import them.

A module runs its top level, its class bodies and its decorators when it is imported. It fails to
import when that code uses a name the edit removed — ``from m import f`` of a deleted ``f``, a
base class, a decorator or a class-body reference to it — when a call made there no longer binds
(binding's ``find_breaks`` on a decorator or a module-level call), or when the module does not
parse. Failure spreads to every module that imports a broken one at its top level (directly or
through a re-export), and from a package's ``__init__`` to every module below it. A test module
that fails to import fails *every* test in it at collection; a ``conftest.py`` every test below
its folder. A function that imports a broken module (or the removed name) in its body fails only
when it runs: it is a start of the ordinary path search.

``find_import_breaks(changes, graph)`` returns the broken modules with the reason of each (the
first cause found, then "imports <module>"), and those function-level starts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from impact_ls.analysis.binding import find_breaks
from impact_ls.analysis.relations import removes_names, walk_seeds
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import Change, ChangeType, Edge, EdgeKind, NodeKind, QualName, Relation

_IMPORTS = frozenset({EdgeKind.IMPORT, EdgeKind.REEXPORT})
# what a module-level or class-body site does with a name at import time
_USES = frozenset(
    {EdgeKind.CALL, EdgeKind.INSTANTIATE, EdgeKind.CLASS_MEMBER, EdgeKind.INHERIT, *_IMPORTS}
)
_SIGNATURES = frozenset(
    {ChangeType.METHOD_SIGNATURE, ChangeType.CONSTRUCTOR, ChangeType.CLASS_DECL}
)
_CONSTRUCTORS = frozenset({"__init__", "__new__"})
_MAX_CHAIN = 4


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportBreaks:
    """Modules that fail to import (module → why) and function-level starts (qualname → why)."""

    modules: Mapping[QualName, str]
    starts: Mapping[QualName, str]

    def why(self, module: str) -> str:
        """The reason ``module`` fails to import, with the chain that leads to the cause."""
        return self.modules.get(QualName(module), "")


def find_import_breaks(changes: Iterable[Change], graph: CodeGraph) -> ImportBreaks:
    """The modules ``changes`` break at import time, and the functions that import them."""
    causes: dict[QualName, str] = {}
    starts: dict[QualName, str] = {}
    for change in changes:
        _seed(change, graph, causes, starts)
    if not causes:
        return ImportBreaks(modules={}, starts=starts)
    parents: dict[QualName, QualName] = {}
    frontier = sorted(causes)
    broken = set(causes)
    modules: list[QualName] | None = None
    while frontier:
        module = frontier.pop()
        for importer in _importers(module, graph, starts):
            if importer not in broken:
                broken.add(importer)
                parents[importer] = module
                frontier.append(importer)
        if _is_package(module, graph):
            if modules is None:
                modules = [n.id for n in graph.modules()]
            for below in (m for m in modules if m.startswith(module + ".")):
                if below not in broken:
                    broken.add(below)
                    parents[below] = module
                    frontier.append(below)
    return ImportBreaks(
        modules={m: _reason(m, causes, parents) for m in sorted(broken)}, starts=starts
    )


def _seed(
    change: Change, graph: CodeGraph, causes: dict[QualName, str], starts: dict[QualName, str]
) -> None:
    kind = change.change_type
    if kind is ChangeType.INCOMPLETE:
        module = _module_of_file(change.file, graph)
        if module is not None:
            causes.setdefault(module, f"{change.file} does not parse")
        return
    if kind in _SIGNATURES:
        _signature_seed(change, graph, causes)
        return
    for removed in _removed(change, graph):
        for edge in _uses(removed, graph):
            if edge.kind not in _USES or _harmless_star(edge, graph):
                continue
            module = import_time_module(edge.source, graph)
            if module is not None:
                causes.setdefault(
                    module,
                    f"{removed} is gone but {module} uses it at import "
                    f"({edge.file}:{edge.span.line})",
                )
            elif edge.kind in _IMPORTS:
                starts.setdefault(edge.source, f"imports {removed}, which is gone")


def _signature_seed(change: Change, graph: CodeGraph, causes: dict[QualName, str]) -> None:
    """A decorator or module-level call that no longer binds to the new signature."""
    entity = change.entity
    parent, _, name = entity.rpartition(".")
    if change.change_type is ChangeType.CONSTRUCTOR and name in _CONSTRUCTORS and parent:
        target, relation = QualName(parent), Relation.INSTANTIATED_BY
        kinds: tuple[EdgeKind, ...] = (EdgeKind.INSTANTIATE,)
    elif change.change_type is ChangeType.CLASS_DECL:
        target, relation, kinds = entity, Relation.INSTANTIATED_BY, (EdgeKind.INSTANTIATE,)
    else:
        target, relation, kinds = entity, Relation.CALLED_BY, (EdgeKind.CALL,)
    for edge in graph.dependents(target, kinds=kinds):
        module = import_time_module(edge.source, graph)
        if module is None:
            continue
        if find_breaks(change, args=edge.args, relation=relation, name_matched=edge.name_matched):
            causes.setdefault(
                module,
                f"{module} calls {target} at import ({edge.file}:{edge.span.line}), which no "
                "longer binds",
            )


def _removed(change: Change, graph: CodeGraph) -> tuple[QualName, ...]:
    """The qualnames ``change`` removes from the project's namespace."""
    if removes_names(change):
        return tuple(QualName(n) for n in change.removed_names) or (change.entity,)
    if change.change_type is ChangeType.IMPORT and change.removed_names:
        return tuple(q for q in walk_seeds(change, graph) if q != change.entity)
    return ()


def _uses(qid: QualName, graph: CodeGraph) -> list[Edge]:
    """Every edge into ``qid`` or into a re-exported alias of it (``pkg.f`` for ``pkg.impl.f``)."""
    seen = {qid}
    frontier = [qid]
    out: list[Edge] = []
    while frontier:
        current = frontier.pop()
        for edge in graph.dependents_unordered(current):
            out.append(edge)
            if edge.kind is EdgeKind.REEXPORT and edge.member and not _is_star(edge, graph):
                alias = QualName(f"{edge.source}.{edge.member}")
                if alias not in seen:
                    seen.add(alias)
                    frontier.append(alias)
    return out


def _harmless_star(edge: Edge, graph: CodeGraph) -> bool:
    """A star import of a removed name that still imports: the baseline's edge, not the current
    text's (a star import binds what exists, unless ``__all__`` still lists the name — then the
    current graph keeps the dangling edge and the import fails)."""
    return edge.kind in _IMPORTS and _is_star(edge, graph) and graph.is_overlaid(edge)


def _is_star(edge: Edge, graph: CodeGraph) -> bool:
    """Whether an import edge comes from ``from m import *`` (it asks for no name in particular).

    The graph marks no star import, but its span is the one-character ``*`` shared by every
    name it binds, where an explicit name's span is the name.
    """
    span = edge.span
    if span.end_line != span.line or span.end_col - span.col != 1:
        return False
    name = edge.member or edge.target.rpartition(".")[2]
    if len(name) != 1:
        return True
    return any(
        other.span == span and other.target != edge.target
        for other in graph.dependencies_unordered(edge.source)
        if other.kind in _IMPORTS
    )


def import_time_module(scope: str, graph: CodeGraph) -> QualName | None:
    """The module whose import runs ``scope``: itself, or the module of a class nested only in
    classes; None for a scope inside a function (it runs when the function is called)."""
    current = QualName(scope)
    while True:
        node = graph.node(current)
        if node is None:
            return None
        if node.kind is NodeKind.MODULE:
            return current
        if node.kind is not NodeKind.CLASS:
            return None
        parent = current.rpartition(".")[0]
        if not parent:
            return None
        current = QualName(parent)


def _importers(
    module: QualName, graph: CodeGraph, starts: dict[QualName, str]
) -> Iterable[QualName]:
    for edge in graph.module_importers_of(module):
        where = import_time_module(edge.source, graph)
        if where is not None:
            yield where
        else:
            starts.setdefault(edge.source, f"imports {module}, which fails to import")


def _is_package(module: QualName, graph: CodeGraph) -> bool:
    node = graph.node(module)
    return node is not None and node.file.endswith("__init__.py")


def _module_of_file(file: str, graph: CodeGraph) -> QualName | None:
    for node in graph.nodes_in_file(file):
        if node.kind is NodeKind.MODULE:
            return node.id
    return None


def _reason(
    module: QualName, causes: Mapping[QualName, str], parents: Mapping[QualName, QualName]
) -> str:
    """The cause, and how ``module`` imports the module it hits (``a → b → …``)."""
    chain = [module]
    while chain[-1] in parents and len(chain) <= len(parents):
        chain.append(parents[chain[-1]])
    cause = causes.get(chain[-1], "")
    if len(chain) == 1:
        return cause
    path = chain[1:] if len(chain) <= _MAX_CHAIN else [*chain[1:3], QualName("…"), chain[-1]]
    return f"{cause}, and {module} imports {' → '.join(path)}"
