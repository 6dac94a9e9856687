"""fast_init: constructors equal to the dataclass's own, by position or keyword, or a refusal."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pytest

from impact_ls.graph import facts
from impact_ls.graph.fastinit import fast_init, twin_of
from impact_ls.model import ArgShape, DynamicKind, DynamicRef, Edge, EdgeKind, QualName, Span

SPAN = Span(line=3, col=4, end_line=5, end_col=6)


def test_positional_and_keyword_calls_build_what_the_class_builds() -> None:
    make = fast_init(Span)
    assert make(3, 4, 5, 6) == SPAN
    assert make(line=3, col=4, end_line=5, end_col=6) == SPAN
    assert make(3, end_col=6, col=4, end_line=5) == SPAN
    assert hash(make(3, 4, 5, 6)) == hash(SPAN)
    assert repr(make(3, 4, 5, 6)) == repr(SPAN)


def test_declared_defaults_apply() -> None:
    assert fast_init(Span)(7) == Span(line=7)
    edge = fast_init(Edge)(QualName("a"), QualName("b"), EdgeKind.CALL, "m.py", SPAN)
    assert edge == Edge(
        source=QualName("a"), target=QualName("b"), kind=EdgeKind.CALL, file="m.py", span=SPAN
    )
    assert (edge.args, edge.name_matched, edge.member) == (None, False, None)


def test_the_values_stay_frozen() -> None:
    span = fast_init(Span)(1, 2, 3, 4)
    assert type(span) is Span
    with pytest.raises(dataclasses.FrozenInstanceError):
        span.line = 9  # type: ignore[misc]


def test_a_twin_instance_becomes_a_value_of_the_class() -> None:
    twin = object.__new__(twin_of(Span))
    for name, value in zip(("line", "col", "end_line", "end_col"), (3, 4, 5, 6), strict=True):
        setattr(twin, name, value)
    twin.__class__ = Span
    assert twin == SPAN
    assert twin_of(Span) is twin_of(Span)


@pytest.mark.parametrize(
    "cls", [facts.CallFact, facts.AccessFact, facts.DefFact, facts.FileFacts, DynamicRef, ArgShape]
)
def test_every_field_is_set_in_declaration_order(cls: type) -> None:
    # a sentinel per field, passed positionally, must land on the field of the same position
    names = [f.name for f in dataclasses.fields(cls)]
    value = fast_init(cls)(*(f"<{name}>" for name in names))
    assert [getattr(value, name) for name in names] == [f"<{name}>" for name in names]


def test_missing_or_unknown_arguments_fail_like_a_constructor() -> None:
    make = fast_init(DynamicRef)
    with pytest.raises(TypeError):
        make(source=QualName("m"), name="x", kind=DynamicKind.GETATTR, file="m.py")
    with pytest.raises(TypeError):
        make(QualName("m"), "x", DynamicKind.GETATTR, "m.py", SPAN, colour="red")


def test_one_constructor_per_class() -> None:
    assert fast_init(Span) is fast_init(Span)


@dataclass(frozen=True, slots=True)
class _PostInit:
    x: int

    def __post_init__(self) -> None:
        raise AssertionError("never skipped silently")


@dataclass(frozen=True, slots=True)
class _Factory:
    x: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class _RequiredAfterDefault:
    x: int = 0
    y: int


@dataclass(frozen=True)
class _NoSlots:
    x: int


@dataclass(frozen=True, slots=True)
class _Base:
    x: int


@dataclass(frozen=True, slots=True)
class _Derived(_Base):  # its twin would lack the base's slots
    y: int = 0


@pytest.mark.parametrize(
    "cls", [_PostInit, _Factory, _RequiredAfterDefault, _NoSlots, _Derived, int]
)
def test_classes_it_cannot_build_faithfully_are_refused(cls: type) -> None:
    with pytest.raises(TypeError):
        fast_init(cls)
