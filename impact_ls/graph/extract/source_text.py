"""What a definition looks like in the file's text: its one-line header and its name's span.

``ast`` gives columns as UTF-8 byte offsets; headers are cut from the text by characters, so a
line with non-ASCII text converts between the two.
"""

from __future__ import annotations

import ast
import re

from impact_ls.graph.extract.syntax import new_span, shared_int
from impact_ls.model import Span

MAX_SIGNATURE_CHARS = 400
_MULTILINE_TRAILING_COMMA = re.compile(r",\s*\)")

_Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


class SourceLines:
    """The lines of one file's text, split on first use."""

    __slots__ = ("_lines", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._lines: list[str] | None = None

    def line(self, lineno: int) -> str:
        """Line ``lineno`` (1-based) without its end, or ``""`` past the end."""
        if self._lines is None:
            self._lines = self._text.splitlines()
        if 0 < lineno <= len(self._lines):
            return self._lines[lineno - 1]
        return ""

    def header(self, node: _Definition) -> str:
        """The one-line signature: the def/class header as written, whitespace collapsed."""
        first = node.body[0] if node.body else None
        last = first.lineno if first is not None else node.lineno
        pieces: list[str] = []
        for lineno in range(node.lineno, last + 1):
            line = self.line(lineno)
            end = len(line)
            if first is not None and lineno == first.lineno:
                if lineno != node.lineno:
                    break
                end = _char_col(line, first.col_offset)
            begin = _char_col(line, node.col_offset) if lineno == node.lineno else 0
            piece = line[begin:end]
            if "#" in piece and "'" not in piece and '"' not in piece:
                piece = piece.split("#", 1)[0]
            pieces.append(piece)
        text = " ".join(" ".join(pieces).split())
        cut = text.rfind(":")
        if cut > 0:
            text = text[: cut + 1]
        if len(pieces) > 1:
            text = _MULTILINE_TRAILING_COMMA.sub(")", text)  # black's magic trailing comma
        text = text.replace("( ", "(").replace(" )", ")")
        return text[:MAX_SIGNATURE_CHARS]

    def name_span(self, node: _Definition) -> Span:
        """The span of the definition's name on its header line (byte columns, as ``ast``'s)."""
        line = self.line(node.lineno)
        start = _char_col(line, node.col_offset)
        idx = line.find(node.name, start)
        lineno = shared_int(node.lineno)
        if idx < 0:
            return new_span(lineno, node.col_offset, lineno, 0)
        if not line.isascii():
            idx = len(line[:idx].encode("utf-8"))
        return new_span(lineno, idx, lineno, idx + len(node.name.encode()))


def _char_col(line: str, col: int) -> int:
    """The character index of UTF-8 byte offset ``col`` in ``line``."""
    if line.isascii():
        return col
    return len(line.encode("utf-8")[:col].decode("utf-8", errors="ignore"))
