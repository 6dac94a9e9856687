"""Everything one Python file yields to the code graph, as frozen values plus a binary codec.

``extract/`` turns a file's text into a ``FileFacts``; ``resolve/`` turns the facts of all files
into nodes and edges. Facts never depend on other files, so they can be cached by content
hash (``graph/store.py`` stores ``facts_to_bytes``) and re-extracted one file at a time.

Qualnames inside facts are module-relative (``Class.method``; ``""`` is the module itself), so a
file moved under another source root keeps its facts and only changes ``module``.

Expressions are kept as dotted chains (``Chain``): ``self.svc.login`` is ``("self", "svc",
"login")``; ``"()"`` marks a call result (``Cls().run`` is ``("Cls", "()", "run")``), ``"super()"``
is a ``super()`` call, ``"[]"`` an element (``fns[0]()`` is ``("fns", "[]")``) and ``"?"`` an
expression that is not a plain chain (``(a or b).run``).

Bump ``EXTRACTOR_VERSION`` whenever extraction or the fact layout changes: cached facts carry it
and a mismatch is a cache miss.
"""

from __future__ import annotations

import gc
import logging
import marshal
import struct
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, TypeVar, cast, overload

from impact_ls.graph.fastinit import fast_init
from impact_ls.model import ArgShape, DynamicKind, NodeKind, Param, ParamKind, Span

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # pragma: no cover - exercised only on 3.10
    from impact_ls.model import StrEnum  # type: ignore[attr-defined]

logger = logging.getLogger(__name__)

EXTRACTOR_VERSION = "20"

Chain = tuple[str, ...]

UNKNOWN = "?"
CALL = "()"
SUPER = "super()"
DECORATED = "@"  # the key under which a decorator's call passes the decorated definition
ITEM = "[]"  # an element of a container: ``fns[0]`` is ``("fns", "[]")``
# the target under which a parameter's default is assigned in the scope holding the ``def``:
# ``def f(key=ident)`` is ``("f", "=", "key")`` ← ``("ident",)``
DEFAULT = "="


def is_dunder(name: str) -> bool:
    """A special method's name (``__call__``, ``__repr__``): a protocol any class may define."""
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


_FROZEN: dict[str, bool] = {"frozen": True, "slots": True, "kw_only": True}


class AccessKind(StrEnum):
    """How an expression touches a name or attribute."""

    READ = "read"
    WRITE = "write"


@dataclass(**_FROZEN)
class FixtureInfo:
    """The pytest fixture side of a definition."""

    name: str
    autouse: bool = False


@dataclass(**_FROZEN)
class Request:
    """A fixture name a test or fixture asks for (a parameter or ``usefixtures``), with its span."""

    name: str
    span: Span


@dataclass(**_FROZEN)
class TypeHint:
    """The class an annotation names, reduced to one chain (``Optional[Foo]`` → ``Foo``)."""

    name: str
    chain: Chain


@dataclass(**_FROZEN)
class DefFact:
    """One ``class``/``def`` with everything needed to build its node and bind calls to it.

    ``returns`` is the class the return annotation names; ``returns_value`` what every
    ``return`` of an unannotated function gives, when they all agree and start from no local
    name (``return Session()`` → ``("Session", "()")``, ``return self`` → ``("self",)``).
    """

    qualname: str
    kind: NodeKind
    span: Span
    name_span: Span
    in_class: bool = False
    is_async: bool = False
    signature: str = ""
    doc: str = ""
    params: tuple[Param, ...] = ()
    param_types: tuple[TypeHint, ...] = ()
    returns: Chain = ()
    returns_value: Chain = ()
    decorators: tuple[str, ...] = ()
    bases: tuple[Chain, ...] = ()
    base_spans: tuple[Span, ...] = ()
    attributes: tuple[str, ...] = ()
    strings: tuple[str, ...] = ()
    test_id: str | None = None
    fixture: FixtureInfo | None = None
    requests: tuple[Request, ...] = ()
    decorated_by: Chain = ()  # the outermost decorator, ``()``-ended when it is a factory call
    # when the ``return``s disagree but each can be followed: what each gives (``return None``
    # left out), ``returns_value`` then being ``()``
    returns_options: tuple[Chain, ...] = ()

    @property
    def name(self) -> str:
        """The last dotted component of the qualname."""
        return self.qualname.rsplit(".", 1)[-1]

    @property
    def parent(self) -> str:
        """The module-relative qualname of the enclosing definition (``""`` = the module)."""
        return self.qualname.rpartition(".")[0]


@dataclass(**_FROZEN)
class CallFact:
    """A call site: the callee chain, the argument shape and the enclosing scope.

    ``values`` are the arguments that are chains (``run(job, on_done=self.finish)`` →
    ``(("0", ("job",)), ("on_done", ("self", "finish")))``), keyed by position or keyword: what
    flows into the callee's parameters, and the functions handed to a library. A decorator's call
    passes the decorated definition under the key ``"@"``.
    """

    scope: str
    callee: Chain
    span: Span
    args: ArgShape
    head_local: bool = False
    values: tuple[tuple[str, Chain], ...] = ()


@dataclass(**_FROZEN)
class AccessFact:
    """A read or write of an attribute chain (``self.x``, ``obj.a.b``) or of a global name."""

    scope: str
    chain: Chain
    access: AccessKind
    span: Span
    head_local: bool = False


@dataclass(**_FROZEN)
class TypeRefFact:
    """A class named in an annotation (parameter, return, variable) or a string annotation."""

    scope: str
    chain: Chain
    span: Span


@dataclass(**_FROZEN)
class ImportFact:
    """One imported name: ``import a.b as c`` or ``from ..a import b as c`` (``*`` for star)."""

    scope: str
    module: str
    level: int
    name: str | None
    asname: str | None
    span: Span
    type_checking: bool = False

    @property
    def bound(self) -> str:
        """The local name this import binds (``import a.b`` binds ``a``)."""
        if self.asname:
            return self.asname
        if self.name is not None:
            return self.name
        return self.module.split(".", 1)[0]


@dataclass(**_FROZEN)
class AssignFact:
    """A binding that gives a local, global, class attribute or ``self.x`` a known type.

    ``value`` is the chain of the called constructor (``x = Cls()`` → ``("Cls",)``), or the
    annotated class when ``annotated`` (``x: Cls``), or the aliased expression when ``alias``
    (``self.repo = repo`` → ``("repo",)``: the binding has whatever type ``repo`` has there).
    """

    scope: str
    target: Chain
    value: Chain
    span: Span
    annotated: bool = False
    alias: bool = False


@dataclass(**_FROZEN)
class DynamicFact:
    """A reference made through a string or a hook that static resolution cannot follow."""

    scope: str
    name: str
    kind: DynamicKind
    span: Span


@dataclass(**_FROZEN)
class FileFacts:
    """Everything extracted from one file, independent of every other file."""

    file: str
    module: str
    is_package: bool = False
    line_count: int = 0
    doc: str = ""
    definitions: tuple[DefFact, ...] = ()
    # tuples, or ``Decoded`` stand-ins for them when read from the cache
    calls: Sequence[CallFact] = ()
    accesses: Sequence[AccessFact] = ()
    type_refs: tuple[TypeRefFact, ...] = ()
    imports: tuple[ImportFact, ...] = ()
    assigns: tuple[AssignFact, ...] = ()
    constants: tuple[str, ...] = ()
    all_names: tuple[str, ...] | None = None
    dynamic: tuple[DynamicFact, ...] = ()
    strings: tuple[str, ...] = ()
    parse_error: str | None = None

    @property
    def is_test_file(self) -> bool:
        """Whether pytest collects tests from this file by its default name patterns."""
        base = self.file.rsplit("/", 1)[-1]
        return (base.startswith("test_") or base.endswith("_test.py")) and base.endswith(".py")

    @property
    def is_conftest(self) -> bool:
        """Whether this is a ``conftest.py``."""
        return self.file.rsplit("/", 1)[-1] == "conftest.py"


@contextmanager
def gc_paused() -> Iterator[None]:
    """Hold the cyclic garbage collector while building many small acyclic objects.

    Facts are trees of frozen tuples and dataclasses (refcounting frees them); with the collector
    running, every few hundred allocations it rescans the ever-growing set of live facts, which
    more than doubles extraction, decoding and resolution time on a large project.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# The binary codec: what the cache stores and extraction workers send. Each value is a nested
# tuple of plain values in field order (an enum as its index, a span as four ints), dumped with
# ``marshal`` behind a magic, the version stamp and a CRC of the payload. The CRC catches a
# damaged row, so decoding need not type-check every field (a checking decoder was several
# times slower). The layout is written out per type below; ``test_facts.py`` round-trips a value
# of every type with every field set, so a field missing here fails there.

_MAGIC = b"IMPF"
_F = TypeVar("_F")
_HEADER = struct.Struct("<4sI")
_BIN_STAMP = f"{EXTRACTOR_VERSION}/{sys.version_info[0]}.{sys.version_info[1]}"
_MARSHAL_VERSION = 4

_span_row = attrgetter("line", "col", "end_line", "end_col")
_PARAM_KINDS = tuple(ParamKind)
_NODE_KINDS = tuple(NodeKind)
_ACCESS_KINDS = tuple(AccessKind)
_DYNAMIC_KINDS = tuple(DynamicKind)
_PARAM_KIND_INDEX = {kind: i for i, kind in enumerate(_PARAM_KINDS)}
_NODE_KIND_INDEX = {kind: i for i, kind in enumerate(_NODE_KINDS)}
_ACCESS_KIND_INDEX = {kind: i for i, kind in enumerate(_ACCESS_KINDS)}
_DYNAMIC_KIND_INDEX = {kind: i for i, kind in enumerate(_DYNAMIC_KINDS)}

_new_span = fast_init(Span)
_new_param = fast_init(Param)
_new_shape = fast_init(ArgShape)
_new_fixture = fast_init(FixtureInfo)
_new_request = fast_init(Request)
_new_hint = fast_init(TypeHint)
_new_def = fast_init(DefFact)
_new_call = fast_init(CallFact)
_new_access = fast_init(AccessFact)
_new_type_ref = fast_init(TypeRefFact)
_new_import = fast_init(ImportFact)
_new_assign = fast_init(AssignFact)
_new_dynamic = fast_init(DynamicFact)
_new_file = fast_init(FileFacts)

# argument shapes and parameters repeat endlessly: decoded ones are shared (they are frozen)
_SHARED_MAX = 8192
_shapes: dict[tuple[Any, ...], ArgShape] = {}
_params: dict[tuple[Any, ...], Param] = {}


def _encode_shape(shape: ArgShape) -> tuple[Any, ...]:
    return (shape.positional, shape.keywords, shape.star, shape.double_star)


def _decode_shape(row: tuple[Any, ...]) -> ArgShape:
    shape = _shapes.get(row)
    if shape is None:
        shape = _new_shape(*row)
        if len(_shapes) < _SHARED_MAX:
            _shapes[row] = shape
    return shape


def _decode_param(row: tuple[Any, ...]) -> Param:
    param = _params.get(row)
    if param is None:
        name, kind, has_default = row
        param = _new_param(name, _PARAM_KINDS[kind], has_default)
        if len(_params) < _SHARED_MAX:
            _params[row] = param
    return param


def _encode_def(d: DefFact) -> tuple[Any, ...]:
    fixture = d.fixture
    return (
        d.qualname,
        _NODE_KIND_INDEX[d.kind],
        _span_row(d.span),
        _span_row(d.name_span),
        d.in_class,
        d.is_async,
        d.signature,
        d.doc,
        tuple([(p.name, _PARAM_KIND_INDEX[p.kind], p.has_default) for p in d.params]),
        tuple([(h.name, h.chain) for h in d.param_types]),
        d.returns,
        d.returns_value,
        d.decorators,
        d.bases,
        tuple(map(_span_row, d.base_spans)),
        d.attributes,
        d.strings,
        d.test_id,
        None if fixture is None else (fixture.name, fixture.autouse),
        tuple([(r.name, _span_row(r.span)) for r in d.requests]),
        d.decorated_by,
        d.returns_options,
    )


def _decode_def(row: tuple[Any, ...]) -> DefFact:
    (
        qualname,
        kind,
        span,
        name_span,
        in_class,
        is_async,
        signature,
        doc,
        params,
        param_types,
        returns,
        returns_value,
        decorators,
        bases,
        base_spans,
        attributes,
        strings,
        test_id,
        fixture,
        requests,
        decorated_by,
        returns_options,
    ) = row
    return _new_def(
        qualname,
        _NODE_KINDS[kind],
        _new_span(*span),
        _new_span(*name_span),
        in_class,
        is_async,
        signature,
        doc,
        tuple(map(_decode_param, params)),
        tuple([_new_hint(name, chain) for name, chain in param_types]),
        returns,
        returns_value,
        decorators,
        bases,
        tuple([_new_span(*s) for s in base_spans]),
        attributes,
        strings,
        test_id,
        None if fixture is None else _new_fixture(*fixture),
        tuple([_new_request(name, _new_span(*s)) for name, s in requests]),
        decorated_by,
        returns_options,
    )


# a call or an access as the values of its fact's fields, in field order: what an extraction
# worker hands ``encoded_facts`` instead of the fact it would only encode
CallParts = tuple[str, Chain, Span, ArgShape, bool, tuple[tuple[str, Chain], ...]]
AccessParts = tuple[str, Chain, AccessKind, Span, bool]
_call_parts = attrgetter("scope", "callee", "span", "args", "head_local", "values")
_access_parts = attrgetter("scope", "chain", "access", "span", "head_local")


def _call_rows(calls: Iterable[CallParts]) -> tuple[Any, ...]:
    return tuple(
        [
            (scope, callee, _span_row(span), _encode_shape(args), head_local, values)
            for scope, callee, span, args, head_local, values in calls
        ]
    )


def _access_rows(accesses: Iterable[AccessParts]) -> tuple[Any, ...]:
    kinds = _ACCESS_KIND_INDEX
    return tuple(
        [
            (scope, chain, kinds[access], _span_row(span), head_local)
            for scope, chain, access, span, head_local in accesses
        ]
    )


def _nested(rows: tuple[Any, ...]) -> tuple[int, bytes]:
    """Rows kept as their own ``marshal`` bytes (and their count) inside a file's record: a
    warm start holds them as bytes until ``Decoded`` makes them facts."""
    return len(rows), marshal.dumps(rows, _MARSHAL_VERSION)


def _encode_file(
    f: FileFacts, calls: tuple[Any, ...] | None = None, accesses: tuple[Any, ...] | None = None
) -> tuple[Any, ...]:
    return (
        f.file,
        f.module,
        f.is_package,
        f.line_count,
        f.doc,
        tuple(map(_encode_def, f.definitions)),
        _nested(_call_rows(map(_call_parts, f.calls)) if calls is None else calls),
        _nested(_access_rows(map(_access_parts, f.accesses)) if accesses is None else accesses),
        tuple([(t.scope, t.chain, _span_row(t.span)) for t in f.type_refs]),
        tuple(
            [
                (i.scope, i.module, i.level, i.name, i.asname, _span_row(i.span), i.type_checking)
                for i in f.imports
            ]
        ),
        tuple(
            [
                (a.scope, a.target, a.value, _span_row(a.span), a.annotated, a.alias)
                for a in f.assigns
            ]
        ),
        f.constants,
        f.all_names,
        tuple(
            [(d.scope, d.name, _DYNAMIC_KIND_INDEX[d.kind], _span_row(d.span)) for d in f.dynamic]
        ),
        f.strings,
        f.parse_error,
    )


def _decode_file(row: tuple[Any, ...]) -> FileFacts:
    (
        file,
        module,
        is_package,
        line_count,
        doc,
        definitions,
        calls,
        accesses,
        type_refs,
        imports,
        assigns,
        constants,
        all_names,
        dynamic,
        strings,
        parse_error,
    ) = row
    span = _new_span
    return _new_file(
        file,
        module,
        is_package,
        line_count,
        doc,
        tuple(map(_decode_def, definitions)),
        Decoded(calls[0], calls[1], _decode_calls),
        Decoded(accesses[0], accesses[1], _decode_accesses),
        tuple([_new_type_ref(scope, chain, span(*s)) for scope, chain, s in type_refs]),
        tuple(
            [
                _new_import(scope, module_name, level, name, asname, span(*s), type_checking)
                for scope, module_name, level, name, asname, s, type_checking in imports
            ]
        ),
        tuple(
            [
                _new_assign(scope, target, value, span(*s), annotated, alias)
                for scope, target, value, s, annotated, alias in assigns
            ]
        ),
        constants,
        all_names,
        tuple(
            [
                _new_dynamic(scope, name, _DYNAMIC_KINDS[kind], span(*s))
                for scope, name, kind, s in dynamic
            ]
        ),
        strings,
        parse_error,
    )


def _decode_calls(rows: tuple[Any, ...]) -> tuple[CallFact, ...]:
    span = _new_span
    shapes = _shapes
    return tuple(
        [
            # the shared shape inline, not a call per call fact (233k on django)
            _new_call(
                scope, callee, span(*s), shapes.get(args) or _decode_shape(args), head_local, values
            )
            for scope, callee, s, args, head_local, values in rows
        ]
    )


def _decode_accesses(rows: tuple[Any, ...]) -> tuple[AccessFact, ...]:
    span = _new_span
    return tuple(
        [
            _new_access(scope, chain, _ACCESS_KINDS[access], span(*s), head_local)
            for scope, chain, access, s, head_local in rows
        ]
    )


class Decoded(Sequence[_F]):
    """A file's call or access facts as read from the cache, made on first use.

    A warm start reads every file's facts but resolves none of them (their edges are cached
    too): only a file re-resolved later, or a fixture's calls, are ever looked at. Making the
    305k call and access facts of django up front was a sixth of its warm start, and keeping
    their rows instead cost 26 MB: until first use they stay the ``marshal`` bytes they were
    stored as. Reads as the tuple it stands for (iteration, ``len``, indexing, ``==`` and
    ``hash`` with tuples).
    """

    __slots__ = ("_blob", "_count", "_decode", "_facts")

    def __init__(
        self, count: int, blob: bytes, decode: Callable[[tuple[Any, ...]], tuple[_F, ...]]
    ) -> None:
        self._count = count
        self._blob: bytes | None = blob
        self._decode = decode
        self._facts: tuple[_F, ...] | None = None

    def facts(self) -> tuple[_F, ...]:
        """The decoded facts (decoded now if this is the first use)."""
        facts = self._facts
        if facts is None:
            blob = self._blob
            if blob is None:  # another thread decoded them between the two reads
                return cast("tuple[_F, ...]", self._facts)
            with gc_paused():
                facts = self._decode(marshal.loads(blob))
            # a racing thread decodes the same bytes to an equal tuple; either one may stay.
            # ``_facts`` is set before ``_blob`` is cleared, so no reader sees neither.
            self._facts = facts
            self._blob = None
        return facts

    def __iter__(self) -> Iterator[_F]:
        return iter(self.facts())

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> _F: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[_F, ...]: ...
    def __getitem__(self, index: int | slice) -> _F | tuple[_F, ...]:
        return self.facts()[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Decoded):
            other = other.facts()
        return self.facts() == other

    def __hash__(self) -> int:
        return hash(self.facts())

    def __repr__(self) -> str:
        return repr(self.facts())


def facts_to_bytes(facts: FileFacts) -> bytes:
    """Serialize ``facts`` compactly for the cache, stamped with ``EXTRACTOR_VERSION``."""
    with gc_paused():
        return _framed(_encode_file(facts))


def encoded_facts(
    facts: FileFacts, *, calls: Iterable[CallParts], accesses: Iterable[AccessParts]
) -> bytes:
    """``facts_to_bytes`` of ``facts`` with these calls and accesses in place of its own.

    An extraction worker only encodes what it extracts: handed the values of each call's and
    access's fields, it never makes those facts (305k on django) only to take them apart.
    """
    with gc_paused():
        return _framed(_encode_file(facts, _call_rows(calls), _access_rows(accesses)))


def _framed(body: tuple[Any, ...]) -> bytes:
    payload = marshal.dumps((_BIN_STAMP, body), _MARSHAL_VERSION)
    return _HEADER.pack(_MAGIC, zlib.crc32(payload)) + payload


def facts_from_bytes(data: bytes) -> FileFacts:
    """Parse what ``facts_to_bytes`` wrote; raise ``ValueError`` on corrupt or stale input."""
    if not isinstance(data, (bytes, bytearray, memoryview)) or len(data) < _HEADER.size:
        raise ValueError("corrupt facts: not a facts record")
    magic, crc = _HEADER.unpack_from(data)
    payload = memoryview(data)[_HEADER.size :]
    if magic != _MAGIC or zlib.crc32(payload) != crc:
        raise ValueError("corrupt facts: bad magic or checksum")
    with gc_paused():
        try:
            stamp, body = marshal.loads(payload)
        except (EOFError, TypeError, ValueError) as exc:
            raise ValueError(f"corrupt facts: {exc!r}") from exc
        if stamp != _BIN_STAMP:
            raise ValueError("facts were written by another extractor version")
        try:
            return _decode_file(body)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
            raise ValueError(f"corrupt facts: {exc!r}") from exc


__all__ = [
    "CALL",
    "DECORATED",
    "DEFAULT",
    "EXTRACTOR_VERSION",
    "ITEM",
    "SUPER",
    "UNKNOWN",
    "AccessFact",
    "AccessKind",
    "AccessParts",
    "ArgShape",
    "AssignFact",
    "CallFact",
    "CallParts",
    "Chain",
    "DefFact",
    "DynamicFact",
    "FileFacts",
    "FixtureInfo",
    "ImportFact",
    "Param",
    "ParamKind",
    "Request",
    "TypeHint",
    "TypeRefFact",
    "encoded_facts",
    "facts_from_bytes",
    "facts_to_bytes",
    "gc_paused",
    "is_dunder",
]
