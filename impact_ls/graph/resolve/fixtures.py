"""pytest's fixture lookup, statically: which fixture a name requested at a place resolves to.

A place is a file and a class (``""`` outside classes). pytest looks innermost first: the class,
the module (fixtures imported into it included), then each ``conftest.py`` up the folders to
the root. A fixture that requests its own name gets the next one outward (an override).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from impact_ls.graph.facts import DefFact
from impact_ls.graph.resolve.fileinfo import FileInfo
from impact_ls.graph.resolve.values import Kind

if TYPE_CHECKING:
    from impact_ls.graph.resolve.symbols import Symbols

Place = tuple[FileInfo, str]
Found = tuple[FileInfo, DefFact]


def find_fixture(symbols: Symbols, where: Place, requester: DefFact, name: str) -> Found | None:
    """pytest's lookup of ``name`` as seen from ``where`` by ``requester``, or ``None``."""
    candidates: list[Found] = []
    for level_info, parent in fixture_levels(symbols, where):
        found = level_info.fixtures.get((parent, name))
        if found:
            candidates.append((level_info, found[0]))
        elif not parent:
            imported = _imported_fixture(symbols, level_info, name)
            if imported is not None:
                candidates.append(imported)
    if requester.fixture is not None and requester.fixture.name == name:
        for i, (_, d) in enumerate(candidates):
            if d is requester:
                return candidates[i + 1] if i + 1 < len(candidates) else None
    for candidate in candidates:
        if candidate[1] is not requester:
            return candidate
    return None


def autouse_fixtures(symbols: Symbols, where: Place) -> list[Found]:
    """The autouse fixtures in force at ``where``, by name; an inner one hides an outer one."""
    found: dict[str, Found] = {}
    for level_info, parent in fixture_levels(symbols, where):
        for d in level_info.autouse.get(parent, ()):
            assert d.fixture is not None
            found.setdefault(d.fixture.name, (level_info, d))
    return [found[name] for name in sorted(found)]


def fixture_levels(symbols: Symbols, where: Place) -> list[Place]:
    """Where pytest looks for fixtures from ``where``, innermost first."""
    info, klass = where
    levels: list[Place] = []
    if klass:
        levels.append((info, klass))
    levels.append((info, ""))
    for folder in _ancestors(info.facts.file.rpartition("/")[0]):
        conftest = symbols.project.conftest(folder)
        if conftest is not None and conftest is not info:
            levels.append((conftest, ""))
    return levels


def _imported_fixture(symbols: Symbols, info: FileInfo, name: str) -> Found | None:
    """A fixture ``from elsewhere import name`` brought into ``info``'s module."""
    imp = info.top_imports.get(name)
    if imp is None:
        return None
    val = symbols.import_symbol(info, imp, 0)
    if val.kind != Kind.FUNCTION:
        return None
    target = symbols.info_of(val.module)
    if target is None:
        return None
    d = target.defs.get(val.local)
    if d is None or d.fixture is None:
        return None
    return target, d


def _ancestors(folder: str) -> list[str]:
    """``a/b`` → ``["a/b", "a", ""]``."""
    out = []
    while folder:
        out.append(folder)
        folder = folder.rpartition("/")[0]
    out.append("")
    return out
