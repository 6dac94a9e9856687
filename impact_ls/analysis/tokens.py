"""A deterministic token estimate for text handed to a language model (the DAG's 12,000 cap).

One token ≈ four characters of JSON is the usual rule of thumb for GPT-style tokenizers on
code and identifiers; it needs no tokenizer download and gives the same number everywhere.
"""

from __future__ import annotations

_CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """``ceil(len(text) / 4)``: the token count the DAG caps are checked against."""
    return -(-len(text) // _CHARS_PER_TOKEN)
