"""Everything one Python file yields to the code graph, as frozen values plus a binary codec.

``extract.py`` turns a file's text into a ``FileFacts``; ``resolve.py`` turns the facts of all
files into nodes and edges. Facts never depend on other files, so they can be cached by content
hash (``graph/store.py`` stores ``facts_to_bytes``) and re-extracted one file at a time.

Qualnames inside facts are module-relative (``Class.method``; ``""`` is the module itself), so a
file moved under another source root keeps its facts and only changes ``module``.

Expressions are kept as dotted chains (``Chain``): ``self.svc.login`` is ``("self", "svc",
"login")``; ``"()"`` marks a call result (``Cls().run`` is ``("Cls", "()", "run")``), ``"super()"``
is a ``super()`` call and ``"?"`` an expression that is not a plain chain (``x[0].run``).

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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import MISSING, dataclass, fields, is_dataclass
from operator import attrgetter
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

from impact_ls.model import ArgShape, DynamicKind, NodeKind, Param, ParamKind, Span

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # pragma: no cover - exercised only on 3.10
    from impact_ls.model import StrEnum  # type: ignore[attr-defined]

logger = logging.getLogger(__name__)

EXTRACTOR_VERSION = "5"

Chain = tuple[str, ...]

UNKNOWN = "?"
CALL = "()"
SUPER = "super()"

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
    """A call site: the callee chain, the argument shape and the enclosing scope."""

    scope: str
    callee: Chain
    span: Span
    args: ArgShape
    head_local: bool = False


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
    calls: tuple[CallFact, ...] = ()
    accesses: tuple[AccessFact, ...] = ()
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


_T = TypeVar("_T")
_FAST_INITS: dict[type, Callable[..., Any]] = {}


def fast_init(cls: type[_T]) -> Callable[..., _T]:
    """A keyword constructor for frozen slots dataclass ``cls`` that skips its ``__init__``.

    The generated ``__init__`` of a frozen dataclass sets each field through
    ``object.__setattr__``; building the object with ``object.__new__`` and the slot setters is
    about twice as fast, which matters for the hundreds of thousands of spans, facts and edges
    a large project makes. Only for dataclasses without ``__post_init__`` or default factories.
    """
    found = _FAST_INITS.get(cls)
    if found is not None:
        return found
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has __post_init__")
    env: dict[str, Any] = {"_cls": cls, "_new": object.__new__}
    params: list[str] = []
    body: list[str] = []
    for f in fields(cls):  # type: ignore[arg-type]
        if f.default_factory is not MISSING:
            raise TypeError(f"{cls.__name__}.{f.name} has a default factory")
        if f.default is MISSING:
            params.append(f.name)
        else:
            env[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        env[f"_set_{f.name}"] = getattr(cls, f.name).__set__
        body.append(f"    _set_{f.name}(o, {f.name})")
    code = "\n".join(
        [f"def make(*, {', '.join(params)}):", "    o = _new(_cls)", *body, "    return o", ""]
    )
    # generated from our own dataclass definitions, never from input
    exec(compile(code, f"<fast init {cls.__name__}>", "exec"), env)
    make: Callable[..., _T] = env["make"]
    _FAST_INITS[cls] = make
    return make


# What the cache stores and workers send: nested positional tuples (enums as their index) dumped
# with ``marshal``, behind a magic, the version stamp and a CRC of the payload. The CRC catches a
# damaged row, so the decoder need not type-check every field (a checking decoder was several
# times slower); objects are made with ``object.__new__`` and the slot setters, skipping
# the frozen dataclasses' ``__init__`` (half of the decoding cost).

_MAGIC = b"IMPF"
_HEADER = struct.Struct("<4sI")
_BIN_STAMP = f"{EXTRACTOR_VERSION}/{sys.version_info[0]}.{sys.version_info[1]}"
_MARSHAL_VERSION = 4
_PLAIN = (str, int, bool, type(None))
_BIN_ENCODERS: dict[Any, Callable[[Any], Any]] = {}
_BIN_DECODERS: dict[Any, Callable[[Any], Any]] = {}
# ArgShape and Param values repeat endlessly; decoded ones are shared (they are frozen)
_SHARED_MAX = 8192


def _bin_expr(tp: Any, src: str, env: dict[str, Any], *, decode: bool, depth: int = 0) -> str:
    """A Python expression encoding (or decoding) ``src`` as a value of type ``tp``."""
    tp = getattr(tp, "__supertype__", tp)  # a NewType (``QualName``) is stored as its base
    if tp in _PLAIN:
        return src
    if tp is Span:
        if decode:
            env["_dec_span"] = _dec_span
            return f"_dec_span({src})"
        env["_enc_span"] = attrgetter("line", "col", "end_line", "end_col")
        return f"_enc_span({src})"
    if isinstance(tp, type) and issubclass(tp, StrEnum):
        members = list(tp)
        if decode:
            env[f"_members_{tp.__name__}"] = members
            return f"_members_{tp.__name__}[{src}]"
        env[f"_index_{tp.__name__}"] = {m: i for i, m in enumerate(members)}
        return f"_index_{tp.__name__}[{src}]"
    if isinstance(tp, type) and is_dataclass(tp):
        name = f"_{'dec' if decode else 'enc'}_{tp.__name__}"
        env[name] = _bin_codec(tp, decode=decode)
        return f"{name}({src})"
    origin = get_origin(tp)
    if origin is tuple:
        args = get_args(tp)
        item = args[0]
        inner = _bin_expr(item, "e", env, decode=decode, depth=depth + 1)
        if inner == "e":
            return src  # a tuple of plain values (or of chains) is stored as it is
        if inner.endswith("(e)") and inner[:-3].isidentifier():
            return f"tuple(map({inner[:-3]}, {src}))"
        return f"tuple([{inner} for e in {src}])"
    if origin is Union or type(tp).__name__ == "UnionType":
        inner_tp = next(a for a in get_args(tp) if a is not type(None))
        var = f"_y{depth}"
        inner = _bin_expr(inner_tp, var, env, decode=decode, depth=depth + 1)
        if inner == var:
            return src
        return f"(None if ({var} := {src}) is None else {inner})"
    raise TypeError(f"no binary codec for {tp!r}")


def _bin_codec(tp: Any, *, decode: bool) -> Callable[[Any], Any]:
    table = _BIN_DECODERS if decode else _BIN_ENCODERS
    found = table.get(tp)
    if found is not None:
        return found
    hints = get_type_hints(tp, vars(sys.modules[tp.__module__]))
    names = [f.name for f in fields(tp)]
    env: dict[str, Any] = {"_cls": tp, "_new": object.__new__}
    if decode:
        lines = ["def codec(v):", f"    {', '.join(f'v{i}' for i in range(len(names)))}, = v"]
        lines.append("    o = _new(_cls)")
        for i, n in enumerate(names):
            env[f"_set_{n}"] = getattr(tp, n).__set__
            lines.append(f"    _set_{n}(o, {_bin_expr(hints[n], f'v{i}', env, decode=True)})")
        lines.append("    return o")
    else:
        parts = [_bin_expr(hints[n], f"o.{n}", env, decode=False) for n in names]
        lines = ["def codec(o):", f"    return ({', '.join(parts)},)"]
    # the code is generated from our own dataclasses, never from input
    exec(compile("\n".join(lines) + "\n", f"<facts codec {tp.__name__}>", "exec"), env)
    codec: Callable[[Any], Any] = env["codec"]
    if decode and tp in (ArgShape, Param):
        codec = _shared_by_value(codec)
    table[tp] = codec
    return codec


def bin_codec(tp: Any, *, decode: bool) -> Callable[[Any], Any]:
    """The positional-tuple encoder (or decoder) of frozen slots dataclass ``tp``, for marshal.

    Used for the facts themselves and for other cached records (``resolved.py``'s edges).
    """
    return _bin_codec(tp, decode=decode)


def _shared_by_value(decode: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Reuse equal decoded values, keyed by their (hashable) encoded tuple."""
    seen: dict[Any, Any] = {}

    def shared(v: Any) -> Any:
        found = seen.get(v)
        if found is None:
            found = decode(v)
            if len(seen) < _SHARED_MAX:
                seen[v] = found
        return found

    return shared


_span_new = object.__new__
_span_set = tuple(getattr(Span, n).__set__ for n in ("line", "col", "end_line", "end_col"))


def _dec_span(v: Any, _new: Any = _span_new, _s: Any = _span_set) -> Span:
    line, col, end_line, end_col = v
    span = _new(Span)
    _s[0](span, line)
    _s[1](span, col)
    _s[2](span, end_line)
    _s[3](span, end_col)
    return span  # type: ignore[no-any-return]


def facts_to_bytes(facts: FileFacts) -> bytes:
    """Serialize ``facts`` compactly for the cache, stamped with ``EXTRACTOR_VERSION``."""
    with gc_paused():
        payload = marshal.dumps(
            (_BIN_STAMP, _bin_codec(FileFacts, decode=False)(facts)), _MARSHAL_VERSION
        )
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
            facts = _bin_codec(FileFacts, decode=True)(body)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
            raise ValueError(f"corrupt facts: {exc!r}") from exc
    return facts  # type: ignore[no-any-return]


__all__ = [
    "CALL",
    "EXTRACTOR_VERSION",
    "SUPER",
    "UNKNOWN",
    "AccessFact",
    "AccessKind",
    "ArgShape",
    "AssignFact",
    "CallFact",
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
    "bin_codec",
    "facts_from_bytes",
    "facts_to_bytes",
    "fast_init",
    "gc_paused",
]
