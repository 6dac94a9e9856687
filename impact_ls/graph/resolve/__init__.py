"""Resolve one file's facts against the whole project: nodes, edges and dynamic references.

``file_nodes``/``file_dynamic`` depend on the file alone. ``resolve_file`` takes the file's
``FileInfo`` (its facts, indexed) and a ``Project`` view of every other file and returns the
edges evidenced in that file, each with its exact span (call sites carry their ``ArgShape``);
an edge's ``source`` is the innermost enclosing function, method, class or module.

Rules (DESIGN §2): module ↔ file map (flat, ``src/``, namespace packages); imports (absolute,
relative, aliases, ``__init__`` re-exports and ``__all__``, star imports) followed transitively;
calls through local scope, module globals, imports, ``self``/``cls`` along the MRO, ``super()``,
constructors (``instantiate`` plus ``call`` to ``__init__``), annotated parameters and attributes
``x = Cls(); x.m()``, ``self.repo = repo`` and agreed return values (``return Cls()``,
``return self``); pytest fixtures with conftest scoping, overriding and autouse, a requested
fixture typed by what it returns; ``tests`` edges from a test to what it and its fixtures call;
``contains``, ``inherit``, ``override``, ``class-member``, ``type-ref``, ``import``,
``reexport`` (with ``member`` = the exported name).

Where the receiver or module is known but the member is not (a deleted function), the edge still
points at the would-be qualname — a dangling target — so the deleted definition finds its users.
An attribute call on a receiver of unknown type links to every same-named method,
marked ``name_matched``; more than ``MAX_NAME_CANDIDATES`` candidates link to none.

Every read of another file goes through ``Project``, which records it: the builder re-resolves a
file exactly when something it read changed.

The parts: ``fileinfo.py`` (the per-file index and the ``Project`` view), ``nodes.py`` (nodes
and dynamic references), ``edges.py`` (the driver, calls and accesses) with ``import_edges.py``
and ``pytest_edges.py``; ``symbols.py`` and ``evaluate.py`` say what names and chains are,
``fixtures.py`` how pytest finds a fixture, ``values.py`` what a value is.
"""

from __future__ import annotations

from impact_ls.graph.resolve.edges import MAX_NAME_CANDIDATES, FileResolver
from impact_ls.graph.resolve.fileinfo import FileInfo, Project, index_file, interface_of
from impact_ls.graph.resolve.nodes import file_dynamic, file_nodes
from impact_ls.model import Edge


def resolve_file(info: FileInfo, project: Project) -> list[Edge]:
    """Every edge evidenced in ``info``'s file, in resolution order (deterministic)."""
    return FileResolver(info, project).run()


__all__ = [
    "MAX_NAME_CANDIDATES",
    "FileInfo",
    "Project",
    "file_dynamic",
    "file_nodes",
    "index_file",
    "interface_of",
    "resolve_file",
]
