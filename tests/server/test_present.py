"""Report → diagnostics, code lenses and code actions, on hand-built reports."""

from __future__ import annotations

from lsprotocol import types

from impact_ls.model import (
    Batch,
    Break,
    Bucket,
    Change,
    ChangeType,
    NextEdit,
    NextEdits,
    QualName,
    Relation,
    Report,
    TestHit,
    TestId,
    Triage,
    TriageEntry,
)
from impact_ls.server import present
from impact_ls.server.testrun import CaseOutcome, CaseResult, RunOutcome, TestRun

SEED = QualName("shop.pricing.price")
LINES = {
    "shop/pricing.py": ["", "", "", "def price(amount, rate, currency):", "    return amount"],
    "shop/cart.py": ["x"] * 18
    + ["        return sum(price(amount, self.rate) for amount in self.items)"],
    "shop/invoice.py": ["x"] * 7 + ["    gross = price(amount, 0.2)  # é"],
}


class FakeLocator:
    """Lines from ``LINES``, columns counted in UTF-16 units like a default client."""

    def uri(self, file: str) -> str:
        return f"file:///w/{file}"

    def _units(self, text: str) -> int:
        return len(text.encode("utf-16-le")) // 2

    def position(self, file: str, line: int, col: int) -> types.Position:
        text = LINES.get(file, [""] * line)[line - 1]
        prefix = text.encode("utf-8")[:col].decode("utf-8", "ignore")
        return types.Position(line=line - 1, character=self._units(prefix))

    def line_end(self, file: str, line: int) -> types.Position:
        return types.Position(line=line - 1, character=self._units(LINES[file][line - 1]))


LOC = FakeLocator()


def _entry(
    entity: str,
    file: str,
    line: int,
    cols: tuple[int, int],
    *,
    bucket: Bucket,
    reason: str,
    **kw: object,
) -> TriageEntry:
    return TriageEntry(
        entity=QualName(entity),
        file=file,
        line=line,
        range=((line, cols[0]), (line, cols[1])),
        conf=0.9,
        distance=1,
        relation=Relation.CALLED_BY,
        reason=reason,
        seed=SEED,
        change_type=ChangeType.METHOD_SIGNATURE,
        bucket=bucket,
        **kw,  # type: ignore[arg-type]
    )


CART = _entry(
    "shop.cart.Cart.total",
    "shop/cart.py",
    19,
    (19, 42),
    bucket=Bucket.MUST_INSPECT,
    reason="method-signature changed (price) → Cart.total must re-bind via CalledBy",
    breaks=(Break(kind="missing-argument", detail="missing required argument 'currency'"),),
)
INVOICE = _entry(
    "shop.invoice.line",
    "shop/invoice.py",
    8,
    (12, 30),
    bucket=Bucket.MUST_INSPECT,
    reason="method-signature changed (price) → line must re-bind via CalledBy",
)
PLUGIN = _entry(
    "shop.plugins.load",
    "shop/plugins.py",
    3,
    (4, 30),
    bucket=Bucket.MAY_IMPACT,
    reason="string-keyed getattr of 'price'",
    unanalyzable=True,
)
CHANGE = Change(
    change_type=ChangeType.METHOD_SIGNATURE,
    entity=SEED,
    file="shop/pricing.py",
    line_range=(4, 5),
    before_sig="def price(amount, rate):",
    after_sig="def price(amount, rate, currency):",
)


def _report(**kw: object) -> Report:
    values: dict[str, object] = {
        "root": ".",
        "base": "HEAD",
        "changes": (CHANGE,),
        "triage": Triage(must_inspect=(CART, INVOICE), may_impact=(PLUGIN,)),
        "batches": (
            Batch(batch_id=0, members=(SEED, CART.entity)),
            Batch(batch_id=1, members=(INVOICE.entity,)),
        ),
        "tests": (
            TestHit(file="shop/pricing.py", test=TestId("tests/test_pricing.py::test_b"), conf=1.0),
            TestHit(file="shop/pricing.py", test=TestId("tests/test_pricing.py::test_a"), conf=1.0),
        ),
    }
    values.update(kw)
    return Report(**values)  # type: ignore[arg-type]


def test_must_sites_are_warnings_at_the_exact_call_with_the_cause_and_the_changed_definition() -> (
    None
):
    diags = present.report_diagnostics(_report(), locator=LOC)
    [cart] = diags["file:///w/shop/cart.py"]
    assert cart.severity == types.DiagnosticSeverity.Warning
    assert cart.code == "must-inspect"
    assert cart.source == "impact"
    # What broke first, then the cause: a Problems panel that cuts the line keeps the point.
    assert cart.message == "missing required argument 'currency' — " + CART.reason
    assert cart.range == types.Range(
        start=types.Position(line=18, character=19), end=types.Position(line=18, character=42)
    )
    [related] = cart.related_information or []
    assert related.location.uri == "file:///w/shop/pricing.py"
    assert related.location.range.start == types.Position(line=3, character=0)
    assert related.message == "changed: def price(amount, rate, currency):"


def test_columns_are_converted_from_utf8_bytes_to_client_units() -> None:
    entry = _entry(
        "shop.invoice.line", "shop/invoice.py", 8, (32, 36), bucket=Bucket.MUST_INSPECT, reason="r"
    )
    diags = present.report_diagnostics(_report(triage=Triage(must_inspect=(entry,))), locator=LOC)
    [d] = diags["file:///w/shop/invoice.py"]
    # "é" is two UTF-8 bytes but one UTF-16 unit
    assert (d.range.start.character, d.range.end.character) == (32, 35)


def test_may_severity_information_hint_or_off_and_unanalyzable_says_so() -> None:
    info = present.report_diagnostics(_report(), locator=LOC)["file:///w/shop/plugins.py"]
    assert [(d.severity, d.code, d.message) for d in info] == [
        (
            types.DiagnosticSeverity.Information,
            "unanalyzable",
            "may reach price by name: string-keyed getattr of 'price'",
        )
    ]
    hint = present.report_diagnostics(_report(), locator=LOC, may_severity="hint")
    assert hint["file:///w/shop/plugins.py"][0].severity == types.DiagnosticSeverity.Hint
    off = present.report_diagnostics(_report(), locator=LOC, may_severity="off")
    assert "file:///w/shop/plugins.py" not in off


def test_one_summary_hint_at_the_changed_definition() -> None:
    [summary] = present.report_diagnostics(_report(), locator=LOC)["file:///w/shop/pricing.py"]
    assert summary.severity == types.DiagnosticSeverity.Hint
    assert summary.code == "blast-radius"
    assert summary.range == types.Range(
        start=types.Position(line=3, character=0), end=types.Position(line=3, character=34)
    )
    assert summary.message == (
        "Blast radius of price (method-signature): 2 must-inspect · 1 may-impact · 2 batches · "
        "2 affected tests; inspect shop/cart.py:19, shop/invoice.py:8"
    )
    assert [r.location.uri for r in summary.related_information or []] == [
        "file:///w/shop/cart.py",
        "file:///w/shop/invoice.py",
    ]


def test_no_summary_when_nothing_is_reached_and_incomplete_changes_are_not_shown() -> None:
    empty = _report(triage=Triage(), batches=(), tests=())
    assert present.report_diagnostics(empty, locator=LOC) == {}
    incomplete = Change(
        change_type=ChangeType.INCOMPLETE, entity=SEED, file="shop/pricing.py", line_range=(4, 4)
    )
    assert (
        present.code_lenses(_report(changes=(incomplete,)), file="shop/pricing.py", locator=LOC)
        == []
    )


def test_stale_reports_say_so() -> None:
    diags = present.report_diagnostics(_report(stale=True), locator=LOC)
    assert diags["file:///w/shop/cart.py"][0].message.endswith(
        "(stale: the edit does not parse yet)"
    )
    lenses = present.code_lenses(_report(stale=True), file="shop/pricing.py", locator=LOC)
    assert lenses[0].command is not None
    assert lenses[0].command.title == "Blast radius: 2 must · 1 may · 2 batches (stale)"


def test_union_merges_reports_and_drops_duplicates() -> None:
    one = present.report_diagnostics(_report(), locator=LOC)
    two = present.report_diagnostics(_report(triage=Triage(must_inspect=(CART,))), locator=LOC)
    merged = present.union_diagnostics([one, two])
    assert len(merged["file:///w/shop/cart.py"]) == 1
    assert len(merged["file:///w/shop/pricing.py"]) == 2  # two different summaries
    assert present.union_diagnostics([]) == {}


def test_lenses_blast_radius_batches_and_tests() -> None:
    lenses = present.code_lenses(_report(), file="shop/pricing.py", locator=LOC)
    titles = [(lens.command.title, lens.command.command) for lens in lenses if lens.command]
    assert titles == [
        ("Blast radius: 2 must · 1 may · 2 batches", "impact.showBlastRadius"),
        ("Run 2 affected tests", "impact.runAffectedTests"),
        ("Batch 1 · 2 sites: Cart.total", "impact.showLocations"),
        ("Batch 2 · 1 site: line", "impact.showLocations"),
    ]
    assert all(lens.range.start == types.Position(line=3, character=0) for lens in lenses)
    uri, position, locations = lenses[2].command.arguments  # type: ignore[union-attr, misc]
    assert uri == "file:///w/shop/pricing.py"
    assert position == {"line": 3, "character": 0}
    assert [loc["uri"] for loc in locations] == [
        "file:///w/shop/pricing.py",
        "file:///w/shop/cart.py",
    ]
    assert locations[1]["range"]["start"] == {"line": 18, "character": 19}
    assert lenses[1].command.arguments == [  # type: ignore[union-attr]
        {
            "uri": "file:///w/shop/pricing.py",
            "tests": ["tests/test_pricing.py::test_a", "tests/test_pricing.py::test_b"],
        }
    ]
    assert present.code_lenses(_report(), file="shop/cart.py", locator=LOC) == []
    assert present.code_lenses(None, file="shop/cart.py", locator=LOC) == []


def test_long_batches_are_elided_in_the_lens_title() -> None:
    members = tuple(QualName(f"shop.m.f{i}") for i in range(5))
    lenses = present.code_lenses(
        _report(batches=(Batch(batch_id=0, members=(SEED, *members)),)),
        file="shop/pricing.py",
        locator=LOC,
    )
    assert lenses[2].command is not None
    assert lenses[2].command.title == "Batch 1 · 6 sites: f0 → f1 → …"


def _titles(actions: list[types.CodeAction]) -> list[str]:
    return [a.title for a in actions]


CART_POINT = "missing required argument 'currency'"
INVOICE_POINT = "calls price, whose signature changed"


def _at(line: int, character: int) -> types.Range:
    pos = types.Position(line=line, character=character)
    return types.Range(start=pos, end=pos)


def test_actions_at_the_changed_definition_follow_the_batch_order_without_an_llm() -> None:
    report = _report()
    actions = present.code_actions(
        [report], file="shop/pricing.py", rng=_at(3, 4), locator=LOC, own=report
    )
    assert _titles(actions) == [
        f"Next edit: Cart.total — {CART_POINT}",
        "Show blast radius",
        "Run 2 affected tests",
    ]
    command = actions[0].command
    assert command is not None and command.command == "impact.openLocation"
    assert command.arguments == [
        {
            "uri": "file:///w/shop/cart.py",
            "range": {"start": {"line": 18, "character": 19}, "end": {"line": 18, "character": 42}},
        }
    ]
    assert (
        present.code_actions(
            [report], file="shop/pricing.py", rng=_at(0, 0), locator=LOC, own=report
        )
        == []
    )


def test_every_must_site_offers_the_next_one_the_blast_radius_and_the_tests() -> None:
    report = _report()
    warning = present.report_diagnostics(report, locator=LOC)["file:///w/shop/cart.py"]
    actions = present.code_actions(
        [report], file="shop/cart.py", rng=_at(18, 25), locator=LOC, context=warning
    )
    assert _titles(actions) == [
        f"Next edit: line — {INVOICE_POINT}",
        "Show blast radius",
        "Run 2 affected tests",
    ]
    assert actions[0].kind == types.CodeActionKind.QuickFix
    assert actions[0].diagnostics == warning
    show = actions[1].command
    assert show is not None and show.arguments == ["file:///w/shop/pricing.py"]
    # the last site of the order: the next edit goes round to the first
    last = present.code_actions([report], file="shop/invoice.py", rng=_at(7, 14), locator=LOC)
    assert _titles(last) == [
        f"Next edit: Cart.total — {CART_POINT}",
        "Show blast radius",
        "Run 2 affected tests",
    ]


def test_the_only_must_site_still_offers_all_three() -> None:
    report = _report(triage=Triage(must_inspect=(CART,), may_impact=(PLUGIN,)))
    actions = present.code_actions([report], file="shop/cart.py", rng=_at(18, 25), locator=LOC)
    assert _titles(actions) == [
        f"Next edit: Cart.total — {CART_POINT}",  # itself: the one edit left to make
        "Show blast radius",
        "Run 2 affected tests",
    ]


def test_a_may_site_is_never_the_next_edit_while_a_must_site_exists() -> None:
    report = _report(
        next_edits=NextEdits(
            items=(
                NextEdit(entity=PLUGIN.entity, reason="look at the plugins"),
                NextEdit(entity=CART.entity, reason=CART.reason),
            ),
            failed=True,
            fallback="batch_order",
        )
    )
    targets = present.next_targets(report, locator=LOC)
    assert [t.entity for t in targets] == ["shop.cart.Cart.total", "shop.invoice.line"]
    may_only = _report(
        triage=Triage(may_impact=(PLUGIN,)),
        next_edits=NextEdits(
            items=(NextEdit(entity=PLUGIN.entity, reason=PLUGIN.reason),),
            failed=True,
            fallback="batch_order",
        ),
    )
    [target] = present.next_targets(may_only, locator=LOC)
    assert (target.entity, target.reason) == (
        "shop.plugins.load",
        "may reach price by name: string-keyed getattr of 'price'",
    )


def test_llm_next_edits_take_precedence_over_the_batch_order() -> None:
    report = _report(
        next_edits=NextEdits(
            items=(
                NextEdit(entity=INVOICE.entity, reason="update the invoice first"),
                NextEdit(entity=CART.entity, reason="then the cart"),
            ),
            source="llm",
        )
    )
    targets = present.next_targets(report, locator=LOC)
    assert [(t.entity, t.reason, t.file) for t in targets] == [
        ("shop.invoice.line", "update the invoice first", "shop/invoice.py"),
        ("shop.cart.Cart.total", "then the cart", "shop/cart.py"),
    ]


def test_affected_tests_and_test_failure_diagnostics() -> None:
    assert present.affected_tests(_report()) == [
        "tests/test_pricing.py::test_a",
        "tests/test_pricing.py::test_b",
    ]
    assert present.affected_tests(None) == []
    run = TestRun(
        outcome=RunOutcome.FAILED,
        cases=(
            CaseResult(
                test_id="tests/t.py::test_ok", file="tests/t.py", line=1, outcome=CaseOutcome.PASSED
            ),
            CaseResult(
                test_id="tests/t.py::test_bad",
                file="tests/t.py",
                line=2,
                outcome=CaseOutcome.FAILED,
                message="AssertionError: planted",
            ),
        ),
    )
    LINES["tests/t.py"] = ["def test_ok(): pass", "def test_bad(): assert False"]
    [d] = present.test_diagnostics(run, locator=LOC)["file:///w/tests/t.py"]
    assert d.severity == types.DiagnosticSeverity.Error
    assert d.code == "test-failed"
    assert d.message == "affected test failed: AssertionError: planted"
    assert d.range.start == types.Position(line=1, character=0)
