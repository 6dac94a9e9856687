"""The edges of a file's imports: ``import``, ``reexport`` and ``TYPE_CHECKING`` ``type-ref``.

An import points at what it names, followed to its definition (``from .a import b`` → the
``b`` that ``a`` defines or re-exports). A package's public import, or a name in ``__all__``,
is a ``reexport`` (``member`` = the exported name); a star import in a package re-exports each
public name of its module. ``import a.b.c`` binds ``a`` but depends on ``a.b.c``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from impact_ls.graph.facts import FileFacts, ImportFact
from impact_ls.graph.kinds import EDGE_IMPORT, EDGE_REEXPORT, EDGE_TYPE_REF
from impact_ls.graph.resolve.fileinfo import FileInfo
from impact_ls.graph.resolve.values import Kind
from impact_ls.model import QualName

if TYPE_CHECKING:
    from impact_ls.graph.resolve.edges import FileResolver


def add_import_edges(resolver: FileResolver) -> None:
    """One edge per imported name of the file (each public name, for a star re-export)."""
    info = resolver.info
    values = resolver.values
    facts = info.facts
    for imp in facts.imports:
        source = info.qual(imp.scope)
        if imp.name == "*":
            _star_import(resolver, imp, source)
            continue
        target = values.import_symbol(info, imp, 0)
        if target.kind in (Kind.EXTERNAL, Kind.UNKNOWN):
            continue
        if imp.name is None and not imp.asname:
            # ``import a.b.c`` binds ``a`` but depends on ``a.b.c``
            full = values.module_value(values.absolute(info, imp))
            if full.kind != Kind.EXTERNAL:
                target = full
        if imp.type_checking:
            kind = EDGE_TYPE_REF
        elif _reexports(facts, imp):
            resolver.add(EDGE_REEXPORT, source, target.qual, imp.span, member=imp.bound)
            continue
        else:
            kind = EDGE_IMPORT
        resolver.add(kind, source, target.qual, imp.span)


def _reexports(facts: FileFacts, imp: ImportFact) -> bool:
    if imp.scope or imp.name is None:
        return False
    if facts.all_names is not None and imp.bound in facts.all_names:
        return True
    return facts.is_package and not imp.bound.startswith("_")


def _star_import(resolver: FileResolver, imp: ImportFact, source: QualName) -> None:
    info = resolver.info
    values = resolver.values
    module = values.absolute(info, imp)
    if not module:
        return
    target_info = values.info_of(module)
    if target_info is None:
        if values.module_exists(module):
            resolver.add(EDGE_IMPORT, source, QualName(module), imp.span)
        return
    reexport = not imp.scope and not imp.type_checking and info.facts.is_package
    if not reexport:
        resolver.add(EDGE_IMPORT, source, QualName(module), imp.span)
        return
    for name in _public_names(target_info):
        val = values.symbol(module, name, 0)
        if val.kind in (Kind.EXTERNAL, Kind.UNKNOWN):
            continue
        resolver.add(EDGE_REEXPORT, source, val.qual, imp.span, member=name)


def _public_names(info: FileInfo) -> list[str]:
    """What ``from module import *`` binds: ``__all__``, else the names without ``_``."""
    if info.facts.all_names is not None:
        return list(dict.fromkeys(info.facts.all_names))
    names = [*info.top, *info.constants, *info.top_imports]
    return sorted({n for n in names if not n.startswith("_")})
