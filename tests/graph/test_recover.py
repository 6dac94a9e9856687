"""Facts from text that does not parse: the repair passes, parso's fallback, never a crash."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from impact_ls.graph.facts import FileFacts
from impact_ls.graph.recover import MAX_REPAIRS, recover_facts
from impact_ls.model import NodeKind, ParamKind

AUTH = (
    Path(__file__).resolve().parents[2]
    / "fixtures"
    / "graph_flat"
    / "shop"
    / "accounts"
    / "auth.py"
)


def _syntax_error(text: str) -> SyntaxError:
    try:
        ast.parse(text)
    except SyntaxError as exc:
        return exc
    raise AssertionError("the text parses")


def recovered(code: str) -> FileFacts:
    text = textwrap.dedent(code)
    return recover_facts(
        text, file="pkg/mod.py", module="pkg.mod", is_package=False, error=_syntax_error(text)
    )


def test_a_broken_statement_is_blanked_and_the_rest_keeps_its_lines() -> None:
    facts = recovered(
        """\
        import os

        def f():
            x = (1,
            return os.getcwd()

        def g(a):
            return f(a)
        """
    )
    assert facts.parse_error == "'(' was never closed (line 4)"
    assert [(d.qualname, d.span.line) for d in facts.definitions] == [("f", 3), ("g", 7)]
    # only line 4 went: the next statement of ``f`` keeps its call, every line keeps its number
    assert [(c.scope, c.callee, c.span.line) for c in facts.calls] == [
        ("f", ("os", "getcwd"), 5),
        ("g", ("f",), 8),
    ]
    assert [i.module for i in facts.imports] == ["os"]


def test_an_empty_block_is_closed_with_pass() -> None:
    facts = recovered("def f(x):\n\ndef g():\n    return f(1)\n")
    assert facts.parse_error is not None
    assert "expected an indented block" in facts.parse_error
    f, g = facts.definitions
    # repaired, not guessed: the definition comes from ast with its real signature
    assert (f.qualname, f.signature, [p.name for p in f.params]) == ("f", "def f(x):", ["x"])
    assert g.qualname == "g"
    assert [(c.scope, c.callee) for c in facts.calls] == [("g", ("f",))]


def test_a_broken_header_takes_its_body_with_it_and_parso_restores_the_definition() -> None:
    facts = recovered(
        """\
        class A:
            def m(self, x
                y = 1
                z()

            def n(self):
                w()
        """
    )
    rows = [
        (d.qualname, d.kind, d.span.line, [p.name for p in d.params]) for d in facts.definitions
    ]
    assert rows == [
        ("A", NodeKind.CLASS, 1, []),
        ("A.m", NodeKind.METHOD, 2, ["self", "x"]),
        ("A.n", NodeKind.METHOD, 6, ["self"]),
    ]
    # the broken method's body went with its header; the intact method keeps its call
    assert [(c.scope, c.callee, c.span.line) for c in facts.calls] == [("A.n", ("w",), 7)]


def test_parso_definitions_carry_name_span_signature_and_parameters() -> None:
    facts = recovered(
        """\
        class Service:
            def login(self, user, mfa=None
                return 1
        """
    )
    login = next(d for d in facts.definitions if d.qualname == "Service.login")
    assert login.kind is NodeKind.METHOD
    assert login.in_class
    assert (login.name_span.line, login.name_span.col, login.name_span.end_col) == (2, 8, 13)
    assert login.signature == "def login(self, user, mfa=None"
    params = [(p.name, p.kind, p.has_default) for p in login.params]
    assert params == [
        ("self", ParamKind.POSITIONAL_OR_KEYWORD, False),
        ("user", ParamKind.POSITIONAL_OR_KEYWORD, False),
        ("mfa", ParamKind.POSITIONAL_OR_KEYWORD, True),
    ]


def test_parse_error_is_the_original_error_even_after_a_clean_repair() -> None:
    text = "def f(:\n    pass\n\ndef g():\n    pass\n"
    error = _syntax_error(text)
    facts = recover_facts(text, file="m.py", module="m", is_package=False, error=error)
    assert facts.parse_error == f"{error.msg} (line {error.lineno})"
    assert "g" in [d.qualname for d in facts.definitions]


def test_an_error_that_is_not_a_syntax_error_is_described_by_its_type() -> None:
    text = "def f():\n    pass\x00\n"
    facts = recover_facts(
        text, file="m.py", module="m", is_package=False, error=ValueError("null bytes")
    )
    assert facts.parse_error == "ValueError: null bytes"
    assert isinstance(facts, FileFacts)


def test_more_broken_lines_than_repairs_still_yields_parsos_definitions() -> None:
    broken = "".join(f"x{i} = (\n" for i in range(MAX_REPAIRS + 10))
    text = f"def first(a):\n    return a\n\n{broken}\ndef last(b\n"
    facts = recover_facts(
        text, file="m.py", module="m", is_package=False, error=_syntax_error(text)
    )
    assert facts.parse_error == "invalid syntax (line 5)"
    # the repairs ran out before the text parsed: every definition is parso's, in line order
    assert [(d.qualname, d.span.line, [p.name for p in d.params]) for d in facts.definitions] == [
        ("first", 1, ["a"]),
        ("last", 4 + MAX_REPAIRS + 10 + 1, ["b"]),
    ]
    assert facts.calls == ()


@pytest.mark.parametrize(
    "text",
    ["def (:", "class", '"""never closed', "x = (" * 200, "def f(\x00", "\t\tdef\n  class(:"],
)
def test_hostile_text_never_raises(text: str) -> None:
    facts = recover_facts(
        text,
        file="m.py",
        module="m",
        is_package=False,
        error=SyntaxError("bad", ("m.py", 1, 1, "")),
    )
    assert isinstance(facts, FileFacts)
    assert facts.parse_error == "bad (line 1)"


@settings(max_examples=60, deadline=None, database=None)
@given(
    st.text(alphabet=st.sampled_from(list("def class (): \n\t=,.'\"#@xyz0_*[]\\")), max_size=120)
)
def test_recovery_never_raises_on_arbitrary_text(text: str) -> None:
    facts = recover_facts(
        text,
        file="m.py",
        module="m",
        is_package=False,
        error=SyntaxError("bad", ("m.py", 1, 1, "")),
    )
    assert facts.module == "m"
    assert facts.parse_error == "bad (line 1)"


def _definitions_outside(text: str, cut_line: int) -> set[tuple[str, int]]:
    """The definitions of ``text`` whose header is not on ``cut_line`` nor inside one that is."""
    tree = ast.parse(text)
    out: set[tuple[str, int]] = set()

    def walk(body: list[ast.stmt], parent: str) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if stmt.lineno == cut_line:
                    continue  # its header is the one being typed: it and its body may go
                qual = f"{parent}.{stmt.name}" if parent else stmt.name
                out.add((qual, stmt.lineno))
                walk(stmt.body, qual)
            elif isinstance(stmt, ast.If):
                walk(stmt.body, parent)

    walk(tree.body, "")
    return out


def test_a_real_file_cut_mid_line_keeps_every_definition_not_being_typed() -> None:
    # every line of a real module, half typed in turn: the file as it is between keystrokes
    original = AUTH.read_text(encoding="utf-8")
    lines = original.splitlines(keepends=True)
    checked = 0
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        half = line.rstrip("\n")[: max(1, len(line.rstrip()) // 2)] + "\n"
        text = "".join([*lines[:i], half, *lines[i + 1 :]])
        try:
            ast.parse(text)
            continue  # still valid Python: not recovery's business
        except SyntaxError as exc:
            error = exc
        facts = recover_facts(
            text,
            file="shop/accounts/auth.py",
            module="shop.accounts.auth",
            is_package=False,
            error=error,
        )
        assert facts.parse_error == f"{error.msg} (line {error.lineno})"
        found = {(d.qualname, d.span.line) for d in facts.definitions}
        missing = _definitions_outside(original, i + 1) - found
        assert not missing, f"line {i + 1} half typed ({half.strip()!r}) lost {sorted(missing)}"
        checked += 1
    assert checked >= 15
