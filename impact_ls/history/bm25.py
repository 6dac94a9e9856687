"""A small Okapi BM25 scorer over tokenized commit messages (k1 = 1.2, b = 0.75).

``tokenize`` splits text on everything that is not a letter or digit (so ``_`` too) and on
camelCase boundaries (``HTTPServerError`` → ``http``, ``server``, ``error``), lowercases, and
drops one-character tokens, which carry no topic. ``Bm25Corpus`` holds the collection
statistics (document count, average length, document frequencies); ``score`` rates one
document against a query with the non-negative IDF ``log(1 + (N - df + 0.5) / (df + 0.5))``, so a
term present in every message still counts a little and never subtracts.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

K1 = 1.2
B = 0.75
MIN_TOKEN_CHARS = 2

_WORDS = re.compile(r"[^\W_]+")
# Acronyms stay whole up to the next capitalised word: HTTPServer → HTTP, Server.
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# ``_CAMEL``'s parts long enough to keep, in one pass: where a part ends never depends on what
# came before it, so skipping a short part leaves the next one as ``_CAMEL`` would find it
_LONG_CAMEL = re.compile(
    f"[A-Z]{{{MIN_TOKEN_CHARS},}}(?![a-z])|[A-Z][a-z]{{{MIN_TOKEN_CHARS - 1},}}"
    f"|[a-z]{{{MIN_TOKEN_CHARS},}}|[0-9]{{{MIN_TOKEN_CHARS},}}"
)


def tokenize(text: str) -> tuple[str, ...]:
    """Lowercased word tokens of ``text``, split on non-alphanumerics, ``_`` and camelCase."""
    if text.isascii():
        # Most messages: every word is split on camelCase, and as no part can span two words
        # one pass over the whole text gives the same parts as one pass per word.
        # Joined, lowercased and split again in C: a part holds no space.
        return tuple(" ".join(_LONG_CAMEL.findall(text)).lower().split())
    tokens: list[str] = []
    for word in _WORDS.findall(text):
        if (word.islower() and word.isalpha()) or not word.isascii():
            # Most message words need no camelCase split; this path keeps mining cheap.
            if len(word) >= MIN_TOKEN_CHARS:
                tokens.append(word.lower())
            continue
        tokens.extend(part.lower() for part in _CAMEL.findall(word) if len(part) >= MIN_TOKEN_CHARS)
    return tuple(tokens)


@dataclass(frozen=True, slots=True, kw_only=True)
class Bm25Corpus:
    """Collection statistics BM25 needs: how many documents, how long, which terms where."""

    doc_count: int = 0
    avg_len: float = 0.0
    doc_freq: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def from_documents(cls, documents: Iterable[Sequence[str]]) -> Bm25Corpus:
        """Statistics of ``documents``, each a sequence of tokens."""
        doc_freq: Counter[str] = Counter()
        count = 0
        total = 0
        for tokens in documents:
            count += 1
            total += len(tokens)
            doc_freq.update(set(tokens))
        return cls(doc_count=count, avg_len=total / count if count else 0.0, doc_freq=doc_freq)

    def idf(self, term: str) -> float:
        """The inverse document frequency of ``term``; 0 for a term no document holds."""
        df = self.doc_freq.get(term, 0)
        if df == 0:
            return 0.0
        return math.log(1.0 + (self.doc_count - df + 0.5) / (df + 0.5))

    def score(self, query: Iterable[str], document: Sequence[str]) -> float:
        """The BM25 score of ``document`` for the distinct terms of ``query``; ≥ 0."""
        if not document or self.avg_len <= 0:
            return 0.0
        counts = Counter(document)
        norm = K1 * (1.0 - B + B * len(document) / self.avg_len)
        total = 0.0
        for term in set(query):
            tf = counts.get(term, 0)
            if tf:
                total += self.idf(term) * tf * (K1 + 1.0) / (tf + norm)
        return total
