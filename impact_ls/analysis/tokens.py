"""A deterministic token estimate for text handed to a language model (the DAG's 12,000 cap).

One token ≈ four characters of JSON is the usual rule of thumb for GPT-style tokenizers on
code and identifiers; it needs no tokenizer download and gives the same number everywhere.
"""

from __future__ import annotations

_CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """``ceil(len(text) / 4)``: the token count the DAG caps are checked against."""
    return estimate_tokens_of_length(len(text))


def estimate_tokens_of_length(chars: int) -> int:
    """The estimate for a text of ``chars`` characters, when only its length is known."""
    return -(-chars // _CHARS_PER_TOKEN)
