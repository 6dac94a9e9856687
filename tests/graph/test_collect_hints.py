"""Text facts collection needs beyond the graph: ``__test__``, aliases, star imports, __all__."""

from __future__ import annotations

from impact_ls.graph.collect_hints import EMPTY_HINTS
from impact_ls.graph.collect_hints import scan_hints as scan


def scan_hints(text: str):
    return scan(text, platform="linux")


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


PLATFORM_TESTS = """\
import os, sys, platform
if sys.platform == "win32":
    def test_windows():
        pass
    class TestWin:
        def test_in_class(self):
            pass
elif sys.platform.startswith(("linux", "freebsd")):
    def test_unix():
        pass
else:
    def test_other():
        pass
if os.name != "nt" and platform.system() == "Linux":
    def test_linux_only():
        pass
if not sys.platform == "darwin":
    def test_not_mac():
        pass
if sys.platform in ("win32", "cygwin") or FLAG:
    def test_unknown():
        pass
if SOMETHING:
    def test_windows():
        pass
class TestMixed:
    if sys.platform == "win32":
        def test_win_method(self):
            pass
    else:
        def test_posix_method(self):
            pass
    def test_always(self):
        pass
"""


def test_definitions_in_branches_not_taken_on_this_platform_are_absent():
    on_linux = scan(PLATFORM_TESTS, platform="linux").absent
    assert on_linux == {
        "TestWin",
        "TestWin.test_in_class",
        "test_other",
        "TestMixed.test_win_method",
    }
    on_windows = scan(PLATFORM_TESTS, platform="win32").absent
    assert on_windows == {
        "test_unix",
        "test_other",
        "test_linux_only",
        "TestMixed.test_posix_method",
    }
    assert scan(PLATFORM_TESTS, platform="darwin").absent == {
        "TestWin",
        "TestWin.test_in_class",
        "test_unix",
        "test_linux_only",
        "test_not_mac",
        "TestMixed.test_win_method",
    }
