"""BM25 over commit messages: the tokenizer and the Okapi formula with k1 = 1.2, b = 0.75."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from impact_ls.history.bm25 import Bm25Corpus, tokenize


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Fix login_service timeout", ("fix", "login", "service", "timeout")),
        ("LoginService.validateMfaCode()", ("login", "service", "validate", "mfa", "code")),
        ("HTTPServerError in parseURL42", ("http", "server", "error", "in", "parse", "url", "42")),
        ("feature/add-mfa-to-login", ("feature", "add", "mfa", "to", "login")),
        ("a b c: x", ()),
        ("Größe ändern", ("größe", "ändern")),
        ("", ()),
    ],
)
def test_tokenize_splits_words_snake_and_camel_case(text: str, tokens: tuple[str, ...]) -> None:
    assert tokenize(text) == tokens


def _by_the_definition(text: str) -> tuple[str, ...]:
    """The docstring's rule word by word: camelCase parts of two characters or more, lowercased."""
    return tuple(
        part.lower()
        for word in re.findall(r"[^\W_]+", text)
        for part in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", word)
        if len(part) >= 2
    )


@given(st.text(alphabet="aAbBzZ09_ -.:\n(", max_size=24))
def test_the_one_pass_tokenizer_of_ascii_messages_splits_as_the_rule_says(text: str) -> None:
    assert tokenize(text) == _by_the_definition(text)


def _corpus() -> Bm25Corpus:
    return Bm25Corpus.from_documents(
        [
            ("fix", "login", "redirect"),
            ("rotate", "session", "tokens"),
            ("fix", "invoice", "totals", "billing", "rounding", "bug"),
            ("fix", "typo"),
        ]
    )


def test_corpus_statistics() -> None:
    corpus = _corpus()
    assert corpus.doc_count == 4
    assert corpus.avg_len == 14 / 4
    assert corpus.doc_freq["fix"] == 3
    assert corpus.doc_freq["login"] == 1
    assert corpus.idf("login") == pytest.approx(math.log(1 + (4 - 1 + 0.5) / 1.5))
    assert corpus.idf("fix") == pytest.approx(math.log(1 + 1.5 / 3.5))
    assert corpus.idf("absent") == 0.0


def test_score_is_the_okapi_formula() -> None:
    corpus = _corpus()
    doc = ("fix", "login", "redirect")
    norm = 1.2 * (1 - 0.75 + 0.75 * 3 / 3.5)
    expected = corpus.idf("login") * 2.2 / (1 + norm) + corpus.idf("fix") * 2.2 / (1 + norm)
    assert corpus.score(["login", "fix", "login"], doc) == pytest.approx(expected)


def test_rare_terms_outweigh_common_ones_and_unmatched_queries_score_zero() -> None:
    corpus = _corpus()
    doc = ("fix", "login", "redirect")
    assert corpus.score(["login"], doc) > corpus.score(["fix"], doc) > 0
    assert corpus.score(["billing"], doc) == 0.0
    assert corpus.score([], doc) == 0.0
    assert Bm25Corpus().score(["fix"], doc) == 0.0


def test_longer_messages_score_lower_for_the_same_match() -> None:
    corpus = _corpus()
    short = corpus.score(["fix"], ("fix", "typo"))
    long = corpus.score(["fix"], ("fix", "invoice", "totals", "billing", "rounding", "bug"))
    assert short > long > 0
