"""Hidden channels (spec §7.4): places the changed name may be reached where no edge can show it.

Contract:
    input    one ``Change`` and the current ``CodeGraph``.
    output   ``Unanalyzable`` entries sorted by (file, line, entity, name), one per dynamic
             reference that may serve the change, each with the reference's reason and
             ``seed`` = the changed entity. ``triage`` turns them into MAY-IMPACT entries flagged
             ``unanalyzable`` — an invisible boundary is reported, never silently LOW-RISK.
    matches  - a string-keyed ``getattr``/``setattr``/``hasattr``, a registry key or an
               identifier-like string literal equal to the changed short name (for a constructor
               the class name; for an import change each removed name — not the module's own
               name, which the change leaves as it was);
             - a ``getattr``/``setattr``/``hasattr`` of a name computed around a literal of at
               least three characters that the changed name completes: ``"on_" + kind``,
               ``f"visit_{name}"`` for ``on_click``, ``visit_Call`` (handler dispatch,
               visitors);
             - ``importlib.import_module`` of the module that holds the change, or of a name
               computed below a package path that the module completes (``"drivers." + name``,
               ``f"plugins.{name}.hooks"``: drivers and plugins loaded by a configured name);
             - a ``getattr`` of a computed name on the module that holds the change, or on a
               class the change is or is in, named by a module-level name of the looking file
               (``getattr(models, payload["type"])`` after ``from orm import models``,
               ``getattr(Color, name)`` beside ``class Color``: deserializers, command and
               handler lookups); not for a change of the module's own code;
             - a string that names the changed entity, or a class it is in, by its dotted path:
               ``"tasks.mail:send_welcome"`` (entry points, task and app strings),
               ``"app.middleware.Audit"`` (settings naming middleware, backends, handlers, whose
               loader instantiates the class and calls its methods); for an import change, the
               module's path to each removed name;
             - a read of a registry that the changed definition, or a class it is in, is
               stored in by a function it is handed to — a decorator (``@register("json")``
               whose ``wrap(function)`` does ``ENCODERS[name] = function``; ``HOOKS.append(
               cls)``), a call it is an argument of (``add_formatter("upper", as_upper)``), or
               for a class a base's ``__init_subclass__`` or an ``__init__`` storing ``cls`` or
               ``self``: each read outside the functions that store into it
               (``ENCODERS[fmt](rows)``) may dispatch to it; a file that reads the registry
               only through an element call (``SINKS[kind]()``: no edge) is flagged where it
               imports it;
             - a module-level ``__getattr__`` in a module on the entity's import path
               (``pkg/__init__.py`` or ``pkg/mod.py`` for ``pkg.mod.func``) that may serve any
               name (it forwards), or that serves, by the string literals it compares its
               argument with, the changed name or a name on the way to it (``mod``, ``func``):
               the deprecation shims most packages keep serve a few fixed names.
    folded   a removal the change cap folded others into is searched once per removed name, as
             if each were its own change; the entries keep the listed change as ``seed``.
    gate     a change whose relation set is empty (``add``, ``incomplete``, a non-escaping body
             change) has no dependents to hide, so it yields nothing.
    weak     a bare string literal equal to the changed name is marked ``weak``: a dict key, a
             keyword's value, an HTTP method (``"request"``, ``"footer"``, ``"get"``) more often
             than a name something looks up — on real commits (``bench_commits.py``, 180
             cases) 3 of the 28 files listed for such a string alone were changed with the
             edit, whether the name was the changed definition's alone or not, whether the
             file imported the changed module or not. So is a ``getattr``/``setattr``/
             ``hasattr`` of a dunder other classes define too (``getattr(obj, "__call__")``
             probes a protocol). Triage lists a weak channel, flagged, but keeps it out of
             MAY-IMPACT unless co-change supports the file. A dotted path in a test is weak
             too: there it is mostly what ``mock.patch`` or ``monkeypatch.setattr`` replaces,
             and the test's own run shows a break (on real commits: 3 such test files listed,
             none changed with the edit); so is a computed ``getattr`` in a test, mostly a
             check of what a module exports (``for name in dir(web): getattr(web, name)``: on
             real commits, 2 files listed, neither changed with the edit).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace

from impact_ls.analysis.relations import reached_removal, removes_names, select_relations
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.graph.facts import is_dunder
from impact_ls.model import (
    ANY_NAME,
    COMPUTED,
    Change,
    ChangeType,
    DynamicKind,
    DynamicRef,
    Edge,
    EdgeKind,
    Node,
    NodeKind,
    QualName,
    Unanalyzable,
)

logger = logging.getLogger(__name__)

_NAME_KINDS = frozenset(
    {DynamicKind.GETATTR, DynamicKind.SETATTR, DynamicKind.HASATTR, DynamicKind.STRING_LITERAL}
)
_CONSTRUCTORS = frozenset({"__init__", "__new__"})
_CALLS = (EdgeKind.CALL,)
_VALUE_USES = (EdgeKind.CLASS_MEMBER,)  # a function or class used as a value
_MAX_ANCESTORS = 32
# an import of a registry binds it; its reads are where a dispatch may happen (``_reads``)
_BINDINGS = frozenset({EdgeKind.IMPORT, EdgeKind.REEXPORT})
# references whose use in a test the test's own run checks: weak there (see the contract)
_RUN_BY_TESTS = frozenset({DynamicKind.DOTTED_PATH, DynamicKind.COMPUTED_LOOKUP})


def find_hidden_channels(change: Change, graph: CodeGraph) -> tuple[Unanalyzable, ...]:
    """Dynamic references that could reach ``change``'s entity out of sight of the graph."""
    if not select_relations(change):
        return ()
    if removes_names(change) and len(change.removed_names) > 1:
        # removals the change cap folded into this one: each is searched as itself
        found = {
            replace(u, seed=change.entity)
            for name in change.removed_names
            for u in find_hidden_channels(reached_removal(change, QualName(name), None), graph)
        }
        return tuple(sorted(found, key=_order))
    refs: set[DynamicRef] = set()
    names = _names(change)
    for name in names:
        refs.update(r for r in graph.dynamic_refs_named(name) if r.kind in _NAME_KINDS)
    module = _module_of(change, graph)
    enclosing = _classes(change.entity.rpartition(".")[0], graph)
    computed = graph.computed_name_refs()
    if module:
        refs.update(
            r for r in graph.dynamic_refs_named(module) if r.kind is DynamicKind.IMPORT_MODULE
        )
        refs.update(
            r
            for r in computed
            if r.kind is DynamicKind.IMPORT_MODULE and _may_compute(r.name, module)
        )
    for path in _paths(change, names, module, enclosing):
        refs.update(r for r in graph.dynamic_refs_named(path) if r.kind is DynamicKind.DOTTED_PATH)
    refs.update(
        r
        for r in computed
        if r.kind is not DynamicKind.IMPORT_MODULE and any(_may_compute(r.name, n) for n in names)
    )
    for owner in _owners(change, graph, names, module, enclosing):
        refs.update(
            r for r in graph.dynamic_refs_named(owner) if r.kind is DynamicKind.COMPUTED_LOOKUP
        )
    for ref in graph.module_getattr_refs():
        if change.entity.startswith(f"{ref.source}.") or change.entity == ref.source:
            below = change.entity[len(ref.source) + 1 :].split(".")
            if ref.name == ANY_NAME or ref.name in below or ref.name in names:
                refs.add(ref)
    shared = {name for name in names if is_dunder(name) and len(graph.find_by_name(name)) > 1}
    out = set(_registry_readers(change, graph, enclosing))
    for ref in refs:
        weak = (
            ref.kind is DynamicKind.STRING_LITERAL
            # ``getattr(obj, "__call__")`` probes a protocol, not the changed class
            or ref.name in shared
            or (ref.kind in _RUN_BY_TESTS and _in_test(ref.source, graph))
        )
        out.add(
            Unanalyzable(
                file=ref.file,
                line=ref.span.line,
                reason=ref.reason,
                entity=ref.source,
                name=ref.name,
                seed=change.entity,
                weak=weak,
            )
        )
    logger.debug("hidden channels of %s: %d", change.entity, len(out))
    return tuple(sorted(out, key=_order))


def _order(u: Unanalyzable) -> tuple[str, int, str, str, str]:
    return (u.file, u.line, u.entity, u.name, u.reason)


def _names(change: Change) -> list[str]:
    if change.change_type is ChangeType.IMPORT:
        # what an import change changes is the names the module binds, not its own name: a
        # ``"testclient"`` string elsewhere is no route to what ``testclient.py`` imports
        removed = {n.rsplit(" as ", 1)[-1].strip() for n in change.removed_names}
        return sorted(n for n in removed if n)
    parts = change.entity.split(".")
    names = {parts[-1]}
    if (
        change.change_type is ChangeType.CONSTRUCTOR
        and parts[-1] in _CONSTRUCTORS
        and len(parts) > 1
    ):
        names = {parts[-2]}
    return sorted(n for n in names if n)


def _paths(change: Change, names: list[str], module: str, enclosing: list[str]) -> list[str]:
    """The dotted paths a string may load the change by (see the module contract);
    ``enclosing``: the classes the changed entity is in, innermost first."""
    if change.change_type is ChangeType.IMPORT:
        return [f"{module}.{name}" for name in names] if module else []
    # a module's own path is also a logger's name, a settings key: no route to a definition
    paths: list[str] = [] if change.entity == module else [change.entity]
    return paths + enclosing


def _owners(
    change: Change, graph: CodeGraph, names: list[str], module: str, enclosing: list[str]
) -> list[str]:
    """The module and classes a computed ``getattr`` may fetch the change from: the change's
    module (unless the change is the module's own code) and each class it is or is in."""
    if change.change_type is ChangeType.IMPORT:
        return [module] if module and names else []
    owners = [module] if module and change.entity != module else []
    node = graph.node(change.entity)
    if node is not None and node.kind is NodeKind.CLASS:
        owners.append(change.entity)
    return owners + enclosing


def _classes(qualname: str, graph: CodeGraph) -> list[str]:
    """``qualname`` and the classes it is in, while each is a class (else nothing)."""
    out = []
    while (node := graph.node(qualname) if qualname else None) and node.kind is NodeKind.CLASS:
        out.append(qualname)
        qualname = qualname.rpartition(".")[0]
    return out


def _registry_readers(
    change: Change, graph: CodeGraph, enclosing: list[str]
) -> Iterator[Unanalyzable]:
    """Where the registries that store the changed definition (or a class it is in) are read:
    each read may dispatch to it (see the module contract)."""
    seen: set[QualName] = set()
    read_registries: set[str] = set()  # a registry two registrars fill is read once
    for registered in [change.entity, *enclosing]:
        node = graph.node(registered)
        if node is None:
            continue
        for registrar, how in _registrars(node, graph):
            if registrar.id in seen:
                continue  # ``ForeignKey(…, on_delete=CASCADE)``: one registrar, 1k call sites
            seen.add(registrar.id)
            for registry in graph.registries_in(registrar.file):
                if registry.name in read_registries or not _within(registry.source, registrar.id):
                    continue
                read_registries.add(registry.name)
                # the functions that store into it (this registrar and any other) fill it
                storers = {
                    r.source
                    for r in graph.dynamic_refs_named(registry.name)
                    if r.kind is DynamicKind.REGISTRY
                }
                for read in _reads(graph.dependents(registry.name)):
                    if read.source in storers or _within(read.source, registrar.id):
                        continue
                    yield Unanalyzable(
                        file=read.file,
                        line=read.span.line,
                        reason=f"the registry {registry.name!r} holds it ({how})",
                        entity=read.source,
                        name=registry.name,
                        seed=change.entity,
                        weak=_in_test(read.source, graph),
                    )


def _registrars(node: Node, graph: CodeGraph) -> Iterator[tuple[Node, str]]:
    """The functions ``node`` is handed to: its decorators (``@register("json")``), the calls
    it is an argument of (``add_formatter("upper", as_upper)``), and for a class the hooks
    Python hands it or its instances to (a base's ``__init_subclass__``, its own or a base's
    ``__init__``), each with how."""
    if node.kind is NodeKind.CLASS:
        bases = _ancestors(node.id, graph)
        for klass, hook in [(b, "__init_subclass__") for b in bases] + [
            (k, "__init__") for k in (node.id, *bases)
        ]:
            found = graph.node(f"{klass}.{hook}")
            if found is not None:
                yield found, f"{hook} of {klass.rpartition('.')[2]}"
    if node.decorators:
        by_name = {d.rpartition(".")[2]: d for d in node.decorators}
        for call in graph.dependencies(node.id.rpartition(".")[0], kinds=_CALLS):
            decorator = by_name.get(call.target.rpartition(".")[2])
            registrar = graph.node(call.target) if decorator else None
            if registrar is not None:
                yield registrar, f"@{decorator}"
    # from the few registering functions to their calls: ``ValidationError`` alone is used as a
    # value at 749 sites of django, the project has 2 registries
    for registry in graph.registries():
        registrar = graph.node(registry.source)
        if registrar is None:
            continue
        for call in graph.dependents(registrar.id, kinds=_CALLS):
            if any(
                use.target == node.id
                and use.file == call.file
                and call.span.line <= use.span.line <= call.span.end_line
                for use in graph.dependencies(call.source, kinds=_VALUE_USES)
            ):
                yield registrar, f"passed to {registrar.name}()"
                break


def _reads(uses: list[Edge]) -> list[Edge]:
    """Where a registry is read, per file: its reads, or where a file that reads it only as
    ``SINKS[kind]()`` (an element of unknown type: no edge) binds it (its import)."""
    by_file: dict[str, list[Edge]] = {}
    for use in uses:
        by_file.setdefault(use.file, []).append(use)
    out: list[Edge] = []
    for found in by_file.values():
        reads = [use for use in found if use.kind not in _BINDINGS]
        out.extend(reads or found)
    return out


def _ancestors(klass: str, graph: CodeGraph) -> list[str]:
    """The project classes ``klass`` derives from, nearest first."""
    out: list[str] = []
    queue = [klass]
    while queue and len(out) < _MAX_ANCESTORS:
        for edge in graph.superclasses_of(queue.pop(0)):
            if edge.target not in out and edge.target != klass:
                out.append(edge.target)
                queue.append(edge.target)
    return out


def _within(qualname: str, scope: str) -> bool:
    return qualname == scope or qualname.startswith(f"{scope}.")


def _in_test(qualname: str, graph: CodeGraph) -> bool:
    node = graph.node(qualname)
    return node is not None and node.kind is NodeKind.TEST


def _may_compute(pattern: str, name: str) -> bool:
    """Whether a name computed as ``pattern`` (``on_*``, ``*_handler``) may be ``name``."""
    prefix, _, suffix = pattern.partition(COMPUTED)
    fits = len(name) > len(prefix) + len(suffix)
    return fits and name.startswith(prefix) and name.endswith(suffix)


def _module_of(change: Change, graph: CodeGraph) -> str:
    for node in graph.nodes_in_file(change.file):
        if node.kind is NodeKind.MODULE:
            return node.id
    # No module node for the file (a partial graph): the entity's parent is the best guess.
    return change.entity.rpartition(".")[0]
