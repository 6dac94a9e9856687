"""pytest's collection, modelled on the code graph: every node id pytest runs, per definition.

``collected_ids(graph, config, hints)`` returns a ``Collection``: for each function or method
that pytest collects, every node id it is collected under — a test defined once may run under
several ids, and a definition the extractor did not mark as a test may be one. Nothing is
imported or executed; the rules are pytest 9's (``_pytest/python.py``, ``main.py``,
``unittest.py``), applied to graph facts:

- **files**: ``graph/collect_files.py`` (``testpaths``, ``norecursedirs``, ``--ignore`` and
  ``python_files``, as pytest applies them).
- **module namespace**: what the module defines (``contains``) and what it imports at module
  level (``import``/``reexport`` edges, under the bound name — ``as`` aliases from the hints; a
  ``from m import *`` binds ``m``'s public names or its ``__all__``). ``collect_imported_tests
  = false`` drops the imported ones. A module whose ``__test__`` is falsy collects nothing.
- **classes**: a ``unittest.TestCase`` subclass (see below) collects, whatever its name, every
  callable ``test*`` attribute through its MRO (``runTest`` if none), unless abstract.
  Otherwise a class is collected when its name matches ``python_classes`` (prefix, or glob
  when it has ``*?[``) or its ``__test__`` is ``True``, it is not abstract, its ``__test__``
  (through the MRO) is not falsy and no class of its MRO defines ``__init__``/``__new__`` (nor
  is a dataclass, nor derives from a builtin, exception, enum or named tuple). Its items are
  the members of every class of its MRO (C3 over ``inherit`` edges), the first definition of a
  name winning: methods matching ``python_functions`` (or ``__test__ = True``), nested classes
  recursively. Every inherited test thus runs again as ``SubClass::test_x`` in the subclass's
  module, and a class imported into another test module runs there too.
- **functions**: module-level functions and methods matching ``python_functions`` or with
  ``__test__ = True``, not fixtures, not properties, and not ``__test__``-falsy.
- **parametrize**: the id is the function-level one (``tests/test_x.py::test_f``). pytest
  runs every parametrization of a function given that id, so it is exact for selection;
  expanding ``[param-ids]`` would need the decorator arguments, which the graph does not keep.

What the graph does not record, ``hints`` (``graph/collect_hints.py``, read at the edge) adds:
literal ``__test__`` values, import aliases, star-import lines, ``__all__``, and definitions in
``sys.platform``/``os.name`` branches not taken on this machine (they do not exist here). Facts
that are still missing, and so not modelled: inherit edges to classes outside the project (a base
is a ``unittest.TestCase`` when it is external and its name ends in ``TestCase`` — true of
``unittest``, django, twisted, absltest, tornado; the ``__init__``/``__test__`` of other external
bases are unknown and assumed absent), test attributes bound by plain assignment (``test_b =
test_a``), ``collect_ignore`` and collection hooks in conftest files, ``pytest_generate_tests``
that yields no call (its test still has its function id), generator tests (a collection error).

Ids are relative to the project root, which is what ``pytest`` run in the root accepts.
"""

from __future__ import annotations

import fnmatch
import logging
import re
import types
from collections.abc import Iterator, Mapping
from types import MappingProxyType

from impact_ls.graph.codegraph import CodeGraph
from impact_ls.graph.collect_files import collected_files
from impact_ls.graph.collect_hints import EMPTY_HINTS, FileHints
from impact_ls.graph.pytest_config import PytestConfig
from impact_ls.model import EdgeKind, Node, NodeKind, QualName, TestId

logger = logging.getLogger(__name__)

# pytest skips these names in a namespace (``IGNORED_ATTRIBUTES`` in ``_pytest/python.py``)
_IGNORED_NAMES = frozenset(
    {*dir(types.ModuleType("empty_module")), "__builtins__", "__file__", "__cached__"}
)
_CALLABLES = frozenset({NodeKind.FUNCTION, NodeKind.METHOD, NodeKind.TEST})
_DEFINITIONS = frozenset({NodeKind.CLASS, *_CALLABLES, NodeKind.FIXTURE})
_NOT_FUNCTIONS = ("property", "cached_property")
_DATACLASS_DECORATORS = frozenset(
    {
        "dataclass",
        "dataclasses.dataclass",
        "attr.s",
        "attr.attrs",
        "attr.define",
        "attr.frozen",
        "attr.mutable",
        "attrs.define",
        "attrs.frozen",
        "attrs.mutable",
    }
)
# external bases known to define ``__init__`` or ``__new__`` (pytest then refuses the class)
_INIT_BASES = frozenset(
    {
        "dict",
        "list",
        "set",
        "frozenset",
        "tuple",
        "str",
        "bytes",
        "int",
        "float",
        "Enum",
        "IntEnum",
        "StrEnum",
        "Flag",
        "IntFlag",
        "NamedTuple",
        "TypedDict",
        "Exception",
        "BaseException",
    }
)
# ``TestCase`` too: with ``-p no:unittest`` a TestCase is a plain class with an ``__init__``
_INIT_SUFFIXES = ("Error", "Exception", "Warning", "TestCase")
_IMPORTS = (EdgeKind.IMPORT, EdgeKind.REEXPORT)
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*")
# (id below the class, definition, the class it is collected under)
_Item = tuple[str, QualName, QualName]


class Collection:
    """The node ids pytest collects, each with the definition it runs (a query object).

    Besides id → definition it knows, when the model built it, the files pytest collects, the
    class each id is collected under and that class's MRO, so a reached ``setUp`` or test class
    finds every id that runs it (``ids_under``) and a test module every id in it (``ids_in``).
    """

    def __init__(
        self,
        definition_by_id: Mapping[TestId, QualName],
        *,
        classes: Mapping[TestId, QualName] = MappingProxyType({}),
        mro: Mapping[QualName, tuple[QualName, ...]] = MappingProxyType({}),
        files: frozenset[str] | None = None,
    ) -> None:
        self._by_id: dict[TestId, QualName] = dict(definition_by_id)
        ids: dict[QualName, list[TestId]] = {}
        for test_id, qid in self._by_id.items():
            ids.setdefault(qid, []).append(test_id)
        self._ids: dict[QualName, tuple[TestId, ...]] = {
            qid: tuple(sorted(found)) for qid, found in ids.items()
        }
        self._classes = dict(classes)
        self._mro = dict(mro)
        self._files = files if files is not None else frozenset(_file_of(t) for t in self._by_id)
        self._under: dict[QualName, tuple[TestId, ...]] | None = None
        self._in_file: dict[str, tuple[TestId, ...]] | None = None

    @classmethod
    def of_graph(cls, graph: CodeGraph) -> Collection:
        """Each test node under its defining id only (what the graph alone says)."""
        return cls({n.test_id: n.id for n in graph.tests() if n.test_id is not None})

    def ids_of(self, qid: str) -> tuple[TestId, ...]:
        """Every node id pytest collects the definition ``qid`` under, sorted (may be empty)."""
        return self._ids.get(QualName(qid), ())

    def definition_of(self, test_id: str) -> QualName | None:
        """The function or method that the node id ``test_id`` runs."""
        return self._by_id.get(TestId(test_id))

    def definitions(self) -> Mapping[QualName, tuple[TestId, ...]]:
        """Every collected definition with its ids (read-only)."""
        return MappingProxyType(self._ids)

    def ids(self) -> list[TestId]:
        """Every collected node id, sorted."""
        return sorted(self._by_id)

    @property
    def files(self) -> frozenset[str]:
        """The files pytest collects as test modules (some may hold no test)."""
        return self._files

    def class_of(self, test_id: str) -> QualName | None:
        """The class ``test_id`` is collected under (the innermost), or None for a function."""
        return self._classes.get(TestId(test_id))

    def mro_of(self, klass: str) -> tuple[QualName, ...]:
        """The MRO (project classes) of a class that collects tests; ``(klass,)`` if unknown."""
        return self._mro.get(QualName(klass), (QualName(klass),))

    def ids_under(self, klass: str) -> tuple[TestId, ...]:
        """Every id collected under a class whose MRO holds ``klass`` (its setUp runs for them)."""
        if self._under is None:
            under: dict[QualName, list[TestId]] = {}
            for test_id, owner in self._classes.items():
                for base in self.mro_of(owner):
                    under.setdefault(base, []).append(test_id)
            self._under = {k: tuple(sorted(v)) for k, v in under.items()}
        return self._under.get(QualName(klass), ())

    def ids_in(self, file: str) -> tuple[TestId, ...]:
        """Every id collected from ``file``, sorted."""
        if self._in_file is None:
            in_file: dict[str, list[TestId]] = {}
            for test_id in self._by_id:
                in_file.setdefault(_file_of(test_id), []).append(test_id)
            self._in_file = {k: tuple(sorted(v)) for k, v in in_file.items()}
        return self._in_file.get(file, ())

    def ids_below(self, folder: str) -> tuple[TestId, ...]:
        """Every id collected from a file in ``folder`` or below (``""``: the whole project)."""
        prefix = f"{folder}/" if folder else ""
        return tuple(t for t in self.ids() if t.startswith(prefix))

    def __len__(self) -> int:
        return len(self._by_id)


def _file_of(test_id: str) -> str:
    return test_id.partition("::")[0]


def collected_ids(
    graph: CodeGraph,
    config: PytestConfig,
    hints: Mapping[str, FileHints] = MappingProxyType({}),
) -> Collection:
    """Model pytest's collection of the whole project (see the module docstring)."""
    model = _Model(graph, config, hints)
    found: dict[TestId, QualName] = {}
    classes: dict[TestId, QualName] = {}
    modules = model.test_modules()
    for module in modules:
        for test_id, qid, klass in model.collect_module(module):
            if test_id not in found:
                found[test_id] = qid
                if klass is not None:
                    classes[test_id] = klass
    logger.debug("collection: %d ids for %d definitions", len(found), len(set(found.values())))
    mro = {klass: model.mro(klass) for klass in set(classes.values())}
    files = frozenset(m.file for m in modules)
    return Collection(found, classes=classes, mro=mro, files=files)


def hint_files(graph: CodeGraph, config: PytestConfig) -> frozenset[str]:
    """Files whose ``FileHints`` can change ``collected_ids`` (a superset; read only these).

    The test modules, the modules they import names from, and the files of every class
    reachable from those through bases and nested classes.
    """
    model = _Model(graph, config, MappingProxyType({}))
    files: set[str] = set()
    classes: list[QualName] = []
    for module in model.test_modules():
        files.add(module.file)
        for edge in graph.dependencies_unordered(module.id):
            node = graph.node(edge.target)
            if node is None or edge.kind not in (EdgeKind.CONTAINS, *_IMPORTS):
                continue
            files.add(node.file)
            if node.kind is NodeKind.CLASS:
                classes.append(node.id)
            elif node.kind is NodeKind.MODULE:
                classes.extend(model.classes_in(node.id))
    seen: set[QualName] = set()
    while classes:
        qid = classes.pop()
        if qid in seen:
            continue
        seen.add(qid)
        node = graph.node(qid)
        if node is not None:
            files.add(node.file)
        classes.extend(model.bases(qid))
        classes.extend(model.classes_in(qid))
    return frozenset(files)


class _Model:
    """One collection run: the graph, the options, the hints and per-class memos."""

    def __init__(
        self, graph: CodeGraph, config: PytestConfig, hints: Mapping[str, FileHints]
    ) -> None:
        self.graph = graph
        self.config = config
        self.hints = hints
        self._bases: dict[QualName, tuple[QualName, ...]] = {}
        self._mro: dict[QualName, tuple[QualName, ...]] = {}
        self._own: dict[QualName, dict[str, Node]] = {}
        self._merged: dict[QualName, dict[str, Node]] = {}
        self._externals: dict[QualName, tuple[frozenset[str], str]] = {}
        self._unittest: dict[QualName, bool] = {}
        self._items: dict[QualName, tuple[_Item, ...]] = {}
        self._unittest_found: dict[QualName, tuple[_Item, ...]] = {}
        self._modules: dict[str, str] = {}
        self._candidates: dict[str, bool] = {}
        self._own_kept: dict[QualName, dict[str, Node]] = {}

    def test_modules(self) -> list[Node]:
        """The module nodes of the files pytest collects, sorted by file."""
        modules = {n.file: n for n in self.graph.nodes() if n.kind is NodeKind.MODULE}
        return [modules[f] for f in sorted(collected_files(modules, self.config))]

    # ------------------------------------------------------------------ namespaces

    def collect_module(self, module: Node) -> Iterator[tuple[TestId, QualName, QualName | None]]:
        """(id, definition, collecting class or None) of every item of one test module."""
        if self._flag(module.id, module.file) is False:
            return
        names = self._namespace(module, imported=self.config.collect_imported_tests)
        for name in sorted(names):
            node = self.graph.node(names[name])
            if node is None or name in _IGNORED_NAMES:
                continue
            prefix = f"{module.file}::{name}"
            if node.kind is NodeKind.CLASS:
                yield from self._collect_class(prefix, node, name)
            elif self._is_test_function(node, name):
                yield TestId(prefix), node.id, None

    def _namespace(
        self, module: Node, *, imported: bool, seen: frozenset[QualName] = frozenset()
    ) -> dict[str, QualName]:
        """Name → definition of a module's globals that pytest may collect (later line wins)."""
        bound: dict[str, tuple[int, QualName]] = {}
        hints = self.hints.get(module.file, EMPTY_HINTS)

        def bind(name: str, line: int, qid: QualName) -> None:
            if name not in bound or bound[name][0] <= line:
                bound[name] = (line, qid)

        for edge in self.graph.dependencies_unordered(module.id):
            node = self.graph.node(edge.target)
            if node is None:
                continue
            if edge.kind is EdgeKind.CONTAINS and node.kind in _DEFINITIONS:
                if not self._absent(node):
                    bind(node.name, node.span.line, node.id)
            elif edge.kind not in _IMPORTS or not imported:
                continue
            elif node.kind in _DEFINITIONS:
                names = (edge.member,) if edge.member else hints.bound_names(node.name)
                for name in names:
                    bind(name, edge.span.line, node.id)
            elif (
                node.kind is NodeKind.MODULE
                and edge.span.line in hints.star_lines
                and node.id not in seen
            ):
                for name, qid in self._public(node, seen | {module.id}).items():
                    bind(name, edge.span.line, qid)
        return {name: qid for name, (_, qid) in bound.items()}

    def _public(self, module: Node, seen: frozenset[QualName]) -> dict[str, QualName]:
        """What ``from module import *`` binds: ``__all__``, else the names without ``_``."""
        names = self._namespace(module, imported=True, seen=seen)
        listed = self.hints.get(module.file, EMPTY_HINTS).all_names
        if listed is not None:
            return {n: q for n, q in names.items() if n in listed}
        return {n: q for n, q in names.items() if not n.startswith("_")}

    def classes_in(self, qid: str) -> list[QualName]:
        """The classes a module or class defines directly."""
        out = []
        for edge in self.graph.dependencies_unordered(qid):
            if edge.kind is EdgeKind.CONTAINS:
                node = self.graph.node(edge.target)
                if node is not None and node.kind is NodeKind.CLASS:
                    out.append(node.id)
        return out

    # ------------------------------------------------------------------ classes

    def _collect_class(
        self, prefix: str, node: Node, name: str
    ) -> Iterator[tuple[TestId, QualName, QualName | None]]:
        if self.config.unittest and self._is_unittest(node.id):
            items = self._unittest_items(node.id)
        elif self._is_test_class(node.id, name):
            items = self._class_items(node.id)
        else:
            return
        for suffix, qid, klass in items:
            yield TestId(f"{prefix}::{suffix}"), qid, klass

    def _is_test_class(self, qid: QualName, name: str) -> bool:
        flag = self._class_flag(qid)
        if not (flag is True or _matches_name(self.config.python_classes, name)):
            return False
        return not (flag is False or self._has_init(qid) or self._is_abstract(qid))

    def _class_items(self, qid: QualName) -> tuple[_Item, ...]:
        """The ids (below the class) of a collected pytest class: methods, nested classes."""
        known = self._items.get(qid)
        if known is not None:
            return known
        self._items[qid] = ()  # a class nested in itself through a base: collect it once
        items: list[_Item] = []
        members = self._members(qid)
        for member_name in sorted(members):
            member = members[member_name]
            if member_name in _IGNORED_NAMES:
                continue
            if member.kind is NodeKind.CLASS:
                if self.config.unittest and self._is_unittest(member.id):
                    inner = self._unittest_items(member.id)
                elif self._is_test_class(member.id, member_name):
                    inner = self._class_items(member.id)
                else:
                    continue
                items.extend((f"{member_name}::{suffix}", q, k) for suffix, q, k in inner)
            elif self._is_test_function(member, member_name):
                items.append((member_name, member.id, qid))
        known = self._items[qid] = tuple(items)
        return known

    def _unittest_items(self, qid: QualName) -> tuple[_Item, ...]:
        """``unittest.TestLoader.getTestCaseNames``: callable ``test*`` attributes, sorted."""
        known = self._unittest_found.get(qid)
        if known is not None:
            return known
        items: list[_Item] = []
        if not (self._is_abstract(qid) or self._class_flag(qid) is False):
            members = self._members(qid)
            for member_name in sorted(members):
                member = members[member_name]
                if not member_name.startswith("test"):
                    continue
                if member.kind not in _CALLABLES or _not_a_function(member):
                    continue
                if self._flag(member.id, member.file) is False:
                    continue
                items.append((member_name, member.id, qid))
            run_test = members.get("runTest")
            if not items and run_test is not None:
                items.append(("runTest", run_test.id, qid))
        known = self._unittest_found[qid] = tuple(items)
        return known

    def _is_test_function(self, node: Node, name: str) -> bool:
        if node.kind not in _CALLABLES or _not_a_function(node):
            return False
        flag = self._flag(node.id, node.file)
        if flag is False:
            return False
        return flag is True or _matches_name(self.config.python_functions, name)

    def _is_unittest(self, qid: QualName) -> bool:
        """Whether a class of the MRO has an external base named like ``unittest.TestCase``."""
        known = self._unittest.get(qid)
        if known is None:
            known = any(
                b.endswith("TestCase") for klass in self.mro(qid) for b in self._external(klass)[0]
            )
            self._unittest[qid] = known
        return known

    def _class_flag(self, qid: QualName) -> bool | None:
        """``getattr(cls, "__test__")`` as far as literals say: the first class that sets it."""
        for klass in self.mro(qid):
            node = self.graph.node(klass)
            if node is not None and self._has_flag(klass, node.file):
                return self._flag(klass, node.file)
        return None

    def _has_init(self, qid: QualName) -> bool:
        members = self._members(qid)
        if "__init__" in members or "__new__" in members:
            return True
        for klass in self.mro(qid):
            node = self.graph.node(klass)
            if node is not None and _defines_init(node, self._external(klass)[0]):
                return True
        return False

    def _is_abstract(self, qid: QualName) -> bool:
        """``inspect.isabstract``: an ``abc`` class with an abstract method left unimplemented."""
        mro = self.mro(qid)
        abc_based = any(
            "ABC" in externals or metaclass == "ABCMeta"
            for externals, metaclass in map(self._external, mro)
        )
        if not abc_based:
            return False
        first: dict[str, Node] = {}
        for klass in mro:
            for name, node in self._own_members(klass).items():
                first.setdefault(name, node)
        return any(_is_abstract(node) for node in first.values())

    def _members(self, qid: QualName) -> dict[str, Node]:
        """The attributes of the class that may become items (first definition in MRO order).

        Only names that can matter are merged — ``test*`` (unittest), ``runTest``, names
        matching ``python_functions``/``python_classes``, classes, ``__init__``/``__new__`` — since
        a large project base class brings hundreds of helpers to every subclass.
        """
        known = self._merged.get(qid)
        if known is not None:
            return known
        mro = self.mro(qid)
        if len(mro) > 1 and self.mro(mro[1]) == mro[1:]:
            # single inheritance: the base's merge, shadowed by this class's own names
            known = {**self._members(mro[1]), **self._own_candidates(qid)}
        else:
            known = {}
            for klass in reversed(mro):
                known.update(self._own_candidates(klass))
        self._merged[qid] = known
        return known

    def _own_candidates(self, qid: QualName) -> dict[str, Node]:
        known = self._own_kept.get(qid)
        if known is None:
            known = self._own_kept[qid] = {
                name: node
                for name, node in self._own_members(qid).items()
                if self._candidate(name, node)
            }
        return known

    def _candidate(self, name: str, node: Node) -> bool:
        known = self._candidates.get(name)
        if known is None:
            known = self._candidates[name] = (
                name.startswith("test")
                or name in ("runTest", "__init__", "__new__")
                or _matches_name(self.config.python_functions, name)
                or _matches_name(self.config.python_classes, name)
            )
        # a nested class of any name may be a unittest case
        return known or node.kind is NodeKind.CLASS or self._flag(node.id, node.file) is True

    def _own_members(self, qid: QualName) -> dict[str, Node]:
        known = self._own.get(qid)
        if known is None:
            lines: dict[str, Node] = {}
            for edge in self.graph.dependencies_unordered(qid):
                if edge.kind is not EdgeKind.CONTAINS:
                    continue
                node = self.graph.node(edge.target)
                if node is None or self._absent(node):
                    continue
                name = node.name
                if name not in lines or lines[name].span.line <= node.span.line:
                    lines[name] = node
            known = self._own[qid] = lines
        return known

    def bases(self, qid: str) -> tuple[QualName, ...]:
        """The project classes ``qid`` derives from directly, in the order written."""
        known = self._bases.get(QualName(qid))
        if known is not None:
            return known
        edges = [
            e
            for e in self.graph.dependencies_unordered(qid)
            if e.kind is EdgeKind.INHERIT and e.target != qid and self.graph.node(e.target)
        ]
        edges.sort(key=lambda e: (e.span.line, e.span.col))
        out: list[QualName] = []
        for edge in edges:
            if edge.target not in out:
                out.append(edge.target)
        known = self._bases[QualName(qid)] = tuple(out)
        return known

    def mro(self, qid: QualName, active: frozenset[QualName] = frozenset()) -> tuple[QualName, ...]:
        """C3 linearisation over project classes (depth-first when C3 has no answer)."""
        known = self._mro.get(qid)
        if known is not None:
            return known
        if qid in active:
            return (qid,)  # an inheritance cycle: the class alone
        bases = self.bases(qid)
        if len(bases) <= 1:
            result = (qid, *(self.mro(bases[0], active | {qid}) if bases else ()))
            self._mro[qid] = result
            return result
        inner = active | {qid}
        lists = [list(self.mro(b, inner)) for b in bases] + [list(bases)]
        merged = _c3(lists)
        if merged is None:
            merged = []
            for found in lists:
                merged.extend(c for c in found if c not in merged)
        result = (qid, *[c for c in merged if c != qid])
        self._mro[qid] = result
        return result

    def _external(self, qid: QualName) -> tuple[frozenset[str], str]:
        """The last names of the bases of ``qid`` that are not project classes; its metaclass."""
        known = self._externals.get(qid)
        if known is not None:
            return known
        node = self.graph.node(qid)
        written, metaclass = _signature_bases(node.signature if node is not None else "")
        project = self.bases(qid)
        externals: frozenset[str] = frozenset()
        if len(written) > len(project):
            project_names = {b.rsplit(".", 1)[-1] for b in project}
            externals = frozenset(w for w in written if w not in project_names)
        known = self._externals[qid] = (externals, metaclass)
        return known

    # ------------------------------------------------------------------ hints

    def _module_of(self, file: str) -> str:
        known = self._modules.get(file)
        if known is None:
            known = next(
                (n.id for n in self.graph.nodes_in_file(file) if n.kind is NodeKind.MODULE), ""
            )
            self._modules[file] = known
        return known

    def _scope(self, qid: str, file: str) -> str | None:
        module = self._module_of(file)
        if qid == module:
            return ""
        if module and qid.startswith(module + "."):
            return qid[len(module) + 1 :]
        return None

    def _flag(self, qid: str, file: str) -> bool | None:
        hints = self.hints.get(file)
        if hints is None or not hints.test_flags:
            return None
        scope = self._scope(qid, file)
        return None if scope is None else hints.flag(scope)

    def _absent(self, node: Node) -> bool:
        """Whether ``node`` is defined only in a platform branch not taken here."""
        hints = self.hints.get(node.file)
        if hints is None or not hints.absent:
            return False
        scope = self._scope(node.id, node.file)
        return scope is not None and scope in hints.absent

    def _has_flag(self, qid: str, file: str) -> bool:
        hints = self.hints.get(file)
        if hints is None or not hints.test_flags:
            return False
        scope = self._scope(qid, file)
        return hints is not None and scope is not None and hints.has_flag(scope)


def _c3(lists: list[list[QualName]]) -> list[QualName] | None:
    pending = [list(x) for x in lists if x]
    out: list[QualName] = []
    while pending:
        for candidate in (x[0] for x in pending):
            if not any(candidate in x[1:] for x in pending):
                break
        else:
            return None
        out.append(candidate)
        pending = [[c for c in x if c != candidate] for x in pending]
        pending = [x for x in pending if x]
    return out


def _signature_bases(signature: str) -> tuple[tuple[str, ...], str]:
    """The last dotted names of the bases written in a ``class`` header, and the metaclass.

    A hand split on top-level commas (the header is one line already): ``class A(b.C, D[int],
    metaclass=abc.ABCMeta):`` gives ``(("C", "D"), "ABCMeta")``; a base that is not a dotted
    name (a call) is ``"?"``.
    """
    open_at = signature.find("(")
    if not signature.startswith("class ") or open_at < 0:
        return (), ""
    close_at = signature.rfind(")")
    inside = signature[open_at + 1 : close_at if close_at > open_at else len(signature)]
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in inside:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    bases: list[str] = []
    metaclass = ""
    for raw in parts:
        part = raw.strip()
        if not part or part.startswith("*"):
            continue
        key, eq, value = part.partition("=")
        if eq and key.strip().isidentifier():
            if key.strip() == "metaclass":
                metaclass = _last(value)
            continue
        head = part.split("[", 1)[0].strip()
        bases.append(_last(head) if _DOTTED.fullmatch(head) else "?")
    return tuple(bases), metaclass


def _last(dotted: str) -> str:
    return dotted.strip().rsplit(".", 1)[-1]


def _defines_init(node: Node, externals: frozenset[str]) -> bool:
    if any(d in _DATACLASS_DECORATORS for d in node.decorators):
        return True
    return any(b in _INIT_BASES or b.endswith(_INIT_SUFFIXES) for b in externals)


def _is_abstract(node: Node | None) -> bool:
    if node is None:
        return False
    return any(d.rsplit(".", 1)[-1].startswith("abstract") for d in node.decorators)


def _not_a_function(node: Node) -> bool:
    """A property (or a property's setter) is not a function object pytest can collect."""
    for deco in node.decorators:
        last = deco.rsplit(".", 1)[-1]
        if last in _NOT_FUNCTIONS or ("." in deco and last in ("setter", "getter", "deleter")):
            return True
    return False


def _matches_name(options: tuple[str, ...], name: str) -> bool:
    """pytest's ``_matches_prefix_or_glob_option``: a prefix, or a glob when it looks like one."""
    for option in options:
        if name.startswith(option):
            return True
        if ("*" in option or "?" in option or "[" in option) and fnmatch.fnmatch(name, option):
            return True
    return False
