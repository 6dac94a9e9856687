"""A module's own test files by pytest's naming convention: the test map's last resort.

When no static path (and no recorded coverage) reaches a test of a changed file, its tests are
most likely in ``test_<module>.py`` or ``<module>_test.py``: what a registry, a template or a
plugin lookup calls (jinja's filters) is tested there through the same dynamic door the graph
cannot see. On 180 real commits (issue 11, ``bench_commits.py``) such a file, where nothing
selected a test of the edited module, was changed with it 11 times in 14.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def named_for(test_file: str, module_file: str) -> bool:
    """Whether ``test_file`` is ``test_<module>.py`` or ``<module>_test.py`` for the module
    ``module_file`` (a private module's leading underscores dropped; a package's
    ``__init__.py`` named by its folder)."""
    parts = module_file.split("/")
    stem = parts[-1].removesuffix(".py")
    if stem == "__init__" and len(parts) > 1:
        stem = parts[-2]
    stem = stem.lstrip("_")
    name = test_file.rsplit("/", 1)[-1]
    return bool(stem) and name in (f"test_{stem}.py", f"{stem}_test.py")


def own_test_files(module_file: str, test_files: Iterable[str]) -> list[str]:
    """The test files named for ``module_file``, sorted. Where several are (django has nine
    ``test_operations.py``), those whose folders share the most names with the module's —
    ``tests/backends/mysql/test_operations.py`` for ``django/db/backends/mysql/operations.py`` —
    and none when none shares one: then the name alone does not say which is its own."""
    named = [f for f in test_files if f != module_file and named_for(f, module_file)]
    if len(named) < 2:
        return named
    folders = _folder_names(module_file)
    shared = {f: len(folders & _folder_names(f)) for f in named}
    best = max(shared.values())
    return sorted(f for f in named if shared[f] == best) if best else []


def _folder_names(file: str) -> set[str]:
    """A file's folder names, a test folder's spelled as what it tests (``utils_tests`` is
    ``utils``); the folders every test or source file sits in (``tests``, ``src``) left out."""
    names = {_TEST_AFFIX.sub("", part) for part in file.split("/")[:-1]}
    return names - _EVERYWHERE


_TEST_AFFIX = re.compile(r"^tests?_|_tests?$")
_EVERYWHERE = frozenset({"", "tests", "test", "testing", "src", "lib"})
