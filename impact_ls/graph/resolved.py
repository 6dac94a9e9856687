"""Cache one file's resolved edges with the keys its resolution read from other files.

A warm start used to re-resolve every file (two thirds of its time on django). A file's edges
depend only on its own facts and on the answers the builder's ``Project`` view gave it (each
read is recorded as a key, for incremental updates). So the cache keeps, per file, the edges,
the keys read and a fingerprint of the answers; on the next build a file whose content hash,
module name and fingerprint all match reuses its edges without resolving. Resolution replays
the same reads in the same order as long as every answer is the same, so an equal fingerprint
means equal edges (a different first answer is itself one of the keys).

Rows are stamped with ``RESOLVED_STAMP``: the extractor version, the Python version and a hash
of the source of every module that makes edges (``stamped_sources``), so any change to that code
drops every row.
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import sys
import zlib
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any

from impact_ls.graph.facts import EXTRACTOR_VERSION, gc_paused
from impact_ls.graph.fastinit import fast_init
from impact_ls.model import ArgShape, Edge, EdgeKind, Span

logger = logging.getLogger(__name__)

_Key = tuple[str, str]
_MARSHAL_VERSION = 4
_HERE = Path(__file__).parent


def stamped_sources() -> list[Path]:
    """The source files whose code decides what edges a file gets and how reads are fingerprinted.

    The whole resolver package, what it imports from ``graph/`` and ``model.py``, the builder
    (it fingerprints the reads) and this module (it encodes the rows).
    """
    package = sorted((_HERE / "resolve").glob("*.py"))
    named = [
        _HERE / name
        for name in ("facts.py", "fastinit.py", "kinds.py", "builder.py", "resolved.py")
    ]
    return [*package, *named, _HERE.parent / "model.py"]


def _code_stamp() -> str:
    digest = hashlib.blake2b(digest_size=8)
    for path in stamped_sources():
        try:
            digest.update(path.read_bytes())
        except OSError:  # a zipped install: fall back to the version alone
            digest.update(path.name.encode())
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
    with gc_paused():
        blob = marshal.dumps(list(map(_edge_row, edges)), _MARSHAL_VERSION)
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


_EDGE_KINDS = tuple(EdgeKind)
_EDGE_KIND_INDEX = {kind: i for i, kind in enumerate(_EDGE_KINDS)}
_span_row = attrgetter("line", "col", "end_line", "end_col")
_new_edge = fast_init(Edge)
_new_span = fast_init(Span)
_new_shape = fast_init(ArgShape)
_SHAPES: dict[tuple[int, tuple[str, ...], bool, bool], ArgShape] = {}
_MAX_SHAPES = 8192


def _edge_row(edge: Edge) -> tuple[Any, ...]:
    """An edge as a tuple of plain values in field order (the kind as its index)."""
    args = edge.args
    return (
        edge.source,
        edge.target,
        _EDGE_KIND_INDEX[edge.kind],
        edge.file,
        _span_row(edge.span),
        None if args is None else (args.positional, args.keywords, args.star, args.double_star),
        edge.name_matched,
        edge.member,
    )


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
    # a warm start decodes every edge of the project here: names bound locally
    kinds = _EDGE_KINDS
    shapes = _SHAPES
    new_edge, new_span = _new_edge, _new_span
    spans: dict[tuple[int, int, int, int], Span] = {}
    out: list[Edge] = []
    append = out.append
    for source, target, kind, file, span_row, args, name_matched, member in rows:
        span = spans.get(span_row)
        if span is None:
            span = spans[span_row] = new_span(*span_row)
        if args is None:
            shape = None
        else:
            shape = shapes.get(args)
            if shape is None:
                shape = _new_shape(*args)
                if len(shapes) < _MAX_SHAPES:
                    shapes[args] = shape
        append(new_edge(source, target, kinds[kind], file, span, shape, name_matched, member))
    return out
