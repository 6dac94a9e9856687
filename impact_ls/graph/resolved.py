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
from array import array
from dataclasses import dataclass
from itertools import chain, repeat
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any

from impact_ls.graph.facts import EXTRACTOR_VERSION, gc_paused
from impact_ls.graph.fastinit import fast_init, fast_many
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
    named = [_HERE / name for name in ("facts.py", "fastinit.py", "builder.py", "resolved.py")]
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
        blob = marshal.dumps(_edge_columns(edges), _MARSHAL_VERSION)
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
_edge_fields = attrgetter("source", "target", "kind", "span", "args", "name_matched", "member")
_SPAN_FIELDS = ("line", "col", "end_line", "end_col")
_span_row = attrgetter(*_SPAN_FIELDS)
_new_shape = fast_init(ArgShape)
_SHAPES: dict[tuple[int, tuple[str, ...], bool, bool], ArgShape] = {}
_MAX_SHAPES = 8192


def _edge_columns(edges: list[Edge]) -> tuple[Any, ...]:
    """One file's edges as columns of plain values, made without a Python call per edge (a
    cold build encodes 400k on django): the file is the record's own, spans are packed ints,
    argument shapes are a table of the distinct ones and an index into it."""
    if not edges:
        return ()
    sources, targets, kinds, spans, shapes, matched, members = zip(
        *map(_edge_fields, edges), strict=True
    )
    shape_ids = list(map(id, shapes))
    distinct = dict(zip(shape_ids, shapes, strict=True))
    slot = {key: i for i, key in enumerate(distinct)}
    return (
        sources,
        targets,
        bytes(map(_EDGE_KIND_INDEX.__getitem__, kinds)),
        array("i", chain.from_iterable(map(_span_row, spans))).tobytes(),
        tuple(
            None if s is None else (s.positional, s.keywords, s.star, s.double_star)
            for s in distinct.values()
        ),
        array("i", map(slot.__getitem__, shape_ids)).tobytes(),
        bytes(matched),
        members,
    )


def decode_edges(blob: bytes, file: str) -> list[Edge] | None:
    """The edges of ``file``'s ``CachedResolution``; ``None`` if they do not decode.

    Edges of one call site share its span and most sites share one of a few hundred argument
    shapes: decoded spans and shapes are shared likewise, so a warm graph is no larger than a
    cold one.
    """
    try:
        return _edges_of(marshal.loads(blob), file)
    except (EOFError, TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
        logger.debug("cached edges do not decode: %r", exc)
        return None


def _edges_of(columns: tuple[Any, ...], file: str) -> list[Edge]:
    # a warm start decodes every edge of the project here (400k on django)
    if not columns:
        return []
    sources, targets, kinds, span_ints, shape_rows, shape_slots, matched, members = columns
    count = len(sources)
    ints = iter(array("i", span_ints))
    rows = list(zip(ints, ints, ints, ints, strict=False))  # a short tail fails the count
    slots = array("i", shape_slots)
    if {len(targets), len(kinds), len(rows), len(slots), len(matched), len(members)} != {count}:
        raise ValueError("edge columns of unequal length")
    distinct = list(dict.fromkeys(rows))
    spans = fast_many(
        Span,
        len(distinct),
        {field: map(itemgetter(i), distinct) for i, field in enumerate(_SPAN_FIELDS)},
    )
    span_of = dict(zip(distinct, spans, strict=True))
    table = [None if row is None else _shared_shape(tuple(row)) for row in shape_rows]
    return fast_many(
        Edge,
        count,
        {
            "source": sources,
            "target": targets,
            "kind": map(_EDGE_KINDS.__getitem__, kinds),
            "file": repeat(file, count),
            "span": map(span_of.__getitem__, rows),
            "args": map(table.__getitem__, slots),
            "name_matched": map(bool, matched),
            "member": members,
        },
    )


def _shared_shape(row: tuple[Any, ...]) -> ArgShape:
    shape = _SHAPES.get(row)
    if shape is None:
        shape = _new_shape(*row)
        if len(_SHAPES) < _MAX_SHAPES:
            _SHAPES[row] = shape
    return shape
