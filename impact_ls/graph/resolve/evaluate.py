"""What an expression is: classes and their MRO, members, typed assignments, returns, heads.

``Evaluator`` extends ``Symbols`` (module-level names) with everything below a name: a class's
C3 MRO over project classes, a member looked up along it (the would-be ``Class.name`` when
nothing defines it), the type a local, ``self.x`` or module constant gets from its latest typed
assignment, what a call returns (annotation, else the value all ``return``s agree on), a
parameter's annotation or pytest fixture, and ``@property`` reads. Memoized per file.
"""

from __future__ import annotations

import builtins

from impact_ls.graph.facts import (
    CALL,
    DECORATED,
    DEFAULT,
    ITEM,
    SUPER,
    UNKNOWN,
    AssignFact,
    CallFact,
    Chain,
    DefFact,
)
from impact_ls.graph.kinds import NODE_CLASS, PARAM_POSITIONAL_ONLY, PARAM_POSITIONAL_OR_KEYWORD
from impact_ls.graph.resolve.fileinfo import FileInfo, Project
from impact_ls.graph.resolve.fixtures import find_fixture
from impact_ls.graph.resolve.symbols import MAX_DEPTH, Symbols
from impact_ls.graph.resolve.values import (
    EXTERNAL_VALUE,
    EXTERNALS,
    UNKNOWN_VALUE,
    UNTYPED,
    Kind,
    Value,
    enclosing_class,
    external_call,
    external_member,
    function_scopes,
    outer_scope,
    scope_chain,
    union,
)
from impact_ls.model import QualName

BUILTINS = frozenset(dir(builtins))
MAX_DISPATCH = 16  # subclasses a ``self.m()`` call may dispatch to; past it, only the class's own
PROPERTY_DECORATORS = frozenset({"property", "cached_property"})
_NOT_ASKED = Value("not asked")  # a memo miss, told apart from a memoized None


class Evaluator(Symbols):
    """Evaluation of names and chains seen from one file; memoizes within the file only."""

    def __init__(self, info: FileInfo, project: Project) -> None:
        super().__init__(info, project)
        # memo keys are (module, local) pairs: building a qualname per lookup cost a tenth of
        # django's resolution
        self._mro: dict[tuple[str, str], list[Value]] = {}
        self._members: dict[tuple[str, str, str, bool], Value] = {}
        self._evaluating: set[tuple[str, str, Chain, int]] = set()
        self._assigned: dict[tuple[str, str, Chain, int], Value | None] = {}
        self._params: dict[tuple[str, str], Value] = {}
        self._subclasses: dict[QualName, list[Value]] = {}
        self._dispatch: dict[tuple[str, str, str], Value] = {}
        self._external_bases: dict[tuple[str, str], list[Value]] = {}
        self._callers: dict[QualName, list[tuple[CallFact, int]]] | None = None
        self._fields: dict[tuple[str, str, str], Value | None] = {}
        self._bound: dict[tuple[str, str, str], Value | None] = {}

    def class_def(self, klass: Value) -> tuple[FileInfo, DefFact] | None:
        """The file and definition of a project class, if ``klass`` is one."""
        info = self.info_of(klass.module)
        if info is None:
            return None
        d = info.defs.get(klass.local)
        if d is None or d.kind is not NODE_CLASS:
            return None
        return info, d

    def mro_of(self, klass: Value) -> list[Value]:
        """C3 linearization over project classes; unknown bases end their branch."""
        qual = (klass.module, klass.local)
        cached = self._mro.get(qual)
        if cached is not None:
            return cached
        self._mro[qual] = [klass]  # cycle guard
        found = self.class_def(klass)
        if found is None:
            return self._mro[qual]
        info, d = found
        bases: list[Value] = []
        for chain in d.bases:
            base = self.global_chain(info, chain, d.parent)
            if base.kind == Kind.CLASS and (base.module, base.local) != qual:
                bases.append(base)
        seqs = [list(self.mro_of(b)) for b in bases] + [list(bases)]
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

    def own_member(self, klass: Value, name: str) -> Value | None:
        """``name`` as ``klass`` itself defines or assigns it (not inherited), or ``None``."""
        found = self.class_def(klass)
        if found is None:
            return None
        info, _ = found
        d = info.members.get(klass.local, {}).get(name)
        if d is not None:
            kind = Kind.CLASS if d.kind is NODE_CLASS else Kind.FUNCTION
            return self.decorated_value(info, d, Value(kind, klass.module, d.qualname))
        if name in info.attributes.get(klass.local, ()):
            local = f"{klass.local}.{name}"
            return Value(Kind.FIELD, klass.module, local, self.field_type(info, klass.local, name))
        return None

    def own_method(self, klass: Value, name: str) -> Value | None:
        """``name`` when ``klass`` itself defines it by ``def`` (what it is bound to, after its
        decorator), else ``None``: ``own_member`` without typing a field (overrides ask this
        of every base of every method)."""
        found = self.class_def(klass)
        if found is None:
            return None
        info, _ = found
        d = info.members.get(klass.local, {}).get(name)
        if d is None or d.kind is NODE_CLASS:
            return None
        val = Value(Kind.FUNCTION, klass.module, d.qualname)
        return self.decorated_value(info, d, val) if d.decorated_by else val

    def member(self, klass: Value, name: str, *, skip_self: bool = False) -> Value:
        """``name`` looked up along the MRO; the would-be ``Class.name`` when nothing defines it."""
        key = (klass.module, klass.local, name, skip_self)
        cached = self._members.get(key)
        if cached is None:
            cached = self._members[key] = self._member_uncached(klass, name, skip_self=skip_self)
        return cached

    def _member_uncached(self, klass: Value, name: str, *, skip_self: bool) -> Value:
        mro = self.mro_of(klass)
        for k in mro[1:] if skip_self else mro:
            found = self.own_member(k, name)
            if found is not None:
                return found
        # not ours: an installed base class of the hierarchy defines it (its first, in MRO order)
        for k in mro:
            for base in self.external_bases(k):
                return external_member(base, name)
        if skip_self:
            return UNKNOWN_VALUE
        return Value(Kind.DANGLING, klass.module, f"{klass.local}.{name}")

    def external_bases(self, klass: Value) -> list[Value]:
        """The bases of ``klass`` itself that are installed classes (``dict``, ``Exception``…)."""
        cached = self._external_bases.get((klass.module, klass.local))
        if cached is not None:
            return cached
        out: list[Value] = []
        found = self.class_def(klass)
        if found is not None:
            info, d = found
            for chain in d.bases:
                base = self.global_chain(info, chain, d.parent)
                if base.kind == Kind.EXTERNAL:
                    out.append(base)
        self._external_bases[(klass.module, klass.local)] = out
        return out

    def field_type(self, info: FileInfo, class_local: str, name: str) -> Value | None:
        """The type of ``Class.name``: what any class-level or ``self.name`` typed assignment of
        the class gives it (their union: a field holds whatever one of them stored)."""
        key = (info.facts.file, class_local, name)
        if key in self._fields:
            return self._fields[key]
        self._fields[key] = None  # cycle guard: ``self.a = self.a.b``
        found = [
            self._row_type(info, class_local, row)
            for row in info.assigns.get((class_local, (name,)), ())
        ]
        target = ("self", name)
        for member in info.members.get(class_local, {}).values():
            if member.kind is NODE_CLASS:
                continue
            for row in info.assigns.get((member.qualname, target), ()):
                found.append(self._row_type(info, member.qualname, row))
        typed = _known(found)
        if not self._evaluating:
            self._fields[key] = typed
        else:
            del self._fields[key]
        return typed

    def assigned_type(
        self, info: FileInfo, scope: str, target: Chain, line: int | None
    ) -> Value | None:
        """The instance type given to ``target`` in ``scope`` by the latest typed assignment
        (by each of them when several share its line: ``x = f if c else g``)."""
        rows = info.assigns.get((scope, target))
        if not rows:
            return None
        at = rows[0].span.line
        if line is not None:
            for row in rows:
                if row.span.line <= line:
                    at = row.span.line
        chosen = [row for row in rows if row.span.line == at]
        if len(chosen) == 1:
            return self._row_type(info, scope, chosen[0])
        return _known([self._row_type(info, scope, row) for row in chosen])

    def _row_type(self, info: FileInfo, scope: str, row: AssignFact) -> Value | None:
        """What one typed assignment gives its target."""
        key = _row_key(info, scope, row)
        outermost = not self._evaluating
        if outermost and key in self._assigned:
            return self._assigned[key]
        if key in self._evaluating or len(self._evaluating) > MAX_DEPTH:
            return None  # ``self.a = self.a`` and friends
        self._evaluating.add(key)
        try:
            val = self.evaluate(info, scope, row.value, row.span.line - 1)
        finally:
            self._evaluating.discard(key)
        if row.alias:
            typed = None if val.kind in UNTYPED else val
        else:
            typed = self.instance_of(info, val, annotated=row.annotated)
        if outermost:
            # only a value evaluated with no cycle guard up is the same wherever it is asked
            self._assigned[key] = typed
        return typed

    def evaluate(self, info: FileInfo, scope: str, chain: Chain, line: int) -> Value:
        """Evaluate a chain in ``scope`` as of ``line``: locals first, then module globals."""
        head = chain[0]
        if head in ("self", "cls", SUPER):
            val = self.head(info, scope, head, False, line)
        else:
            val = self.head(info, scope, head, True, line) if scope else UNKNOWN_VALUE
            if val.kind == Kind.UNKNOWN:
                val = self.global_chain(info, chain[:1], outer_scope(info, scope))
        for i, part in enumerate(chain[1:], 1):
            if part == CALL:
                val = self.called(val)
            elif part == ITEM:
                val = self.item(info, scope, chain[:i], val, line)
            else:
                val = self.step(val, part)
        return val

    def item(self, info: FileInfo, scope: str, container: Chain, val: Value, line: int) -> Value:
        """An element of ``container`` (whose value is ``val``): what its literal, ``append``,
        ``[k] =`` or loop facts put in it, else what the class's ``__getitem__`` returns."""
        rows: list[tuple[str, AssignFact]] = []
        key = (*container, ITEM)
        for s in (*function_scopes(info, scope), ""):
            rows.extend((s, row) for row in info.assigns.get((s, key), ()))
        if len(container) == 1 and val.kind == Kind.FIELD and info is self.info:
            # a global of this file: what any function of it adds (``HOOKS.append(f)``); only
            # this file's (another file's function bodies are not in what this one may read)
            for row in info.elements.get(key, ()):
                if (row.scope, row) not in rows and not _is_local(info, row.scope, container[0]):
                    rows.append((row.scope, row))
        if container[0] == "self" and len(container) == 2:
            klass = enclosing_class(info, scope)
            if klass is not None:
                rows.extend((klass, r) for r in info.assigns.get((klass, (container[1], ITEM)), ()))
                for member in info.members.get(klass, {}).values():
                    rows.extend(
                        (member.qualname, r) for r in info.assigns.get((member.qualname, key), ())
                    )
        found = []
        for s, row in rows:
            guard = _row_key(info, s, row)
            if guard in self._evaluating or len(self._evaluating) > MAX_DEPTH:
                continue
            self._evaluating.add(guard)
            try:
                element = self.evaluate(info, s, row.value, row.span.line - 1)
            finally:
                self._evaluating.discard(guard)
            made = element if row.alias else self.instance_of(info, element, annotated=False)
            if made is not None:
                found.append(made)
        if found:
            return union(found)
        if val.kind == Kind.INSTANCE:
            getter = self.step(val, "__getitem__")
            if getter.kind == Kind.FUNCTION:
                return self.returns_of(getter) or UNKNOWN_VALUE
        return UNKNOWN_VALUE

    def instance_of(self, info: FileInfo, val: Value, *, annotated: bool) -> Value | None:
        """The type of what ``val`` makes: an instance of a class, what a function returns."""
        if val.kind == Kind.UNION:
            made = [self.instance_of(info, o, annotated=annotated) for o in val.options]
            found = union(m for m in made if m is not None)
            return None if found.kind == Kind.UNKNOWN else found
        if val.kind == Kind.CLASS:
            return Value(Kind.INSTANCE, val.module, val.local)
        if val.kind == Kind.FUNCTION and not annotated:
            return self.returns_of(val)
        if val.kind == Kind.EXTERNAL:
            # a library object: known not to be ours, so no name-matching
            if annotated:
                return Value(Kind.EXTERNAL_INSTANCE, val.module) if val.module else EXTERNAL_VALUE
            return external_call(val)
        if val.kind == Kind.EXTERNAL_INSTANCE:
            return EXTERNAL_VALUE
        return None

    def returns_of(self, func: Value) -> Value | None:
        """What calling ``func`` gives: its return annotation's class, else its agreed return."""
        target = self.info_of(func.module)
        if target is None:
            return None
        d = target.defs.get(func.local)
        if d is None:
            return None
        if d.returns:
            val = self.global_chain(target, d.returns, d.parent)
            return self.instance_of(target, val, annotated=True)
        chains = (d.returns_value,) if d.returns_value else d.returns_options
        if not chains:
            return None
        key = (target.facts.file, d.qualname, ("return",), 0)
        if key in self._evaluating or len(self._evaluating) > MAX_DEPTH:
            return None  # mutual recursion: ``a`` returns ``b()`` returns ``a()``
        self._evaluating.add(key)
        try:
            found = [self._returned(target, d, chain) for chain in chains]
        finally:
            self._evaluating.discard(key)
        if any(v.kind in UNTYPED for v in found):
            return None  # one way out is unknown: a partial union would hide it
        return union(found)

    def _returned(self, target: FileInfo, d: DefFact, chain: Chain) -> Value:
        """What one ``return`` chain of ``d`` evaluates to."""
        nested = target.defs.get(f"{d.qualname}.{chain[0]}")
        if chain[0] in ("self", "cls"):
            val = self.head(target, d.qualname, chain[0], False, d.span.line)
        elif nested is not None:  # ``return wrapper``: a function or class defined inside
            kind = Kind.CLASS if nested.kind is NODE_CLASS else Kind.FUNCTION
            val = Value(kind, target.module, nested.qualname)
        else:  # no other local (extraction made sure): a module-level name
            val = self.global_chain(target, chain[:1], d.parent)
        for part in chain[1:]:
            val = self.called(val) if part == CALL else self.step(val, part)
        return val

    def global_chain(self, info: FileInfo, chain: Chain, scope: str) -> Value:
        """Evaluate a chain whose head is a module-level name (bases, annotations, types)."""
        if not chain:
            return UNKNOWN_VALUE
        val = self.global_head(info, chain[0])
        if val.kind in (Kind.UNKNOWN, Kind.DANGLING) and scope:
            # a class named inside a class or function body (nested classes)
            for parent in scope_chain(scope):
                d = info.defs.get(f"{parent}.{chain[0]}" if parent else chain[0])
                if d is not None and d.kind is NODE_CLASS:
                    val = Value(Kind.CLASS, info.module, d.qualname)
                    break
        for part in chain[1:]:
            val = self.step(val, part)
        return val

    def head(self, info: FileInfo, scope: str, head: str, head_local: bool, line: int) -> Value:
        """The value of a chain's first name in ``scope`` at ``line``.

        ``self``/``cls``/``super()`` are the enclosing class; a local (``head_local``) is typed
        by its assignments, the functions and classes defined in its scope, annotated
        parameters, requested fixtures or scoped imports; any
        other name is a module global.
        """
        if head == UNKNOWN:
            return UNKNOWN_VALUE
        if head in ("self", "cls", SUPER):
            klass = enclosing_class(info, scope)
            if klass is None:
                if head == SUPER:
                    return UNKNOWN_VALUE
                # a plain function's parameter named ``self`` (one set on a class later)
                local = self.local(info, scope, head, line)
                if local.kind != Kind.UNKNOWN or head_local or _is_param(info, scope, head):
                    return local  # unknown, not the module's: ``def describe(self)`` in a class
                return self.global_head(info, head)
            val = Value(Kind.CLASS, info.module, klass)
            if head == "self":
                return Value(Kind.INSTANCE, info.module, klass)
            if head == SUPER:
                return Value(Kind.SUPER, info.module, klass)
            return val
        if head_local:
            return self.local(info, scope, head, line)
        return self.global_head(info, head)

    def local(self, info: FileInfo, scope: str, head: str, line: int) -> Value:
        """A local name's value: its typed assignments, the functions and classes defined in its
        scope, its annotation, fixture or callers' arguments as a parameter, a scoped import."""
        for s in function_scopes(info, scope):
            typed = self.assigned_type(info, s, (head,), line)
            if typed is not None:
                return typed
            bound = self._bound_in(info, s, head)
            if bound is not None:
                return bound
        return UNKNOWN_VALUE

    def _bound_in(self, info: FileInfo, scope: str, head: str) -> Value | None:
        """What ``head`` is in ``scope`` whatever the line: a definition there, a parameter (by
        annotation, fixture or callers' arguments) or a scoped import; ``None`` if none.

        Kept per scope and name when asked with no cycle guard up (as ``_row_type`` does): half
        of django's local lookups repeat an earlier one, a parameter's type every time."""
        key = (info.module, scope, head)
        outermost = not self._evaluating
        if outermost:
            found = self._bound.get(key, _NOT_ASKED)
            if found is not _NOT_ASKED:
                return found
        value = self._bound_uncached(info, scope, head)
        if outermost:
            self._bound[key] = value
        return value

    def _bound_uncached(self, info: FileInfo, scope: str, head: str) -> Value | None:
        nested = info.defs.get(f"{scope}.{head}")
        if nested is not None:  # a function or class defined inside this one
            kind = Kind.CLASS if nested.kind is NODE_CLASS else Kind.FUNCTION
            return self.decorated_value(info, nested, Value(kind, info.module, nested.qualname))
        d = info.defs.get(scope)
        if d is not None:
            for hint in d.param_types:
                if hint.name == head:
                    val = self.global_chain(info, hint.chain, d.parent)
                    return self.instance_of(info, val, annotated=True) or UNKNOWN_VALUE
            if d.requests and any(r.name == head for r in d.requests):
                return self.fixture_value(info, d, head)
            if any(p.name == head for p in d.params):
                return self.param_value(info, d, head)
        imp = info.scope_imports.get(scope, {}).get(head)
        if imp is not None:
            return self.import_symbol(info, imp, 0)
        return None

    def fixture_value(self, info: FileInfo, requester: DefFact, name: str) -> Value:
        """A requested fixture's value: what the fixture function returns."""
        found = find_fixture(
            self, (info, requester.parent if requester.in_class else ""), requester, name
        )
        if found is None:
            return UNKNOWN_VALUE
        fx_info, fx = found
        kind = Kind.FUNCTION
        return self.returns_of(Value(kind, fx_info.module, fx.qualname)) or UNKNOWN_VALUE

    def global_head(self, info: FileInfo, head: str) -> Value:
        """A module-level name of ``info``'s file (an unbound builtin is external)."""
        val = self.symbol(info.module, head, 0)
        if val.kind == Kind.DANGLING and val.module == info.module and head in BUILTINS:
            return EXTERNAL_VALUE
        return val

    def step(self, val: Value, attr: str) -> Value:
        """Evaluate ``val.attr``."""
        kind = val.kind
        if kind == Kind.UNION:
            return union(self.step(o, attr) for o in val.options)
        if kind == Kind.MODULE:
            return self.symbol(val.module, attr, 0)
        if kind == Kind.CLASS:
            return self.member(Value(Kind.CLASS, val.module, val.local), attr)
        if kind in (Kind.INSTANCE, Kind.SUPER):
            member = self.member(
                Value(Kind.CLASS, val.module, val.local), attr, skip_self=kind == Kind.SUPER
            )
            return self.property_value(member) if member.kind == Kind.FUNCTION else member
        if kind == Kind.FIELD and val.of is not None:
            return self.step(val.of, attr)
        if kind == Kind.FIELD and val.of is None:
            return UNKNOWN_VALUE
        if kind == Kind.DANGLING and "." not in val.local:
            # below a missing module-level name (a deleted module or class) all is missing too
            return Value(Kind.DANGLING, val.module, f"{val.local}.{attr}")
        if kind in EXTERNALS:
            return external_member(val, attr)
        return UNKNOWN_VALUE

    def is_property(self, val: Value) -> bool:
        """Whether ``val`` is a field read through a ``@property`` (or cached) getter."""
        if val.kind != Kind.FIELD:
            return False
        info = self.info_of(val.module)
        d = info.defs.get(val.local) if info is not None else None
        return d is not None and any(
            deco.rsplit(".", 1)[-1] in PROPERTY_DECORATORS for deco in d.decorators
        )

    def descriptor_method(self, field: Value, method: str) -> Value | None:
        """``method`` (``__get__``, ``__set__``, ``__delete__``) of the descriptor a class
        attribute holds (``price = Positive()`` in the class body), when its class defines it."""
        if field.kind != Kind.FIELD:
            return None
        class_local, _, name = field.local.rpartition(".")
        info = self.info_of(field.module) if class_local else None
        if info is None or (class_local, (name,)) not in info.assigns:
            return None
        held = self.assigned_type(info, class_local, (name,), None)
        if held is None or held.kind != Kind.INSTANCE:
            return None
        target = self.member(Value(Kind.CLASS, held.module, held.local), method)
        return target if target.kind == Kind.FUNCTION else None

    def property_value(self, member: Value) -> Value:
        """A ``@property`` read through an instance is a field holding what the getter returns."""
        info = self.info_of(member.module)
        d = info.defs.get(member.local) if info is not None else None
        if d is None or not any(
            deco.rsplit(".", 1)[-1] in PROPERTY_DECORATORS for deco in d.decorators
        ):
            return member
        return Value(Kind.FIELD, member.module, member.local, self.returns_of(member))

    def called(self, val: Value) -> Value:
        """The value of calling ``val``."""
        if val.kind == Kind.UNION:
            return union(self.called(o) for o in val.options)
        if val.kind == Kind.CLASS:
            return Value(Kind.INSTANCE, val.module, val.local)
        if val.kind == Kind.FUNCTION:
            return self.returns_of(val) or UNKNOWN_VALUE
        if val.kind == Kind.EXTERNAL:
            return external_call(val)
        if val.kind == Kind.EXTERNAL_INSTANCE:
            return EXTERNAL_VALUE
        return UNKNOWN_VALUE

    def param_value(self, info: FileInfo, d: DefFact, name: str) -> Value:
        """What the call sites in this file pass for parameter ``name`` of ``d`` (their union).

        Only this file's call sites are read (another file's would make this file's edges depend
        on every caller's text); a parameter no call here passes a known value stays unknown.
        """
        if info is not self.info:
            # another file's parameter: its callers' text is not part of what this file may read
            return UNKNOWN_VALUE
        key = (d.qualname, name)
        found = self._params.get(key)
        if found is not None:
            return found
        self._params[key] = UNKNOWN_VALUE  # cycle guard: ``f(cb)`` inside ``f`` itself
        positional = [
            p.name
            for p in d.params
            if p.kind in (PARAM_POSITIONAL_ONLY, PARAM_POSITIONAL_OR_KEYWORD)
        ]
        index = positional.index(name) if name in positional else -1
        given: list[Value] = []
        for call, offset in self._callers_index(info).get(info.qual(d.qualname), ()):
            for where, chain in call.values:
                if where == DECORATED:  # the decorated definition itself, not what it became
                    if index == offset:
                        given.append(self._definition(info, call.scope, chain[0]))
                    continue
                at = int(where) + offset if where.isdigit() else -1
                if where == name or (index >= 0 and at == index):
                    given.append(self.evaluate(info, call.scope, chain, call.span.line))
        default = self.assigned_type(info, d.parent, (d.name, DEFAULT, name), None)
        if default is not None:
            given.append(default)
        found = self._params[key] = union(given)
        return found

    def _definition(self, info: FileInfo, scope: str, name: str) -> Value:
        d = info.defs.get(f"{scope}.{name}" if scope else name)
        if d is None:
            return UNKNOWN_VALUE
        kind = Kind.CLASS if d.kind is NODE_CLASS else Kind.FUNCTION
        return Value(kind, info.module, d.qualname)

    def _callers_index(self, info: FileInfo) -> dict[QualName, list[tuple[CallFact, int]]]:
        """This file's call sites that pass values, by the function they call, with the offset
        of their first argument in its parameters (1 for a bound method or a constructor)."""
        if self._callers is not None:
            return self._callers
        self._callers = {}  # while it is built, parameters read as unknown (no recursion)
        index: dict[QualName, list[tuple[CallFact, int]]] = {}
        # only calls that may reach a function of this file: the last name must be one of its
        named = {d.name for d in info.defs.values()} | {"__init__", "__call__"}
        for call in info.facts.calls:
            chain = call.callee
            last = chain[-2] if chain[-1] == CALL and len(chain) > 1 else chain[-1]
            if call.values and (last in named or len(chain) == 1):
                target = self._direct_target(info, call)
                if target is not None:
                    index.setdefault(target[0], []).append((call, target[1]))
        self._callers = index
        return index

    def _direct_target(self, info: FileInfo, call: CallFact) -> tuple[QualName, int] | None:
        chain = call.callee
        line = call.span.line
        if len(chain) == 1:
            val = self.head(info, call.scope, chain[0], call.head_local, line)
            bound = False
        elif chain[-1] == CALL:
            val = self.called(self.evaluate(info, call.scope, chain[:-1], line))
            bound = False
        else:
            owner = self.evaluate(info, call.scope, chain[:-1], line)
            val = self.step(owner, chain[-1])
            bound = owner.kind in (Kind.INSTANCE, Kind.SUPER)
        if val.kind == Kind.FUNCTION:
            return val.qual, int(bound and self._is_method(val))
        if val.kind == Kind.CLASS:
            init = self.member(val, "__init__")
            return (init.qual, 1) if init.kind == Kind.FUNCTION else None
        if val.kind == Kind.INSTANCE:
            method = self.member(Value(Kind.CLASS, val.module, val.local), "__call__")
            return (method.qual, 1) if method.kind == Kind.FUNCTION else None
        return None

    def _is_method(self, func: Value) -> bool:
        info = self.info_of(func.module)
        d = info.defs.get(func.local) if info is not None else None
        return d is not None and d.in_class and "staticmethod" not in d.decorators

    def decorated_value(self, info: FileInfo, d: DefFact, val: Value) -> Value:
        """What a decorated definition's name holds: the function (or instance) the project's
        decorator returns in its place; the definition itself for any other decorator."""
        chain = d.decorated_by
        if not chain:
            return val
        key = (info.facts.file, d.qualname, ("@",), 0)
        if key in self._evaluating or len(self._evaluating) > MAX_DEPTH:
            return val
        self._evaluating.add(key)
        try:
            decorator = self.evaluate(info, d.parent, chain, d.span.line)
            if decorator.kind == Kind.FUNCTION:
                wrapper = self.returns_of(decorator)
                if wrapper is not None and wrapper.kind in (Kind.FUNCTION, Kind.CLASS):
                    return wrapper if wrapper.qual != val.qual else val
            elif decorator.kind == Kind.CLASS:
                return Value(Kind.INSTANCE, decorator.module, decorator.local)
        finally:
            self._evaluating.discard(key)
        return val

    def subclasses(self, klass: Value) -> list[Value]:
        """The project's classes below ``klass``, nearest first (each base checked, not guessed
        from its name), at most ``MAX_DISPATCH``."""
        qual = klass.qual
        cached = self._subclasses.get(qual)
        if cached is not None:
            return cached
        self._subclasses[qual] = []  # cycle guard
        found: list[Value] = []
        frontier = [klass]
        seen = {qual}
        while frontier and len(found) < MAX_DISPATCH:
            current = frontier.pop(0)
            name = current.local.rpartition(".")[2]
            for info, local in self.project.classes_based_on(name):
                d = info.defs.get(local)
                if d is None:
                    continue
                sub = Value(Kind.CLASS, info.module, local)
                if sub.qual in seen:
                    continue
                if any(self.global_chain(info, b, d.parent) == current for b in d.bases):
                    seen.add(sub.qual)
                    found.append(sub)
                    frontier.append(sub)
        self._subclasses[qual] = found[:MAX_DISPATCH]
        return self._subclasses[qual]

    def dispatch(self, klass: Value, name: str) -> Value:
        """What ``self.name`` may be in a method of ``klass``: its own lookup, and the override
        each subclass's MRO finds (a template method, a mixin combined with a base)."""
        key = (klass.module, klass.local, name)
        cached = self._dispatch.get(key)
        if cached is not None:
            return cached
        own = self.member(klass, name)
        result = own
        if own.kind in (Kind.FUNCTION, Kind.DANGLING, Kind.FIELD):
            # a field a subclass assigns anew (``model = User``) is dispatched like a method
            kinds = (Kind.FUNCTION, Kind.FIELD) if own.kind == Kind.FIELD else (Kind.FUNCTION,)
            found = [own] if own.kind != Kind.DANGLING else []
            for sub in self.subclasses(klass):
                target = self.member(sub, name)
                if target.kind in kinds:
                    found.append(target)
            result = union(found) if found else own
        self._dispatch[key] = result
        return result

    def super_dispatch(self, klass: Value, name: str) -> Value:
        """What ``super().name`` may be in a method of ``klass``: the next definition after
        ``klass`` in its own MRO and in the MRO of each subclass (cooperative mixins)."""
        found: list[Value] = []
        for owner in (klass, *self.subclasses(klass)):
            mro = self.mro_of(owner)
            at = next((i for i, k in enumerate(mro) if k.qual == klass.qual), None)
            if at is None:
                continue
            for k in mro[at + 1 :]:
                defined = self.own_member(k, name)
                if defined is not None:
                    found.append(defined)
                    break
        return union(found) if found else self.member(klass, name, skip_self=True)


def _row_key(info: FileInfo, scope: str, row: AssignFact) -> tuple[str, str, Chain, int]:
    """The memo and cycle-guard key of one assignment row (two may share a line and column:
    ``x = f if c else g``; their values differ)."""
    return (info.facts.file, scope, (*row.target, "=", *row.value), row.span.line)


def _known(found: list[Value | None]) -> Value | None:
    """The union of the values found, ``None`` when none is known."""
    typed = union(v for v in found if v is not None)
    return None if typed.kind == Kind.UNKNOWN else typed


def _is_param(info: FileInfo, scope: str, name: str) -> bool:
    """Whether ``name`` is a parameter of ``scope`` or of a function enclosing it."""
    for s in function_scopes(info, scope):
        d = info.defs.get(s)
        if d is not None and any(p.name == name for p in d.params):
            return True
    return False


def _is_local(info: FileInfo, scope: str, name: str) -> bool:
    """Whether ``name`` is a parameter or typed local of ``scope`` (not the module's)."""
    return (scope, (name,)) in info.assigns or _is_param(info, scope, name)
