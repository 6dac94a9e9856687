"""The state the walk keeps per definition while its body is walked, and the rows it defers.

A call or attribute use whose chain starts with a plain name cannot say where it was recorded
whether that name is a local: an assignment further down the same function makes it one. Such
uses wait in their scope's ``pending`` list as mutable rows (``CallUse``, ``AccessUse``) and the
walk settles ``head_local`` when the scope closes; the rows become frozen facts at the end.
"""

from __future__ import annotations

from impact_ls.graph.facts import AccessKind, Chain
from impact_ls.model import ArgShape, Span


class Use:
    """A call or access recorded before its scope closed; ``head_local`` may still change."""

    __slots__ = ("chain", "head_local", "scope", "span")

    chain: Chain
    head_local: bool
    scope: str
    span: Span


class CallUse(Use):
    """A call site: its callee chain and argument shape (a ``CallFact`` in waiting)."""

    __slots__ = ("args", "dropped", "implicit", "values")

    def __init__(
        self,
        scope: str,
        chain: Chain,
        span: Span,
        args: ArgShape,
        head_local: bool,
        *,
        values: tuple[tuple[str, Chain], ...] = (),
    ) -> None:
        self.scope = scope
        self.chain = chain
        self.span = span
        self.args = args
        self.head_local = head_local
        self.values = values
        # an operator, subscript, ``with`` or ``for`` call: dropped when its receiver is a local
        # that nothing types (its special methods could only be guessed)
        self.implicit = False
        self.dropped = False


class AccessUse(Use):
    """A read or write of a name or attribute chain (an ``AccessFact`` in waiting)."""

    __slots__ = ("access",)

    def __init__(
        self, scope: str, chain: Chain, span: Span, access: AccessKind, head_local: bool
    ) -> None:
        self.scope = scope
        self.chain = chain
        self.span = span
        self.access = access
        self.head_local = head_local


class Scope:
    """Per-definition state while its body is walked."""

    __slots__ = (
        "attributes",
        "bound",
        "defined",
        "globals",
        "is_class",
        "is_function",
        "params",
        "pending",
        "qualname",
        "returns",
        "self_kind",
        "self_name",
        "string_set",
        "strings",
        "typed",
    )

    def __init__(self, qualname: str, *, is_class: bool, is_function: bool) -> None:
        self.qualname = qualname
        self.is_class = is_class
        self.is_function = is_function
        self.bound: set[str] = set()
        self.defined: set[str] = set()  # the functions and classes defined directly here
        self.params: set[str] = set()
        self.typed: set[str] = set()  # locals some fact gives a type (assignment, loop)
        self.globals: set[str] = set()
        # uses whose head name may be local here; settled when the scope closes
        self.pending: list[Use] = []
        self.strings: list[str] = []
        self.string_set: set[str] = set()
        self.self_name: str | None = None
        self.self_kind = "self"
        # chains of the values returned; None for one we cannot follow (or a yield)
        self.returns: list[Chain | None] = []
        self.attributes: list[str] = []
