"""Outlines of a text: definitions keyed for matching, fields, imports, and their signatures."""

from __future__ import annotations

from impact_ls.analysis.classify._outline import Outline, Parsed, outline_of
from impact_ls.analysis.classify._settle import check
from impact_ls.analysis.classify._signatures import (
    class_what,
    generated_init,
    signature,
    signature_what,
)
from impact_ls.model import Param, ParamKind

SOURCE = """\
from pkg.util import helper as h
import os

TIMEOUT = 5


class Service:
    retries: int = 3

    def run(self, job, *, fast=False):
        return job

    def run(self, job):  # a redefinition: a second occurrence
        return job


def make() -> Service:
    return Service()
"""


def _outline(source: str, package: str = "pkg") -> Outline:
    return outline_of(Parsed.of(source, check(source)), package)


def test_definitions_are_keyed_by_kind_enclosing_path_name_and_occurrence():
    outline = _outline(SOURCE)
    assert sorted(outline.defs) == [
        ("class", (), "Service", 0),
        ("def", (), "make", 0),
        ("def", ("Service",), "run", 0),
        ("def", ("Service",), "run", 1),
    ]
    run = outline.defs[("def", ("Service",), "run", 0)]
    assert (run.in_class, run.start, run.end, run.inner) == (True, 10, 11, ("Service", "run"))


def test_fields_and_imports_are_collected_per_scope():
    outline = _outline(SOURCE)
    assert set(outline.fields) == {((), "TIMEOUT"), (("Service",), "retries")}
    assert outline.fields[((), "TIMEOUT")][0].start == 4
    pairs = sorted(pair for imp in outline.imports[()] for pair in imp.pairs)
    assert pairs == [("h", "pkg.util.helper"), ("os", "os")]


def test_a_signature_renders_the_header_and_its_parameters():
    outline = _outline(SOURCE)
    sig = signature(outline, outline.defs[("def", ("Service",), "run", 0)])
    assert sig.text == "def run(self, job, *, fast=False):"
    assert sig.params == (
        Param(name="self"),
        Param(name="job"),
        Param(name="fast", kind=ParamKind.KEYWORD_ONLY, has_default=True),
    )
    made = signature(outline, outline.defs[("def", (), "make", 0)])
    assert made.text == "def make() -> Service:"


def test_signature_what_says_how_parameters_changed():
    before = _outline("def f(a, b=1):\n    pass\n")
    after = _outline("async def f(a, c, *, b):\n    pass\n")
    old = signature(before, before.defs[("def", (), "f", 0)])
    new = signature(after, after.defs[("def", (), "f", 0)])
    assert signature_what(old, new) == (
        "added param c, param b now required, param b now keyword-only, now async"
    )
    first, second = _outline("def f(a, b):\n    pass\n"), _outline("def f(b, a):\n    pass\n")
    in_order = signature(first, first.defs[("def", (), "f", 0)])
    swapped = signature(second, second.defs[("def", (), "f", 0)])
    assert signature_what(in_order, swapped) == "params reordered"


def test_class_what_names_base_and_decorator_changes():
    before = _outline("class C(dict):\n    pass\n")
    after = _outline("@final\nclass C:\n    pass\n")
    old = signature(before, before.defs[("class", (), "C", 0)])
    new = signature(after, after.defs[("class", (), "C", 0)])
    assert class_what(old, new) == "bases changed, added decorator @final"


def test_a_dataclass_gets_the_init_its_decorator_writes():
    outline = _outline(
        "@dataclass(kw_only=False)\nclass Point:\n    x: int\n    y: int = 0\n"
        "    tags: ClassVar[list] = []\n    z: int = field(default=1, kw_only=True)\n"
    )
    init = generated_init(outline, outline.defs[("class", (), "Point", 0)])
    assert init is not None
    assert init.text == "def __init__(self, x: int, y: int = ..., *, z: int = ...):"
    assert init.params == (
        Param(name="self"),
        Param(name="x"),
        Param(name="y", has_default=True),
        Param(name="z", kind=ParamKind.KEYWORD_ONLY, has_default=True),
    )


def test_no_generated_init_for_a_class_with_bases_or_its_own_init():
    with_base = _outline("@dataclass\nclass P(Base):\n    x: int\n")
    assert generated_init(with_base, with_base.defs[("class", (), "P", 0)]) is None
    own = _outline("@dataclass\nclass P:\n    x: int\n    def __init__(self):\n        pass\n")
    assert generated_init(own, own.defs[("class", (), "P", 0)]) is None
