"""Settling a half-typed edit: hunks that break the parse go back to the baseline, the rest stay."""

from __future__ import annotations

from impact_ls.analysis.classify._settle import (
    LineMap,
    check,
    hunk_lines,
    opcodes,
    settle,
    split_lines,
)

BEFORE = "def login(user):\n    return user\n\n\ndef logout(user):\n    return None\n"


def _settle(before: str, after: str):
    old, new = split_lines(before), split_lines(after)
    ops = opcodes(old, new)
    return ops, settle(ops, old, new, check(before))


def test_a_text_that_parses_keeps_every_hunk():
    after = BEFORE.replace("def logout(user):", "def logout(user, force):")
    _, settled = _settle(BEFORE, after)
    assert settled.reverted == frozenset()
    assert settled.text == after
    assert settled.check.tree is not None and settled.check.errors == ()


def test_only_the_hunk_that_breaks_the_parse_is_put_back():
    after = BEFORE.replace("def login(user):", "def login(user, mfa").replace(
        "return None", "return False"
    )
    ops, settled = _settle(BEFORE, after)
    assert len(settled.hunks) == 2
    assert settled.reverted == frozenset({0})  # the unclosed parameter list
    assert "def login(user):" in settled.text  # back to the baseline line
    assert "return False" in settled.text  # the other edit survives
    assert settled.check.tree is not None
    lines = LineMap(opcodes=ops, p2a=settled.p2a, after_count=len(split_lines(after)))
    assert lines.from_patched(1) == 1 and lines.from_patched(6) == 6


def test_a_baseline_that_was_already_broken_reverts_nothing_for_its_own_error():
    broken = "def a(:\n    pass\n\n\ndef b():\n    return 1\n"
    after = broken.replace("return 1", "return 2")
    _, settled = _settle(broken, after)
    assert settled.reverted == frozenset()
    assert "return 2" in settled.text


def test_error_lines_come_from_parso_as_well_as_ast():
    result = check("def a(:\n    pass\nx = (\n")
    assert result.tree is None
    assert 1 in result.errors and len(result.errors) >= 2


def test_hunk_lines_cover_both_sides_of_an_insertion_point():
    after = BEFORE.replace("    return user\n", "    audit(user)\n    return user\n")
    _, settled = _settle(BEFORE, after)
    old, new = hunk_lines(settled)
    assert new == {2}  # the inserted line in the patched text
    assert old == {1, 2}  # between baseline lines 1 and 2


def test_split_lines_keeps_form_feeds_inside_a_line():
    assert split_lines("a = 1\x0cb = 2\nc = 3\n") == ["a = 1\x0cb = 2\n", "c = 3\n"]


def test_line_map_sends_deleted_baseline_lines_to_their_neighbour():
    after = BEFORE.replace("\n\ndef logout(user):\n    return None\n", "")
    ops = opcodes(split_lines(BEFORE), split_lines(after))
    lines = LineMap(opcodes=ops, p2a=(1, 2), after_count=2)
    assert lines.from_before(1) == 1
    assert lines.before_range(5, 6) == (2, 2)
