"""The report as one self-contained HTML page: the impact DAG drawn as SVG, the lists beside it.

``render_html(report, root=...)`` returns the page. Nothing is fetched: styles and the small
script are inline and a Content-Security-Policy forbids every network request, so the page
works from a file, a CI artifact or a VS Code webview alike.

Layout (``layout_dag``): networkx holds the DAG; ``bfs_layers`` from the edited entities gives
each node its layer, the distance from the edit (topological generations place what the walk
did not reach), one column per layer, the edit on the left. Rows are swimlanes, one per batch in
batch order, then one for sites outside every batch, so a batch reads as one band across the
columns. Nodes are coloured by bucket (edit, must-inspect, may-impact, low-risk, test); each
edge carries its cause, shortened on the drawing and whole in its tooltip and in the lists.
Every ``file:line`` is a link (``file://`` in a browser; in a webview the script posts an
``open`` message instead). Output is deterministic: identical reports give identical bytes.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

from impact_ls.model import Report, TriageEntry
from impact_ls.report.wording import plural, short_entity

COLUMN_WIDTH = 430
NODE_WIDTH = 220
NODE_HEIGHT = 42
ROW_HEIGHT = 64
LANE_GAP = 18
MARGIN = 24
LANE_LABEL = 20
LABEL_CHARS = 36

BUCKETS = ("edit", "must_inspect", "may_impact", "low_risk", "test")
BUCKET_TITLES = {
    "edit": "Edited",
    "must_inspect": "MUST-INSPECT",
    "may_impact": "MAY-IMPACT",
    "low_risk": "LOW-RISK",
    "test": "Affected test",
}
_NO_BATCH = -1


@dataclass(frozen=True, slots=True, kw_only=True)
class Box:
    """One placed node of the drawing."""

    entity: str
    bucket: str
    file: str
    line: int
    layer: int
    lane: int
    x: int
    y: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Lane:
    """One swimlane: a batch (or the sites outside every batch) across all columns."""

    batch_id: int
    title: str
    y: int
    height: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Layout:
    """Where everything goes; sizes in pixels."""

    boxes: tuple[Box, ...]
    lanes: tuple[Lane, ...]
    edges: tuple[tuple[str, str, str], ...]
    width: int
    height: int


def _buckets(report: Report) -> dict[str, str]:
    out: dict[str, str] = {}
    for node in report.dag.nodes:
        if node.kind in ("test", "fixture"):
            out[node.entity] = "test"
    for name in ("low_risk", "may_impact", "must_inspect"):
        for entry in getattr(report.triage, name):
            out[entry.entity] = name
    for change in report.changes:
        out[change.entity] = "edit"
    return out


def _graph(report: Report) -> nx.DiGraph[str]:
    graph: nx.DiGraph[str] = nx.DiGraph()
    for change in report.changes:
        graph.add_node(change.entity, file=change.file, line=change.line_range[0], batch=None)
    for node in report.dag.nodes:
        graph.add_node(node.entity, file=node.file, line=node.line, batch=node.batch_id)
    for edge in report.dag.edges:
        for end in (edge.source, edge.target):
            if end not in graph:
                graph.add_node(end, file="", line=0, batch=None)
        graph.add_edge(edge.source, edge.target, cause=edge.cause)
    for batch in report.batches:
        for member in batch.members:
            if member in graph and graph.nodes[member]["batch"] is None:
                graph.nodes[member]["batch"] = batch.batch_id
    return graph


def _layers(graph: nx.DiGraph[str], seeds: Sequence[str]) -> dict[str, int]:
    """Distance from the nearest seed; unreached nodes by topological generation."""
    layer: dict[str, int] = {}
    starts = [s for s in seeds if s in graph]
    if starts:
        for depth, nodes in enumerate(nx.bfs_layers(graph, starts)):
            for node in nodes:
                layer[node] = depth
    rest = graph.subgraph(n for n in graph if n not in layer)
    if rest.number_of_nodes():
        generations = (
            nx.topological_generations(rest)
            if nx.is_directed_acyclic_graph(rest)
            else [sorted(rest)]
        )
        for depth, nodes in enumerate(generations):
            for node in nodes:
                layer[node] = depth + (1 if starts else 0)
    return layer


def _all_entries(report: Report) -> list[TriageEntry]:
    triage = report.triage
    return [*triage.must_inspect, *triage.may_impact, *triage.low_risk]


def layout_dag(report: Report) -> Layout:
    """Place the report's DAG: columns by distance from the edit, swimlanes by batch."""
    graph = _graph(report)
    buckets = _buckets(report)
    layers = _layers(graph, [c.entity for c in report.changes])
    for entry in _all_entries(report):
        if entry.entity in layers and layers[entry.entity] > 0:
            layers[entry.entity] = max(layers[entry.entity], entry.distance)
    rank = {name: i for i, name in enumerate(BUCKETS)}
    order = {b.batch_id: i for i, b in enumerate(report.batches)}

    def lane_of(node: str) -> int:
        batch = graph.nodes[node]["batch"]
        return batch if batch in order else _NO_BATCH

    lane_ids = [b.batch_id for b in report.batches if any(lane_of(n) == b.batch_id for n in graph)]
    if any(lane_of(n) == _NO_BATCH for n in graph):
        lane_ids.append(_NO_BATCH)
    cells: dict[tuple[int, int], list[str]] = {}
    for node in graph:
        cells.setdefault((lane_of(node), layers[node]), []).append(node)
    for members in cells.values():
        members.sort(key=lambda n: (rank.get(buckets.get(n, "low_risk"), 9), n))

    boxes: list[Box] = []
    lanes: list[Lane] = []
    y = MARGIN
    for lane_id in lane_ids:
        rows = max(len(v) for (lane, _), v in cells.items() if lane == lane_id)
        height = LANE_LABEL + rows * ROW_HEIGHT
        batch = next((b for b in report.batches if b.batch_id == lane_id), None)
        title = (
            f"Batch {lane_ids.index(lane_id) + 1} · {plural(batch.size, 'site')}"
            + (" (split)" if batch.split else "")
            if batch is not None
            else "Not in a batch"
        )
        lanes.append(Lane(batch_id=lane_id, title=title, y=y, height=height))
        for (lane, layer), members in sorted(cells.items()):
            if lane != lane_id:
                continue
            for row, node in enumerate(members):
                data = graph.nodes[node]
                boxes.append(
                    Box(
                        entity=node,
                        bucket=buckets.get(node, "low_risk"),
                        file=data["file"],
                        line=data["line"],
                        layer=layer,
                        lane=lane_id,
                        x=MARGIN + layer * COLUMN_WIDTH,
                        y=y + LANE_LABEL + row * ROW_HEIGHT + (ROW_HEIGHT - NODE_HEIGHT) // 2,
                    )
                )
        y += height + LANE_GAP
    columns = max(layers.values(), default=0) + 1
    edges = tuple(sorted((u, v, str(d.get("cause", ""))) for u, v, d in graph.edges(data=True)))
    return Layout(
        boxes=tuple(sorted(boxes, key=lambda b: (b.lane, b.layer, b.y))),
        lanes=tuple(lanes),
        edges=edges,
        width=MARGIN * 2 + (columns - 1) * COLUMN_WIDTH + NODE_WIDTH,
        height=max(y - LANE_GAP + MARGIN, 120),
    )


def edge_label(cause: str) -> str:
    """The short form of a cause drawn on its edge: what the site must do, and via what.

    A cause reads ``<change> → <site> <verb> via <relation>``; the site is the box the edge
    points at, so the drawing keeps ``<verb> via <relation>``. A cause of another shape (a
    hidden channel's reason) is kept as it is, cut to ``LABEL_CHARS``.
    """
    if " → " in cause:
        _, _, after = cause.partition(" → ")
        _, _, action = after.partition(" ")
        cause = action or after
    return cause if len(cause) <= LABEL_CHARS else cause[: LABEL_CHARS - 1] + "…"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _href(root: Path | None, file: str) -> str:
    if root is None or not file:
        return _e(file)
    return _e((root / file).as_uri())


def _link(root: Path | None, file: str, line: int) -> str:
    if not file:
        return ""
    where = f"{file}:{line}" if line else file
    return (
        f'<a class="loc" href="{_href(root, file)}" data-file="{_e(file)}" '
        f'data-line="{line}">{_e(where)}</a>'
    )


def _test_link(root: Path | None, test: str) -> str:
    """A pytest node id with its file part linked: ``tests/test_x.py::test_y``."""
    file, sep, rest = test.partition("::")
    link = (
        f'<a class="loc" href="{_href(root, file)}" data-file="{_e(file)}" data-line="1">'
        f"{_e(file)}</a>"
    )
    return f"<code>{link}{_e(sep + rest)}</code>"


def _svg(layout: Layout, root: Path | None) -> str:
    by_id = {b.entity: b for b in layout.boxes}
    parts = [
        f'<svg id="dag" role="img" aria-label="impact DAG" width="{layout.width}" '
        f'height="{layout.height}" viewBox="0 0 {layout.width} {layout.height}">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'class="arrowhead"/></marker></defs>',
    ]
    for lane in layout.lanes:
        parts.append(
            f'<g class="lane" data-batch="{lane.batch_id}"><rect x="{MARGIN // 2}" y="{lane.y}" '
            f'width="{layout.width - MARGIN}" height="{lane.height}" rx="10"/>'
            f'<text x="{MARGIN}" y="{lane.y + 14}">{_e(lane.title)}</text></g>'
        )
    incoming: dict[str, int] = {}
    for source, target, cause in layout.edges:
        a, b = by_id.get(source), by_id.get(target)
        if a is None or b is None:
            continue
        # Labels sit just above the arrowhead, where edges from one source have fanned out;
        # a second edge into the same box stacks its label above the first.
        stack = incoming[target] = incoming.get(target, -1) + 1
        x1, y1 = a.x + NODE_WIDTH, a.y + NODE_HEIGHT // 2
        x2, y2 = b.x, b.y + NODE_HEIGHT // 2
        if b.layer <= a.layer:  # same column: loop out to the right and back
            x2 = b.x + NODE_WIDTH
            bend = x1 + 60
            path = f"M{x1},{y1} C{bend},{y1} {bend},{y2} {x2},{y2}"
            lx, anchor = bend + 4, "start"
        elif b.layer == a.layer + 1:
            mid = (x1 + x2) // 2
            path = f"M{x1},{y1} C{mid},{y1} {mid},{y2} {x2},{y2}"
            lx, anchor = x2 - 12, "end"
        else:
            # Across columns: run in the free channel between rows, below both ends, so the
            # edge passes under the boxes of the columns in between instead of through them.
            yc = max(a.y, b.y) + NODE_HEIGHT + (ROW_HEIGHT - NODE_HEIGHT) // 2
            path = (
                f"M{x1},{y1} C{x1 + 40},{y1} {x1 + 40},{yc} {x1 + 80},{yc} "
                f"L{x2 - 80},{yc} C{x2 - 40},{yc} {x2 - 40},{y2} {x2},{y2}"
            )
            lx, anchor = x2 - 12, "end"
        ly = y2 - 5 - 12 * stack
        parts.append(
            f'<g class="edge" data-from="{_e(source)}" data-to="{_e(target)}">'
            f"<title>{_e(cause)}</title>"
            f'<path d="{path}" marker-end="url(#arrow)"/>'
            f'<text x="{lx}" y="{ly}" text-anchor="{anchor}">{_e(edge_label(cause))}'
            "</text></g>"
        )
    for box in layout.boxes:
        where = f"{box.file}:{box.line}" if box.file else ""
        parts.append(
            f'<a class="node {box.bucket}" href="{_href(root, box.file)}" '
            f'data-entity="{_e(box.entity)}" data-file="{_e(box.file)}" data-line="{box.line}">'
            f"<title>{_e(box.entity)} ({BUCKET_TITLES[box.bucket]})</title>"
            f'<rect x="{box.x}" y="{box.y}" width="{NODE_WIDTH}" height="{NODE_HEIGHT}" rx="6"/>'
            f'<text class="name" x="{box.x + 10}" y="{box.y + 17}">'
            f"{_e(_clip(short_entity(box.entity), 30))}</text>"
            f'<text class="where" x="{box.x + 10}" y="{box.y + 33}">{_e(_clip(where, 36))}</text>'
            "</a>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


def _entries(title: str, css: str, entries: Iterable[TriageEntry], root: Path | None) -> str:
    items = list(entries)
    if not items:
        return ""
    rows = []
    for e in items:
        breaks = "".join(f'<div class="break">↳ {_e(b.detail)}</div>' for b in e.breaks)
        flags = " · name-matched" if e.name_matched else ""
        flags += " · unanalyzable" if e.unanalyzable else ""
        rows.append(
            f'<li class="{css}">{_link(root, e.file, e.range[0][0] or e.line)} '
            f'<span class="entity">{_e(e.entity)}</span>'
            f'<div class="reason">{_e(e.reason)}</div>{breaks}'
            f'<div class="meta">conf {e.conf:.2f} · distance {e.distance}{flags}</div></li>'
        )
    return (
        f'<section><h2 class="{css}">{title} · {len(items)}</h2><ul>{"".join(rows)}</ul></section>'
    )


def _lists(report: Report, root: Path | None) -> str:
    out = []
    if report.changes:
        rows = "".join(
            f'<li>{_link(root, c.file, c.line_range[0])} <span class="entity">{_e(c.entity)}'
            f'</span> <span class="tag">{_e(c.change_type)}</span>'
            + (
                f'<div class="sig"><code>{_e(c.before_sig)}</code> → <code>{_e(c.after_sig)}'
                "</code></div>"
                if c.before_sig or c.after_sig
                else ""
            )
            + (f'<div class="reason">{_e(c.what)}</div>' if c.what else "")
            + "</li>"
            for c in report.changes
        )
        out.append(f"<section><h2>Changes · {len(report.changes)}</h2><ul>{rows}</ul></section>")
    triage = report.triage
    out.append(_entries("MUST-INSPECT", "must_inspect", triage.must_inspect, root))
    out.append(_entries("MAY-IMPACT", "may_impact", triage.may_impact, root))
    out.append(_entries("LOW-RISK", "low_risk", triage.low_risk, root))
    if report.batches:
        rows = "".join(
            f"<li><b>Batch {i}</b> · {plural(b.size, 'site')}"
            f"{' (split)' if b.split else ''}: "
            + " → ".join(_e(short_entity(m)) for m in b.members)
            + "</li>"
            for i, b in enumerate(report.batches, 1)
        )
        out.append(f"<section><h2>Batches</h2><ol>{rows}</ol></section>")
    if report.tests:
        best: dict[str, float] = {}
        for hit in report.tests:  # a test reached from several changed files is listed once
            best[hit.test] = max(best.get(hit.test, 0.0), hit.conf)
        rows = "".join(
            f'<li>{_test_link(root, test)} <span class="meta">{conf:.2f}</span></li>'
            for test, conf in sorted(best.items(), key=lambda item: (-item[1], item[0]))
        )
        out.append(
            f'<section><h2 class="test">Affected tests · {len(report.tests)}</h2>'
            f"<ul>{rows}</ul></section>"
        )
    if report.cochange:
        rows = "".join(
            f'<li>{_link(root, c.file, 0)} <span class="meta">{c.score:.2f}</span></li>'
            for c in report.cochange
        )
        out.append(f"<section><h2>Co-change partners</h2><ul>{rows}</ul></section>")
    if report.unanalyzable:
        rows = "".join(
            f"<li>{_link(root, u.file, u.line)} {_e(u.reason)}</li>" for u in report.unanalyzable
        )
        out.append(f"<section><h2>Unanalyzable</h2><ul>{rows}</ul></section>")
    audit = report.audit
    notes = "".join(f"<li>{_e(n)}</li>" for n in audit.notes)
    out.append(
        "<section><h2>Audit</h2>"
        f"<p><b>verified:</b> {_e(audit.verified)}</p>"
        f"<p><b>heuristic:</b> {_e(audit.heuristic)}</p>"
        + ("<p><b>truncated:</b> a cap cut the analysis</p>" if audit.truncated else "")
        + (f"<ul>{notes}</ul>" if notes else "")
        + "</section>"
    )
    return "".join(out)


_CSS = """
:root{--edit:#2563eb;--must_inspect:#dc2626;--may_impact:#d97706;--low_risk:#16a34a;
--test:#7c3aed;--ink:#1f2937;--muted:#6b7280;--line:#9ca3af;--bg:#fff;--lane:#f3f4f6}
*{box-sizing:border-box}body{margin:0;font:13px/1.4 system-ui,sans-serif;color:var(--ink);
background:var(--bg)}header{padding:12px 20px;border-bottom:1px solid #e5e7eb}
header h1{margin:0;font-size:17px}header p{margin:4px 0 0;color:var(--muted)}
main{display:flex;align-items:flex-start;gap:0}#graph{flex:1;min-width:0;overflow:auto;padding:8px}
aside{width:440px;max-height:calc(100vh - 70px);overflow:auto;border-left:1px solid #e5e7eb;
padding:0 16px 16px}h2{font-size:14px;margin:16px 0 6px;border-left:4px solid var(--line);
padding-left:8px}h2.must_inspect{border-color:var(--must_inspect)}
h2.may_impact{border-color:var(--may_impact)}h2.low_risk{border-color:var(--low_risk)}
h2.test{border-color:var(--test)}ul,ol{margin:0;padding-left:18px}li{margin:4px 0}
.entity{font-family:ui-monospace,monospace}.reason{color:var(--ink)}.meta{color:var(--muted)}
.break{color:var(--must_inspect)}.tag{color:var(--muted)}a.loc{font-family:ui-monospace,monospace}
.legend span{display:inline-block;margin-right:12px}.legend i{display:inline-block;width:10px;
height:10px;border-radius:2px;margin-right:4px;vertical-align:-1px}
.lane rect{fill:var(--lane)}.lane text{fill:var(--muted);font-size:11px;font-weight:600}
.edge path{fill:none;stroke:var(--line);stroke-width:1.4}.arrowhead{fill:var(--line)}
.edge text{font-size:10px;fill:var(--muted);paint-order:stroke;stroke:#fff;stroke-width:3px}
.node rect{stroke-width:2}.node .name{font-weight:600;font-size:12px;fill:var(--ink)}
.node .where{font-size:10.5px;fill:var(--muted);font-family:ui-monospace,monospace}
.node.edit rect{fill:#dbeafe;stroke:var(--edit)}
.node.must_inspect rect{fill:#fee2e2;stroke:var(--must_inspect)}
.node.may_impact rect{fill:#fef3c7;stroke:var(--may_impact)}
.node.low_risk rect{fill:#dcfce7;stroke:var(--low_risk)}
.node.test rect{fill:#ede9fe;stroke:var(--test)}
.empty{padding:40px;color:var(--muted)}
@media (max-width:1100px){main{flex-direction:column}#graph{width:100%}
aside{width:auto;max-height:none;border-left:0;border-top:1px solid #e5e7eb}}
"""

# In a VS Code webview a link cannot open a file itself: hand the location to the extension.
_SCRIPT = """
(function () {
  var api = typeof acquireVsCodeApi === "function" ? acquireVsCodeApi() : null;
  if (!api) { return; }
  document.addEventListener("click", function (event) {
    var target = event.target.closest ? event.target.closest("[data-file]") : null;
    if (!target || !target.getAttribute("data-file")) { return; }
    event.preventDefault();
    api.postMessage({ command: "open", file: target.getAttribute("data-file"),
                      line: Number(target.getAttribute("data-line")) || 1 });
  });
})();
"""

_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; font-src 'none'; connect-src 'none'"
)


def render_html(report: Report, *, root: Path | None = None) -> str:
    """The report as one self-contained HTML page (``root`` makes file links absolute)."""
    layout = layout_dag(report)
    must, may = len(report.triage.must_inspect), len(report.triage.may_impact)
    title = f"Blast radius of {plural(len(report.changes), 'change')} against {report.base}"
    summary = (
        f"{must} must-inspect · {may} may-impact · {plural(len(report.batches), 'batch')} · "
        f"{plural(len(report.tests), 'test')}"
    )
    legend = "".join(
        f'<span><i style="background:var(--{b})"></i>{BUCKET_TITLES[b]}</span>' for b in BUCKETS
    )
    graph = (
        _svg(layout, root)
        if layout.boxes
        else f'<p class="empty">No Python change against {_e(report.base)}: nothing to draw.</p>'
    )
    truncated = " · the DAG was cut to its caps" if report.dag.truncated else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>impact-ls: {_e(title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{_e(title)}</h1><p>{_e(summary)}{truncated}</p>"
        f'<p class="legend">{legend}</p></header>'
        f'<main><div id="graph">{graph}</div><aside>{_lists(report, root)}</aside></main>'
        f"<script>{_SCRIPT}</script></body></html>\n"
    )
