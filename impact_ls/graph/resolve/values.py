"""What an expression evaluates to during resolution (``Value``), and how scopes nest.

A value is a kind plus where it lives: ``Value(Kind.CLASS, "pkg.mod", "Service")`` is the class
``pkg.mod.Service``, ``Kind.INSTANCE`` an instance of it, ``Kind.FIELD`` an attribute or module
constant (``of`` = its own instance type, when known), ``Kind.DANGLING`` a name under a known
module or class that nothing defines (a deleted function: its users still point at it),
``Kind.EXTERNAL`` anything of an installed package or the standard library (``module`` is its
dotted name as imported, ``os.path.join``, or ``""`` when it has none: a builtin, what an
external call returned), ``Kind.EXTERNAL_INSTANCE`` an instance of the external class named by
``module``, ``Kind.UNION`` one of several values (``options``: a parameter that call sites give
different functions, a container's elements), ``Kind.UNKNOWN`` the rest.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from impact_ls.graph.kinds import NODE_CLASS
from impact_ls.model import QualName

if TYPE_CHECKING:
    from impact_ls.graph.resolve.fileinfo import FileInfo


class Kind:
    """The kinds of ``Value``."""

    MODULE = "module"
    CLASS = "class"
    INSTANCE = "instance"
    FUNCTION = "function"
    FIELD = "field"
    SUPER = "super"
    DANGLING = "dangling"
    UNKNOWN = "unknown"
    EXTERNAL = "external"
    EXTERNAL_INSTANCE = "external-instance"
    UNION = "union"


# Not frozen: resolution makes half a million values on django, and a frozen dataclass's
# ``__init__`` (``object.__setattr__`` per field) takes three times as long as plain slot
# stores. Values are hashed and shared as keys all the same: nothing may assign to one.
@dataclass(slots=True, unsafe_hash=True)
class Value:
    """What an expression evaluates to, as far as static resolution can tell (never mutated)."""

    kind: str
    module: str = ""
    local: str = ""
    of: Value | None = None  # the instance type of a field/constant, the class of an instance
    options: tuple[Value, ...] = ()  # of a union: the values it may be, each of another kind

    @property
    def qual(self) -> QualName:
        """The full qualname the value names (``module.local``)."""
        # interned: the same target appears in many edges (370k edges on django)
        return QualName(sys.intern(f"{self.module}.{self.local}") if self.local else self.module)


# values whose attributes can be looked up, and values a use of an attribute can point at
OWNERS = frozenset({Kind.CLASS, Kind.INSTANCE, Kind.SUPER, Kind.MODULE, Kind.FIELD})
USABLE = frozenset({Kind.FIELD, Kind.FUNCTION, Kind.CLASS, Kind.DANGLING})
UNTYPED = frozenset({Kind.UNKNOWN, Kind.DANGLING})
UNKNOWN_VALUE = Value(Kind.UNKNOWN)
EXTERNAL_VALUE = Value(Kind.EXTERNAL)
EXTERNALS = frozenset({Kind.EXTERNAL, Kind.EXTERNAL_INSTANCE})


def union(values: Iterable[Value]) -> Value:
    """One value for several: the value itself when they agree, unknown when there are none."""
    seen: dict[Value, None] = {}
    for value in values:
        for option in value.options if value.kind == Kind.UNION else (value,):
            if option.kind not in UNTYPED:
                seen[option] = None
    if not seen:
        return UNKNOWN_VALUE
    if len(seen) == 1:
        return next(iter(seen))
    return Value(Kind.UNION, options=tuple(seen))


def external(path: str) -> Value:
    """An external name by its dotted path (``""``: an external thing with no name)."""
    return Value(Kind.EXTERNAL, path) if path else EXTERNAL_VALUE


def external_member(val: Value, attr: str) -> Value:
    """``val.attr`` for an external name or instance: the dotted path grows, if it has one."""
    return external(f"{val.module}.{attr}") if val.module else EXTERNAL_VALUE


# what a few much-used standard-library functions and methods are documented to return (the
# library's source is not read, so a call's result is otherwise unknown)
_EXTERNAL_RETURNS: dict[str, str] = {
    **dict.fromkeys(("re.match", "re.search", "re.fullmatch"), "re.Match"),
    **dict.fromkeys(("re.Pattern.match", "re.Pattern.search", "re.Pattern.fullmatch"), "re.Match"),
    "re.compile": "re.Pattern",
    "logging.getLogger": "logging.Logger",
    "logging.Logger.getChild": "logging.Logger",
    **{
        f"pathlib.Path.{name}": "pathlib.Path"
        for name in (
            "__truediv__",
            "absolute",
            "cwd",
            "expanduser",
            "home",
            "joinpath",
            "relative_to",
            "resolve",
            "with_name",
            "with_suffix",
        )
    },
    **{
        f"datetime.datetime.{name}": "datetime.datetime"
        for name in ("now", "utcnow", "fromtimestamp", "fromisoformat", "strptime", "combine")
    },
    "datetime.datetime.date": "datetime.date",
    "datetime.date.today": "datetime.date",
    "datetime.date.fromisoformat": "datetime.date",
    "subprocess.run": "subprocess.CompletedProcess",
}
# standard-library classes not spelled in CapWords
_LOWERCASE_CLASSES = frozenset(
    {
        "datetime.date",
        "datetime.datetime",
        "datetime.time",
        "datetime.timedelta",
        "datetime.timezone",
        "collections.deque",
        "collections.defaultdict",
        "functools.partial",
    }
)


def external_call(val: Value) -> Value:
    """What calling an external gives: an instance of a class named in CapWords (or a known
    lowercase one), what a few standard functions are documented to return, else nothing
    nameable (a function's result type is unknown without the library's source)."""
    if val.kind != Kind.EXTERNAL:
        return EXTERNAL_VALUE
    made = _EXTERNAL_RETURNS.get(val.module)
    if made is not None:
        return Value(Kind.EXTERNAL_INSTANCE, made)
    last = val.module.rpartition(".")[2]
    if last[:1].isupper() or val.module in _LOWERCASE_CLASSES:
        return Value(Kind.EXTERNAL_INSTANCE, val.module)
    return EXTERNAL_VALUE


def scope_chain(scope: str) -> Iterable[str]:
    """``a.b.c`` → ``a.b.c``, ``a.b``, ``a``, ``""``."""
    while scope:
        yield scope
        scope = scope.rpartition(".")[0]
    yield ""


def outer_scope(info: FileInfo, scope: str) -> str:
    """The scope enclosing the definition ``scope`` (``scope`` itself if it is none)."""
    d = info.defs.get(scope)
    return d.parent if d is not None else scope


def function_scopes(info: FileInfo, scope: str) -> tuple[str, ...]:
    """The scope and its enclosing function scopes (class bodies do not enclose methods)."""
    found = info.function_scopes.get(scope)  # asked for every local of every call site
    if found is None:
        found = info.function_scopes[scope] = tuple(_function_scopes(info, scope))
    return found


def _function_scopes(info: FileInfo, scope: str) -> Iterable[str]:
    first = True
    for s in scope_chain(scope):
        if not s:
            return
        d = info.defs.get(s)
        if d is None:
            return
        if d.kind is NODE_CLASS:
            if first:
                yield s
            return
        first = False
        yield s


def enclosing_class(info: FileInfo, scope: str) -> str | None:
    """The class whose method (possibly through nested functions) contains ``scope``."""
    if scope in info.enclosing:  # asked for every ``self`` of every call site
        return info.enclosing[scope]
    found = info.enclosing[scope] = _enclosing_class(info, scope)
    return found


def _enclosing_class(info: FileInfo, scope: str) -> str | None:
    for s in scope_chain(scope):
        if not s:
            return None
        d = info.defs.get(s)
        if d is None:
            return None
        if d.kind is NODE_CLASS:
            return None
        if d.in_class:
            return d.parent
    return None
