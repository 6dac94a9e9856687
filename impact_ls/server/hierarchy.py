"""Call hierarchy and type hierarchy from the code graph (LSP 3.16/3.17).

``textDocument/prepareCallHierarchy`` finds the definition at the cursor (or, on a call, the
definition it calls); ``callHierarchy/incomingCalls`` lists the callers and instantiators of an
item grouped by caller, with the ranges of their calls; ``outgoingCalls`` what the item calls,
with the ranges in the item's own file. ``textDocument/prepareTypeHierarchy`` finds the class at
the cursor (or the base class named there); ``supertypes`` / ``subtypes`` follow inherit edges.
Name-matched call candidates appear only where jedi does not reject them. Definitions the
graph does not hold (installed packages, builtins) are left out.

The ``hierarchy`` setting (on by default) turns all six off for users whose main Python server
already answers them: the handlers then return null, so the client shows the other server's.
Every query runs on the worker thread, which owns the engine and its graph.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import Edge, EdgeKind, Node, NodeKind

if TYPE_CHECKING:
    from impact_ls.server.server import ImpactServer
    from impact_ls.server.session import Document, Session, SessionLocator

logger = logging.getLogger(__name__)

_CALLS = (EdgeKind.CALL, EdgeKind.INSTANTIATE)
_SYMBOL_KINDS = {
    NodeKind.MODULE: types.SymbolKind.Module,
    NodeKind.CLASS: types.SymbolKind.Class,
    NodeKind.FUNCTION: types.SymbolKind.Function,
    NodeKind.METHOD: types.SymbolKind.Method,
    NodeKind.TEST: types.SymbolKind.Function,
    NodeKind.FIXTURE: types.SymbolKind.Function,
}
_CALLABLE = frozenset({NodeKind.FUNCTION, NodeKind.METHOD, NodeKind.TEST, NodeKind.FIXTURE})


@dataclass(frozen=True, slots=True)
class View:
    """What the conversions need: the graph, positions in client units, and source lines."""

    graph: CodeGraph
    locator: SessionLocator
    lines: Callable[[str], Sequence[str] | None]

    def item_parts(self, node: Node) -> tuple[str, types.Range, types.Range]:
        """The URI, full range and name range of ``node``."""
        span = node.span
        end_line = span.end_line or span.line
        start = self.locator.position(node.file, span.line, span.col)
        end = (
            self.locator.position(node.file, end_line, span.end_col)
            if span.end_col
            else self.locator.line_end(node.file, end_line)
        )
        name_col = self._name_col(node)
        name_start = self.locator.position(node.file, span.line, name_col)
        name_end = self.locator.position(
            node.file, span.line, name_col + len(node.name.encode("utf-8"))
        )
        selection = types.Range(start=name_start, end=name_end)
        return self.locator.uri(node.file), types.Range(start=start, end=end), selection

    def _name_col(self, node: Node) -> int:
        lines = self.lines(node.file)
        if not lines or not 1 <= node.span.line <= len(lines):
            return node.span.col
        text = lines[node.span.line - 1]
        found = re.search(rf"\b(?:def|class)\s+({re.escape(node.name)})\b", text)
        if found is None:
            return node.span.col
        return len(text[: found.start(1)].encode("utf-8"))

    def edge_range(self, edge: Edge) -> types.Range:
        """The range of an edge's evidence (the call expression)."""
        span = edge.span
        start = self.locator.position(edge.file, span.line, span.col)
        end_line = span.end_line or span.line
        end = (
            self.locator.position(edge.file, end_line, span.end_col)
            if span.end_col
            else self.locator.line_end(edge.file, end_line)
        )
        return types.Range(start=start, end=end)


def _detail(node: Node) -> str:
    return node.signature or node.id


def call_item(view: View, node: Node) -> types.CallHierarchyItem:
    """The call hierarchy item of ``node``."""
    uri, rng, selection = view.item_parts(node)
    return types.CallHierarchyItem(
        name=node.name,
        kind=_SYMBOL_KINDS[node.kind],
        uri=uri,
        range=rng,
        selection_range=selection,
        detail=_detail(node),
        data={"id": node.id},
    )


def type_item(view: View, node: Node) -> types.TypeHierarchyItem:
    """The type hierarchy item of a class ``node``."""
    uri, rng, selection = view.item_parts(node)
    return types.TypeHierarchyItem(
        name=node.name,
        kind=types.SymbolKind.Class,
        uri=uri,
        range=rng,
        selection_range=selection,
        detail=node.id,
        data={"id": node.id},
    )


def _covers(edge: Edge, line: int, col: int) -> bool:
    span = edge.span
    end_line = span.end_line or span.line
    if not span.line <= line <= end_line:
        return False
    if line == span.line and col < span.col:
        return False
    return not (line == end_line and span.end_col and col > span.end_col)


def node_at(
    graph: CodeGraph, file: str, line: int, col: int, *, kinds: Iterable[EdgeKind]
) -> Node | None:
    """The definition a cursor means: what an edge under it points to, else the enclosing one."""
    wanted = frozenset(kinds)
    under = sorted(
        (e for e in graph.edges_in_file(file) if e.kind in wanted and _covers(e, line, col)),
        key=lambda e: (-e.span.col, e.target),  # the innermost expression starts last
    )
    for edge in under:
        if (target := graph.node(edge.target)) is not None:
            return target
    return graph.node_at(file, line)


def _grouped(edges: Iterable[Edge], key: Callable[[Edge], str]) -> list[tuple[str, list[Edge]]]:
    groups: dict[str, list[Edge]] = {}
    for edge in edges:
        groups.setdefault(key(edge), []).append(edge)
    return sorted(groups.items())


def incoming_calls(view: View, qid: str) -> list[types.CallHierarchyIncomingCall]:
    """Callers (and instantiators) of ``qid``, one entry per caller with its call ranges."""
    edges = view.graph.dependents(qid, kinds=_CALLS, confirmed=True)
    out = []
    for source, group in _grouped(edges, lambda e: e.source):
        caller = view.graph.node(source)
        if caller is None:
            continue
        ranges = [view.edge_range(e) for e in group if e.file == caller.file]
        out.append(
            types.CallHierarchyIncomingCall(from_=call_item(view, caller), from_ranges=ranges)
        )
    return out


def outgoing_calls(view: View, qid: str) -> list[types.CallHierarchyOutgoingCall]:
    """What ``qid`` calls or instantiates, one entry per callee with the call ranges."""
    edges = view.graph.dependencies(qid, kinds=_CALLS, confirmed=True)
    # A constructor call is one instantiate edge to the class and one call edge to its
    # __init__ at the same place: show the class once, not both.
    built = {(e.file, e.span.line, e.span.col) for e in edges if e.kind is EdgeKind.INSTANTIATE}
    edges = [
        e
        for e in edges
        if e.kind is EdgeKind.INSTANTIATE or (e.file, e.span.line, e.span.col) not in built
    ]
    out = []
    for target, group in _grouped(edges, lambda e: e.target):
        callee = view.graph.node(target)
        if callee is None:
            continue
        out.append(
            types.CallHierarchyOutgoingCall(
                to=call_item(view, callee), from_ranges=[view.edge_range(e) for e in group]
            )
        )
    return out


def supertypes(view: View, qid: str) -> list[types.TypeHierarchyItem]:
    """The direct base classes of ``qid`` that the graph defines."""
    bases = [view.graph.node(e.target) for e in view.graph.superclasses_of(qid)]
    return [type_item(view, n) for n in _unique(bases) if n.kind is NodeKind.CLASS]


def subtypes(view: View, qid: str) -> list[types.TypeHierarchyItem]:
    """The direct subclasses of ``qid``."""
    subs = [view.graph.node(e.source) for e in view.graph.subclasses_of(qid)]
    return [type_item(view, n) for n in _unique(subs) if n.kind is NodeKind.CLASS]


def _unique(nodes: Iterable[Node | None]) -> list[Node]:
    seen: dict[str, Node] = {}
    for node in nodes:
        if node is not None:
            seen.setdefault(node.id, node)
    return [seen[k] for k in sorted(seen)]


def _item_id(item: types.CallHierarchyItem | types.TypeHierarchyItem) -> str | None:
    data: Any = item.data
    qid = data.get("id") if isinstance(data, dict) else None
    return qid if isinstance(qid, str) and qid else None


def _client_col(
    ls: ImpactServer, lines: Sequence[str], position: types.Position
) -> tuple[int, int]:
    """A client position as a 1-based line and a UTF-8 byte column."""
    server_pos = ls.workspace.position_codec.position_from_client_units(lines, position)
    line = server_pos.line
    text = lines[line] if 0 <= line < len(lines) else ""
    return line + 1, len(text[: server_pos.character].encode("utf-8"))


async def _on_worker(
    ls: ImpactServer, uri: str, query: Callable[[View, str, Sequence[str]], Any]
) -> Any:
    """Run ``query(view, file, lines)`` on the worker for the document at ``uri``, or None."""
    found = ls.locate(uri)
    if found is None:
        return None
    session, file = found
    if not session.settings.hierarchy or session.engine is None:
        return None
    engine = session.engine
    snapshot = ls.snapshot(session)
    locator = session.locator(snapshot, ls.units)

    def lines(path: str) -> Sequence[str] | None:
        text = snapshot.texts.get(locator.uri(path))
        return text.splitlines() if text is not None else session.disk.lines(path)

    def job() -> Any:
        doc = session.documents.get(uri)
        if doc is not None:
            _sync(session, doc, snapshot.texts.get(uri))
        with engine.index.lock:
            return query(View(engine.index.graph, locator, lines), file, lines(file) or ())

    try:
        return await ls.worker.call(job)
    except Exception:
        logger.exception("hierarchy request on %s failed", uri)
        return None


def _sync(session: Session, doc: Document, text: str | None) -> None:
    """Let the buffer's text stand in the graph before a query (worker thread)."""
    if text is not None and doc.synced != text and session.engine is not None:
        session.engine.set_document(doc.file, text)
        doc.synced = text


def register(server: ImpactServer) -> None:
    """Add the call and type hierarchy handlers to ``server``."""

    @server.feature(types.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY)
    async def prepare_call_hierarchy(
        ls: ImpactServer, params: types.CallHierarchyPrepareParams
    ) -> list[types.CallHierarchyItem] | None:
        def query(view: View, file: str, lines: Sequence[str]) -> Any:
            line, col = _client_col(ls, lines, params.position)
            node = node_at(view.graph, file, line, col, kinds=_CALLS)
            if node is None or node.kind not in (*_CALLABLE, NodeKind.CLASS):
                return None
            return [call_item(view, node)]

        return await _on_worker(ls, params.text_document.uri, query)  # type: ignore[no-any-return]

    @server.feature(types.CALL_HIERARCHY_INCOMING_CALLS)
    async def incoming(
        ls: ImpactServer, params: types.CallHierarchyIncomingCallsParams
    ) -> list[types.CallHierarchyIncomingCall] | None:
        if (qid := _item_id(params.item)) is None:
            return None
        return await _on_worker(  # type: ignore[no-any-return]
            ls, params.item.uri, lambda view, _f, _l: incoming_calls(view, qid)
        )

    @server.feature(types.CALL_HIERARCHY_OUTGOING_CALLS)
    async def outgoing(
        ls: ImpactServer, params: types.CallHierarchyOutgoingCallsParams
    ) -> list[types.CallHierarchyOutgoingCall] | None:
        if (qid := _item_id(params.item)) is None:
            return None
        return await _on_worker(  # type: ignore[no-any-return]
            ls, params.item.uri, lambda view, _f, _l: outgoing_calls(view, qid)
        )

    @server.feature(types.TEXT_DOCUMENT_PREPARE_TYPE_HIERARCHY)
    async def prepare_type_hierarchy(
        ls: ImpactServer, params: types.TypeHierarchyPrepareParams
    ) -> list[types.TypeHierarchyItem] | None:
        def query(view: View, file: str, lines: Sequence[str]) -> Any:
            line, col = _client_col(ls, lines, params.position)
            node = node_at(view.graph, file, line, col, kinds=(EdgeKind.INHERIT,))
            while node is not None and node.kind is not NodeKind.CLASS:
                node = view.graph.node(node.id.rsplit(".", 1)[0]) if "." in node.id else None
            return [type_item(view, node)] if node is not None else None

        return await _on_worker(ls, params.text_document.uri, query)  # type: ignore[no-any-return]

    @server.feature(types.TYPE_HIERARCHY_SUPERTYPES)
    async def supertypes_of(
        ls: ImpactServer, params: types.TypeHierarchySupertypesParams
    ) -> list[types.TypeHierarchyItem] | None:
        if (qid := _item_id(params.item)) is None:
            return None
        return await _on_worker(  # type: ignore[no-any-return]
            ls, params.item.uri, lambda view, _f, _l: supertypes(view, qid)
        )

    @server.feature(types.TYPE_HIERARCHY_SUBTYPES)
    async def subtypes_of(
        ls: ImpactServer, params: types.TypeHierarchySubtypesParams
    ) -> list[types.TypeHierarchyItem] | None:
        if (qid := _item_id(params.item)) is None:
            return None
        return await _on_worker(  # type: ignore[no-any-return]
            ls, params.item.uri, lambda view, _f, _l: subtypes(view, qid)
        )
