"""What pytest makes of a definition: a test, a fixture, the fixtures it requests, its id.

pytest's defaults, statically: tests are ``test*`` functions at module level or in ``Test*``
classes without ``__init__`` (nested test classes too), in files named ``test_*.py`` or
``*_test.py``; fixtures are ``@fixture``-decorated (``name=`` renames, ``autouse=``); a test or
fixture requests the fixtures its parameters name (``parametrize``d, defaulted and ``*``/``**``
parameters excepted) plus those of ``usefixtures`` marks, a class's marks included.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, NamedTuple

from impact_ls.graph.extract.syntax import dotted, span_of, string_list
from impact_ls.graph.facts import FixtureInfo, Request
from impact_ls.graph.kinds import (
    NODE_FIXTURE,
    NODE_FUNCTION,
    NODE_METHOD,
    NODE_TEST,
    PARAM_VAR_KEYWORD,
    PARAM_VAR_POSITIONAL,
)
from impact_ls.model import NodeKind, Param

if TYPE_CHECKING:
    from impact_ls.graph.extract.scopes import Scope
    from impact_ls.graph.extract.walker import Walker


_Function = ast.FunctionDef | ast.AsyncFunctionDef


class PytestMarks(NamedTuple):
    """What a function's decorators say: their dotted names, and pytest's meaning of them."""

    decorators: list[str]
    fixture: FixtureInfo | None
    parametrized: set[str]
    usefixtures: list[Request]


def pytest_marks(node: _Function) -> PytestMarks:
    """Decorator names, the fixture marker, parametrized argument names and ``usefixtures``."""
    decorators: list[str] = []
    fixture: FixtureInfo | None = None
    parametrized: set[str] = set()
    requests: list[Request] = []
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = dotted(target)
        decorators.append(name)
        last = name.rsplit(".", 1)[-1]
        if last == "fixture":
            fixture = _fixture_info(node, deco)
        elif last == "parametrize" and isinstance(deco, ast.Call) and deco.args:
            parametrized.update(_param_names(deco.args[0]))
        elif last == "usefixtures" and isinstance(deco, ast.Call):
            requests.extend(_string_requests(deco))
    return PytestMarks(decorators, fixture, parametrized, requests)


def function_kind(
    walk: Walker, node: _Function, marks: PytestMarks, params: list[tuple[Param, ast.arg]]
) -> tuple[NodeKind, list[Request]]:
    """The node kind of a ``def`` in the current scope and the fixtures it requests."""
    outer = walk.scope
    in_class = outer.is_class
    is_test = (
        marks.fixture is None
        and walk.is_test_file
        and node.name.startswith("test")
        and (
            (not in_class and not outer.is_function)
            or (in_class and bool(walk.test_classes) and walk.test_classes[-1])
        )
    )
    requests = marks.usefixtures
    if is_test or marks.fixture is not None:
        inherited = walk.class_usefixtures[-1] if in_class and walk.class_usefixtures else []
        skip_self = in_class and "staticmethod" not in marks.decorators
        requests = [
            *inherited,
            *requests,
            *_requested(params, marks.parametrized, skip_first=skip_self),
        ]
    if is_test:
        return NODE_TEST, requests
    if marks.fixture is not None:
        return NODE_FIXTURE, requests
    return (NODE_METHOD if in_class else NODE_FUNCTION), requests


def is_test_class(walk: Walker, node: ast.ClassDef, outer: Scope) -> bool:
    """Whether pytest collects ``node`` (defined in ``outer``) as a test class."""
    return (
        walk.is_test_file
        and node.name.startswith("Test")
        and (
            (not outer.is_function and not outer.is_class)
            or (outer.is_class and bool(walk.test_classes) and walk.test_classes[-1])
        )
        and not any(
            isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "__init__"
            for s in node.body
        )
    )


def class_usefixtures(deco: ast.expr, name: str) -> list[Request]:
    """The fixtures a class decorator named ``name`` requests (``@pytest.mark.usefixtures``)."""
    if name.endswith("usefixtures") and isinstance(deco, ast.Call):
        return _string_requests(deco)
    return []


def test_id(file: str, qualname: str) -> str:
    """The node id pytest gives the test ``qualname`` of ``file``."""
    return f"{file}::{qualname.replace('.', '::')}"


def _fixture_info(node: _Function, deco: ast.expr) -> FixtureInfo:
    name, autouse = node.name, False
    if isinstance(deco, ast.Call):
        for kw in deco.keywords:
            if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                name = str(kw.value.value)
            elif kw.arg == "autouse" and isinstance(kw.value, ast.Constant):
                autouse = bool(kw.value.value)
    return FixtureInfo(name=name, autouse=autouse)


def _string_requests(deco: ast.Call) -> list[Request]:
    return [
        Request(name=arg.value, span=span_of(arg))
        for arg in deco.args
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
    ]


def _param_names(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [n.strip() for n in node.value.split(",") if n.strip()]
    found = string_list(node)
    return found or []


def _requested(
    params: list[tuple[Param, ast.arg]], parametrized: set[str], *, skip_first: bool
) -> list[Request]:
    """The fixtures a test or fixture asks for through its parameters."""
    out: list[Request] = []
    for i, (param, arg) in enumerate(params):
        if skip_first and i == 0:
            continue
        if param.has_default or param.kind in (PARAM_VAR_POSITIONAL, PARAM_VAR_KEYWORD):
            continue  # pytest never fills these
        if param.name not in parametrized:
            out.append(Request(name=param.name, span=span_of(arg)))
    return out
