"""Executed lines → the innermost graph entity (function, method, class, module) holding each.

``LineOwners(nodes)`` is built once per recorded file from its graph nodes at the recorded hash:
every line of the file is painted with the node whose span contains it, outer spans first, so a
line inside a method belongs to the method, a class-body line to the class and the rest to the
module. A line outside every span (past the end of a file that changed) has no owner.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from impact_ls.model import Node, NodeKind, QualName


class LineOwners:
    """The innermost node of each line of one file."""

    __slots__ = ("_kinds", "_owners")

    def __init__(self, nodes: Sequence[Node]) -> None:
        last = max((node.span.end_line or node.span.line for node in nodes), default=0)
        owners: list[QualName | None] = [None] * (last + 1)
        # Widest first, so nested definitions paint over their containers.
        for node in sorted(nodes, key=_widest_first):
            end = node.span.end_line or node.span.line
            owners[node.span.line : end + 1] = [node.id] * (end - node.span.line + 1)
        self._owners = owners
        self._kinds = {node.id: node.kind for node in nodes}

    def owner(self, line: int) -> QualName | None:
        """The innermost node whose span holds ``line``, or None."""
        if 0 < line < len(self._owners):
            return self._owners[line]
        return None

    def owners(self, lines: Iterable[int]) -> set[QualName]:
        """The distinct owners of ``lines``."""
        return {owner for line in lines if (owner := self.owner(line)) is not None}

    def kind(self, entity: QualName) -> NodeKind:
        """The kind of a node of this file."""
        return self._kinds[entity]


def _widest_first(node: Node) -> tuple[int, int, str]:
    end = node.span.end_line or node.span.line
    # A module node spans the same lines as a one-definition file: keep the module outermost.
    outer = 0 if node.kind is NodeKind.MODULE else 1
    return (-(end - node.span.line), outer, node.id)
