"""The reads of removed names a dirty file's current text still makes (``graph/import_reads``)."""

from __future__ import annotations

from impact_ls.graph.import_reads import unbound_reads
from impact_ls.model import EdgeKind

TEXT = """\
import re

_LIMIT = 3


def check(raw, pattern=None):
    _CACHE = {}
    if not _INTEGER_RE.fullmatch(raw):
        raise ValueError(raw)
    return len(raw) < _LIMIT and _CACHE.get(raw, True) and len(pattern or "")


def outer():
    _INTEGER_RE = re.compile("x")

    def inner(raw):
        return _INTEGER_RE.match(raw)

    return inner


@_register
class Sizes:
    small = 1
    big = _small * 10

    def method(self):
        return _INTEGER_RE


def _uses_builtin():
    return len
"""
GONE = {
    "pkg.m._INTEGER_RE",
    "pkg.m._register",
    "pkg.m.Sizes._small",
    "pkg.m._CACHE",
    "pkg.m.len",
}


def _reads(text: str, gone: set[str]) -> list[tuple[str, str, int]]:
    edges = unbound_reads(text, module="pkg.m", file="pkg/m.py", gone=gone)
    assert {e.kind for e in edges} <= {EdgeKind.CLASS_MEMBER}
    return sorted((e.source, e.target, e.span.line) for e in edges)


def test_reads_at_import_and_in_functions_of_removed_names_are_found() -> None:
    assert _reads(TEXT, GONE) == [
        ("pkg.m", "pkg.m._register", 22),  # a decorator runs at import
        ("pkg.m.Sizes", "pkg.m.Sizes._small", 25),  # so does a class body
        ("pkg.m.Sizes.method", "pkg.m._INTEGER_RE", 28),
        ("pkg.m.check", "pkg.m._INTEGER_RE", 8),
    ]
    # not reported: ``_CACHE`` is check's local, outer binds its own ``_INTEGER_RE`` for inner,
    # ``len`` is a builtin


def test_nothing_removed_or_text_that_does_not_parse_gives_nothing() -> None:
    assert _reads(TEXT, set()) == []
    assert _reads("def f(:\n    return _INTEGER_RE\n", GONE) == []
    # a name the current text still binds at module level is no removed name there
    assert _reads("_INTEGER_RE = 1\n\ndef f():\n    return _INTEGER_RE\n", GONE) == []
