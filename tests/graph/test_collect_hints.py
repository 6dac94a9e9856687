"""Text facts collection needs beyond the graph: ``__test__``, aliases, star imports, __all__."""

from __future__ import annotations

from impact_ls.graph.collect_hints import EMPTY_HINTS, scan_hints


def test_test_flags_know_their_scope_and_value():
    hints = scan_hints(
        "__test__ = False\n"
        "class Base:\n"
        "    __test__ = False\n"
        "    class Inner:\n"
        "        __test__: bool = True\n"
        "    def method(self):\n"
        "        __test__ = True  # a local: pytest never sees it\n"
        "    after = 1\n"
        "    __test__ = 0\n"
        "def test_f():\n"
        "    pass\n"
        "test_f.__test__ = False\n"
        "Base.Inner.__test__ = 'yes'\n"
    )
    assert hints.test_flags == (
        ("", False),
        ("Base", False),
        ("Base.Inner", True),
        ("Base", False),
        ("test_f", False),
        ("Base.Inner", None),
    )
    assert hints.flag("Base.Inner") is None  # the last assignment wins; a string is no literal True
    assert hints.has_flag("Base.Inner")
    assert not hints.has_flag("Base.method")


def test_a_comparison_is_not_an_assignment():
    assert scan_hints("if obj.__test__ == False:\n    pass\n") is EMPTY_HINTS


def test_aliases_are_recorded_only_when_a_from_import_has_one():
    plain = scan_hints("from a import b\nfrom c import d, e\nwith open(x) as f:\n    pass\n")
    assert plain is EMPTY_HINTS
    hints = scan_hints("from a import b, b as c\nfrom m import (\n    x as y,  # why\n    z,\n)\n")
    assert hints.imports == (("b", "b"), ("b", "c"), ("x", "y"), ("z", "z"))
    assert hints.bound_names("b") == ("b", "c")
    assert hints.bound_names("other") == ("other",)


def test_star_import_lines_and_all():
    hints = scan_hints('"""doc"""\nfrom .base import *\n__all__ = ["TestA", "TestB"]\n')
    assert hints.star_lines == (2,)
    assert hints.all_names == ("TestA", "TestB")


def test_a_computed_all_is_unknown():
    assert scan_hints("__all__ = names()\n").all_names is None


def test_a_file_with_nothing_of_interest_is_not_scanned_further():
    assert scan_hints("import os\n\ndef test_a():\n    assert os.sep\n") is EMPTY_HINTS
