"""The ``callers`` tool: call sites of a definition, from ``CodeGraph``'s public queries.

The target is named by a qualname (exact, or a dotted suffix such as ``Cart.total``, or a bare
name) or by ``file`` + ``line`` (the innermost definition there; on a line that only calls
something, what it calls). A query that names several definitions returns them as candidates
instead of guessing. Call and instantiate edges into the target are split into resolved sites
(facts) and name-matched candidates (with jedi's verdict where the graph has a confirmer);
sites in tests rank below production sites, then file and line order.
"""

from __future__ import annotations

from impact_ls.agent import audit as texts
from impact_ls.agent.blast import DEFAULT_LIMIT, MAX_LIMIT
from impact_ls.agent.shapes import (
    Audit,
    CallersOutput,
    CallersResult,
    CallSite,
    Next,
    Request,
    Symbol,
)
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import Edge, EdgeKind, Node, NodeKind

MAX_CANDIDATES = 8
_TEST_KINDS = frozenset({NodeKind.TEST, NodeKind.FIXTURE})
_CALL_KINDS = (EdgeKind.CALL, EdgeKind.INSTANTIATE)


def _symbol(node: Node) -> Symbol:
    return Symbol(
        id=node.id,
        kind=node.kind.value,
        location=f"{node.file}:{node.span.line}",
        signature=node.signature,
        doc=node.doc,
    )


def _by_symbol(graph: CodeGraph, symbol: str) -> list[Node]:
    exact = graph.node(symbol)
    if exact is not None:
        return [exact]
    named = graph.find_by_name(symbol.rsplit(".", 1)[-1])
    if "." in symbol:
        return [n for n in named if n.id.endswith("." + symbol)]
    return named


def _at_line(graph: CodeGraph, file: str, line: int) -> list[Node]:
    node = graph.node_at(file, line)
    if node is not None and node.span.line == line:
        return [node]  # the definition's own line
    called = {
        edge.target
        for edge in graph.edges_in_file(file)
        if edge.span.line == line and edge.kind in _CALL_KINDS
    }
    targets = [n for t in sorted(called) if (n := graph.node(t)) is not None]
    if targets:
        return targets
    return [node] if node is not None else []


def resolve_target(
    graph: CodeGraph, *, symbol: str | None, file: str | None, line: int | None
) -> list[Node]:
    """The definitions the query names (one when it is unambiguous), sorted by id."""
    if symbol:
        found = _by_symbol(graph, symbol.strip())
    elif file is not None and line is not None:
        found = _at_line(graph, file, line)
    else:
        found = []
    return sorted(found, key=lambda n: n.id)


def _site(graph: CodeGraph, edge: Edge) -> CallSite:
    caller = graph.node(edge.source)
    confirmed = None
    if edge.name_matched and graph.confirmer is not None:
        confirmed = graph.confirmer(edge)
    return CallSite(
        caller=edge.source,
        location=f"{edge.file}:{edge.span.line}",
        file=edge.file,
        line=edge.span.line,
        col=edge.span.col,
        kind="instantiate" if edge.kind is EdgeKind.INSTANTIATE else "call",
        resolution="name-matched" if edge.name_matched else "resolved",
        confirmed=confirmed,
        test=caller is not None and caller.kind in _TEST_KINDS,
    )


def _ambiguous(found: list[Node], *, root: str, asked: str, audit: Audit) -> CallersOutput:
    """No single definition matched: the candidates, and how to ask again."""
    candidates = [_symbol(n) for n in found[:MAX_CANDIDATES]]
    result = CallersResult(
        target=None,
        candidates=candidates,
        resolved=[],
        name_matched=[],
        counts={"candidates": len(found)},
        omitted={"candidates": len(found) - len(candidates)}
        if len(found) > len(candidates)
        else {},
        truncated=len(found) > len(candidates),
    )
    if found:
        nxt = Next(
            action="clarify",
            reason=f"{asked!r} names {len(found)} definitions; call again with the id of the "
            "one you mean",
            request=Request(tool="callers", arguments={"root": root, "symbol": found[0].id}),
        )
    else:
        nxt = Next(
            action="outside",
            reason=f"the graph of {root} holds no definition named {asked!r}",
        )
    return CallersOutput(
        audit=audit.model_copy(update={"truncated": result.truncated}), result=result, next=nxt
    )


def callers_output(
    graph: CodeGraph,
    *,
    root: str,
    symbol: str | None,
    file: str | None,
    line: int | None,
    limit: int = DEFAULT_LIMIT,
) -> CallersOutput:
    """The ``callers`` result for a qualname or a ``file:line``."""
    audit = Audit(
        verified=texts.CALLERS_VERIFIED, heuristic=texts.CALLERS_HEURISTIC, truncated=False
    )
    found = resolve_target(graph, symbol=symbol, file=file, line=line)
    if len(found) != 1:
        return _ambiguous(found, root=root, asked=symbol or f"{file}:{line}", audit=audit)
    target = found[0]
    edges = graph.dependents(target.id, kinds=_CALL_KINDS)
    sites = sorted(
        (_site(graph, e) for e in edges), key=lambda s: (s.test, s.file, s.line, s.col, s.caller)
    )
    resolved = [s for s in sites if s.resolution == "resolved"]
    matched = [s for s in sites if s.resolution == "name-matched"]
    limit = max(1, min(limit, MAX_LIMIT))
    omitted = {
        name: len(items) - limit
        for name, items in (("resolved", resolved), ("name_matched", matched))
        if len(items) > limit
    }
    result = CallersResult(
        target=_symbol(target),
        candidates=[],
        resolved=resolved[:limit],
        name_matched=matched[:limit],
        counts={"resolved": len(resolved), "name_matched": len(matched)},
        omitted=omitted,
        truncated=bool(omitted),
    )
    if omitted:
        nxt = Next(
            action="inspect",
            reason="some call sites were cut; call again with a larger limit for all of them",
            request=Request(
                tool="callers",
                arguments={"root": root, "symbol": target.id, "limit": min(limit * 4, MAX_LIMIT)},
            ),
        )
    elif not sites:
        nxt = Next(action="answer", reason=f"nothing in {root} calls {target.id}")
    else:
        nxt = Next(
            action="answer",
            reason=f"{len(resolved)} resolved and {len(matched)} name-matched call sites of "
            f"{target.id}",
        )
    return CallersOutput(
        audit=audit.model_copy(update={"truncated": bool(omitted)}), result=result, next=nxt
    )
