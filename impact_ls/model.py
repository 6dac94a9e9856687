"""Frozen value types shared by every stage: the graph's nodes and edges, the changes, the report.

Graph layer (built by ``graph/``):
    Node, Edge, DynamicRef, Span, Param, ArgShape — ids are dotted qualnames (``QualName``).
    An edge points from the dependent (``source``: the caller, importer, subclass, user, test)
    to what it depends on (``target``). A ``class-member`` edge may target a field qualname
    (``pkg.mod.Class.attr`` or ``pkg.mod.CONSTANT``) that is not itself a node.

Analysis layer (built by ``analysis/``):
    Change → Member → TriageEntry, Batch, TestHit, CoChange, Unanalyzable, Dag, NextEdits → Report.

Every collection is a tuple or frozenset so values can be hashed, compared and shared freely.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import NewType

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # pragma: no cover - exercised only on 3.10
    from enum import Enum

    class StrEnum(str, Enum):
        """The 3.11 ``enum.StrEnum`` for Python 3.10."""

        def __str__(self) -> str:
            return str(self.value)


QualName = NewType("QualName", str)
TestId = NewType("TestId", str)


# The graph's hot loops read members as module globals (``graph/kinds.py``: why).
class NodeKind(StrEnum):
    MODULE = "module"
    CLASS = "class"
    FUNCTION = "function"
    METHOD = "method"
    TEST = "test"
    FIXTURE = "fixture"


class EdgeKind(StrEnum):
    CALL = "call"
    INSTANTIATE = "instantiate"
    IMPORT = "import"
    REEXPORT = "reexport"
    INHERIT = "inherit"
    OVERRIDE = "override"
    CLASS_MEMBER = "class-member"
    TYPE_REF = "type-ref"
    CONTAINS = "contains"
    TESTS = "tests"
    FIXTURE = "fixture"


class ParamKind(StrEnum):
    POSITIONAL_ONLY = "positional-only"
    POSITIONAL_OR_KEYWORD = "positional-or-keyword"
    VAR_POSITIONAL = "var-positional"
    KEYWORD_ONLY = "keyword-only"
    VAR_KEYWORD = "var-keyword"


@dataclass(frozen=True, slots=True, kw_only=True)
class Span:
    """A source range: 1-based lines, 0-based columns, end exclusive (as ``ast`` reports them)."""

    line: int
    col: int = 0
    end_line: int = 0
    end_col: int = 0

    def as_range(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """The ``[[line, col], [end_line, end_col]]`` pair used in reports."""
        return ((self.line, self.col), (self.end_line or self.line, self.end_col))


@dataclass(frozen=True, slots=True, kw_only=True)
class Param:
    """One parameter of a callable, enough to bind a call site against it."""

    name: str
    kind: ParamKind = ParamKind.POSITIONAL_OR_KEYWORD
    has_default: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ArgShape:
    """The shape of a call site's arguments: what binding needs, nothing of their values."""

    positional: int = 0
    keywords: tuple[str, ...] = ()
    star: bool = False
    double_star: bool = False

    @property
    def provable(self) -> bool:
        """A site with ``*args``/``**kwargs`` cannot be bound statically."""
        return not (self.star or self.double_star)


@dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    """A definition in the code graph."""

    id: QualName
    kind: NodeKind
    file: str
    span: Span
    signature: str = ""
    doc: str = ""
    params: tuple[Param, ...] = ()
    decorators: tuple[str, ...] = ()
    test_id: TestId | None = None
    strings: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The last dotted component of the id."""
        return self.id.rsplit(".", 1)[-1]

    @property
    def binds_first_param(self) -> bool:
        """Whether a call through an instance or class supplies the first parameter itself."""
        if self.kind is not NodeKind.METHOD and not (
            self.kind is NodeKind.FIXTURE and "." in self.id
        ):
            return False
        return "staticmethod" not in self.decorators


@dataclass(frozen=True, slots=True, kw_only=True)
class Edge:
    """A dependency from ``source`` to ``target`` with the file:line evidence that proves it."""

    source: QualName
    target: QualName
    kind: EdgeKind
    file: str
    span: Span
    args: ArgShape | None = None
    name_matched: bool = False
    member: str | None = None

    def __hash__(self) -> int:
        # The generated hash hashes every field, Span and ArgShape through Python-level
        # methods; the analysis hashes tens of thousands of edges per edit. Equal edges still
        # hash equal (a subset of the compared fields).
        return hash((self.source, self.target, self.file, self.span.line, self.span.col))


# the name of a module ``__getattr__``'s reference when it may serve any name (else one
# reference per name it serves)
ANY_NAME = "__getattr__"
# the computed part of an attribute name built around a literal (``getattr(w, "on_" + kind)``
# is named ``on_*``): no identifier contains it
COMPUTED = "*"


class DynamicKind(StrEnum):
    GETATTR = "getattr"
    SETATTR = "setattr"
    HASATTR = "hasattr"
    IMPORT_MODULE = "import_module"
    MODULE_GETATTR = "module __getattr__"
    STRING_LITERAL = "string literal"
    DOTTED_PATH = "dotted path"
    # ``getattr(models, payload["type"])``: any attribute of the module or class a module-level
    # name holds
    COMPUTED_LOOKUP = "computed lookup"
    # ``ENCODERS[name] = function`` in a function given ``function``: a module-level registry
    REGISTRY = "registry"


_ATTRIBUTE_LOOKUPS = frozenset({DynamicKind.GETATTR, DynamicKind.SETATTR, DynamicKind.HASATTR})


@dataclass(frozen=True, slots=True, kw_only=True)
class DynamicRef:
    """A reference static analysis cannot follow: a name reached through a string or a hook."""

    source: QualName
    name: str
    kind: DynamicKind
    file: str
    span: Span

    @property
    def reason(self) -> str:
        """A one-line human explanation of why this site is unanalyzable."""
        if COMPUTED in self.name and self.kind in _ATTRIBUTE_LOOKUPS:
            return f"{self.kind.value} of a computed name {self.name!r}"
        if COMPUTED in self.name and self.kind is DynamicKind.IMPORT_MODULE:
            return f"importlib.import_module of a computed name {self.name!r}"
        return {
            DynamicKind.GETATTR: f"string-keyed getattr of {self.name!r}",
            DynamicKind.SETATTR: f"string-keyed setattr of {self.name!r}",
            DynamicKind.HASATTR: f"string-keyed hasattr of {self.name!r}",
            DynamicKind.IMPORT_MODULE: f"importlib.import_module({self.name!r})",
            DynamicKind.MODULE_GETATTR: "module-level __getattr__ may serve any name"
            if self.name == ANY_NAME
            else f"module-level __getattr__ serves {self.name!r}",
            DynamicKind.STRING_LITERAL: f"string literal {self.name!r} names a definition",
            DynamicKind.DOTTED_PATH: f"a string names {self.name!r} by its dotted path",
            DynamicKind.COMPUTED_LOOKUP: f"getattr of a computed name on {self.name!r}",
            DynamicKind.REGISTRY: f"the registry {self.name!r} stores what it is given",
        }[self.kind]


class ChangeType(StrEnum):
    METHOD_SIGNATURE = "method-signature"
    METHOD_BODY = "method-body"
    FIELD = "field"
    CLASS_DECL = "class-decl"
    CONSTRUCTOR = "constructor"
    IMPORT = "import"
    ADD = "add"
    DELETE = "delete"
    INCOMPLETE = "incomplete"


class CallShape(StrEnum):
    """A change of how a callable is called that keeps its parameter list (issue 11, item 4).

    Each one breaks the resolved sites it names whatever their arguments: a call of a function
    that became ``async`` must now be awaited, a method turned into a ``@property`` is no longer
    called, a property turned into a method is no longer read as a value.
    """

    NOW_ASYNC = "now async"
    NO_LONGER_ASYNC = "no longer async"
    NOW_GENERATOR = "now a generator"
    NO_LONGER_GENERATOR = "no longer a generator"
    NOW_PROPERTY = "now a property"
    NO_LONGER_PROPERTY = "no longer a property"


class Relation(StrEnum):
    """The spec's relation names (§3.2); ``relations.py`` maps each to edge kinds."""

    CALLED_BY = "CalledBy"
    OVERRIDES = "Overrides"
    OVERRIDDEN_BY = "OverriddenBy"
    CALLERS = "Callers"
    USED_BY = "UsedBy"
    CONSTRUCTED_BY = "ConstructedBy"
    SUBCLASS_OF = "SubclassOf"
    SUPERCLASS_OF = "SuperclassOf"
    INSTANTIATED_BY = "InstantiatedBy"
    IMPORTED_BY = "ImportedBy"
    TESTED_BY = "TestedBy"


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One atomic change between the baseline and the current text of a file."""

    change_type: ChangeType
    entity: QualName
    file: str
    line_range: tuple[int, int]
    before_sig: str = ""
    after_sig: str = ""
    before_params: tuple[Param, ...] | None = None
    after_params: tuple[Param, ...] | None = None
    binds_first_param: bool = False
    escapes: bool = True
    escape_reason: str = ""
    removed_names: tuple[str, ...] = ()
    what: str = ""
    call_shape: tuple[CallShape, ...] = ()
    bases_before: tuple[str, ...] = ()  # class-decl: the bases as written, baseline and current
    bases_after: tuple[str, ...] = ()
    own_members: tuple[str, ...] = ()  # class-decl: what the class itself binds after the change
    stale_exports: tuple[int, ...] = ()  # lines where ``__all__`` still names a removed name

    @property
    def short_name(self) -> str:
        """The entity's last dotted component."""
        return self.entity.rsplit(".", 1)[-1]

    @property
    def removed_bases(self) -> tuple[str, ...]:
        """Class-decl: the bases the baseline lists and the current text does not."""
        return tuple(b for b in self.bases_before if b not in self.bases_after)

    @property
    def added_bases(self) -> tuple[str, ...]:
        """Class-decl: the bases the current text lists and the baseline did not."""
        return tuple(b for b in self.bases_after if b not in self.bases_before)


@dataclass(frozen=True, slots=True, kw_only=True)
class Site:
    """Where a member touches what changed: a call, a reference, an import."""

    file: str
    span: Span
    args: ArgShape | None = None
    name_matched: bool = False
    relation: Relation | None = None  # the relation whose edge this site evidences
    target: QualName | None = None  # what the evidence edge points at (None: a definition)

    def __hash__(self) -> int:
        # as ``Edge.__hash__``: a subset of the compared fields, without nested dataclass hashes
        return hash((self.file, self.target, self.span.line, self.span.col))


@dataclass(frozen=True, slots=True, kw_only=True)
class Member:
    """An entity reached by the reverse walk from one change."""

    entity: QualName
    file: str
    line: int
    distance: int
    relations: tuple[Relation, ...]
    via: QualName
    sites: tuple[Site, ...] = ()
    seed: QualName
    name_matched: bool = False


class Bucket(StrEnum):
    MUST_INSPECT = "must_inspect"
    MAY_IMPACT = "may_impact"
    LOW_RISK = "low_risk"


@dataclass(frozen=True, slots=True, kw_only=True)
class Break:
    """A binding failure proved by ``binding.py``: why a site no longer works."""

    kind: str
    detail: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TriageEntry:
    """One site in the blast radius with its bucket's evidence."""

    entity: QualName
    file: str
    line: int
    range: tuple[tuple[int, int], tuple[int, int]]
    conf: float
    distance: int
    relation: Relation
    reason: str
    seed: QualName
    change_type: ChangeType
    bucket: Bucket
    unanalyzable: bool = False
    name_matched: bool = False
    breaks: tuple[Break, ...] = ()
    via: QualName | None = None  # the walk predecessor (the seed at distance 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class Triage:
    must_inspect: tuple[TriageEntry, ...] = ()
    may_impact: tuple[TriageEntry, ...] = ()
    low_risk: tuple[TriageEntry, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Batch:
    batch_id: int
    members: tuple[QualName, ...]
    split: bool = False

    @property
    def size(self) -> int:
        return len(self.members)


class Evidence(StrEnum):
    """Why a test was selected: a static path in the graph, recorded coverage, or both; or,
    when neither reaches a test of the changed file, its module's own test file by name."""

    STATIC = "static"
    RECORDED = "recorded"
    BOTH = "both"
    NAMED = "named"


@dataclass(frozen=True, slots=True, kw_only=True)
class TestHit:
    """A test a changed file can break: its pytest node id and the definition that id runs."""

    __test__ = False  # not a pytest class, despite the name

    file: str
    test: TestId
    conf: float
    entity: QualName | None = None  # e.g. ``tests.test_a.TestA.test_x`` for ``…::TestB::test_x``
    evidence: Evidence = Evidence.STATIC
    reason: str = ""  # why beyond a call path, e.g. an import-time break

    @property
    def test_file(self) -> str:
        """The test's own file (the path part of its node id), not the changed ``file``."""
        return self.test.split("::", 1)[0]


@dataclass(frozen=True, slots=True, kw_only=True)
class CoChange:
    file: str
    score: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Unanalyzable:
    file: str
    line: int
    reason: str
    entity: QualName
    name: str
    seed: QualName | None = None  # the changed entity whose name this channel may serve
    # A bare string literal (or a lookup of a shared dunder, a dotted path in a test): listed,
    # but too thin to be MAY-IMPACT without co-change.
    weak: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class DagNode:
    entity: QualName
    kind: str
    file: str
    line: int
    signature: str
    batch_id: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class DagEdge:
    source: QualName
    target: QualName
    cause: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Dag:
    nodes: tuple[DagNode, ...] = ()
    edges: tuple[DagEdge, ...] = ()
    truncated: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class NextEdit:
    entity: QualName
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class NextEdits:
    """The LLM's ordered next edits, or the failure marker with the batch-order fallback."""

    items: tuple[NextEdit, ...] = ()
    failed: bool = False
    fallback: str = ""
    source: str = "batch_order"


@dataclass(frozen=True, slots=True, kw_only=True)
class NextAction:
    action: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Audit:
    verified: str = ""
    heuristic: str = ""
    truncated: bool = False
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Report:
    """The one result of an analysis; ``report/`` renders it as text, JSON or SARIF."""

    root: str
    base: str
    audit: Audit = field(default_factory=Audit)
    changes: tuple[Change, ...] = ()
    triage: Triage = field(default_factory=Triage)
    batches: tuple[Batch, ...] = ()
    # the pairs the report lists (the most confident ``max_test_pairs``; a note says when it cut)
    tests: tuple[TestHit, ...] = ()
    # every selected pair, never cut: what ``impact-ls tests``, ``test`` and the lens run
    selection: tuple[TestHit, ...] = ()
    # the test search stopped at its node budget (the editor's is small): a search without it
    # may select more; the lens says so and runs the complete selection (a note says why)
    selection_cut: bool = False
    cochange: tuple[CoChange, ...] = ()
    unanalyzable: tuple[Unanalyzable, ...] = ()
    dag: Dag = field(default_factory=Dag)
    next_edits: NextEdits = field(default_factory=NextEdits)
    next: NextAction = field(default_factory=lambda: NextAction(action="none", reason="no change"))
    stale: bool = False
    version: int = 1

    def selected_tests(self, min_conf: float = 0.0) -> list[TestId]:
        """Every selected node id with a confidence of at least ``min_conf``, sorted, once each."""
        hits = self.selection or self.tests
        return sorted({h.test for h in hits if h.conf >= min_conf})
