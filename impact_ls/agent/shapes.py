"""The typed results of the MCP tools; their pydantic models are the tools' output schemas.

Every result has the same three parts, in this order, because a model reads a payload top down:

    audit    what was checked against the parsed code (``verified``) before what was ranked or
             inferred (``heuristic``), whether a cap cut anything, and the analysis notes;
    result   facts apart from selections: a fact is a resolved edge or a proved break at a
             cited ``file:line``; a selection is a ranked or name-matched candidate;
    next     one hint: what to do with the result, and the follow-up call when one helps.

Lists are cut at small default bounds; ``omitted`` counts what each cut left out and
``truncated`` says that something was.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

NextAction = Literal["edit", "run-tests", "inspect", "clarify", "outside", "answer", "none"]
Resolution = Literal["resolved", "name-matched", "unanalyzable"]
BucketName = Literal["must_inspect", "may_impact", "low_risk"]


class Audit(BaseModel):
    """What the result rests on: verified facts first, then ranked selections."""

    verified: str = Field(description="What was checked against the parsed code.")
    heuristic: str = Field(description="What was ranked, name-matched or inferred.")
    truncated: bool = Field(description="Whether a cap of the analysis or of this call cut.")
    notes: list[str] = Field(default_factory=list, description="Degradations and warnings.")


class Request(BaseModel):
    """A follow-up tool call the result suggests."""

    tool: str
    arguments: dict[str, Any]


class Next(BaseModel):
    """How to use the result next."""

    action: NextAction
    reason: str
    request: Request | None = None


class BreakFact(BaseModel):
    """Why a site no longer binds (proved by matching its arguments to the new signature)."""

    kind: str
    detail: str


class ChangeFact(BaseModel):
    """One atomic change between the baseline and the current text."""

    change_type: str
    entity: str
    file: str
    line_range: list[int]
    before_sig: str
    after_sig: str
    what: str


class Site(BaseModel):
    """One site of the blast radius, with the evidence for its bucket."""

    entity: str
    location: str = Field(description="file:line of the call or reference.")
    file: str
    line: int
    range: list[list[int]] = Field(description="[[line, col], [end_line, end_col]].")
    bucket: BucketName
    conf: float
    distance: int
    relation: str
    reason: str = Field(description="The cause label: what changed and what the site must do.")
    resolution: Resolution
    breaks: list[BreakFact] = Field(default_factory=list)
    seed: str = Field(description="The changed entity this site was reached from.")
    via: str | None = Field(default=None, description="The predecessor on the walk.")
    test: bool = Field(description="Whether the site is in a test or fixture.")


class UnanalyzableFact(BaseModel):
    """A hidden channel (string-keyed lookup, module ``__getattr__``) that may serve a name."""

    location: str
    file: str
    line: int
    entity: str
    name: str
    reason: str


class TestSelection(BaseModel):
    """An affected pytest test, selected by graph path weight."""

    __test__ = False  # not a pytest class, despite the name

    test: str = Field(description="The pytest node id.")
    conf: float
    changed_file: str = Field(description="The changed file whose entities reach this test.")
    reason: str
    location: str | None = Field(default=None, description="file:line of the test definition.")


class CoChangeSelection(BaseModel):
    """A file that git history says changes together with the changed files."""

    file: str
    score: float


class BatchSelection(BaseModel):
    """Sites to edit and validate together, in order."""

    batch_id: int
    members: list[str]
    size: int
    split: bool


class NextEditSelection(BaseModel):
    """One next edit, in the order the batches (or the configured LLM) put them."""

    entity: str
    reason: str


class DagNodeOut(BaseModel):
    """A node of the impact DAG."""

    entity: str
    kind: str
    location: str
    signature: str
    batch_id: int | None


class DagEdgeOut(BaseModel):
    """A cause-labelled edge of the impact DAG, from the edit towards its sites."""

    source: str = Field(alias="from")
    target: str = Field(alias="to")
    cause: str

    model_config = {"populate_by_name": True, "serialize_by_alias": True}


class DagOut(BaseModel):
    """The impact DAG (DESIGN §4), cut to the call's bounds."""

    nodes: list[DagNodeOut]
    edges: list[DagEdgeOut]
    truncated: bool


class BlastFacts(BaseModel):
    """Checked against the parsed code: the changes, proved breaks, hidden channels."""

    changes: list[ChangeFact]
    must_inspect: list[Site]
    unanalyzable: list[UnanalyzableFact]


class BlastSelections(BaseModel):
    """Ranked or inferred: possible impact, low risk, tests, co-change, batches, edit order."""

    may_impact: list[Site]
    low_risk: list[Site]
    tests: list[TestSelection]
    cochange: list[CoChangeSelection]
    batches: list[BatchSelection]
    next_edits: list[NextEditSelection]
    next_edits_source: Literal["llm", "batch_order"]


class BlastResult(BaseModel):
    """The DESIGN §4 report, facts apart from selections, lists cut to ``limit``."""

    root: str
    base: str
    facts: BlastFacts
    selections: BlastSelections
    dag: DagOut | None = Field(description="The impact DAG when include_dag was set.")
    counts: dict[str, int] = Field(description="List lengths before any cut.")
    omitted: dict[str, int] = Field(description="How many items each cut list left out.")
    truncated: bool


class BlastRadiusOutput(BaseModel):
    """Audit, blast radius, next step."""

    audit: Audit
    result: BlastResult
    next: Next


class AffectedTestsResult(BaseModel):
    """The affected tests at or above ``min_conf``, highest confidence first."""

    root: str
    base: str
    min_conf: float
    tests: list[TestSelection]
    count: int = Field(description="Tests selected before the cut.")
    omitted: int
    truncated: bool


class AffectedTestsOutput(BaseModel):
    """Audit, affected tests, next step."""

    audit: Audit
    result: AffectedTestsResult
    next: Next


class Symbol(BaseModel):
    """A definition of the code graph."""

    id: str
    kind: str
    location: str
    signature: str
    doc: str = Field(description="The first sentence of its docstring.")


class CallSite(BaseModel):
    """A call (or instantiation) of the target, with its file:line evidence."""

    caller: str
    location: str
    file: str
    line: int
    col: int
    kind: Literal["call", "instantiate"]
    resolution: Literal["resolved", "name-matched"]
    confirmed: bool | None = Field(
        default=None,
        description="For a name-matched site: jedi's verdict at the call (null: undecided).",
    )
    test: bool


class CallersResult(BaseModel):
    """Who calls the target: resolved call sites apart from name-matched candidates."""

    target: Symbol | None
    candidates: list[Symbol] = Field(description="Definitions the query may mean.")
    resolved: list[CallSite]
    name_matched: list[CallSite]
    counts: dict[str, int]
    omitted: dict[str, int]
    truncated: bool


class CallersOutput(BaseModel):
    """Audit, callers, next step."""

    audit: Audit
    result: CallersResult
    next: Next


class Step(BaseModel):
    """One hop of a cause chain, from the edit towards the asked site."""

    distance: int
    entity: str
    location: str
    relation: str
    cause: str
    breaks: list[BreakFact] = Field(default_factory=list)
    resolution: Resolution


class Chain(BaseModel):
    """The edit and every hop from it to the site."""

    change: ChangeFact | None
    steps: list[Step]
    trace: list[str] = Field(description="One line per hop: 'A -[relation at file:line]-> B'.")


class ExplainResult(BaseModel):
    """Why a site is in the blast radius, or the sites near it that are."""

    site: str
    found: bool
    bucket: str | None
    chains: list[Chain]
    candidates: list[Site] = Field(description="Blast-radius sites nearest the asked one.")
    truncated: bool


class ExplainOutput(BaseModel):
    """Audit, cause chain, next step."""

    audit: Audit
    result: ExplainResult
    next: Next
