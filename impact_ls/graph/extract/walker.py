"""One pass over a module's ``ast``: the state it fills, how it moves, and the facts it yields.

``Walker.visit`` hands each node kind to its handler (the table in ``extract/__init__.py``:
definitions, bindings, uses), walks the children of every other node, and handles the three
commonest kinds inline. The scope machinery is here too: what a name binds, how a method's
first parameter is spelled, and when a deferred use learns that its head is a local.
"""

from __future__ import annotations

import ast
import builtins
import re
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from impact_ls.graph.extract.scopes import AccessUse, CallUse, Scope, Use
from impact_ls.graph.extract.source_text import SourceLines
from impact_ls.graph.extract.syntax import docstring, span_of
from impact_ls.graph.facts import (
    SUPER,
    UNKNOWN,
    AccessFact,
    AccessKind,
    AssignFact,
    CallFact,
    Chain,
    DefFact,
    DynamicFact,
    FileFacts,
    ImportFact,
    Request,
    TypeRefFact,
    encoded_facts,
)
from impact_ls.graph.fastinit import fast_init
from impact_ls.graph.kinds import ACCESS_READ, DYNAMIC_DOTTED_PATH, DYNAMIC_STRING_LITERAL
from impact_ls.model import Span

MAX_NODE_STRINGS = 32
_MAX_STRING_SCAN = 200
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")
# ``"pkg.mod:func"`` (entry points, task and app strings), ``"pkg.mod.Class"`` (settings that
# name middleware, backends, handlers): a definition loaded by its path at run time
_DOTTED_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?::[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)?")
BUILTINS = frozenset(dir(builtins))
_CONSTANT = ast.Constant
_NAME = ast.Name
_LOAD = ast.Load
# fields that never hold child nodes; skipping them makes the generic walk much cheaper
_LEAF_FIELDS = frozenset(
    {
        "ctx",
        "id",
        "attr",
        "name",
        "arg",
        "op",
        "kind",
        "type_comment",
        "level",
        "module",
        "conversion",
        "is_async",
        "names",
        "asname",
        "ops",
    }
)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}

_new_call = fast_init(CallFact)
_new_access = fast_init(AccessFact)
new_dynamic = fast_init(DynamicFact)
new_type_ref = fast_init(TypeRefFact)
new_assign = fast_init(AssignFact)

Handler = Callable[["Walker", Any], None]


class Walker:
    """The state of one walk over one module; handlers read and extend it."""

    __slots__ = (
        "accesses",
        "all_names",
        "assigns",
        "calls",
        "class_usefixtures",
        "constant_set",
        "constants",
        "defs",
        "doc",
        "dynamic",
        "file",
        "handlers",
        "imports",
        "is_test_file",
        "lambdas",
        "line_count",
        "scopes",
        "skip_strings",
        "source",
        "test_classes",
        "type_checking",
        "type_refs",
    )

    def __init__(self, text: str, file: str, handlers: dict[type, Handler]) -> None:
        self.handlers = handlers
        self.source = SourceLines(text)
        self.file = file
        base = file.rsplit("/", 1)[-1]
        self.is_test_file = base.startswith("test_") or base.endswith("_test.py")
        self.defs: list[DefFact] = []
        self.calls: list[CallUse] = []
        self.accesses: list[AccessUse] = []
        self.assigns: list[AssignFact] = []
        self.type_refs: list[TypeRefFact] = []
        self.imports: list[ImportFact] = []
        self.dynamic: list[DynamicFact] = []
        # (enclosing scope, walk-time name) of every lambda, for ``result`` to rename
        self.lambdas: list[tuple[str, str]] = []
        self.constants: list[str] = []
        self.constant_set: set[str] = set()
        self.all_names: list[str] | None = None
        # string constants already accounted for (docstrings, ``__all__``, getattr names)
        self.skip_strings: set[int] = set()
        self.type_checking = 0
        self.doc = ""
        self.scopes: list[Scope] = []
        # per enclosing definition: is it a pytest test class, and its inherited usefixtures
        self.test_classes: list[bool] = []
        self.class_usefixtures: list[list[Request]] = []
        self.line_count = text.count("\n") + (0 if text.endswith("\n") or not text else 1)

    def run(self, tree: ast.Module) -> None:
        """Walk the module's statements inside the module scope."""
        self.doc = docstring(tree.body)
        if self.doc:
            self.skip_strings.add(id(tree.body[0].value))  # type: ignore[attr-defined]
        module = Scope("", is_class=False, is_function=False)
        self.scopes.append(module)
        for stmt in tree.body:
            self.visit(stmt)
        self.close_scope(module)
        self.scopes.pop()

    def visit(self, node: ast.AST) -> None:
        """Record what ``node`` says, then (unless its handler does) walk its children."""
        # the three commonest node kinds (over half of django's 911k) are handled inline, and a
        # number, ``None`` or a bool never costs a call: a generic dispatch per node was the
        # walk's largest single cost
        kind = type(node)
        if kind is _CONSTANT:
            value = node.value  # type: ignore[attr-defined]
            if type(value) is str and id(node) not in self.skip_strings:
                self.record_string(node, value)  # type: ignore[arg-type]
            return
        if kind is _NAME:
            name = node.id  # type: ignore[attr-defined]
            if type(node.ctx) is not _LOAD:  # type: ignore[attr-defined]
                self.bind(name)
                return
            scope = self.scopes[-1]
            if scope.is_function and name in scope.bound and name not in scope.globals:
                return  # a local already bound here: never a reference to a definition
            if name in BUILTINS and name not in self.constant_set and name not in scope.bound:
                return  # a builtin (unless the module rebinds it): nothing to point at
            if scope.is_function and self.is_self_name(name):
                return  # the method's own ``self``/``cls``
            self.record_name(name, node)
            return
        handler = self.handlers.get(kind)
        if handler is not None:
            handler(self, node)
            return
        self.walk_children(node)

    def walk_children(self, node: ast.AST) -> None:
        """Visit every child node of ``node`` (what ``visit`` does for kinds it has no handler
        for; a handler that only records something calls it to walk on)."""
        kind = type(node)
        names = _CHILD_FIELDS.get(kind)
        if names is None:
            names = _CHILD_FIELDS[kind] = tuple(
                f for f in getattr(kind, "_fields", ()) if f not in _LEAF_FIELDS
            )
        visit = self.visit
        for name in names:
            value = getattr(node, name, None)
            if value is None:
                continue
            if type(value) is list:
                for child in value:
                    if isinstance(child, ast.AST) and not (
                        type(child) is _CONSTANT and type(child.value) is not str
                    ):
                        visit(child)
            elif isinstance(value, ast.AST) and not (
                type(value) is _CONSTANT and type(value.value) is not str
            ):
                visit(value)

    def visit_all(self, nodes: list[Any]) -> None:
        """Visit each node of ``nodes`` that is not ``None``."""
        visit = self.visit
        for node in nodes:
            if node is not None:
                visit(node)

    @property
    def scope(self) -> Scope:
        """The innermost open scope (the walk's own methods, run per name and use, read
        ``scopes[-1]``: a property read costs a call)."""
        return self.scopes[-1]

    def qual(self, name: str) -> str:
        """The module-relative qualname of ``name`` defined in the current scope."""
        parent = self.scopes[-1].qualname
        return f"{parent}.{name}" if parent else name

    def bind(self, name: str) -> None:
        """Record an assignment-like binding: a local, a class attribute or a module constant."""
        scope = self.scopes[-1]
        if name in scope.globals:
            if name not in self.constant_set:
                self.constant_set.add(name)
                self.constants.append(name)
            return
        scope.bound.add(name)
        if scope.is_class:
            scope.attributes.append(name)
        elif not scope.is_function and name not in self.constant_set:
            self.constant_set.add(name)
            self.constants.append(name)

    def rewrite_self(self, chain: Chain) -> Chain:
        """Spell a method's first parameter ``self`` (``cls`` for classmethods), in closures too."""
        for scope in reversed(self.scopes):
            if scope.is_class or not scope.is_function:
                return chain
            if scope.self_name is not None:
                if chain[0] == scope.self_name:
                    return (scope.self_kind, *chain[1:])
                return chain
            if chain[0] in scope.bound:
                return chain
        return chain

    def is_self_name(self, name: str) -> bool:
        """Whether ``name`` is the enclosing method's first parameter (seen from closures too)."""
        for scope in reversed(self.scopes):
            if scope.is_class or not scope.is_function:
                return False
            if scope.self_name is not None:
                return name == scope.self_name
            if name in scope.bound:
                return False
        return False

    def is_function_local(self, name: str) -> bool:
        """Whether a function the walk is in binds ``name`` so far (a parameter, a local)."""
        return any(scope.is_function and name in scope.bound for scope in self.scopes)

    def enclosing_class(self) -> Scope | None:
        """The class whose method (possibly through closures) is being walked."""
        for scope in reversed(self.scopes):
            if scope.self_name is not None:
                idx = self.scopes.index(scope)
                parent = self.scopes[idx - 1] if idx > 0 else None
                return parent if parent is not None and parent.is_class else None
            if not scope.is_function:
                return None
        return None

    def pend(self, use: Use) -> None:
        """Queue a use whose chain head may be a local; scopes decide when they close."""
        head = use.chain[0]
        if head == UNKNOWN:
            use.head_local = True  # an arbitrary expression: its type is as unknown as a local's
            return
        if head in (SUPER, "self", "cls"):
            return
        scope = self.scopes[-1]
        if scope.is_function or scope.is_class:
            scope.pending.append(use)

    def close_scope(self, scope: Scope) -> None:
        """Decide which queued heads are local here; pass the rest to the enclosing function."""
        if not scope.pending:
            return
        outer: Scope | None = None
        for candidate in reversed(self.scopes[:-1]):
            if candidate.is_function:
                outer = candidate
                break
            if not candidate.is_class:
                break
        for use in scope.pending:
            head = use.chain[0]
            if head in scope.bound and head not in scope.globals:
                use.head_local = True
                if (
                    isinstance(use, CallUse)
                    and use.implicit
                    and head not in scope.typed
                    and head not in scope.params
                    and head not in scope.defined
                ):
                    use.dropped = True
            elif outer is not None:
                outer.pending.append(use)
        scope.pending = []

    def record_access(self, chain: Chain, span: Span, access: AccessKind) -> None:
        """An access of ``chain`` in the current scope, deferred until its head is settled."""
        use = AccessUse(self.scopes[-1].qualname, chain, span, access, False)
        self.pend(use)
        self.accesses.append(use)

    def record_type_refs(self, scope: str, refs: list[tuple[Chain, Span]]) -> None:
        """Type refs from ``scope`` to the classes a type expression names (``annotation_chains``
        output)."""
        self.type_refs.extend([new_type_ref(scope, chain, span) for chain, span in refs])

    def record_name(self, name: str, node: ast.AST) -> None:
        """A read of a plain name that may be a module global (or a local, settled later)."""
        self.record_access((name,), span_of(node), ACCESS_READ)

    def record_string(self, node: ast.Constant, value: str) -> None:
        """A string literal: its words go to the scope's strings; an identifier may be a name."""
        scope = self.scopes[-1]
        if len(scope.strings) < MAX_NODE_STRINGS:
            _add_words(scope, value)
        if len(value) > 1 and value.isidentifier():
            # interned: the same names (``"id"``, ``"name"``) are literals in thousands of files
            self.dynamic.append(
                new_dynamic(
                    scope.qualname, sys.intern(value), DYNAMIC_STRING_LITERAL, span_of(node)
                )
            )
        elif (
            ("." in value or ":" in value)
            and len(value) <= _MAX_STRING_SCAN
            and _DOTTED_PATH.fullmatch(value)
        ):
            path = sys.intern(value.replace(":", "."))
            self.dynamic.append(
                new_dynamic(scope.qualname, path, DYNAMIC_DOTTED_PATH, span_of(node))
            )

    def result(self, *, module: str, is_package: bool, parse_error: str | None) -> FileFacts:
        """The frozen facts of the walk, uses settled and filtered."""
        calls, accesses = self._settled()
        return self._facts(
            module,
            is_package,
            parse_error,
            calls=tuple(
                [_new_call(u.scope, u.chain, u.span, u.args, u.head_local, u.values) for u in calls]
            ),
            accesses=tuple(
                [_new_access(u.scope, u.chain, u.access, u.span, u.head_local) for u in accesses]
            ),
        )

    def encoded(self, *, module: str, is_package: bool, parse_error: str | None) -> bytes:
        """``facts_to_bytes`` of ``result``, without making the call and access facts."""
        calls, accesses = self._settled()
        return encoded_facts(
            self._facts(module, is_package, parse_error, calls=(), accesses=()),
            calls=[(u.scope, u.chain, u.span, u.args, u.head_local, u.values) for u in calls],
            accesses=[(u.scope, u.chain, u.access, u.span, u.head_local) for u in accesses],
        )

    def _settled(self) -> tuple[list[CallUse], list[AccessUse]]:
        """The uses the facts keep, with their final names: dropped implicit calls, plain
        locals and builtins left out."""
        if self.lambdas:
            self.rename_lambdas()
        calls = [u for u in self.calls if not u.dropped]
        bound_here = self.constant_set | (self.scopes[0].bound if self.scopes else set())
        accesses = []
        for u in self.accesses:
            chain = u.chain
            if len(chain) == 1:
                if u.head_local:
                    continue  # a plain local variable
                if chain[0] not in bound_here and chain[0] in BUILTINS:
                    continue  # a builtin: nothing in the project to point at
            accesses.append(u)
        return calls, accesses

    def _facts(
        self,
        module: str,
        is_package: bool,
        parse_error: str | None,
        *,
        calls: tuple[CallFact, ...],
        accesses: tuple[AccessFact, ...],
    ) -> FileFacts:
        module_scope = self.scopes[0] if self.scopes else None
        defs = sorted(self.defs, key=lambda d: (d.span.line, d.span.col, d.qualname))
        return FileFacts(
            file=self.file,
            module=module,
            is_package=is_package,
            line_count=self.line_count,
            doc=self.doc,
            definitions=tuple(defs),
            calls=calls,
            accesses=accesses,
            type_refs=tuple(self.type_refs),
            imports=tuple(self.imports),
            assigns=tuple(self.assigns),
            constants=tuple(self.constants),
            all_names=tuple(self.all_names) if self.all_names is not None else None,
            dynamic=tuple(self.dynamic),
            strings=tuple(module_scope.strings) if module_scope else (),
            parse_error=parse_error,
        )

    def rename_lambdas(self) -> None:
        """Give each lambda its final name: ``<lambda>`` when it is the only one of its scope,
        else ``<lambda:LINE>`` (``<lambda:LINE:COL>`` when two share a line), in every fact
        that names it: definitions, the scopes of uses, and chains (assigned or passed)."""
        by_scope: dict[str, list[str]] = {}
        for scope, local in self.lambdas:
            by_scope.setdefault(scope, []).append(local)
        names: dict[str, str] = {}
        for locals_ in by_scope.values():
            if len(locals_) == 1:
                names[locals_[0]] = "<lambda>"
                continue
            lines = [local.rsplit(":", 1)[0] for local in locals_]
            for local, line in zip(locals_, lines, strict=True):
                names[local] = f"{line}>" if lines.count(line) == 1 else local
        rename = _Renamer(names)
        for use in (*self.calls, *self.accesses):
            use.scope = rename.qual(use.scope)
        for call in self.calls:
            call.chain = rename.chain(call.chain)  # ``(lambda: x)()``
            if call.values:
                call.values = tuple((k, rename.chain(c)) for k, c in call.values)
        self.defs = [
            replace(
                d,
                qualname=rename.qual(d.qualname),
                returns_value=rename.chain(d.returns_value),
                returns_options=tuple(map(rename.chain, d.returns_options)),
            )
            if "<lambda:" in d.qualname
            or "<lambda:" in "".join(d.returns_value)
            or any("<lambda:" in c[0] for c in d.returns_options)
            else d
            for d in self.defs
        ]
        self.assigns = [
            replace(a, scope=rename.qual(a.scope), value=rename.chain(a.value))
            if "<lambda:" in a.scope or "<lambda:" in a.value[0]
            else a
            for a in self.assigns
        ]
        self.type_refs = [
            replace(t, scope=rename.qual(t.scope)) if "<lambda:" in t.scope else t
            for t in self.type_refs
        ]
        # a file's string literals are its commonest facts, and few sit inside a lambda
        self.dynamic = [
            replace(d, scope=rename.qual(d.scope)) if "<lambda:" in d.scope else d
            for d in self.dynamic
        ]


class _Renamer:
    """Qualnames and chains with walk-time lambda names replaced by final ones."""

    __slots__ = ("names",)

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def qual(self, qualname: str) -> str:
        if "<lambda:" not in qualname:
            return qualname
        names = self.names
        return ".".join([names.get(part, part) for part in qualname.split(".")])

    def chain(self, chain: Chain) -> Chain:
        if not chain or "<lambda:" not in chain[0]:
            return chain
        return (self.names.get(chain[0], chain[0]), *chain[1:])


def _add_words(scope: Scope, value: str) -> None:
    for word in _WORD.findall(value[:_MAX_STRING_SCAN]):
        if word not in scope.string_set:
            scope.string_set.add(word)
            scope.strings.append(word)
            if len(scope.strings) >= MAX_NODE_STRINGS:
                return
