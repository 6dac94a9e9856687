"""Hand-built ``impact_ls.model`` values for tests: ``node``, ``edge`` and ``span``; and
``analyze_texts``, the pipeline run on a project given as texts.

Each helper takes keyword arguments with defaults a test rarely needs to change, and passes any
other model field through as it is::

    node("pkg.auth.Login.login", NodeKind.METHOD, file="pkg/auth.py", line=5, end_line=9)
    edge("pkg.api.handle", "pkg.auth.Login.login", file="pkg/api.py", line=4, args=ArgShape())
    span(3, col=4, end_col=20)

Ids are wrapped in their ``NewType`` (``QualName``, ``TestId``) here, so tests write plain strings.
"""

from __future__ import annotations

from typing import Any

from impact_ls.analysis.pipeline import SourceChange, analyze
from impact_ls.config import Settings
from impact_ls.graph.builder import GraphBuilder
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import Edge, EdgeKind, Node, NodeKind, QualName, Report, Span, TestId


def span(line: int = 1, *, col: int = 0, end_line: int | None = None, end_col: int = 0) -> Span:
    """A source range; it ends on its own ``line`` unless ``end_line`` says otherwise."""
    return Span(
        line=line, col=col, end_line=line if end_line is None else end_line, end_col=end_col
    )


def node(
    qid: str,
    kind: NodeKind = NodeKind.FUNCTION,
    *,
    file: str = "mod.py",
    line: int = 1,
    end_line: int | None = None,
    test_id: str | None = None,
    **fields: Any,
) -> Node:
    """A definition ``qid`` of ``kind`` spanning ``line``..``end_line`` (default: one line).

    ``fields`` are further ``Node`` fields (``signature``, ``params``, ``decorators``, …).
    """
    return Node(
        id=QualName(qid),
        kind=kind,
        file=file,
        span=span(line, end_line=end_line),
        test_id=TestId(test_id) if test_id is not None else None,
        **fields,
    )


def edge(
    source: str,
    target: str,
    kind: EdgeKind = EdgeKind.CALL,
    *,
    file: str = "mod.py",
    line: int = 1,
    col: int = 0,
    end_col: int = 0,
    **fields: Any,
) -> Edge:
    """An edge ``source`` → ``target`` evidenced at ``file``:``line`` (default: a call).

    ``fields`` are further ``Edge`` fields (``args``, ``name_matched``, ``member``).
    """
    return Edge(
        source=QualName(source),
        target=QualName(target),
        kind=kind,
        file=file,
        span=span(line, col=col, end_col=end_col),
        **fields,
    )


def analyze_texts(files: dict[str, str], path: str, after: str) -> tuple[CodeGraph, Report]:
    """The graph of ``files`` with ``path`` already at ``after``, and the report of that edit."""
    builder = GraphBuilder()
    for name, text in sorted({**files, path: after}.items()):
        builder.update(name, text)
    module = path.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
    source = SourceChange(file=path, module=module, before=files[path], after=after)
    report, _ = analyze(graph=builder.graph, sources=[source], settings=Settings())
    return builder.graph, report
