"""Resolve one file's facts against the whole project: nodes, edges and dynamic references.

``file_nodes``/``file_dynamic`` depend on the file alone. ``resolve_file`` takes the file's
``FileInfo`` (its facts, indexed) and a ``Project`` view of every other file and returns the
edges evidenced in that file, each with its exact span (call sites carry their ``ArgShape``);
an edge's ``source`` is the innermost enclosing function, method, class or module.

Rules (DESIGN §2): module ↔ file map (flat, ``src/``, namespace packages); imports (absolute,
relative, aliases, ``__init__`` re-exports and ``__all__``, star imports) followed transitively;
calls through local scope, module globals, imports, ``self``/``cls`` along the MRO, ``super()``,
constructors (``instantiate`` plus ``call`` to ``__init__``), annotated parameters and attributes
``x = Cls(); x.m()``, ``self.repo = repo`` and agreed return values (``return Cls()``,
``return self``); pytest fixtures with conftest scoping, overriding and autouse, a requested
fixture typed by what it returns; ``tests`` edges from a test to what it and its fixtures call;
``contains``, ``inherit``, ``override``, ``class-member``, ``type-ref``, ``import``,
``reexport`` (with ``member`` = the exported name).

Where the receiver or module is known but the member is not (a deleted function), the edge still
points at the would-be qualname — a dangling target — so the deleted definition finds its users.
An attribute call on a receiver of unknown type links to every same-named function or method,
marked ``name_matched``; more than ``MAX_NAME_CANDIDATES`` candidates link to none.

Every read of another file goes through ``Project``, which records it: the builder re-resolves a
file exactly when something it read changed.
"""

from __future__ import annotations

import builtins
import logging
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from impact_ls.graph.facts import (
    CALL,
    SUPER,
    UNKNOWN,
    AssignFact,
    CallFact,
    Chain,
    DefFact,
    FileFacts,
    ImportFact,
    Request,
)
from impact_ls.graph.fastinit import fast_init
from impact_ls.model import (
    ArgShape,
    DynamicRef,
    Edge,
    EdgeKind,
    Node,
    NodeKind,
    QualName,
    Span,
    TestId,
)

logger = logging.getLogger(__name__)

MAX_NAME_CANDIDATES = 16
_BUILTINS = frozenset(dir(builtins))
_PROPERTY_DECORATORS = frozenset({"property", "cached_property"})
_MAX_DEPTH = 24
_CALLABLE_KINDS = frozenset({NodeKind.FUNCTION, NodeKind.METHOD, NodeKind.FIXTURE})
# hundreds of thousands of edges per project: skip the frozen dataclasses' slow __init__
_new_edge = fast_init(Edge)
_new_node = fast_init(Node)
_new_dynamic_ref = fast_init(DynamicRef)


# --------------------------------------------------------------------------- per-file index


@dataclass(slots=True)
class FileInfo:
    """One file's facts indexed for lookups; a pure function of the facts."""

    facts: FileFacts
    defs: dict[str, DefFact] = field(default_factory=dict)
    top: dict[str, DefFact] = field(default_factory=dict)
    members: dict[str, dict[str, DefFact]] = field(default_factory=dict)
    attributes: dict[str, frozenset[str]] = field(default_factory=dict)
    top_imports: dict[str, ImportFact] = field(default_factory=dict)
    scope_imports: dict[str, dict[str, ImportFact]] = field(default_factory=dict)
    stars: list[ImportFact] = field(default_factory=list)
    constants: frozenset[str] = frozenset()
    assigns: dict[tuple[str, Chain], list[AssignFact]] = field(default_factory=dict)
    fixtures: dict[tuple[str, str], list[DefFact]] = field(default_factory=dict)
    autouse: dict[str, list[DefFact]] = field(default_factory=dict)
    quals: dict[str, QualName] = field(default_factory=dict)

    @property
    def module(self) -> str:
        """The dotted module name of the file."""
        return self.facts.module

    def qual(self, local: str) -> QualName:
        """The full qualname of a module-relative one (``""`` is the module), shared per file."""
        found = self.quals.get(local)
        if found is None:
            module = self.facts.module
            found = self.quals[local] = QualName(
                sys.intern(f"{module}.{local}") if local else module
            )
        return found


def index_file(facts: FileFacts) -> FileInfo:
    """Index one file's facts for resolution."""
    info = FileInfo(facts=facts)
    for d in facts.definitions:
        if d.qualname in info.defs:
            continue  # a redefinition (property setter, conditional def): the first one names it
        info.defs[d.qualname] = d
        parent = d.parent
        if not parent:
            info.top[d.name] = d
        info.members.setdefault(parent, {})[d.name] = d
        if d.kind is NodeKind.CLASS:
            info.attributes[d.qualname] = frozenset(d.attributes)
        if d.fixture is not None:
            info.fixtures.setdefault((parent, d.fixture.name), []).append(d)
            if d.fixture.autouse:
                info.autouse.setdefault(parent, []).append(d)
    for imp in facts.imports:
        if imp.name == "*":
            if not imp.scope:
                info.stars.append(imp)
            continue
        if not imp.scope:
            current = info.top_imports.get(imp.bound)
            # a runtime import beats a TYPE_CHECKING one for the same name
            if current is None or (current.type_checking and not imp.type_checking):
                info.top_imports[imp.bound] = imp
        else:
            info.scope_imports.setdefault(imp.scope, {}).setdefault(imp.bound, imp)
    info.constants = frozenset(facts.constants)
    for a in facts.assigns:
        info.assigns.setdefault((a.scope, a.target), []).append(a)
    return info


def interface_of(info: FileInfo) -> tuple[object, ...]:
    """Everything another file's resolution can read from this one, spans left out.

    Two versions of a file with equal interfaces resolve every other file identically, so an
    edit inside a function body (the common keystroke) re-resolves only the edited file.
    Fixture bodies are part of the interface: tests elsewhere get ``tests`` edges through them.
    """
    facts = info.facts
    fixture_scopes = {d.qualname for d in facts.definitions if d.fixture is not None}
    defs = tuple(
        (
            d.qualname,
            d.kind.value,
            d.in_class,
            d.bases,
            d.returns,
            d.returns_value,
            d.decorators,
            d.attributes,
            d.param_types,
            d.fixture,
            tuple(r.name for r in d.requests),
        )
        for d in facts.definitions
    )
    imports = tuple(
        (i.scope, i.module, i.level, i.name, i.asname, i.type_checking)
        for i in facts.imports
        if not i.scope or i.scope in fixture_scopes
    )
    class_scopes = {d.qualname for d in facts.definitions if d.kind is NodeKind.CLASS}
    assigns = tuple(
        (
            a.scope,
            a.target,
            a.value,
            a.annotated,
            a.alias,
            a.span.line if a.scope in fixture_scopes else 0,
        )
        for a in facts.assigns
        if not a.scope
        or a.scope in class_scopes
        or a.target[0] == "self"
        or a.scope in fixture_scopes
    )
    fixture_calls = tuple(
        (c.scope, c.callee, c.head_local, c.span.line)
        for c in facts.calls
        if c.scope in fixture_scopes
    )
    return (
        facts.module,
        facts.is_package,
        facts.all_names,
        facts.constants,
        defs,
        imports,
        assigns,
        fixture_calls,
    )


# --------------------------------------------------------------------------- project view


class Project(Protocol):
    """What resolution may read about other files; implementations record every read."""

    def info_of_module(self, module: str) -> FileInfo | None:
        """The file defining ``module``, if the project has it."""

    def is_namespace(self, module: str) -> bool:
        """Whether some project module lies below ``module`` (a namespace or regular package)."""

    def conftest(self, folder: str) -> FileInfo | None:
        """The ``conftest.py`` directly in ``folder`` (``""`` = the root), if any."""

    def callables_named(self, name: str) -> list[QualName]:
        """Every function or method named ``name``, sorted."""


# --------------------------------------------------------------------------- values


class _K:
    MODULE = "module"
    CLASS = "class"
    INSTANCE = "instance"
    FUNCTION = "function"
    FIELD = "field"
    SUPER = "super"
    DANGLING = "dangling"
    UNKNOWN = "unknown"
    EXTERNAL = "external"


@dataclass(frozen=True, slots=True)
class _Val:
    """What an expression evaluates to, as far as static resolution can tell."""

    kind: str
    module: str = ""
    local: str = ""
    of: _Val | None = None  # the instance type of a field/constant, the class of an instance

    @property
    def qual(self) -> QualName:
        # interned: the same target appears in many edges (370k edges on django)
        return QualName(sys.intern(f"{self.module}.{self.local}") if self.local else self.module)


_OWNERS = frozenset({_K.CLASS, _K.INSTANCE, _K.SUPER, _K.MODULE, _K.FIELD})
_USABLE = frozenset({_K.FIELD, _K.FUNCTION, _K.CLASS, _K.DANGLING})
_UNTYPED = frozenset({_K.UNKNOWN, _K.DANGLING})
_UNKNOWN_V = _Val(_K.UNKNOWN)
_EXTERNAL_V = _Val(_K.EXTERNAL)


# --------------------------------------------------------------------------- nodes


def file_nodes(info: FileInfo) -> list[Node]:
    """The module node and one node per definition; depends on this file alone."""
    facts = info.facts
    nodes = [
        _new_node(
            id=QualName(facts.module),
            kind=NodeKind.MODULE,
            file=facts.file,
            span=Span(line=1, col=0, end_line=max(facts.line_count, 1), end_col=0),
            signature=f"module {facts.module}",
            doc=facts.doc,
            strings=facts.strings,
        )
    ]
    for local, d in info.defs.items():
        nodes.append(
            _new_node(
                id=info.qual(local),
                kind=d.kind,
                file=facts.file,
                span=d.span,
                signature=d.signature,
                doc=d.doc,
                params=d.params,
                decorators=d.decorators,
                test_id=TestId(d.test_id) if d.test_id else None,
                strings=d.strings,
            )
        )
    return nodes


def file_dynamic(info: FileInfo) -> list[DynamicRef]:
    """The file's dynamic references; depends on this file alone."""
    return [
        _new_dynamic_ref(
            source=info.qual(d.scope), name=d.name, kind=d.kind, file=info.facts.file, span=d.span
        )
        for d in info.facts.dynamic
    ]


# --------------------------------------------------------------------------- resolution


def resolve_file(info: FileInfo, project: Project) -> list[Edge]:
    """Every edge evidenced in ``info``'s file, sorted by position."""
    return _Resolver(info, project).run()


class _Resolver:
    """Resolution of one file; memoizes within the file only (reads are recorded per file)."""

    def __init__(self, info: FileInfo, project: Project) -> None:
        self.info = info
        self.project = project
        self.file = info.facts.file
        self.edges: list[Edge] = []
        self._mro: dict[QualName, list[_Val]] = {}
        self._symbols: dict[tuple[str, str], _Val] = {}
        self._fixture_calls: dict[tuple[str, str], list[Edge]] = {}
        self._evaluating: set[tuple[str, str, Chain, int]] = set()
        self._members: dict[tuple[QualName, str, bool], _Val] = {}
        self._module_infos: dict[str, FileInfo | None] = {}
        self._call_memo: dict[
            tuple[str, str, Chain],
            tuple[
                list[tuple[EdgeKind, QualName, QualName]],
                list[tuple[EdgeKind, QualName, QualName, bool, bool]],
            ],
        ] = {}

    # ------------------------------------------------------------------ driver

    def run(self) -> list[Edge]:
        info = self.info
        self._structure()
        self._imports()
        calls_by_scope: dict[str, list[Edge]] = {}
        for call in info.facts.calls:
            for edge in self._call_edges(info, call):
                self.edges.append(edge)
                if edge.kind in (EdgeKind.CALL, EdgeKind.INSTANTIATE):
                    calls_by_scope.setdefault(call.scope, []).append(edge)
        for access in info.facts.accesses:
            self._access(info, access.scope, access.chain, access.span, access.head_local)
        for ref in info.facts.type_refs:
            val = self._global_chain(info, ref.chain, ref.scope)
            if val.kind in (_K.CLASS, _K.FUNCTION, _K.FIELD, _K.DANGLING):
                self._add(EdgeKind.TYPE_REF, info.qual(ref.scope), val.qual, ref.span)
        self._pytest(calls_by_scope)
        # resolution is deterministic, so the order needs no sort; CodeGraph queries sort anyway
        return self.edges

    def _add(
        self,
        kind: EdgeKind,
        source: QualName,
        target: QualName,
        span: Span,
        *,
        args: ArgShape | None = None,
        name_matched: bool = False,
        member: str | None = None,
    ) -> Edge:
        edge = self._edge(
            kind, source, target, span, args, name_matched=name_matched, member=member
        )
        self.edges.append(edge)
        return edge

    # ------------------------------------------------------------------ structure

    def _structure(self) -> None:
        info = self.info
        for local, d in info.defs.items():
            self._add(EdgeKind.CONTAINS, info.qual(d.parent), info.qual(local), d.name_span)
            if d.kind is NodeKind.CLASS:
                for chain, span in zip(d.bases, d.base_spans, strict=False):
                    base = self._global_chain(info, chain, d.parent)
                    if base.kind in (_K.CLASS, _K.DANGLING):
                        self._add(EdgeKind.INHERIT, info.qual(local), base.qual, span)
            elif d.in_class and d.kind in _CALLABLE_KINDS:
                owner = _Val(_K.CLASS, info.module, d.parent)
                for klass in self._mro_of(owner)[1:]:
                    found = self._own_member(klass, d.name)
                    if found is not None and found.kind == _K.FUNCTION:
                        self._add(EdgeKind.OVERRIDE, info.qual(local), found.qual, d.name_span)
                        break

    # ------------------------------------------------------------------ imports

    def _imports(self) -> None:
        info = self.info
        facts = info.facts
        for imp in facts.imports:
            source = info.qual(imp.scope)
            if imp.name == "*":
                self._star_import(info, imp, source)
                continue
            target = self._import_value(info, imp)
            if target.kind in (_K.EXTERNAL, _K.UNKNOWN):
                continue
            if imp.name is None and not imp.asname:
                # ``import a.b.c`` binds ``a`` but depends on ``a.b.c``
                full = self._module_value(self._absolute(info, imp))
                if full.kind != _K.EXTERNAL:
                    target = full
            if imp.type_checking:
                kind = EdgeKind.TYPE_REF
            elif self._reexports(facts, imp):
                self._add(EdgeKind.REEXPORT, source, target.qual, imp.span, member=imp.bound)
                continue
            else:
                kind = EdgeKind.IMPORT
            self._add(kind, source, target.qual, imp.span)

    def _reexports(self, facts: FileFacts, imp: ImportFact) -> bool:
        if imp.scope or imp.name is None:
            return False
        if facts.all_names is not None and imp.bound in facts.all_names:
            return True
        return facts.is_package and not imp.bound.startswith("_")

    def _star_import(self, info: FileInfo, imp: ImportFact, source: QualName) -> None:
        module = self._absolute(info, imp)
        if not module:
            return
        target_info = self._info_of(module)
        if target_info is None:
            if self._module_exists(module):
                self._add(EdgeKind.IMPORT, source, QualName(module), imp.span)
            return
        public = self._public_names(target_info)
        reexport = not imp.scope and not imp.type_checking and info.facts.is_package
        if not reexport:
            self._add(EdgeKind.IMPORT, source, QualName(module), imp.span)
            return
        for name in public:
            val = self._symbol(module, name, 0)
            if val.kind in (_K.EXTERNAL, _K.UNKNOWN):
                continue
            self._add(EdgeKind.REEXPORT, source, val.qual, imp.span, member=name)

    @staticmethod
    def _public_names(info: FileInfo) -> list[str]:
        if info.facts.all_names is not None:
            return list(dict.fromkeys(info.facts.all_names))
        names = [*info.top, *info.constants, *info.top_imports]
        return sorted({n for n in names if not n.startswith("_")})

    def _absolute(self, info: FileInfo, imp: ImportFact) -> str:
        """The absolute module an import names ('' when a relative import climbs out)."""
        if imp.level == 0:
            return imp.module
        parts = info.module.split(".") if info.module else []
        if not info.facts.is_package:
            parts = parts[:-1]
        climb = imp.level - 1
        if climb > len(parts):
            return ""
        base = parts[: len(parts) - climb] if climb else parts
        if imp.module:
            base = [*base, *imp.module.split(".")]
        return ".".join(base)

    def _import_value(self, info: FileInfo, imp: ImportFact) -> _Val:
        return self._import_symbol(info, imp, 0)

    def _module_exists(self, module: str) -> bool:
        return self._info_of(module) is not None or self.project.is_namespace(module)

    def _module_value(self, module: str) -> _Val:
        """A module by name: ours, a missing one of our packages (dangling), or a library's."""
        if self._module_exists(module):
            return _Val(_K.MODULE, module)
        if "." in module and self._module_exists(module.split(".", 1)[0]):
            parent, _, last = module.rpartition(".")
            return _Val(_K.DANGLING, parent, last)
        return _EXTERNAL_V

    # ------------------------------------------------------------------ symbols

    def _symbol(self, module: str, name: str, depth: int) -> _Val:
        """What ``module.name`` is, following imports and re-exports to the definition."""
        key = (module, name)
        cached = self._symbols.get(key)
        if cached is not None:
            return cached
        if depth > _MAX_DEPTH:
            return _UNKNOWN_V
        self._symbols[key] = _UNKNOWN_V  # cycle guard
        val = self._symbol_uncached(module, name, depth)
        self._symbols[key] = val
        return val

    def _symbol_uncached(self, module: str, name: str, depth: int) -> _Val:
        target = self._info_of(module)
        sub = f"{module}.{name}"
        if target is None:
            if self.project.is_namespace(module):
                if self._module_exists(sub):
                    return _Val(_K.MODULE, sub)
                return _Val(_K.DANGLING, module, name)
            if "." in module and self._module_exists(module.split(".", 1)[0]):
                return _Val(_K.DANGLING, module, name)  # a module of ours that is gone
            return _EXTERNAL_V
        d = target.top.get(name)
        if d is not None:
            kind = _K.CLASS if d.kind is NodeKind.CLASS else _K.FUNCTION
            return _Val(kind, module, name)
        imp = target.top_imports.get(name)
        if imp is not None:
            val = self._import_symbol(target, imp, depth)
            if val.kind != _K.UNKNOWN:
                return val
        if name in target.constants:
            return _Val(_K.FIELD, module, name, self._assigned_type(target, "", (name,), None))
        for star in target.stars:
            star_module = self._absolute(target, star)
            if not star_module:
                continue
            val = self._symbol(star_module, name, depth + 1)
            if val.kind not in (_K.DANGLING, _K.EXTERNAL, _K.UNKNOWN):
                return val
        if self._module_exists(sub):
            return _Val(_K.MODULE, sub)
        return _Val(_K.DANGLING, module, name)

    def _import_symbol(self, info: FileInfo, imp: ImportFact, depth: int) -> _Val:
        module = self._absolute(info, imp)
        if not module:
            return _EXTERNAL_V
        if imp.name is None:
            return self._module_value(module if imp.asname else module.split(".", 1)[0])
        return self._symbol(module, imp.name, depth + 1)

    def _info_of(self, module: str) -> FileInfo | None:
        if module in self._module_infos:
            return self._module_infos[module]
        info = self._module_infos[module] = self.project.info_of_module(module)
        return info

    # ------------------------------------------------------------------ classes

    def _class_def(self, klass: _Val) -> tuple[FileInfo, DefFact] | None:
        info = self._info_of(klass.module)
        if info is None:
            return None
        d = info.defs.get(klass.local)
        if d is None or d.kind is not NodeKind.CLASS:
            return None
        return info, d

    def _mro_of(self, klass: _Val) -> list[_Val]:
        """C3 linearization over project classes; unknown bases end their branch."""
        qual = klass.qual
        cached = self._mro.get(qual)
        if cached is not None:
            return cached
        self._mro[qual] = [klass]  # cycle guard
        found = self._class_def(klass)
        if found is None:
            return self._mro[qual]
        info, d = found
        bases: list[_Val] = []
        for chain in d.bases:
            base = self._global_chain(info, chain, d.parent)
            if base.kind == _K.CLASS and base.qual != qual:
                bases.append(base)
        seqs = [list(self._mro_of(b)) for b in bases] + [list(bases)]
        result = [klass]
        while True:
            seqs = [s for s in seqs if s]
            if not seqs:
                break
            for seq in seqs:
                head = seq[0]
                if not any(head in s[1:] for s in seqs):
                    break
            else:  # inconsistent hierarchy: fall back to depth-first order
                for seq in seqs:
                    result.extend(v for v in seq if v not in result)
                break
            result.append(head)
            for s in seqs:
                if s and s[0] == head:
                    del s[0]
        self._mro[qual] = result
        return result

    def _own_member(self, klass: _Val, name: str) -> _Val | None:
        found = self._class_def(klass)
        if found is None:
            return None
        info, _ = found
        d = info.members.get(klass.local, {}).get(name)
        if d is not None:
            kind = _K.CLASS if d.kind is NodeKind.CLASS else _K.FUNCTION
            return _Val(kind, klass.module, d.qualname)
        if name in info.attributes.get(klass.local, ()):
            local = f"{klass.local}.{name}"
            return _Val(_K.FIELD, klass.module, local, self._field_type(info, klass.local, name))
        return None

    def _member(self, klass: _Val, name: str, *, skip_self: bool = False) -> _Val:
        """``name`` looked up along the MRO; the would-be ``Class.name`` when nothing defines it."""
        key = (klass.qual, name, skip_self)
        cached = self._members.get(key)
        if cached is None:
            cached = self._members[key] = self._member_uncached(klass, name, skip_self=skip_self)
        return cached

    def _member_uncached(self, klass: _Val, name: str, *, skip_self: bool) -> _Val:
        mro = self._mro_of(klass)
        for k in mro[1:] if skip_self else mro:
            found = self._own_member(k, name)
            if found is not None:
                return found
        if skip_self:
            return _UNKNOWN_V
        return _Val(_K.DANGLING, klass.module, f"{klass.local}.{name}")

    def _field_type(self, info: FileInfo, class_local: str, name: str) -> _Val | None:
        """The type of ``Class.name`` from a class-level or ``self.name`` typed assignment."""
        typed = self._assigned_type(info, class_local, (name,), None)
        if typed is not None:
            return typed
        for member in info.members.get(class_local, {}).values():
            if member.kind is NodeKind.CLASS:
                continue
            typed = self._assigned_type(info, member.qualname, ("self", name), None)
            if typed is not None:
                return typed
        return None

    # ------------------------------------------------------------------ expressions

    def _assigned_type(
        self, info: FileInfo, scope: str, target: Chain, line: int | None
    ) -> _Val | None:
        """The instance type given to ``target`` in ``scope`` by the latest typed assignment."""
        rows = info.assigns.get((scope, target))
        if not rows:
            return None
        chosen = rows[0]
        if line is not None:
            for row in rows:
                if row.span.line <= line:
                    chosen = row
        key = (info.facts.file, scope, target, chosen.span.line)
        if key in self._evaluating or len(self._evaluating) > _MAX_DEPTH:
            return None  # ``self.a = self.a`` and friends
        self._evaluating.add(key)
        try:
            val = self._eval(info, scope, chosen.value, chosen.span.line - 1)
        finally:
            self._evaluating.discard(key)
        if chosen.alias:
            return None if val.kind in _UNTYPED else val
        return self._instance_of(info, val, annotated=chosen.annotated)

    def _eval(self, info: FileInfo, scope: str, chain: Chain, line: int) -> _Val:
        """Evaluate a chain in ``scope`` as of ``line``: locals first, then module globals."""
        head = chain[0]
        if head in ("self", "cls", SUPER):
            val = self._head(info, scope, head, False, line)
        else:
            val = self._head(info, scope, head, True, line) if scope else _UNKNOWN_V
            if val.kind == _K.UNKNOWN:
                val = self._global_chain(info, chain[:1], _outer_scope(info, scope))
        for part in chain[1:]:
            val = self._called(val) if part == CALL else self._step(val, part)
        return val

    def _instance_of(self, info: FileInfo, val: _Val, *, annotated: bool) -> _Val | None:
        if val.kind == _K.CLASS:
            return _Val(_K.INSTANCE, val.module, val.local)
        if val.kind == _K.FUNCTION and not annotated:
            return self._returns(val)
        if val.kind == _K.EXTERNAL:
            return _EXTERNAL_V  # a library object: known not to be ours, so no name-matching
        return None

    def _returns(self, func: _Val) -> _Val | None:
        """What calling ``func`` gives: its return annotation's class, else its agreed return."""
        target = self._info_of(func.module)
        if target is None:
            return None
        d = target.defs.get(func.local)
        if d is None:
            return None
        if d.returns:
            val = self._global_chain(target, d.returns, d.parent)
            return self._instance_of(target, val, annotated=True)
        if not d.returns_value:
            return None
        key = (target.facts.file, d.qualname, ("return",), 0)
        if key in self._evaluating or len(self._evaluating) > _MAX_DEPTH:
            return None  # mutual recursion: ``a`` returns ``b()`` returns ``a()``
        self._evaluating.add(key)
        try:
            chain = d.returns_value
            if chain[0] in ("self", "cls"):
                val = self._head(target, d.qualname, chain[0], False, d.span.line)
            else:  # never a local (extraction made sure): a module-level name
                val = self._global_chain(target, chain[:1], d.parent)
            for part in chain[1:]:
                val = self._called(val) if part == CALL else self._step(val, part)
        finally:
            self._evaluating.discard(key)
        return None if val.kind in _UNTYPED else val

    def _global_chain(self, info: FileInfo, chain: Chain, scope: str) -> _Val:
        """Evaluate a chain whose head is a module-level name (bases, annotations, types)."""
        if not chain:
            return _UNKNOWN_V
        val = self._global_head(info, chain[0])
        if val.kind in (_K.UNKNOWN, _K.DANGLING) and scope:
            # a class named inside a class or function body (nested classes)
            for parent in _scope_chain(scope):
                d = info.defs.get(f"{parent}.{chain[0]}" if parent else chain[0])
                if d is not None and d.kind is NodeKind.CLASS:
                    val = _Val(_K.CLASS, info.module, d.qualname)
                    break
        for part in chain[1:]:
            val = self._step(val, part)
        return val

    def _head(self, info: FileInfo, scope: str, head: str, head_local: bool, line: int) -> _Val:
        if head == UNKNOWN:
            return _UNKNOWN_V
        if head in ("self", "cls", SUPER):
            klass = _enclosing_class(info, scope)
            if klass is None:
                return _UNKNOWN_V if head_local or head == SUPER else self._global_head(info, head)
            val = _Val(_K.CLASS, info.module, klass)
            if head == "self":
                return _Val(_K.INSTANCE, info.module, klass)
            if head == SUPER:
                return _Val(_K.SUPER, info.module, klass)
            return val
        if head_local:
            for s in _function_scopes(info, scope):
                typed = self._assigned_type(info, s, (head,), line)
                if typed is not None:
                    return typed
                d = info.defs.get(s)
                if d is not None:
                    for hint in d.param_types:
                        if hint.name == head:
                            val = self._global_chain(info, hint.chain, d.parent)
                            return self._instance_of(info, val, annotated=True) or _UNKNOWN_V
                    if d.requests and any(r.name == head for r in d.requests):
                        return self._fixture_value(info, d, head)
                imp = info.scope_imports.get(s, {}).get(head)
                if imp is not None:
                    return self._import_symbol(info, imp, 0)
            return _UNKNOWN_V
        return self._global_head(info, head)

    def _fixture_value(self, info: FileInfo, requester: DefFact, name: str) -> _Val:
        """A requested fixture's value: what the fixture function returns."""
        found = self._find_fixture(
            (info, requester.parent if requester.in_class else ""), requester, name
        )
        if found is None:
            return _UNKNOWN_V
        fx_info, fx = found
        kind = _K.FUNCTION
        return self._returns(_Val(kind, fx_info.module, fx.qualname)) or _UNKNOWN_V

    def _global_head(self, info: FileInfo, head: str) -> _Val:
        val = self._symbol(info.module, head, 0)
        if val.kind == _K.DANGLING and val.module == info.module and head in _BUILTINS:
            return _EXTERNAL_V
        return val

    def _step(self, val: _Val, attr: str) -> _Val:
        """Evaluate ``val.attr``."""
        kind = val.kind
        if kind == _K.MODULE:
            return self._symbol(val.module, attr, 0)
        if kind == _K.CLASS:
            return self._member(_Val(_K.CLASS, val.module, val.local), attr)
        if kind in (_K.INSTANCE, _K.SUPER):
            member = self._member(
                _Val(_K.CLASS, val.module, val.local), attr, skip_self=kind == _K.SUPER
            )
            return self._property_value(member) if member.kind == _K.FUNCTION else member
        if kind == _K.FIELD and val.of is not None:
            return self._step(val.of, attr)
        if kind == _K.FIELD and val.of is None:
            return _UNKNOWN_V
        if kind == _K.DANGLING and "." not in val.local:
            # below a missing module-level name (a deleted module or class) all is missing too
            return _Val(_K.DANGLING, val.module, f"{val.local}.{attr}")
        if kind == _K.EXTERNAL:
            return _EXTERNAL_V
        return _UNKNOWN_V

    def _property_value(self, member: _Val) -> _Val:
        """A ``@property`` read through an instance is a field holding what the getter returns."""
        info = self._info_of(member.module)
        d = info.defs.get(member.local) if info is not None else None
        if d is None or not any(
            deco.rsplit(".", 1)[-1] in _PROPERTY_DECORATORS for deco in d.decorators
        ):
            return member
        return _Val(_K.FIELD, member.module, member.local, self._returns(member))

    def _called(self, val: _Val) -> _Val:
        """The value of calling ``val``."""
        if val.kind == _K.CLASS:
            return _Val(_K.INSTANCE, val.module, val.local)
        if val.kind == _K.FUNCTION:
            return self._returns(val) or _UNKNOWN_V
        if val.kind == _K.EXTERNAL:
            return _EXTERNAL_V
        return _UNKNOWN_V

    def _walk(
        self,
        info: FileInfo,
        scope: str,
        chain: Chain,
        head_local: bool,
        span: Span,
        *,
        members: bool,
    ) -> _Val:
        """Evaluate ``chain``; with ``members``, emit class-member edges for the members passed."""
        val = self._head(info, scope, chain[0], head_local, span.line)
        source = info.qual(scope)
        for part in chain[1:]:
            if part == CALL:
                val = self._called(val)
                continue
            owner = val
            val = self._step(owner, part)
            if members and owner.kind in _OWNERS and val.kind in _USABLE:
                self._add(EdgeKind.CLASS_MEMBER, source, val.qual, span)
        return val

    # ------------------------------------------------------------------ calls

    def _call_edges(self, info: FileInfo, call: CallFact) -> list[Edge]:
        """The edges of one call site, replayed from an equal earlier site when there is one.

        A site whose head is not a local resolves the same way wherever it sits in its scope
        (only a local's type depends on the line), so ``(file, scope, callee)`` keys the result:
        the member edges its receiver walk added and the edges it returns, both re-made with
        this site's span and arguments (a quarter of django's call sites repeat one).
        """
        if call.head_local:
            return self._call_edges_uncached(info, call)
        key = (info.facts.file, call.scope, call.callee)
        memo = self._call_memo.get(key)
        span = call.span
        if memo is not None:
            members, returned = memo
            for kind, source, target in members:
                self._add(kind, source, target, span)
            return [
                self._edge(
                    kind,
                    source,
                    target,
                    span,
                    call.args if with_args else None,
                    name_matched=matched,
                )
                for kind, source, target, with_args, matched in returned
            ]
        before = len(self.edges)
        out = self._call_edges_uncached(info, call)
        self._call_memo[key] = (
            [(e.kind, e.source, e.target) for e in self.edges[before:]],
            [(e.kind, e.source, e.target, e.args is not None, e.name_matched) for e in out],
        )
        return out

    def _call_edges_uncached(self, info: FileInfo, call: CallFact) -> list[Edge]:
        chain = call.callee
        source = info.qual(call.scope)
        out: list[Edge] = []
        if len(chain) == 1:
            if chain[0] in (UNKNOWN, SUPER):
                return out
            target = self._head(info, call.scope, chain[0], call.head_local, call.span.line)
        else:
            receiver = self._walk(
                info, call.scope, chain[:-1], call.head_local, call.span, members=True
            )
            name = chain[-1]
            if name == CALL:
                return out
            if receiver.kind == _K.DANGLING and "." in receiver.local:
                # ``Model.objects.create()``: no class in the MRO assigns ``objects`` — it comes
                # from a metaclass, a descriptor or a library base; guessing by name here would
                # link every such call to every ``create`` (measured: a third of all edges)
                return out
            if receiver.kind == _K.UNKNOWN or (receiver.kind == _K.FIELD and receiver.of is None):
                candidates = self.project.callables_named(name)
                if len(candidates) <= MAX_NAME_CANDIDATES:
                    for qual in candidates:
                        out.append(
                            self._edge(
                                EdgeKind.CALL, source, qual, call.span, call.args, name_matched=True
                            )
                        )
                return out
            target = self._step(receiver, name)
            if target.kind == _K.FIELD:
                # calling a field (a stored callable): the read is what we can vouch for
                out.append(self._edge(EdgeKind.CLASS_MEMBER, source, target.qual, call.span))
                return out
        if target.kind == _K.CLASS:
            out.append(self._edge(EdgeKind.INSTANTIATE, source, target.qual, call.span, call.args))
            init = self._member(target, "__init__")
            if init.kind == _K.FUNCTION:
                out.append(self._edge(EdgeKind.CALL, source, init.qual, call.span, call.args))
        elif target.kind in (_K.FUNCTION, _K.DANGLING):
            out.append(self._edge(EdgeKind.CALL, source, target.qual, call.span, call.args))
        elif target.kind == _K.FIELD:
            out.append(self._edge(EdgeKind.CLASS_MEMBER, source, target.qual, call.span))
        return out

    def _edge(
        self,
        kind: EdgeKind,
        source: QualName,
        target: QualName,
        span: Span,
        args: ArgShape | None = None,
        *,
        name_matched: bool = False,
        member: str | None = None,
    ) -> Edge:
        """An edge evidenced in this file; ``_add`` also records it."""
        return _new_edge(
            source=source,
            target=target,
            kind=kind,
            file=self.file,
            span=span,
            args=args,
            name_matched=name_matched,
            member=member,
        )

    # ------------------------------------------------------------------ accesses

    def _access(
        self, info: FileInfo, scope: str, chain: Chain, span: Span, head_local: bool
    ) -> None:
        if len(chain) == 1:
            val = self._global_head(info, chain[0])
            if val.kind in _USABLE:
                self._add(EdgeKind.CLASS_MEMBER, info.qual(scope), val.qual, span)
            return
        owner = self._walk(info, scope, chain[:-1], head_local, span, members=True)
        if owner.kind not in _OWNERS:
            return
        target = self._step(owner, chain[-1])
        if target.kind in _USABLE:
            self._add(EdgeKind.CLASS_MEMBER, info.qual(scope), target.qual, span)

    # ------------------------------------------------------------------ pytest

    def _pytest(self, calls_by_scope: dict[str, list[Edge]]) -> None:
        info = self.info
        for local, d in info.defs.items():
            if d.kind is not NodeKind.TEST and d.kind is not NodeKind.FIXTURE:
                continue
            source = info.qual(local)
            own_calls = calls_by_scope.get(local, [])
            if d.kind is NodeKind.TEST:
                seen: set[QualName] = set()
                for edge in own_calls:
                    if edge.target not in seen:
                        seen.add(edge.target)
                        self._add(
                            EdgeKind.TESTS,
                            source,
                            edge.target,
                            edge.span,
                            name_matched=edge.name_matched,
                        )
            where = (info, d.parent if d.in_class else "")
            requested: set[str] = set()
            for request in d.requests:
                requested.add(request.name)
                found = self._find_fixture(where, d, request.name)
                if found is None:
                    continue
                fx_info, fx = found
                fx_qual = fx_info.qual(fx.qualname)
                self._add(EdgeKind.FIXTURE, source, fx_qual, request.span)
                if d.kind is NodeKind.TEST:
                    self._tests_through(
                        source, where=where, fixture=(fx_info, fx), request=request, seen=seen
                    )
            if d.kind is NodeKind.TEST:
                # autouse fixtures run for the test without being asked: evidence is its name
                for fx_info, fx in self._autouse(where):
                    assert fx.fixture is not None
                    if fx.fixture.name in requested:
                        continue
                    self._add(EdgeKind.FIXTURE, source, fx_info.qual(fx.qualname), d.name_span)
                    implicit = Request(name=fx.fixture.name, span=d.name_span)
                    self._tests_through(
                        source, where=where, fixture=(fx_info, fx), request=implicit, seen=seen
                    )

    def _tests_through(
        self,
        test: QualName,
        *,
        where: tuple[FileInfo, str],
        fixture: tuple[FileInfo, DefFact],
        request: Request,
        seen: set[QualName],
    ) -> None:
        """``tests`` edges from a test to what a requested fixture (and its fixtures) call.

        Fixtures requested by fixtures are looked up from the test's location, as pytest does,
        so a ``conftest.py`` nearer the test overrides the one beside the fixture.
        """
        stack = [fixture]
        visited: set[QualName] = set()
        while stack:
            cur_info, cur = stack.pop()
            qual = cur_info.qual(cur.qualname)
            if qual in visited or len(visited) > 64:
                continue
            visited.add(qual)
            for edge in self._calls_of(cur_info, cur.qualname):
                if edge.target not in seen:
                    seen.add(edge.target)
                    self._add(
                        EdgeKind.TESTS,
                        test,
                        edge.target,
                        request.span,
                        name_matched=edge.name_matched,
                    )
            for sub in cur.requests:
                found = self._find_fixture(where, cur, sub.name)
                if found is not None:
                    stack.append(found)

    def _calls_of(self, info: FileInfo, scope: str) -> list[Edge]:
        key = (info.facts.file, scope)
        cached = self._fixture_calls.get(key)
        if cached is not None:
            return cached
        out: list[Edge] = []
        for call in info.facts.calls:
            if call.scope == scope:
                out.extend(
                    e
                    for e in self._call_edges(info, call)
                    if e.kind in (EdgeKind.CALL, EdgeKind.INSTANTIATE)
                )
        self._fixture_calls[key] = out
        return out

    def _fixture_levels(self, where: tuple[FileInfo, str]) -> list[tuple[FileInfo, str]]:
        """Where pytest looks for fixtures from ``where``, innermost first."""
        info, klass = where
        levels: list[tuple[FileInfo, str]] = []
        if klass:
            levels.append((info, klass))
        levels.append((info, ""))
        for folder in _ancestors(info.facts.file.rpartition("/")[0]):
            conftest = self.project.conftest(folder)
            if conftest is not None and conftest is not info:
                levels.append((conftest, ""))
        return levels

    def _autouse(self, where: tuple[FileInfo, str]) -> list[tuple[FileInfo, DefFact]]:
        """The autouse fixtures in force at ``where``; an inner one hides an outer namesake."""
        found: dict[str, tuple[FileInfo, DefFact]] = {}
        for level_info, parent in self._fixture_levels(where):
            for d in level_info.autouse.get(parent, ()):
                assert d.fixture is not None
                found.setdefault(d.fixture.name, (level_info, d))
        return [found[name] for name in sorted(found)]

    def _find_fixture(
        self,
        where: tuple[FileInfo, str],
        requester: DefFact,
        name: str,
    ) -> tuple[FileInfo, DefFact] | None:
        """pytest's lookup of ``name`` as seen from ``where`` (a file and a class, or ``""``).

        Innermost first: the class, the module (incl. imported fixtures), then ``conftest.py``
        up the folders. A fixture requesting its own name gets the next one outward.
        """
        candidates: list[tuple[FileInfo, DefFact]] = []
        for level_info, parent in self._fixture_levels(where):
            found = level_info.fixtures.get((parent, name))
            if found:
                candidates.append((level_info, found[0]))
            elif not parent:
                imported = self._imported_fixture(level_info, name)
                if imported is not None:
                    candidates.append(imported)
        if requester.fixture is not None and requester.fixture.name == name:
            for i, (_, d) in enumerate(candidates):
                if d is requester:
                    return candidates[i + 1] if i + 1 < len(candidates) else None
        for candidate in candidates:
            if candidate[1] is not requester:
                return candidate
        return None

    def _imported_fixture(self, info: FileInfo, name: str) -> tuple[FileInfo, DefFact] | None:
        imp = info.top_imports.get(name)
        if imp is None:
            return None
        val = self._import_symbol(info, imp, 0)
        if val.kind != _K.FUNCTION:
            return None
        target = self._info_of(val.module)
        if target is None:
            return None
        d = target.defs.get(val.local)
        if d is None or d.fixture is None:
            return None
        return target, d


# --------------------------------------------------------------------------- scope helpers


def _scope_chain(scope: str) -> Iterable[str]:
    """``a.b.c`` → ``a.b.c``, ``a.b``, ``a``, ``""``."""
    while scope:
        yield scope
        scope = scope.rpartition(".")[0]
    yield ""


def _outer_scope(info: FileInfo, scope: str) -> str:
    d = info.defs.get(scope)
    return d.parent if d is not None else scope


def _function_scopes(info: FileInfo, scope: str) -> Iterable[str]:
    """The scope and its enclosing function scopes (class bodies do not enclose methods)."""
    first = True
    for s in _scope_chain(scope):
        if not s:
            return
        d = info.defs.get(s)
        if d is None:
            return
        if d.kind is NodeKind.CLASS:
            if first:
                yield s
            return
        first = False
        yield s


def _enclosing_class(info: FileInfo, scope: str) -> str | None:
    """The class whose method (possibly through nested functions) contains ``scope``."""
    for s in _scope_chain(scope):
        if not s:
            return None
        d = info.defs.get(s)
        if d is None:
            return None
        if d.kind is NodeKind.CLASS:
            return None
        if d.in_class:
            return d.parent
    return None


def _ancestors(folder: str) -> list[str]:
    """``a/b`` → ``["a/b", "a", ""]``."""
    out = []
    while folder:
        out.append(folder)
        folder = folder.rpartition("/")[0]
    out.append("")
    return out
