"""Small wording helpers shared by every human-facing rendering (terminal text, editor lenses)."""

from __future__ import annotations


def plural(count: int, noun: str) -> str:
    """``1 site``, ``2 sites``, ``3 batches``: the count with its noun in the right number."""
    if count == 1:
        return f"{count} {noun}"
    suffix = "es" if noun.endswith(("s", "sh", "ch", "x")) else "s"
    return f"{count} {noun}{suffix}"


def short_entity(entity: str) -> str:
    """``Class.method`` for a method, the bare name otherwise: enough to recognise a site."""
    parts = entity.split(".")
    if len(parts) >= 2 and parts[-2][:1].isupper():
        return ".".join(parts[-2:])
    return parts[-1]
