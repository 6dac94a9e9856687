"""Constructors for frozen slots dataclasses that skip the generated ``__init__``.

The graph makes its values by the hundred thousand (django 5.2.19: half a million spans, 180k
call facts, 380k edges). A frozen dataclass's ``__init__`` sets each field through
``object.__setattr__``. ``fast_init`` writes, once per class, a constructor that fills an
instance of the class's mutable twin (``twin_of``: the same slots, so the same memory layout)
with plain attribute stores, the interpreter's quickest write, and then gives it the frozen
class with a ``__class__`` assignment, which Python allows between classes of one layout. It is
the only place that builds model values behind their ``__init__``, but for ``syntax.span_of``,
which inlines the same steps for the half a million spans of a walk: everything else calls it.

Calling each slot descriptor's ``__set__`` on an ``object.__new__`` instance instead (the
previous way) packs a tuple of arguments per field: a one-job cold index of a 219-file django
subset ran 5 % more instructions (15.78 G against 15.01 G). The twin is made by calling it (it
has no ``__init__``): ``object.__new__(twin)`` costs 300 instructions more, through the checks
of a ``__new__`` called from Python.

Measured on django 5.2.19 with ``fast_init`` calling ``cls(...)`` instead (CPU, same session):
the extraction walk takes 18 % longer, decoding cached facts and cached edges 95 % longer,
resolution 10 % longer; a cold index about 12 % more, a warm start about 40 % more (see
``tests/benchmarks/README.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, fields, is_dataclass
from typing import Any, TypeVar

_T = TypeVar("_T")
_MADE: dict[type, Callable[..., Any]] = {}
_TWINS: dict[type, type] = {}


def fast_init(cls: type[_T]) -> Callable[..., _T]:
    """A constructor of frozen slots dataclass ``cls`` that skips ``cls.__init__``.

    It takes the fields in declaration order, by position or by keyword, with their declared
    defaults, and builds a value equal to ``cls(**fields)``. Classes with a ``__post_init__``
    (it would be skipped), a default factory, or a required field after a defaulted one (no
    positional order exists) are refused with ``TypeError``.
    """
    made = _MADE.get(cls)
    if made is None:
        made = _MADE[cls] = _generate(cls)
    return made


def twin_of(cls: type) -> type:
    """A mutable class with the slots of slots dataclass ``cls``: its instances may take ``cls``
    as their ``__class__`` once their fields are set (the two share one memory layout)."""
    twin = _TWINS.get(cls)
    if twin is None:
        if not (is_dataclass(cls) and hasattr(cls, "__slots__")):
            raise TypeError(f"{cls.__name__} is not a slots dataclass")
        if cls.__bases__ != (object,):  # inherited slots would need a twin of each base
            raise TypeError(f"{cls.__name__} derives from another class")
        twin = _TWINS[cls] = type(f"_{cls.__name__}Twin", (), {"__slots__": cls.__slots__})
    return twin


def _generate(cls: type[_T]) -> Callable[..., _T]:
    if not (is_dataclass(cls) and hasattr(cls, "__slots__")):
        raise TypeError(f"{cls.__name__} is not a slots dataclass")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has __post_init__")
    twin = twin_of(cls)
    namespace: dict[str, Any] = {"_cls": cls, "_twin": twin}
    params: list[str] = []
    body: list[str] = []
    defaulted = False
    for f in fields(cls):
        if f.default_factory is not MISSING:
            raise TypeError(f"{cls.__name__}.{f.name} has a default factory")
        if f.default is MISSING:
            if defaulted:
                raise TypeError(f"{cls.__name__}.{f.name} is required after a defaulted field")
            params.append(f.name)
        else:
            defaulted = True
            namespace[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        body.append(f"    obj.{f.name} = {f.name}")
    # for Span:  def make(line, col=_default_col, ...):
    #                obj = _twin(); obj.line = line; ...; obj.__class__ = _cls; return obj
    source = "\n".join(
        [
            f"def make({', '.join(params)}):",
            "    obj = _twin()",
            *body,
            "    obj.__class__ = _cls",
            "    return obj",
            "",
        ]
    )
    # the source is built from the class's own field names above, never from input
    exec(compile(source, f"<fast_init {cls.__qualname__}>", "exec"), namespace)
    make: Callable[..., _T] = namespace["make"]
    make.__qualname__ = make.__name__ = f"make_{cls.__name__}"
    make.__doc__ = f"Build a {cls.__name__} without its __init__ (see fast_init)."
    return make
