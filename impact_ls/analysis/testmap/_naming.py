"""A module's own test files by pytest's naming convention: the test map's last resort.

When no static path (and no recorded coverage) reaches a test of a changed file, its tests are
most likely in ``test_<module>.py`` or ``<module>_test.py``: what a registry, a template or a
plugin lookup calls (jinja's filters) is tested there through the same
dynamic door the graph cannot see. On 180 real commits (issue 11, ``bench_commits.py``) such a
file, where nothing selected a test of the edited module, was changed with it 11 times in 14.
"""

from __future__ import annotations

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
    """The test files named for ``module_file``, sorted (a project may have several: one per
    test folder)."""
    return sorted(f for f in test_files if f != module_file and named_for(f, module_file))
