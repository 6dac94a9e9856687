"""The nodes and dynamic references of one file: they depend on the file alone."""

from __future__ import annotations

import sys

from impact_ls.graph.fastinit import fast_init
from impact_ls.graph.resolve.fileinfo import FileInfo
from impact_ls.graph.resolve.symbols import Symbols
from impact_ls.model import DynamicKind, DynamicRef, Node, NodeKind, QualName, Span, TestId

_new_node = fast_init(Node)
_new_dynamic_ref = fast_init(DynamicRef)
# the references named by a module-level name of their file, resolved to its dotted path
_BY_GLOBAL_NAME = frozenset({DynamicKind.COMPUTED_LOOKUP, DynamicKind.REGISTRY})


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
    """The file's dynamic references; depends on this file alone.

    A computed lookup's owner and a registry are named by the dotted path of the module-level
    name they start from (``from orm import models`` makes ``getattr(models, t)`` a lookup in
    ``orm.models``; ``getattr(Color, name)`` beside ``class Color`` one in ``<module>.Color``);
    one that starts from anything else (a builtin, a name nothing binds) is dropped.
    """
    out = []
    for d in info.facts.dynamic:
        name: str | None = d.name
        if d.kind in _BY_GLOBAL_NAME:
            name = _global_path(info, d.name)
        if name is None:
            continue
        out.append(
            _new_dynamic_ref(
                source=info.qual(d.scope), name=name, kind=d.kind, file=info.facts.file, span=d.span
            )
        )
    return out


def _global_path(info: FileInfo, chain: str) -> str | None:
    """The dotted path of a chain whose head is a module-level name of the file: a definition
    or constant of its own, or an import (``None`` for anything else)."""
    head, _, rest = chain.partition(".")
    if head in info.top or head in info.constants:
        return sys.intern(f"{info.qual(head)}.{rest}" if rest else info.qual(head))
    imp = info.top_imports.get(head)
    if imp is None or imp.name == "*":
        return None
    module = Symbols.absolute(info, imp)
    if not module:
        return None
    if imp.name is not None:
        path = f"{module}.{imp.name}"
    elif imp.asname:
        path = module
    else:  # ``import a.b`` binds ``a``: the chain is spelled from the top package
        path = head
    return sys.intern(f"{path}.{rest}" if rest else path)
