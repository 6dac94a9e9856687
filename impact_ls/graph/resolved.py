"""Cache one file's resolved edges with the keys its resolution read from other files.

A warm start used to re-resolve every file (two thirds of its time on django). A file's edges
depend only on its own facts and on the answers the builder's ``Project`` view gave it (each
read is recorded as a key, for incremental updates). So the cache keeps, per file, the edges,
the keys read and a fingerprint of the answers; on the next build a file whose content hash,
module name and fingerprint all match reuses its edges without resolving. Resolution replays
the same reads in the same order as long as every answer is the same, so an equal fingerprint
means equal edges (a different first answer is itself one of the keys).

Rows are stamped with ``RESOLVED_STAMP``: the extractor version, the Python version and a hash
of the resolver's own source, so any change to the code that makes edges drops every row.
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from impact_ls.graph.facts import EXTRACTOR_VERSION, bin_codec, gc_paused
from impact_ls.model import ArgShape, Edge, EdgeKind, Span

logger = logging.getLogger(__name__)

_Key = tuple[str, str]
_MARSHAL_VERSION = 4
# the modules whose code decides what edges a file gets (and how they are fingerprinted)
_CODE = ("resolve.py", "builder.py", "resolved.py", "facts.py", "../model.py")


def _code_stamp() -> str:
    digest = hashlib.blake2b(digest_size=8)
    here = Path(__file__).parent
    for name in _CODE:
        try:
            digest.update((here / name).read_bytes())
        except OSError:  # a zipped install: fall back to the version alone
            digest.update(name.encode())
    return digest.hexdigest()


RESOLVED_STAMP = f"{EXTRACTOR_VERSION}/{sys.version_info[0]}.{sys.version_info[1]}/{_code_stamp()}"


@dataclass(frozen=True, slots=True, kw_only=True)
class CachedResolution:
    """One file's cached resolution, its keys and edges still encoded (``decode_reads``,
    ``decode_edges``): a warm start decodes them one file at a time, never all at once."""

    module: str
    is_package: bool
    fingerprint: bytes
    reads: bytes
    edges: bytes


def encode_resolution(
    *,
    module: str,
    is_package: bool,
    reads: tuple[_Key, ...],
    fingerprint: bytes,
    edges: list[Edge],
) -> bytes:
    """Serialize one file's resolution for the cache (a CRC guards the whole record)."""
    encode = bin_codec(Edge, decode=False)
    with gc_paused():
        blob = marshal.dumps([encode(e) for e in edges], _MARSHAL_VERSION)
        keys = marshal.dumps(reads, _MARSHAL_VERSION)
        payload = marshal.dumps(
            (RESOLVED_STAMP, module, is_package, fingerprint, keys, blob), _MARSHAL_VERSION
        )
    return zlib.crc32(payload).to_bytes(4, "little") + payload


def decode_resolution(data: bytes) -> CachedResolution | None:
    """Parse what ``encode_resolution`` wrote; ``None`` for a damaged or stale record."""
    if not isinstance(data, bytes) or len(data) < 4:
        return None
    payload = memoryview(data)[4:]
    if zlib.crc32(payload) != int.from_bytes(data[:4], "little"):
        return None
    try:
        stamp, module, is_package, fingerprint, keys, blob = marshal.loads(payload)
    except (EOFError, TypeError, ValueError):
        return None
    if stamp != RESOLVED_STAMP:
        return None
    return CachedResolution(
        module=module, is_package=is_package, fingerprint=fingerprint, reads=keys, edges=blob
    )


def decode_reads(blob: bytes) -> tuple[_Key, ...] | None:
    """The sorted read keys of a ``CachedResolution``; ``None`` if they do not decode."""
    try:
        reads = marshal.loads(blob)
    except (EOFError, TypeError, ValueError):
        return None
    return reads if isinstance(reads, tuple) else None


_object_new = object.__new__
_EDGE_SETTERS = tuple(
    getattr(Edge, name).__set__
    for name in ("source", "target", "kind", "file", "span", "args", "name_matched", "member")
)
_SPAN_SETTERS = tuple(
    getattr(Span, name).__set__ for name in ("line", "col", "end_line", "end_col")
)
_KINDS = tuple(EdgeKind)
_SHAPES: dict[tuple[int, tuple[str, ...], bool, bool], ArgShape] = {}
_MAX_SHAPES = 8192


def decode_edges(blob: bytes) -> list[Edge] | None:
    """The edges of a ``CachedResolution``; ``None`` if they do not decode.

    Edges of one call site share its span and most sites share one of a few hundred argument
    shapes: decoded spans and shapes are shared likewise, so a warm graph is no larger than a
    cold one.
    """
    try:
        rows = marshal.loads(blob)
        return _decode_rows(rows)
    except (EOFError, TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
        logger.debug("cached edges do not decode: %r", exc)
        return None


def _decode_rows(rows: list[tuple[Any, ...]]) -> list[Edge]:
    new = _object_new
    set_source, set_target, set_kind, set_file, set_span, set_args, set_matched, set_member = (
        _EDGE_SETTERS
    )
    set_line, set_col, set_end_line, set_end_col = _SPAN_SETTERS
    kinds = _KINDS
    shapes = _SHAPES
    spans: dict[tuple[int, int, int, int], Span] = {}
    out: list[Edge] = []
    for source, target, kind, file, span_row, args, name_matched, member in rows:
        edge = new(Edge)
        set_source(edge, source)
        set_target(edge, target)
        set_kind(edge, kinds[kind])
        set_file(edge, file)
        span = spans.get(span_row)
        if span is None:
            span = new(Span)
            line, col, end_line, end_col = span_row
            set_line(span, line)
            set_col(span, col)
            set_end_line(span, end_line)
            set_end_col(span, end_col)
            spans[span_row] = span
        set_span(edge, span)
        if args is not None:
            shape = shapes.get(args)
            if shape is None:
                positional, keywords, star, double_star = args
                shape = ArgShape(
                    positional=positional, keywords=keywords, star=star, double_star=double_star
                )
                if len(shapes) < _MAX_SHAPES:
                    shapes[args] = shape
            args = shape  # noqa: PLW2901 - the decoded value of the row's field
        set_args(edge, args)
        set_matched(edge, name_matched)
        set_member(edge, member)
        out.append(edge)
    return out
