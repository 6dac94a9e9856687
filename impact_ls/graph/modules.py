"""Map root-relative file paths to dotted module names: flat, ``src/`` layout, namespace packages.

A source root is a folder whose children are top-level modules. The project root (``""``) always
is one; so is every folder named ``src`` that is not itself inside a package (``src/pkg``,
``packages/lib/src/pkg``). A folder without ``__init__.py`` is a namespace package, so every
``.py`` file gets a module name (``tests/unit/test_x.py`` → ``tests.unit.test_x``), which keeps
qualnames unique even where pytest would import by basename.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

logger = logging.getLogger(__name__)

_SRC = "src"


def source_roots(files: Iterable[str]) -> tuple[str, ...]:
    """The source roots implied by ``files`` (root-relative posix paths), longest first.

    ``""`` (flat layout) is always last. A ``src`` folder counts when it holds Python code and
    has no ``__init__.py`` of its own and no package above it.
    """
    files = [f for f in files if f.endswith(".py")]
    inits = {f.rpartition("/")[0] for f in files if f.rpartition("/")[2] == "__init__.py"}
    roots: set[str] = set()
    for file in files:
        parts = file.split("/")[:-1]
        for i, part in enumerate(parts):
            if part != _SRC:
                continue
            folder = "/".join(parts[: i + 1])
            above = ["/".join(parts[:j]) for j in range(1, i + 1)]
            if folder not in inits and not any(a in inits for a in above):
                roots.add(folder)
                break
    return (*sorted(roots, key=lambda r: (-len(r), r)), "")


def module_for(file: str, roots: Sequence[str]) -> tuple[str, bool]:
    """The dotted module name of ``file`` under its longest root, and whether it is a package.

    ``pkg/__init__.py`` → ``("pkg", True)``; ``src/pkg/a.py`` → ``("pkg.a", False)`` with ``src``
    among ``roots``; a root-level ``__init__.py`` (the repository is itself a package) is the
    plain module ``__init__`` so that no qualname starts with a dot.
    """
    rel = file
    for root in sorted(roots, key=len, reverse=True):
        if root and file.startswith(root + "/"):
            rel = file[len(root) + 1 :]
            break
    stem = rel[:-3] if rel.endswith(".py") else rel
    parts = stem.split("/")
    if parts[-1] == "__init__" and len(parts) > 1:
        return ".".join(parts[:-1]), True
    return ".".join(parts), False
