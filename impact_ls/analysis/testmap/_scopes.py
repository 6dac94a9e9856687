"""Test ids that run an entity without a call naming it: setup methods, test classes and modules,
fixtures by name, ``conftest.py`` hooks.

pytest (and unittest) call ``setUp``/``setup_method``/``setUpClass``… of every collected class
whose MRO defines them, ``setup_module``/``setUpModule``… of a test module, the top level and
class bodies of a test module when it is imported, and a fixture for every test *in its scope*
that asks for its name — also a test defined elsewhere (an inherited or imported test class) that
the graph resolved to a namesake, since pytest resolves names where the test is collected.
``scope_ids`` turns one reached entity into those ids; ``conftest_ids`` the ids a change to a
``conftest.py`` hook or module-level statement reaches (every test below its folder).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from impact_ls.graph.codegraph import CodeGraph
from impact_ls.graph.collection import Collection
from impact_ls.model import Change, ChangeType, EdgeKind, Node, NodeKind, QualName, TestId

CLASS_SETUP = frozenset(
    {
        "setUp",
        "tearDown",
        "setUpClass",
        "tearDownClass",
        "asyncSetUp",
        "asyncTearDown",
        "setup_method",
        "teardown_method",
        "setup_class",
        "teardown_class",
    }
)
MODULE_SETUP = frozenset(
    {
        "setup_module",
        "teardown_module",
        "setUpModule",
        "tearDownModule",
        "setup_function",
        "teardown_function",
    }
)
_MODULE_LEVEL = frozenset({ChangeType.FIELD, ChangeType.IMPORT, ChangeType.INCOMPLETE})
_CONFTEST = "conftest.py"
_MAX_FIXTURE_HOPS = 256


def scope_ids(qid: QualName, graph: CodeGraph, collection: Collection) -> tuple[TestId, ...]:
    """The ids that run ``qid`` implicitly (empty for an ordinary function or class)."""
    node = graph.node(qid)
    if node is None:
        return ()
    if node.kind is NodeKind.CLASS:
        return collection.ids_under(qid)
    if node.kind is NodeKind.MODULE:
        if is_conftest(node.file):
            return collection.ids_below(posixpath.dirname(node.file))
        return collection.ids_in(node.file) if node.file in collection.files else ()
    if node.kind is NodeKind.FIXTURE:
        return _fixture_ids(node, graph, collection)
    parent, _, name = qid.rpartition(".")
    if name in CLASS_SETUP:
        holder = graph.node(parent)
        if holder is not None and holder.kind is NodeKind.CLASS:
            return collection.ids_under(parent)
    if name in MODULE_SETUP and node.file in collection.files:
        holder = graph.node(parent)
        if holder is not None and holder.kind is NodeKind.MODULE:
            return collection.ids_in(node.file)
    return ()


def conftest_ids(change: Change, graph: CodeGraph, collection: Collection) -> tuple[TestId, ...]:
    """Every id below a ``conftest.py`` whose hook or module-level statement ``change`` edits."""
    if not is_conftest(change.file):
        return ()
    name = change.entity.rpartition(".")[2]
    node = graph.node(change.entity)
    module_level = change.change_type in _MODULE_LEVEL or (
        node is not None and node.kind is NodeKind.MODULE
    )
    if not (module_level or name.startswith("pytest_")):
        return ()
    return collection.ids_below(posixpath.dirname(change.file))


def is_conftest(file: str) -> bool:
    """Whether ``file`` is a ``conftest.py``."""
    return posixpath.basename(file) == _CONFTEST


def _fixture_ids(fixture: Node, graph: CodeGraph, collection: Collection) -> tuple[TestId, ...]:
    """Ids whose definition asks for the fixture's name (resolved to any namesake) and for which
    pytest picks this fixture: the nearest definition wins (``_picks``)."""
    namesakes = {n.id: n for n in graph.find_by_name(fixture.name) if n.kind is NodeKind.FIXTURE}
    namesakes[fixture.id] = fixture
    in_scope = _scope(fixture, graph, collection)
    seen: set[QualName] = set()
    frontier = list(namesakes)
    users: set[QualName] = set()
    while frontier and len(seen) < _MAX_FIXTURE_HOPS:
        current = frontier.pop()
        for edge in graph.dependents_unordered(current):
            if edge.kind is not EdgeKind.FIXTURE or edge.source in seen:
                continue
            seen.add(edge.source)
            source = graph.node(edge.source)
            if source is not None and source.kind is NodeKind.FIXTURE:
                frontier.append(edge.source)  # a fixture asking for it: its users see it too
            else:
                users.add(edge.source)
    picks = _Picks(fixture.name, namesakes, graph, collection)
    return tuple(
        sorted(
            t
            for q in users
            for t in collection.ids_of(q)
            if in_scope(t) and picks.of(t) in (None, fixture.id)
        )
    )


class _Picks:
    """Which of a fixture name's definitions pytest gives a test id: the test's class MRO
    first, then its module, then the ``conftest.py`` files from its folder upwards. None when
    no project definition is in reach (a plugin's, or one imported into the module)."""

    def __init__(
        self, name: str, namesakes: dict[QualName, Node], graph: CodeGraph, collection: Collection
    ) -> None:
        self._name = name
        self._collection = collection
        self._by_file: dict[str, QualName] = {}
        for qid, node in namesakes.items():
            holder = graph.node(qid.rpartition(".")[0])
            if holder is not None and holder.kind is NodeKind.MODULE:
                self._by_file.setdefault(node.file, qid)
        self._namesakes = namesakes

    def of(self, test_id: str) -> QualName | None:
        klass = self._collection.class_of(test_id)
        if klass is not None:
            for base in self._collection.mro_of(klass):
                candidate = QualName(f"{base}.{self._name}")
                if candidate in self._namesakes:
                    return candidate
        file = test_id.partition("::")[0]
        if file in self._by_file:
            return self._by_file[file]
        folder = posixpath.dirname(file)
        while True:
            found = self._by_file.get(posixpath.join(folder, _CONFTEST))
            if found is not None:
                return found
            if not folder:
                return None
            folder = posixpath.dirname(folder)


def _scope(fixture: Node, graph: CodeGraph, collection: Collection) -> Callable[[str], bool]:
    """Which ids can see ``fixture``: its class (and subclasses), its module, or its folder."""
    parent = fixture.id.rpartition(".")[0]
    holder = graph.node(parent)
    if holder is not None and holder.kind is NodeKind.CLASS:
        klass = holder.id

        def in_class(test_id: str) -> bool:
            owner = collection.class_of(test_id)
            return owner is not None and klass in collection.mro_of(owner)

        return in_class
    if is_conftest(fixture.file):
        folder = posixpath.dirname(fixture.file)
        prefix = f"{folder}/" if folder else ""
        return lambda test_id: test_id.startswith(prefix)
    file = fixture.file
    return lambda test_id: test_id.partition("::")[0] == file
