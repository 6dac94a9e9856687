"""The binary fact codec the cache stores: exact round trip, and corrupt input is a ValueError."""

from __future__ import annotations

import collections.abc
import enum
import sys
import textwrap
import types
import typing
from dataclasses import MISSING, fields, is_dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from impact_ls.graph import facts as facts_module
from impact_ls.graph.extract import extract_encoded, extract_facts
from impact_ls.graph.facts import FileFacts, facts_from_bytes, facts_to_bytes

CODE = '''\
"""Module doc."""
import os
from .repo import Repo as R
__all__ = ["Service"]

class Service(Base, metaclass=Meta):
    """A service."""
    limit: int = 3

    def __init__(self, repo: "R", *args, name=None, **kw) -> None:
        self.repo = repo
        self.name = getattr(repo, "name")

    @property
    def size(self) -> int:
        return len(self.repo.items(1, key="x"))

def make():
    return Service(R())

def test_it(tmp_path, make_fixture):
    assert make().size == 0
'''


def _facts(code: str = CODE, file: str = "pkg/test_mod.py") -> FileFacts:
    return extract_facts(textwrap.dedent(code), file=file, module="pkg.test_mod", is_package=False)


def test_binary_round_trip_is_exact() -> None:
    facts = _facts()
    data = facts_to_bytes(facts)
    assert isinstance(data, bytes)
    decoded = facts_from_bytes(data)
    assert decoded == facts
    # shared values (argument shapes, parameters) still compare and hash like fresh ones
    assert [c.args for c in decoded.calls] == [c.args for c in facts.calls]


def _every_field_set(tp: Any, seed: int) -> Any:
    """A value of ``tp`` whose every field, at every depth, differs from its default."""
    tp = getattr(tp, "__supertype__", tp)  # NewType
    if tp is bool:
        return True  # every boolean field defaults to False
    if tp is int:
        return seed + 7
    if tp is str:
        return f"s{seed}"
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return list(tp)[-1]  # no field defaults to the last member
    if is_dataclass(tp):
        hints = typing.get_type_hints(tp, vars(sys.modules[tp.__module__]))
        return tp(
            **{f.name: _every_field_set(hints[f.name], seed + i) for i, f in enumerate(fields(tp))}
        )
    args = typing.get_args(tp)
    if typing.get_origin(tp) in (tuple, collections.abc.Sequence):
        return (_every_field_set(args[0], seed), _every_field_set(args[0], seed + 1))
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return _every_field_set(next(a for a in args if a is not type(None)), seed)
    raise TypeError(f"no sample for {tp!r}")


def _fields_at_default(value: Any, path: str = "") -> list[str]:
    out = []
    for f in fields(value):
        item = getattr(value, f.name)
        if f.default is not MISSING and item == f.default:
            out.append(f"{path}{f.name}")
        for inner in item if isinstance(item, tuple) else (item,):
            if is_dataclass(inner):
                out.extend(_fields_at_default(inner, f"{path}{f.name}."))
    return out


def test_every_field_of_every_fact_type_survives_the_round_trip() -> None:
    # the codec is written out per type: a field it forgot would be lost or shifted here
    facts = _every_field_set(FileFacts, 0)
    assert _fields_at_default(facts) == []
    decoded = facts_from_bytes(facts_to_bytes(facts))
    assert decoded == facts
    assert repr(decoded) == repr(facts)


def test_the_round_trip_covers_every_fact_type() -> None:
    def reachable(tp: Any, seen: set[Any]) -> None:
        tp = getattr(tp, "__supertype__", tp)
        if is_dataclass(tp) and tp not in seen:
            seen.add(tp)
            hints = typing.get_type_hints(tp, vars(sys.modules[tp.__module__]))
            for hint in hints.values():
                reachable(hint, seen)
        for arg in typing.get_args(tp):
            reachable(arg, seen)

    covered: set[Any] = set()
    reachable(FileFacts, covered)
    declared = {v for v in vars(facts_module).values() if isinstance(v, type) and is_dataclass(v)}
    assert declared <= covered


@settings(max_examples=40, deadline=None, database=None)
@given(st.text(alphabet=st.sampled_from(list("def class (): \n\t=,.'\"#@xyz0_*[]")), max_size=80))
def test_binary_round_trip_on_arbitrary_text(text: str) -> None:
    facts = extract_facts(text, file="m.py", module="m", is_package=False)
    assert facts_from_bytes(facts_to_bytes(facts)) == facts


# what a worker encodes without making the facts: lambdas renamed in scopes and chains, an
# implicit call on an untyped local dropped, a builtin read left out, a typed local kept
WORKER_CODE = (
    CODE
    + """
def handlers(items, x=len):
    table = {"a": lambda: 1, "b": lambda: 2}
    count = 0
    count += 1
    for item in items:
        print(item, count)
    run(lambda: items.pop(), key=lambda v: v)
    with open("f") as fh, Service(R()) as s:
        return s[0] + fh.read() or table["a"]()
"""
)


@pytest.mark.parametrize(
    "code",
    [CODE, WORKER_CODE, "def broken(:\n    return 1\n", "", "x = " + "+".join(["a"] * 1500)],
    ids=["module", "value-flow", "does-not-parse", "empty", "too-deep"],
)
def test_a_worker_encodes_the_facts_extraction_gives(code: str) -> None:
    text = textwrap.dedent(code)
    facts = extract_facts(text, file="pkg/test_mod.py", module="pkg.test_mod", is_package=False)
    data = extract_encoded(text, file="pkg/test_mod.py", module="pkg.test_mod", is_package=False)
    assert facts_from_bytes(data) == facts


@settings(max_examples=40, deadline=None, database=None)
@given(st.text(alphabet=st.sampled_from(list("def class (): \n\t=,.'\"#@xyz0_*[]+")), max_size=80))
def test_a_worker_encodes_the_facts_of_arbitrary_text(text: str) -> None:
    facts = extract_facts(text, file="m.py", module="m", is_package=False)
    assert (
        facts_from_bytes(extract_encoded(text, file="m.py", module="m", is_package=False)) == facts
    )


def test_every_damaged_byte_is_a_value_error() -> None:
    data = facts_to_bytes(_facts("def f():\n    g()\n"))
    for i in range(len(data)):
        damaged = bytearray(data)
        damaged[i] ^= 0x41
        with pytest.raises(ValueError):
            facts_from_bytes(bytes(damaged))


@pytest.mark.parametrize("data", [b"", b"IMPF", b"not facts at all", b"IMPF\0\0\0\0xyz"])
def test_garbage_is_a_value_error(data: bytes) -> None:
    with pytest.raises(ValueError):
        facts_from_bytes(data)


def test_truncated_record_is_a_value_error() -> None:
    data = facts_to_bytes(_facts())
    with pytest.raises(ValueError):
        facts_from_bytes(data[: len(data) // 2])


def test_cached_calls_and_accesses_read_as_the_tuples_they_were() -> None:
    # read from the cache, they are made on first use; every way of reading them agrees
    facts = _facts()
    decoded = facts_from_bytes(facts_to_bytes(facts))
    for mine, theirs in ((decoded.calls, facts.calls), (decoded.accesses, facts.accesses)):
        assert len(mine) == len(theirs) > 2
        assert mine[0] == theirs[0] and mine[-2:] == theirs[-2:]
        assert list(mine) == list(theirs) and mine == theirs and theirs == mine
        assert hash(mine) == hash(theirs)
    assert hash(decoded) == hash(facts)
    assert decoded == facts_from_bytes(facts_to_bytes(decoded))
