"""An override that no longer accepts what the callers of its changed base method pass.

Each case builds the real graph of a small project with ``GraphBuilder`` (the edited file at its
new text), runs the whole pipeline on the edit and asserts the bucket of each override's exact
``file:line`` site; ``override_break`` is also asked directly for its verdict and detail.
"""

from __future__ import annotations

from impact_ls.analysis.classify import classify_changes
from impact_ls.analysis.overrides import override_break
from impact_ls.model import Change, ChangeType, QualName, Report
from tests.builders import analyze_texts

BASE = """\
class Reporter:
    def report(self, item):
        return item

    def run(self, items):
        for item in items:
            self.report(item)
"""

PLUGINS = """\
from pkg.base import Reporter


class Quiet(Reporter):
    def report(self, item):
        return None


class Loud(Reporter):
    def report(self, item, **options):
        return item


class Careful(Reporter):
    def report(self, item, verbose=False):
        return item


class Helper(Reporter):
    @staticmethod
    def report(item):
        return item


def trace(func):
    return func


class Traced(Reporter):
    @trace
    def report(self, item):
        return item
"""

FILES = {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/plugins.py": PLUGINS}

# the base gains a keyword and its own caller passes it
KEYWORD = "def report(self, item, *, verbose=False):"
PASSES_VERBOSE = BASE.replace("def report(self, item):", KEYWORD).replace(
    "self.report(item)", "self.report(item, verbose=True)"
)


def _signature_change(files: dict[str, str], path: str, after: str, entity: str) -> Change:
    module = path.removesuffix(".py").replace("/", ".")
    changes = classify_changes(file=path, module=module, before=files[path], after=after)
    [change] = [c for c in changes if c.entity == entity]
    assert change.change_type is ChangeType.METHOD_SIGNATURE
    return change


def _must(report: Report) -> list[tuple[str, int, str, tuple[str, ...]]]:
    return sorted(
        (e.file, e.line, e.relation.value, tuple(b.kind for b in e.breaks))
        for e in report.triage.must_inspect
    )


def _must_overrides(report: Report) -> list[tuple[str, int, str, tuple[str, ...]]]:
    """The MUST-INSPECT sites reached as overrides of the changed method."""
    return [s for s in _must(report) if s[2] == "Overrides"]


def test_an_override_without_the_keyword_the_base_now_passes_breaks():
    graph, report = analyze_texts(FILES, "pkg/base.py", PASSES_VERBOSE)
    # Quiet.report(self, item) is called as self.report(item, verbose=True) for a Quiet; the
    # override with **options and the one with the keyword accept it; a static method and a
    # decorated override (the decorator may change what it accepts) are not judged
    assert _must(report) == [("pkg/plugins.py", 5, "Overrides", ("override-mismatch",))]
    change = _signature_change(FILES, "pkg/base.py", PASSES_VERBOSE, "pkg.base.Reporter.report")
    found = override_break(change, QualName("pkg.plugins.Quiet.report"), graph)
    assert found is not None
    assert found.detail == (
        "the override (self, item) does not accept the call at pkg/base.py:7, which the new "
        "signature of 'report' accepts: unexpected keyword argument 'verbose'"
    )
    for fine in ("Loud", "Careful", "Helper", "Traced"):
        assert override_break(change, QualName(f"pkg.plugins.{fine}.report"), graph) is None


def test_a_new_optional_parameter_no_caller_passes_breaks_no_override():
    after = BASE.replace("def report(self, item):", "def report(self, item, verbose=False):")
    _, report = analyze_texts(FILES, "pkg/base.py", after)
    assert report.triage.must_inspect == ()


def test_an_override_that_failed_the_old_calls_too_is_not_blamed_on_the_edit():
    # Quiet already lacked 'verbose', which the old signature had and the caller passed
    before = BASE.replace("def report(self, item):", "def report(self, item, verbose=False):")
    before = before.replace("self.report(item)", "self.report(item, verbose=True)")
    after = before.replace("verbose=False):", "verbose=False, color=None):")
    files = {**FILES, "pkg/base.py": before}
    graph, report = analyze_texts(files, "pkg/base.py", after)
    assert _must_overrides(report) == []
    change = _signature_change(files, "pkg/base.py", after, "pkg.base.Reporter.report")
    assert override_break(change, QualName("pkg.plugins.Quiet.report"), graph) is None


def test_an_override_missing_a_positional_the_base_callers_now_pass_breaks():
    after = BASE.replace("def report(self, item):", "def report(self, item, level):")
    after = after.replace("self.report(item)", "self.report(item, 1)")
    _, report = analyze_texts(FILES, "pkg/base.py", after)
    overrides = _must_overrides(report)
    # Careful takes a second positional (verbose), Loud has none to spare
    assert overrides == [
        ("pkg/plugins.py", 5, "Overrides", ("override-mismatch",)),
        ("pkg/plugins.py", 10, "Overrides", ("override-mismatch",)),
    ]


def test_a_name_matched_call_of_the_base_proves_nothing_about_its_overrides():
    caller = (
        "def drive(reporter, items):\n"
        "    for item in items:\n"
        "        reporter.report(item, verbose=True)\n"
    )
    after = BASE.replace("def report(self, item):", KEYWORD)
    files = {**FILES, "pkg/drive.py": caller}
    _, report = analyze_texts(files, "pkg/base.py", after)
    assert _must_overrides(report) == []


def test_a_super_call_from_one_override_proves_nothing_about_its_siblings():
    chatty = (
        "from pkg.base import Reporter\n"
        "\n"
        "\n"
        "class Chatty(Reporter):\n"
        "    def report(self, item, verbose=False):\n"
        "        return super().report(item, verbose=verbose)\n"
    )
    after = BASE.replace("def report(self, item):", KEYWORD)
    files = {**FILES, "pkg/chatty.py": chatty}
    graph, report = analyze_texts(files, "pkg/base.py", after)
    # Chatty's super() call reaches Reporter.report, never Quiet.report
    assert _must_overrides(report) == []
    change = _signature_change(files, "pkg/base.py", after, "pkg.base.Reporter.report")
    assert override_break(change, QualName("pkg.plugins.Quiet.report"), graph) is None
