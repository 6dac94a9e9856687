"""The nodes and dynamic references of one file: they depend on the file alone."""

from __future__ import annotations

from impact_ls.graph.fastinit import fast_init
from impact_ls.graph.resolve.fileinfo import FileInfo
from impact_ls.model import DynamicRef, Node, NodeKind, QualName, Span, TestId

_new_node = fast_init(Node)
_new_dynamic_ref = fast_init(DynamicRef)


def file_nodes(info: FileInfo) -> list[Node]:
    """The module node and one node per definition; depends on this file alone."""
    facts = info.facts
    nodes = [
        _new_node(
            id=QualName(facts.module),
            kind=NodeKind.MODULE,
            file=facts.file,
            span=Span(line=1, col=0, end_line=max(facts.line_count, 1), end_col=0),
            signature=f"module {facts.module}",
            doc=facts.doc,
            strings=facts.strings,
        )
    ]
    for local, d in info.defs.items():
        nodes.append(
            _new_node(
                id=info.qual(local),
                kind=d.kind,
                file=facts.file,
                span=d.span,
                signature=d.signature,
                doc=d.doc,
                params=d.params,
                decorators=d.decorators,
                test_id=TestId(d.test_id) if d.test_id else None,
                strings=d.strings,
            )
        )
    return nodes


def file_dynamic(info: FileInfo) -> list[DynamicRef]:
    """The file's dynamic references; depends on this file alone."""
    return [
        _new_dynamic_ref(
            source=info.qual(d.scope), name=d.name, kind=d.kind, file=info.facts.file, span=d.span
        )
        for d in info.facts.dynamic
    ]
