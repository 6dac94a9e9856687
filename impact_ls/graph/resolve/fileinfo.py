"""One file's facts indexed for resolution, what other files can read of it, and the project view.

``index_file`` is a pure function of the facts. ``interface_of`` is what another file's
resolution can read from this one: equal interfaces resolve every other file identically.
``Project`` is what resolution may ask about other files; the builder's implementation records
every question, so a file is re-resolved exactly when an answer it got has changed.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Protocol

from impact_ls.graph.facts import ITEM, AssignFact, Chain, DefFact, FileFacts, ImportFact
from impact_ls.graph.kinds import NODE_CLASS
from impact_ls.model import QualName


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
    # what every scope puts into a container (``HOOKS.append(fn)``), by the container's chain
    elements: dict[Chain, list[AssignFact]] = field(default_factory=dict)
    fixtures: dict[tuple[str, str], list[DefFact]] = field(default_factory=dict)
    autouse: dict[str, list[DefFact]] = field(default_factory=dict)
    quals: dict[str, QualName] = field(default_factory=dict)
    # memos of values.function_scopes and values.enclosing_class, by scope
    function_scopes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    enclosing: dict[str, str | None] = field(default_factory=dict)

    # the dotted module name of the file: a field, not a property of ``facts``, as resolution
    # reads it for nearly every name it looks up
    module: str = field(init=False)

    def __post_init__(self) -> None:
        self.module = self.facts.module

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
        if d.kind is NODE_CLASS:
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
        if a.target[-1] == ITEM and a.scope:
            info.elements.setdefault(a.target, []).append(a)
    return info


def interface_of(info: FileInfo) -> tuple[Any, ...]:
    """Everything another file's resolution can read from this one, spans left out.

    Plain tuples, strings, ints, bools and ``None`` all through (the builder fingerprints it with
    ``marshal``).

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
            d.returns_options,
            d.decorators,
            d.attributes,
            # plain tuples all through: the builder fingerprints interfaces with ``marshal``
            tuple([(h.name, h.chain) for h in d.param_types]),
            None if d.fixture is None else (d.fixture.name, d.fixture.autouse),
            tuple(r.name for r in d.requests),
        )
        for d in facts.definitions
    )
    imports = tuple(
        (i.scope, i.module, i.level, i.name, i.asname, i.type_checking)
        for i in facts.imports
        if not i.scope or i.scope in fixture_scopes
    )
    class_scopes = {d.qualname for d in facts.definitions if d.kind is NODE_CLASS}
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
    fixture_calls = (
        tuple(
            (c.scope, c.callee, c.head_local, c.span.line)
            for c in facts.calls
            if c.scope in fixture_scopes
        )
        if fixture_scopes
        else ()
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


class Project(Protocol):
    """What resolution may read about other files; implementations record every read."""

    def info_of_module(self, module: str) -> FileInfo | None:
        """The file defining ``module``, if the project has it."""

    def is_namespace(self, module: str) -> bool:
        """Whether some project module lies below ``module`` (a namespace or regular package)."""

    def conftest(self, folder: str) -> FileInfo | None:
        """The ``conftest.py`` directly in ``folder`` (``""`` = the root), if any."""

    def callables_named(self, name: str) -> list[QualName]:
        """Every method named ``name`` (functions and fixtures defined in a class), sorted."""

    def defines_callable(self, name: str) -> bool:
        """Whether some method is named ``name`` (``callables_named`` unsorted)."""

    def classes_based_on(self, name: str) -> list[tuple[FileInfo, str]]:
        """Every class with a base spelled ``…name`` (its file and local qualname), sorted: the
        candidates for the subclasses of a class called ``name``."""
