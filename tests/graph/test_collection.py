"""pytest's collection modelled on the graph equals a real ``pytest --collect-only`` on fixtures.

Each fixture project under ``fixtures/collect_*`` is copied to a temporary folder (so no pytest
configuration above it applies), indexed, and its modelled node ids compared with the ids a real
``python -m pytest --collect-only -q`` prints there. Parametrized ids are compared at function
level (``test_f[1]`` → ``test_f``): the model emits the function id, which pytest runs with
every parametrization (checked separately by running them). A few anchors per fixture keep the
comparison from passing on two empty sets.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from impact_ls.config import Settings
from impact_ls.graph.collected import CollectedTests
from impact_ls.graph.collection import Collection, collected_ids
from impact_ls.graph.project import ProjectIndex
from impact_ls.graph.pytest_config import PytestConfig

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
_WIN = sys.platform == "win32"
_PLATFORM_TESTS = {
    "tests/test_platform.py::test_windows_only",
    "tests/test_platform.py::TestWindows::test_console",
    "tests/test_platform.py::TestMixed::test_win_method",
}
_POSIX_TESTS = {
    "tests/test_platform.py::test_posix_only",
    "tests/test_platform.py::test_not_nt",
    "tests/test_platform.py::TestMixed::test_posix_method",
}

# ids the model and pytest must both have (present) or both lack (absent), per fixture
ANCHORS: dict[str, tuple[set[str], set[str]]] = {
    "collect_inherit": (
        {
            "tests/test_sub.py::TestSub::test_add",
            "tests/test_sub.py::TestBase::test_add",
            "tests/test_sub.py::TestShared::test_shared_here",
            "tests/test_sub.py::TestUsesShared::test_scale",
            "tests/test_sub.py::TestMixed::test_from_mixin",
            "tests/deep/test_deeper.py::TestDeeper::TestInner::test_inner",
            "tests/deep/test_deeper.py::TestSub::test_sub_only",
        },
        {
            "tests/test_base.py::TestBase::Helper::test_hidden",
            "tests/test_sub.py::Mixin::test_from_mixin",
            "tests/test_sub.py::SharedChecks::test_scale",
        },
    ),
    "collect_flags": (
        {
            "tests/test_flags.py::Checks::test_y",
            "tests/test_flags.py::Checks::test_in_base",
            "tests/test_flags.py::TestConcrete::test_make",
            "tests/test_flags.py::TestKinds::test_static",
            "tests/test_flags.py::helper_on",
            "tests/test_aliases.py::TestRenamed::test_make",
            "tests/test_aliases.py::check_alias",
            "tests/test_aliases.py::TestStarred::test_star",
        },
        {
            "tests/test_flags.py::TestNotCollected::test_x",
            "tests/test_flags.py::TestWithInit::test_z",
            "tests/test_flags.py::TestData::test_d",
            "tests/test_flags.py::TestAbstract::test_make",
            "tests/test_flags.py::TestKinds::test_prop",
            "tests/test_flags.py::TestKinds::test_fixture_named",
            "tests/test_flags.py::test_off",
            "tests/test_module_off.py::test_never",
            "tests/test_aliases.py::TestNotExported::test_no",
            "tests/test_aliases.py::TestConcrete::test_make",
        },
    ),
    "collect_unittest": (
        {
            "tests/test_cases.py::Alpha::test_base",
            "tests/test_cases.py::BaseCase::test_base",
            "tests/test_cases.py::Beta::runTest",
            "tests/test_cases.py::Delta::test_mixed",
            "tests/test_cases.py::Revived::test_skel",
            "tests/test_cases.py::TestPlainStyle::Nested::test_nested",
        },
        {
            "tests/test_cases.py::Skeleton::test_skel",
            "tests/test_cases.py::Alpha::check_not_a_test",
        },
    ),
    "collect_platform": (
        {"tests/test_platform.py::TestMixed::test_always"}
        | (_PLATFORM_TESTS if _WIN else _POSIX_TESTS),
        _POSIX_TESTS if _WIN else _PLATFORM_TESTS,
    ),
    "collect_param": (
        {"tests/test_param.py::test_values", "tests/test_param.py::TestParamClass::test_two"},
        set(),
    ),
    "collect_pyproject": (
        {
            "spec/check_math.py::CheckMath::check_add",
            "spec/check_math.py::CheckMath::it_works",
            "spec/check_math.py::MathSuite::check_suite",
            "spec/parser_spec.py::it_parses",
        },
        {
            "spec/check_math.py::CheckMath::test_not_matched",
            "spec/check_math.py::test_free",
            "spec/test_default_name.py::check_z",
            "spec/legacy/check_old.py::check_old",
            "outside/check_outside.py::check_out",
        },
    ),
    "collect_pytest_ini": ({"tests/test_x.py::verify_a"}, {"tests/test_x.py::test_b"}),
    "collect_empty_ini": ({"tests/test_x.py::test_b"}, {"tests/test_x.py::verify_a"}),
    "collect_tox": (
        {"tests/test_main.py::MathTests::test_sum", "more/test_more.py::test_more"},
        {"tests/test_skip.py::test_ignored", "tests/test_main.py::CaseTests::test_case"},
    ),
    "collect_setup_cfg": (
        {"tests/unit/test_a.py::TestA::test_a", "tests/integration/fast/test_b.py::TestB::test_b"},
        {
            "tests/unit/test_a.py::TestA2::test_a2",
            "tests/integration/slow/test_c.py::test_c",
            "tests/unit/skipme/test_d.py::test_d",
        },
    ),
    "collect_pytest_toml": (
        {"tests/math_check.py::test_in_check"},
        {"tests/test_math.py::test_in_test_file"},
    ),
    "collect_native_toml": (
        {
            "tests/test_behaviour.py::should_work",
            "tests/test_behaviour.py::TestGroup::should_group",
        },
        {
            "tests/test_behaviour.py::test_old_style",
            "other/test_other.py::should_not_collect_outside_testpaths",
        },
    ),
}


def _copy(name: str, tmp_path: Path) -> Path:
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root, ignore=shutil.ignore_patterns("README.md"))
    return root


def _pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # entry-point plugins off: the oracle is pytest itself, not this venv's plugins
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def pytest_ids(root: Path) -> set[str]:
    """The node ids ``pytest --collect-only -q`` prints in ``root``, parametrization stripped."""
    result = _pytest(root, "--collect-only", "-q")
    assert result.returncode in (0, 5), result.stdout + result.stderr
    assert "error" not in result.stdout.lower(), result.stdout
    return {
        re.sub(r"\[.*\]$", "", line.strip())
        for line in result.stdout.splitlines()
        if "::" in line and not line[:1].isspace()
    }


def model(root: Path) -> Collection:
    """The collection as the engine computes it: real index, real config, hints read from disk."""
    index = ProjectIndex.open(root, Settings(jedi_confirm=False))
    tests = CollectedTests(
        root,
        text_of=lambda f: (root / f).read_text(encoding="utf-8"),
        digest_of=lambda f: None,
    )
    with index.lock:
        return tests.collection(index.graph)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ANCHORS))
def test_model_equals_pytest_collect_only(name: str, tmp_path: Path):
    root = _copy(name, tmp_path)
    modelled = set(model(root).ids())
    assert modelled == pytest_ids(root)
    present, absent = ANCHORS[name]
    assert present <= modelled
    assert not absent & modelled


def test_an_inherited_test_maps_to_the_definition_it_runs(tmp_path: Path):
    collection = model(_copy("collect_inherit", tmp_path))
    assert collection.definition_of("tests/test_sub.py::TestSub::test_add") == (
        "tests.test_base.TestBase.test_add"
    )
    assert collection.definition_of("tests/test_sub.py::TestSub::test_overridden") == (
        "tests.test_sub.TestSub.test_overridden"
    )
    assert collection.ids_of("tests.test_base.TestBase.test_overridden") == (
        "tests/test_base.py::TestBase::test_overridden",
        "tests/test_sub.py::TestBase::test_overridden",
        "tests/test_sub.py::TestMixed::test_overridden",
    )
    assert collection.ids_of("tests.shared.SharedChecks.test_scale") == (
        "tests/test_sub.py::TestUsesShared::test_scale",
    )


def test_the_graph_alone_knows_only_defining_locations(tmp_path: Path):
    root = _copy("collect_inherit", tmp_path)
    graph = ProjectIndex.open(root, Settings(jedi_confirm=False)).graph
    alone = set(Collection.of_graph(graph).ids())
    modelled = set(collected_ids(graph, PytestConfig(root=root.as_posix())).ids())
    assert alone < modelled
    assert "tests/test_sub.py::TestSub::test_add" in modelled - alone


@pytest.mark.slow
def test_function_ids_run_every_parametrization(tmp_path: Path):
    root = _copy("collect_param", tmp_path)
    ids = model(root).ids()
    collected = _pytest(root, "--collect-only", "-q").stdout
    items = sum(1 for line in collected.splitlines() if "::" in line)
    result = _pytest(root, "-q", *ids)
    assert result.returncode == 0, result.stdout
    assert f"{items} passed" in result.stdout
    assert items > len(ids)


@pytest.mark.slow
def test_every_modelled_id_is_accepted_and_run_by_pytest(tmp_path: Path):
    root = _copy("collect_inherit", tmp_path)
    ids = model(root).ids()
    result = _pytest(root, "-q", *ids)
    assert result.returncode == 0, result.stdout
    assert f"{len(ids)} passed" in result.stdout


def test_config_found_above_the_root_ignores_its_testpaths(tmp_path: Path):
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = elsewhere\npython_functions = t_\n")
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_a.py").write_text(
        "def t_one():\n    pass\n\ndef test_two():\n    pass\n"
    )
    # pytest prints ids from its rootdir (the config's folder); run from the root it takes ours
    assert pytest_ids(root) == {"project/tests/test_a.py::t_one"}
    assert model(root).ids() == ["tests/test_a.py::t_one"]
    result = _pytest(root, "-q", "tests/test_a.py::t_one")
    assert (result.returncode, "1 passed" in result.stdout) == (0, True), result.stdout


def test_a_config_pytest_refuses_gives_defaults_and_a_note(tmp_path: Path):
    (tmp_path / "setup.cfg").write_text("[pytest]\npython_functions = t_\n")
    (tmp_path / "test_a.py").write_text("def test_one():\n    pass\n")
    tests = CollectedTests(tmp_path, text_of=lambda f: None, digest_of=lambda f: None)
    assert tests.config.python_functions == ("test",)
    assert any("no longer supported" in note for note in tests.config.notes)
    result = _pytest(tmp_path, "--collect-only", "-q")
    assert result.returncode != 0


@pytest.mark.slow
def test_path_patterns_globs_and_ignores_follow_pytest(tmp_path: Path):
    root = tmp_path / "paths"
    files = {
        "pytest.ini": "[pytest]\n"
        "testpaths = src/**/suite\n"
        "python_files = test_*.py */deep/check_*.py\n"
        "addopts = --ignore-glob=*_slow.py --ignore src/pkg/suite/skipped\n",
        "src/pkg/suite/test_a.py": "def test_a():\n    pass\n",
        "src/pkg/suite/test_a_slow.py": "def test_slow():\n    pass\n",
        "src/pkg/suite/deep/check_b.py": "def test_b():\n    pass\n",
        "src/pkg/suite/check_c.py": "def test_c():\n    pass\n",
        "src/pkg/suite/skipped/test_d.py": "def test_d():\n    pass\n",
        "src/pkg/suite/.hidden/test_e.py": "def test_e():\n    pass\n",
        "src/other/test_f.py": "def test_f():\n    pass\n",
        "src/.secret/suite/test_g.py": "def test_g():\n    pass\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert (
        set(model(root).ids())
        == pytest_ids(root)
        == {
            "src/pkg/suite/test_a.py::test_a",
            "src/pkg/suite/deep/check_b.py::test_b",
        }
    )
