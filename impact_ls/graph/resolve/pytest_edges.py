"""pytest's edges: ``fixture`` from a test or fixture to each fixture it gets, ``tests`` from a
test to what it and its fixtures call.

A test gets the fixtures it requests (found as pytest finds them, ``fixtures.py``) and the
autouse fixtures in force where it is defined (the evidence for those is the test's name).
Its ``tests`` edges cover its own calls and, transitively, the calls of every fixture it gets,
each target once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from impact_ls.graph.facts import DefFact, Request
from impact_ls.graph.kinds import (
    EDGE_CALL,
    EDGE_FIXTURE,
    EDGE_INSTANTIATE,
    EDGE_TESTS,
    NODE_FIXTURE,
    NODE_TEST,
)
from impact_ls.graph.resolve.fileinfo import FileInfo
from impact_ls.graph.resolve.fixtures import Found, Place, autouse_fixtures, find_fixture
from impact_ls.model import Edge, QualName

if TYPE_CHECKING:
    from impact_ls.graph.resolve.edges import FileResolver


_MAX_FIXTURE_CHAIN = 64


def add_pytest_edges(resolver: FileResolver, calls_by_scope: dict[str, list[Edge]]) -> None:
    """The ``fixture`` and ``tests`` edges of every test and fixture of the file."""
    info = resolver.info
    for local, d in info.defs.items():
        if d.kind is NODE_TEST:
            _test_edges(resolver, info, local, d, calls_by_scope.get(local, []))
        elif d.kind is NODE_FIXTURE:
            _requested_edges(resolver, info.qual(local), (info, _class_of(d)), d, seen=None)


def _test_edges(
    resolver: FileResolver, info: FileInfo, local: str, d: DefFact, own_calls: list[Edge]
) -> None:
    source = info.qual(local)
    seen: set[QualName] = set()
    for edge in own_calls:
        if edge.target not in seen:
            seen.add(edge.target)
            resolver.add(EDGE_TESTS, source, edge.target, edge.span, name_matched=edge.name_matched)
    where = (info, _class_of(d))
    requested = _requested_edges(resolver, source, where, d, seen=seen)
    # autouse fixtures run for the test without being asked: evidence is its name
    for fx_info, fx in autouse_fixtures(resolver.values, where):
        assert fx.fixture is not None
        if fx.fixture.name in requested:
            continue
        resolver.add(EDGE_FIXTURE, source, fx_info.qual(fx.qualname), d.name_span)
        implicit = Request(name=fx.fixture.name, span=d.name_span)
        _tests_through(
            resolver, source, where=where, fixture=(fx_info, fx), request=implicit, seen=seen
        )


def _requested_edges(
    resolver: FileResolver,
    source: QualName,
    where: Place,
    d: DefFact,
    *,
    seen: set[QualName] | None,
) -> set[str]:
    """A ``fixture`` edge per fixture ``d`` requests (and, for a test, its ``tests`` edges)."""
    requested: set[str] = set()
    for request in d.requests:
        requested.add(request.name)
        found = find_fixture(resolver.values, where, d, request.name)
        if found is None:
            continue
        fx_info, fx = found
        resolver.add(EDGE_FIXTURE, source, fx_info.qual(fx.qualname), request.span)
        if seen is not None:
            _tests_through(resolver, source, where=where, fixture=found, request=request, seen=seen)
    return requested


def _tests_through(
    resolver: FileResolver,
    test: QualName,
    *,
    where: Place,
    fixture: Found,
    request: Request,
    seen: set[QualName],
) -> None:
    """``tests`` edges from a test to what a requested fixture (and its fixtures) call.

    Fixtures requested by fixtures are looked up from the test's location, as pytest does,
    so a ``conftest.py`` nearer the test overrides the one beside the fixture.
    """
    stack = [fixture]
    visited: set[QualName] = set()
    while stack:
        cur_info, cur = stack.pop()
        qual = cur_info.qual(cur.qualname)
        if qual in visited or len(visited) > _MAX_FIXTURE_CHAIN:
            continue
        visited.add(qual)
        for edge in _calls_of(resolver, cur_info, cur.qualname):
            if edge.target not in seen:
                seen.add(edge.target)
                resolver.add(
                    EDGE_TESTS, test, edge.target, request.span, name_matched=edge.name_matched
                )
        for sub in cur.requests:
            found = find_fixture(resolver.values, where, cur, sub.name)
            if found is not None:
                stack.append(found)


def _calls_of(resolver: FileResolver, info: FileInfo, scope: str) -> list[Edge]:
    """The call and instantiate edges of a fixture's body (in whichever file it lives)."""
    key = (info.facts.file, scope)
    cached = resolver.fixture_calls.get(key)
    if cached is not None:
        return cached
    out: list[Edge] = []
    for call in info.facts.calls:
        if call.scope == scope:
            out.extend(
                e
                for e in resolver.call_edges(info, call)
                if e.kind in (EDGE_CALL, EDGE_INSTANTIATE)
            )
    resolver.fixture_calls[key] = out
    return out


def _class_of(d: DefFact) -> str:
    return d.parent if d.in_class else ""
