"""The edges evidenced in one file: structure, imports, calls, accesses, type refs, pytest.

``FileResolver.run`` makes them in a fixed order (so equal inputs give equal edge lists): the
file's structure (``contains``, ``inherit``, ``override``), its imports (``import_edges.py``),
every call site, every access, every annotation, then pytest's ``tests`` and ``fixture`` edges
(``pytest_edges.py``). What a name or chain *is* comes from its ``Evaluator``.
"""

from __future__ import annotations

from collections.abc import Iterable

from impact_ls.graph.facts import (
    CALL,
    DECORATED,
    ITEM,
    SUPER,
    UNKNOWN,
    AccessFact,
    AccessKind,
    CallFact,
    Chain,
    DefFact,
    is_dunder,
)
from impact_ls.graph.fastinit import fast_init
from impact_ls.graph.kinds import (
    ACCESS_READ,
    EDGE_CALL,
    EDGE_CLASS_MEMBER,
    EDGE_CONTAINS,
    EDGE_INHERIT,
    EDGE_INSTANTIATE,
    EDGE_OVERRIDE,
    EDGE_TYPE_REF,
    NODE_CLASS,
)
from impact_ls.graph.resolve import import_edges, pytest_edges
from impact_ls.graph.resolve.evaluate import BUILTINS, Evaluator
from impact_ls.graph.resolve.fileinfo import FileInfo, Project
from impact_ls.graph.resolve.values import (
    OWNERS,
    USABLE,
    Kind,
    Value,
    enclosing_class,
    scope_chain,
    union,
)
from impact_ls.model import ArgShape, Edge, EdgeKind, NodeKind, QualName, Span

MAX_NAME_CANDIDATES = 16
_CALLABLE_KINDS = frozenset({NodeKind.FUNCTION, NodeKind.METHOD, NodeKind.FIXTURE})
_TYPE_REF_KINDS = frozenset({Kind.CLASS, Kind.FUNCTION, Kind.FIELD, Kind.DANGLING})
_CALL_KINDS = (EdgeKind.CALL, EdgeKind.INSTANTIATE)
# what a field may hold that calling it calls (never a field again: no chains of guesses)
_HELD_CALLABLES = frozenset({Kind.FUNCTION, Kind.CLASS, Kind.INSTANCE, Kind.UNION})
# the builtins that call a function they are given
_CALLING_BUILTINS = frozenset({"map", "filter", "sorted", "min", "max", "iter", "property"})
_NOT_A_CLASS = DefFact(qualname="", kind=NodeKind.MODULE, span=Span(line=0), name_span=Span(line=0))
# what constructing a class calls, when the project defines it: ``__new__``, ``__init__``, and the
# hooks dataclasses and attrs call from the ``__init__`` they generate
_CONSTRUCTION = ("__new__", "__init__", "__post_init__", "__attrs_post_init__")
# the special method Python uses when the first is missing (``str`` falls back to ``__repr__``)
_FALLBACKS: dict[str, tuple[str, ...]] = {
    "__format__": ("__format__", "__str__", "__repr__"),
    "__str__": ("__str__", "__repr__"),
    "__ne__": ("__ne__", "__eq__"),
    "__bool__": ("__bool__", "__len__"),
    "__contains__": ("__contains__", "__iter__", "__getitem__"),
    "__iter__": ("__iter__", "__getitem__"),
    "__reversed__": ("__reversed__", "__len__"),
    **{
        f"__i{op}__": (f"__i{op}__", f"__{op}__")
        for op in (
            "add",
            "sub",
            "mul",
            "matmul",
            "truediv",
            "floordiv",
            "mod",
            "pow",
            "lshift",
            "rshift",
            "or",
            "xor",
            "and",
        )
    },
}


def _may_name_code(info: FileInfo, scope: str, head: str) -> bool:
    """Whether a value's first name can be a function or class: ``self``, one the module binds
    by ``def``, ``class`` or import, or a function defined in an enclosing scope (a local
    variable is data, as a rule, and the commonest argument)."""
    if head in ("self", "cls") or head in info.top or head in info.top_imports:
        return True
    return any(f"{s}.{head}" in info.defs for s in scope_chain(scope) if s)


def _through_instance(owner: Value) -> bool:
    """Whether an attribute of ``owner`` is looked up on an instance (where a property runs)."""
    if owner.kind in (Kind.INSTANCE, Kind.SUPER):
        return True
    held = owner.of
    return owner.kind == Kind.FIELD and held is not None and held.kind == Kind.INSTANCE


def _unique(edges: Iterable[Edge]) -> list[Edge]:
    return list(dict.fromkeys(edges))


_new_edge = fast_init(Edge)

# an edge a site made, without the site's source, span and arguments
_Made = tuple[EdgeKind, QualName]
# what one call site added, without its source: the member edges of its receiver walk, and
# the edges it returned (with whether they carry the site's arguments, and name_matched)
_CallMemo = tuple[
    list[_Made],
    list[tuple[EdgeKind, QualName, bool, bool]],
]
# (what the site's scope is keyed by — "" its own scope, "class" its class, "file" nothing —,
# that scope or class, the callee chain, the values it hands over)
_MemoKey = tuple[str, str, Chain, tuple[tuple[str, Chain], ...]]
# heads whose value is the enclosing class (or an instance of it, or its next base)
_CLASS_HEADS = frozenset({"self", "cls", SUPER})


def _memo_key(
    info: FileInfo, scope: str, chain: Chain, values: tuple[tuple[str, Chain], ...]
) -> _MemoKey:
    """What the edges of a use whose head is not a local depend on, besides its scope's name,
    span and arguments.

    A module-level head (``models.CharField(…)``) means the same in every scope of the file,
    ``self``/``cls``/``super()`` the same in every method of one class; functions handed over
    as arguments (``values``) are looked up in the use's own scope, as are elements
    (``handlers["x"]()``) and the heads of functions outside classes.
    """
    if values or ITEM in chain:
        return ("", scope, chain, values)
    if chain[0] in _CLASS_HEADS:
        klass = enclosing_class(info, scope)
        if klass is None:
            return ("", scope, chain, ())
        return ("class", klass, chain, ())
    return ("file", "", chain, ())


class FileResolver:
    """Resolution of one file: its edges, in order; memoizes within the file only."""

    def __init__(self, info: FileInfo, project: Project) -> None:
        self.info = info
        self.values = Evaluator(info, project)
        self.file = info.facts.file
        self.edges: list[Edge] = []
        self.fixture_calls: dict[tuple[str, str], list[Edge]] = {}
        self._call_memo: dict[_MemoKey, _CallMemo] = {}
        self._access_memo: dict[tuple[_MemoKey, AccessKind], list[_Made]] = {}
        self.external_targets: set[QualName] = set()
        self._names: dict[str, bool] = {}
        self._linkables: dict[str, bool] = {}
        self._candidates: dict[str, list[QualName]] = {}
        self._receivers: dict[tuple[str, Chain, bool, int], Value] = {}

    def run(self) -> list[Edge]:
        """Every edge evidenced in the file, in resolution order."""
        info = self.info
        self._structure()
        import_edges.add_import_edges(self)
        calls_by_scope: dict[str, list[Edge]] = {}
        for call in info.facts.calls:
            for edge in self.call_edges(info, call):
                self.edges.append(edge)
                # a test's ``tests`` edges name units of the project, not installed packages
                if edge.kind in _CALL_KINDS and edge.target not in self.external_targets:
                    calls_by_scope.setdefault(call.scope, []).append(edge)
        descriptors = self._defined("__get__") or self._defined("__set__")
        for access in info.facts.accesses:
            self._access_edges(info, access, descriptors)
        for ref in info.facts.type_refs:
            val = self.values.global_chain(info, ref.chain, ref.scope)
            if val.kind in _TYPE_REF_KINDS:
                self.add(EDGE_TYPE_REF, info.qual(ref.scope), val.qual, ref.span)
        pytest_edges.add_pytest_edges(self, calls_by_scope)
        # resolution is deterministic, so the order needs no sort; CodeGraph queries sort anyway
        return self.edges

    def edge(
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
        """An edge evidenced in this file; ``add`` also records it."""
        # positionally, in ``Edge``'s field order: matching keywords made each edge 15% dearer
        return _new_edge(source, target, kind, self.file, span, args, name_matched, member)

    def add(
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
        """Record an edge of this file."""
        edge = _new_edge(source, target, kind, self.file, span, args, name_matched, member)
        self.edges.append(edge)
        return edge

    def call_edges(self, info: FileInfo, call: CallFact) -> list[Edge]:
        """The edges of one call site, replayed from an equivalent earlier site when there is one.

        Only a local's value depends on the line, so a site whose head is not a local resolves
        alike wherever it sits in its scope, and beyond it (``_memo_key``). A replay re-makes the
        member edges its receiver walk added and the edges it returns with this site's source,
        span and arguments (half of django's call sites repeat an earlier one).
        """
        if call.head_local:
            return self._call_edges_uncached(info, call)
        key = _memo_key(info, call.scope, call.callee, call.values)
        memo = self._call_memo.get(key)
        span = call.span
        source = info.qual(call.scope)
        if memo is not None:
            # half of django's call sites replay: edges made positionally, without ``edge``
            members, returned = memo
            file = self.file
            if members:
                append = self.edges.append
                for kind, target in members:
                    append(_new_edge(source, target, kind, file, span, None, False, None))
            if not returned:
                return []
            args = call.args
            return [
                _new_edge(
                    source, target, kind, file, span, args if with_args else None, matched, None
                )
                for kind, target, with_args, matched in returned
            ]
        before = len(self.edges)
        out = self._call_edges_uncached(info, call)
        self._call_memo[key] = (
            [(e.kind, e.target) for e in self.edges[before:]],
            [(e.kind, e.target, e.args is not None, e.name_matched) for e in out],
        )
        return out

    def _call_edges_uncached(self, info: FileInfo, call: CallFact) -> list[Edge]:
        chain = call.callee
        if len(chain) == 1:
            if chain[0] in (UNKNOWN, SUPER):
                return []
            target = self.values.head(info, call.scope, chain[0], call.head_local, call.span.line)
            if chain[0] == "cls" and target.kind == Kind.CLASS:
                # ``cls(...)`` in a classmethod makes the class it is called on: any subclass
                target = union([target, *self.values.subclasses(target)])
            return self._edges_to(info.qual(call.scope), target, call)
        name = chain[-1]
        special = is_dunder(name)
        if special and not self._linkable(name):
            return []  # no class of the project defines it: nothing to link, nothing to walk
        if special:
            receiver = self._receiver(info, call)
        else:
            receiver = self._walk(info, call.scope, chain[:-1], call.head_local, call.span)
        if name == CALL:  # ``make()()``: calling what a call returned
            return self._edges_to(info.qual(call.scope), self.values.called(receiver), call)
        if name == ITEM:  # ``handlers["x"]()``: calling an element
            element = self.values.item(info, call.scope, chain[:-1], receiver, call.span.line)
            return self._edges_to(info.qual(call.scope), element, call)
        if receiver.kind == Kind.DANGLING and "." in receiver.local:
            # ``Model.objects.create()``: no class in the MRO assigns ``objects`` — it comes
            # from a metaclass, a descriptor or a library base; guessing by name here would
            # link every such call to every ``create`` (measured: a third of all edges)
            return []
        source = info.qual(call.scope)
        if special:
            return self._special(source, receiver, name, call)
        if receiver.kind == Kind.UNKNOWN or (receiver.kind == Kind.FIELD and receiver.of is None):
            return self._name_matched(source, name, call)
        target = self._dispatched(chain, receiver, name)
        return self._edges_to(source, target, call)

    def _receiver(self, info: FileInfo, call: CallFact) -> Value:
        """The receiver of an implicit call, walked once per scope (``with``'s ``__enter__`` and
        ``__exit__`` share one, as do ``for``'s ``__iter__`` and ``__next__``). It is an
        expression of its own, whose members its own facts record: walking it again would only
        repeat them (20k class-member edges on django)."""
        chain = call.callee[:-1]
        # only a local's value depends on the line (as in ``call_edges``)
        key = (call.scope, chain, call.head_local, call.span.line if call.head_local else 0)
        found = self._receivers.get(key)
        if found is None:
            found = self._receivers[key] = self._walk(
                info, call.scope, chain, call.head_local, call.span, record=False
            )
        return found

    def _linkable(self, name: str) -> bool:
        """Whether some class of the project defines special method ``name`` or the one Python
        falls back to (asked of every implicit call: 50k on django)."""
        found = self._linkables.get(name)
        if found is None:
            found = self._linkables[name] = any(
                self._defined(n) for n in _FALLBACKS.get(name, (name,))
            )
        return found

    def _defined(self, name: str) -> bool:
        """Whether some class of the project defines a method ``name`` (a recorded read)."""
        found = self._names.get(name)
        if found is None:
            found = self._names[name] = self.values.project.defines_callable(name)
        return found

    def _dispatched(self, chain: Chain, receiver: Value, name: str) -> Value:
        """``receiver.name``; through ``self`` or ``super()`` also the definitions a subclass's
        MRO puts in its place."""
        values = self.values
        if len(chain) == 2 and receiver.kind in (Kind.INSTANCE, Kind.SUPER):
            klass = Value(Kind.CLASS, receiver.module, receiver.local)
            if chain[0] == "self":
                found = values.dispatch(klass, name)
                return values.property_value(found) if found.kind == Kind.FUNCTION else found
            if chain[0] == SUPER:
                return values.super_dispatch(klass, name)
        if len(chain) == 2 and chain[0] == "cls" and receiver.kind == Kind.CLASS:
            return values.dispatch(receiver, name)  # ``cls.loader()``: each subclass's own
        return values.step(receiver, name)

    def _special(self, source: QualName, receiver: Value, name: str, call: CallFact) -> list[Edge]:
        """``obj.__add__(…)``, spelled out or made by syntax: linked only when the receiver's
        class defines it (or the method Python falls back to), never by name alone."""
        if receiver.kind == Kind.UNION:
            return _unique(
                e for o in receiver.options for e in self._special(source, o, name, call)
            )
        if receiver.kind not in (Kind.INSTANCE, Kind.CLASS, Kind.SUPER, Kind.MODULE):
            return []
        for candidate in _FALLBACKS.get(name, (name,)):
            target = self.values.step(receiver, candidate)
            if target.kind == Kind.FUNCTION:
                return [self.edge(EDGE_CALL, source, target.qual, call.span, call.args)]
            if receiver.kind == Kind.SUPER and target.kind == Kind.EXTERNAL and target.module:
                # ``super().__init__(…)`` into an installed base class: its dotted name
                self.external_targets.add(target.qual)
                return [self.edge(EDGE_CALL, source, target.qual, call.span, call.args)]
        return []

    def _edges_to(self, source: QualName, target: Value, call: CallFact) -> list[Edge]:
        """The edges of calling ``target``: a class is instantiated and its ``__init__`` called."""
        out: list[Edge] = []
        if target.kind == Kind.UNION:
            return _unique(e for o in target.options for e in self._edges_to(source, o, call))
        if target.kind == Kind.CLASS:
            out.append(self.edge(EDGE_INSTANTIATE, source, target.qual, call.span, call.args))
            for hook in _CONSTRUCTION:
                if not self._defined(hook):
                    continue  # most projects define no ``__post_init__``: no MRO walk for it
                made = self.values.member(target, hook)
                if made.kind == Kind.FUNCTION:
                    out.append(self.edge(EDGE_CALL, source, made.qual, call.span, call.args))
        elif target.kind == Kind.INSTANCE:
            # calling an instance calls its class's ``__call__``
            out.extend(self._special(source, target, "__call__", call))
        elif target.kind in (Kind.FUNCTION, Kind.DANGLING):
            out.append(self.edge(EDGE_CALL, source, target.qual, call.span, call.args))
        elif target.kind == Kind.EXTERNAL:
            if target.module:
                # a call into an installed package ends at its dotted name: never dropped
                self.external_targets.add(target.qual)
                out.append(self.edge(EDGE_CALL, source, target.qual, call.span, call.args))
            out.extend(self._handed_over(self.info, call))
        elif target.kind == Kind.FIELD:
            # calling a field: the read, and a call of what its assignment stored there (a
            # function, a class, a lambda, a bound method, an instance with ``__call__``)
            out.append(self.edge(EDGE_CLASS_MEMBER, source, target.qual, call.span))
            held = target.of
            if held is not None and held.kind in _HELD_CALLABLES:
                out.extend(self._edges_to(source, held, call))
        return out

    def _handed_over(self, info: FileInfo, call: CallFact) -> list[Edge]:
        """Project functions and classes passed to code that is not ours (``sorted(key=f)``,
        ``map(f, xs)``, ``partial(f)``, ``Thread(target=f)``): called from here, as far as the
        project can see. The library's way of calling them is unknown: no argument shape."""
        if not call.values or info.defs.get(call.scope, _NOT_A_CLASS).kind is NODE_CLASS:
            return []  # a class body's ``field(default_factory=f)`` runs ``f`` at construction
        callee = call.callee
        if len(callee) == 1 and callee[0] in BUILTINS and callee[0] not in _CALLING_BUILTINS:
            return []  # ``isinstance(x, Cls)``, ``getattr(o, n, f)``: the builtin calls nothing
        source = info.qual(call.scope)
        out: list[Edge] = []
        for where, chain in call.values:
            if where == DECORATED:
                continue  # a library's decorator keeps the function for later (or wraps it)
            if not _may_name_code(info, call.scope, chain[0]):
                continue
            given = self.values.evaluate(info, call.scope, chain, call.span.line)
            for option in given.options if given.kind == Kind.UNION else (given,):
                if option.kind == Kind.FUNCTION:
                    out.append(self.edge(EDGE_CALL, source, option.qual, call.span))
                elif option.kind == Kind.CLASS:
                    out.append(self.edge(EDGE_INSTANTIATE, source, option.qual, call.span))
        return out

    def _name_matched(self, source: QualName, name: str, call: CallFact) -> list[Edge]:
        """A method call on a receiver of unknown type: every callable of that name, if few."""
        candidates = self._candidates.get(name)
        if candidates is None:  # sorted per request: once per name and file is enough
            candidates = self._candidates[name] = self.values.project.callables_named(name)
        if len(candidates) > MAX_NAME_CANDIDATES:
            return []
        return [
            self.edge(EDGE_CALL, source, qual, call.span, call.args, name_matched=True)
            for qual in candidates
        ]

    def _walk(
        self,
        info: FileInfo,
        scope: str,
        chain: Chain,
        head_local: bool,
        span: Span,
        *,
        record: bool = True,
    ) -> Value:
        """Evaluate ``chain``, with a class-member edge for each member it passes through
        (when ``record``)."""
        values = self.values
        val = values.head(info, scope, chain[0], head_local, span.line)
        source = info.qual(scope)
        for i, part in enumerate(chain[1:], 1):
            if part == CALL:
                val = values.called(val)
                continue
            if part == ITEM:
                val = values.item(info, scope, chain[:i], val, span.line)
                continue
            owner = val
            val = values.step(owner, part)
            if record and owner.kind in OWNERS and val.kind in USABLE:
                self.add(EDGE_CLASS_MEMBER, source, val.qual, span)
                if _through_instance(owner) and values.is_property(val):
                    self.add(EDGE_CALL, source, val.qual, span)  # the getter runs
        return val

    def _access_edges(self, info: FileInfo, access: AccessFact, descriptors: bool) -> None:
        """The edges of one access, replayed from an equivalent earlier one as in ``call_edges``
        (the same ``self.x`` is read over and over in a class)."""
        span = access.span
        source = info.qual(access.scope)
        key = None
        if not access.head_local:
            key = (_memo_key(info, access.scope, access.chain, ()), access.access)
            memo = self._access_memo.get(key)
            if memo is not None:
                for kind, made in memo:
                    self.add(kind, source, made, span)
                return
        before = len(self.edges)
        target = self._access(info, access.scope, access.chain, span, access.head_local)
        if descriptors and target is not None:
            method = "__get__" if access.access is ACCESS_READ else "__set__"
            called = self.values.descriptor_method(target, method)
            if called is not None:
                self.add(EDGE_CALL, source, called.qual, span)
        if key is not None:
            self._access_memo[key] = [(e.kind, e.target) for e in self.edges[before:]]

    def _access(
        self, info: FileInfo, scope: str, chain: Chain, span: Span, head_local: bool
    ) -> Value | None:
        """The edges of one access; the field it reaches through an instance, if it does."""
        if len(chain) == 1:
            val = self.values.global_head(info, chain[0])
            if val.kind in USABLE:
                self.add(EDGE_CLASS_MEMBER, info.qual(scope), val.qual, span)
            return None
        owner = self._walk(info, scope, chain[:-1], head_local, span)
        if owner.kind not in OWNERS:
            return None
        target = self.values.step(owner, chain[-1])
        if target.kind not in USABLE:
            return None
        self.add(EDGE_CLASS_MEMBER, info.qual(scope), target.qual, span)
        if not _through_instance(owner):
            return None
        if self.values.is_property(target):
            # a read runs the getter, a write the setter, ``del`` the deleter: one node
            self.add(EDGE_CALL, info.qual(scope), target.qual, span)
        return target if target.kind == Kind.FIELD else None

    def _set_names(self, local: str, d: DefFact) -> None:
        """Creating a class calls ``__set_name__`` of each descriptor its body assigns: from the
        scope that holds the ``class`` statement."""
        info = self.info
        for name in d.attributes:
            rows = info.assigns.get((local, (name,)))
            if not rows:
                continue
            held = self.values.assigned_type(info, local, (name,), None)
            if held is None or held.kind != Kind.INSTANCE:
                continue
            hook = self.values.member(Value(Kind.CLASS, held.module, held.local), "__set_name__")
            if hook.kind == Kind.FUNCTION:
                self.add(EDGE_CALL, info.qual(d.parent), hook.qual, rows[0].span)

    def _structure(self) -> None:
        """``contains`` for every definition, ``inherit`` for bases, ``override`` for methods."""
        info = self.info
        values = self.values
        set_name = self._defined("__set_name__")
        for local, d in info.defs.items():
            self.add(EDGE_CONTAINS, info.qual(d.parent), info.qual(local), d.name_span)
            if d.kind is NODE_CLASS:
                if set_name and d.attributes:
                    self._set_names(local, d)
                for chain, span in zip(d.bases, d.base_spans, strict=False):
                    base = values.global_chain(info, chain, d.parent)
                    if base.kind in (Kind.CLASS, Kind.DANGLING):
                        self.add(EDGE_INHERIT, info.qual(local), base.qual, span)
            elif d.in_class and d.kind in _CALLABLE_KINDS:
                owner = Value(Kind.CLASS, info.module, d.parent)
                for klass in values.mro_of(owner)[1:]:
                    found = values.own_method(klass, d.name)
                    if found is not None and found.kind == Kind.FUNCTION:
                        self.add(EDGE_OVERRIDE, info.qual(local), found.qual, d.name_span)
                        break
