"""End to end: after an edit, `impact-ls tests` selects every test that real pytest sees fail.

Each case plants ``fixtures/select_paths`` as a git repository, edits one file in the working
tree, runs the whole suite with pytest for the truth (failures, errors, and every test of a
module that fails to collect) and checks the selection covers it — and leaves out tests the
edit cannot reach, so a selector printing everything fails too.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from impact_ls.history.plant import plant_history

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "select_paths"
_SUMMARY = re.compile(r"^(FAILED|ERROR) (\S+)")


@dataclass(frozen=True)
class Case:
    file: str
    old: str
    new: str
    fails: frozenset[str]  # some of the ids pytest must see fail (the truth is pytest's)
    spared: frozenset[str] = frozenset()  # ids the edit cannot reach: never selected


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def _pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], root)


def _collected(root: Path) -> list[str]:
    out = _pytest(root, "--collect-only", "-q")
    assert out.returncode == 0, out.stdout + out.stderr
    return [line for line in out.stdout.splitlines() if "::" in line]


def _failing(root: Path, suite: list[str]) -> set[str]:
    """The suite ids that fail on ``root``: a failed module or conftest fails all its tests."""
    out = _pytest(root, "-q", "-rfE")
    if "ImportError while loading conftest" in out.stderr + out.stdout:
        return set(suite)
    failing: set[str] = set()
    for line in out.stdout.splitlines():
        match = _SUMMARY.match(line)
        if match:
            where = match.group(2)
            failing |= {t for t in suite if t == where or t.startswith(f"{where}::")}
    return failing


def _selected(root: Path) -> tuple[list[str], str]:
    out = _run([sys.executable, "-m", "impact_ls", "tests", "--root", str(root)], root)
    assert out.returncode == 0, out.stderr
    return out.stdout.split(), out.stderr


def _covers(selected: list[str], test: str) -> bool:
    """Whether running ``selected`` runs ``test`` (a file or function id runs what is below)."""
    bare = test.split("[", 1)[0]
    return any(s in (test, bare) or test.startswith(f"{s}::") for s in selected)


SQUARE_AREA = Case(
    "app/shapes.py",
    "        return self.size * self.size\n",
    "        return self.size * self.size + 1\n",
    fails=frozenset(
        {
            "tests/test_fixtures.py::test_partial",  # functools.partial(Square, 3)
            "tests/test_fixtures.py::test_param[2]",  # request.param into a builder
            "tests/sub/test_nearer.py::test_nearer_shape",  # a nearer conftest's fixture
            "tests/test_autouse.py::test_nothing_else",  # an autouse fixture runs it
            "tests/test_mixins.py::test_describe",  # a mixin's self.area() on a subclass
        }
    ),
    spared=frozenset(
        {
            "tests/test_plain.py::test_arithmetic",
            "tests/test_imports.py::test_big",
            "tests/test_mixins.py::test_tag",
        }
    ),
)
CIRCLE_AREA = Case(
    "app/shapes.py",
    "        return 3.0 * self.size * self.size * UNIT\n",
    "        return -3.0 * self.size * self.size * UNIT\n",
    fails=frozenset(
        {
            "tests/test_fixtures.py::test_factory",  # a factory fixture's inner builder
            "tests/test_fixtures.py::TestShapes::test_area_positive",  # the class's fixture
            "tests/test_fixtures.py::test_conftest_shape",
        }
    ),
    spared=frozenset(
        {
            # the subclass overrides the fixture with a Square
            "tests/test_fixtures.py::TestSquareShapes::test_corners",
            "tests/test_autouse.py::test_nothing_else",
            # defined outside testpaths: pytest never collects it
            "scripts/check_shapes.py::test_outside_testpaths",
        }
    ),
)
SIDES_RENAMED = Case(
    "app/shapes.py",
    "    sides = 4\n",
    "    side_count = 4\n",
    # read through self in the base's __init__: a Square now counts the base's 0
    fails=frozenset({"tests/test_fixtures.py::TestSquareShapes::test_corners"}),
    spared=frozenset({"tests/test_plain.py::test_arithmetic"}),
)
LABEL_RENAMED = Case(
    "app/mixins.py",
    '    label = "plain"\n',
    '    caption = "plain"\n',
    fails=frozenset({"tests/test_mixins.py::test_tag"}),
    spared=frozenset({"tests/test_fixtures.py::test_partial"}),
)
CONSTANT_RENAMED = Case(
    "app/registry.py",
    '_PREFIX = "plugin:"\n',
    '_KEY_PREFIX = "plugin:"\n',
    # read in a function body as a bare name: a NameError when it runs
    fails=frozenset({"tests/test_registry.py::test_key_of"}),
    spared=frozenset({"tests/test_imports.py::test_registered", "tests/test_mixins.py::test_tag"}),
)
DESCRIBE_DELETED = Case(
    "app/mixins.py",
    '    def describe(self):\n        return f"{type(self).__name__} of area {self.area()}"\n',
    "",
    fails=frozenset({"tests/test_mixins.py::test_describe"}),
    spared=frozenset({"tests/test_fixtures.py::test_partial"}),
)
DECORATOR_SIGNATURE = Case(
    "app/registry.py",
    "def register(name):",
    "def register(name, version):",
    # ``@register("circle")`` runs when app.plugins is imported: test_imports fails to collect
    fails=frozenset({"tests/test_imports.py::test_unit", "tests/test_imports.py::test_big"}),
    spared=frozenset({"tests/test_mixins.py::test_tag"}),
)
CLASS_BODY_NAME = Case(
    "app/sizes.py",
    "    small = 1\n",
    "    tiny = 1\n",
    # ``big = small * 10`` in the class body: a NameError at import
    fails=frozenset({"tests/test_imports.py::test_unit", "tests/test_imports.py::test_registered"}),
    spared=frozenset({"tests/test_fixtures.py::test_partial"}),
)
PACKAGE_INIT_NAME = Case(
    "app/shapes.py",
    "UNIT = 1.0\n",
    "UNIT_SIZE = 1.0\n",
    # app/__init__.py imports it, and the conftest imports app.shapes: nothing collects
    fails=frozenset({"tests/test_plain.py::test_arithmetic", "tests/test_mixins.py::test_tag"}),
)
CONFTEST_FIXTURE = Case(
    "tests/conftest.py",
    "functools.partial(Square, 3)",
    "functools.partial(Square, 4)",
    fails=frozenset({"tests/test_fixtures.py::test_partial"}),
    spared=frozenset(
        {"tests/test_fixtures.py::test_factory", "tests/sub/test_nearer.py::test_nearer_shape"}
    ),
)
CONFTEST_HOOK = Case(
    "tests/sub/conftest.py",
    'item.name.startswith("test_")',
    'item.name.startswith("check_")',
    # a hook runs for every test below its folder, and only there
    fails=frozenset({"tests/sub/test_nearer.py::test_nearer_shape"}),
    spared=frozenset({"tests/test_plain.py::test_arithmetic", "tests/test_mixins.py::test_tag"}),
)
TEST_SYNTAX_ERROR = Case(
    "tests/test_plain.py",
    "    assert 2 * 2 == 4\n",
    "    assert 2 * 2 == (4\n",
    fails=frozenset({"tests/test_plain.py::test_arithmetic"}),
    spared=frozenset({"tests/test_mixins.py::test_tag"}),
)


@pytest.mark.slow
@pytest.mark.parametrize(
    "case",
    [
        pytest.param(SQUARE_AREA, id="body-via-fixtures-autouse-mixin"),
        pytest.param(CIRCLE_AREA, id="body-via-factory-and-class-fixture"),
        pytest.param(SIDES_RENAMED, id="class-attribute-read-in-init"),
        pytest.param(LABEL_RENAMED, id="class-attribute-read-through-self"),
        pytest.param(CONSTANT_RENAMED, id="module-constant-read-in-a-function"),
        pytest.param(DESCRIBE_DELETED, id="deleted-mixin-method"),
        pytest.param(DECORATOR_SIGNATURE, id="decorator-no-longer-binds-at-import"),
        pytest.param(CLASS_BODY_NAME, id="class-body-name-removed"),
        pytest.param(PACKAGE_INIT_NAME, id="package-init-import-removed"),
        pytest.param(CONFTEST_FIXTURE, id="conftest-fixture-changed"),
        pytest.param(CONFTEST_HOOK, id="conftest-hook-changed"),
        pytest.param(TEST_SYNTAX_ERROR, id="test-file-syntax-error"),
    ],
)
def test_the_selection_covers_every_test_pytest_sees_fail(tmp_path: Path, case: Case) -> None:
    root = plant_history(FIXTURE, tmp_path / "project")
    suite = _collected(root)
    path = root / case.file
    text = path.read_text(encoding="utf-8")
    assert case.old in text
    path.write_text(text.replace(case.old, case.new, 1), encoding="utf-8")

    failing = _failing(root, suite)
    assert case.fails <= failing  # the edit really breaks what the case says
    selected, _ = _selected(root)
    assert [t for t in sorted(failing) if not _covers(selected, t)] == []
    assert [t for t in sorted(case.spared) if _covers(selected, t)] == []
    assert all(not t.startswith("scripts/") for t in selected)
