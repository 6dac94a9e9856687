"""The binary fact codec the cache stores: exact round trip, and corrupt input is a ValueError."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from impact_ls.graph.extract import extract_facts
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


@settings(max_examples=40, deadline=None, database=None)
@given(st.text(alphabet=st.sampled_from(list("def class (): \n\t=,.'\"#@xyz0_*[]")), max_size=80))
def test_binary_round_trip_on_arbitrary_text(text: str) -> None:
    facts = extract_facts(text, file="m.py", module="m", is_package=False)
    assert facts_from_bytes(facts_to_bytes(facts)) == facts


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
