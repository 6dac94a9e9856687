"""Which pytest config file wins, what is read from it, and what a broken one gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from impact_ls.graph.pytest_config import (
    DEFAULT_PYTHON_FILES,
    PytestConfigError,
    config_from_values,
    parse_ini,
    read_pytest_config,
)

FILES = {
    "pytest.toml": '[pytest]\npython_functions = ["a_"]\n',
    ".pytest.toml": '[pytest]\npython_functions = ["b_"]\n',
    "pytest.ini": "[pytest]\npython_functions = c_\n",
    ".pytest.ini": "[pytest]\npython_functions = d_\n",
    "pyproject.toml": '[tool.pytest.ini_options]\npython_functions = ["e_"]\n',
    "tox.ini": "[pytest]\npython_functions = f_\n",
    "setup.cfg": "[tool:pytest]\npython_functions = g_\n",
}
ORDER = list(FILES)


@pytest.mark.parametrize("winner", ORDER)
def test_the_first_file_in_pytest_order_wins(tmp_path: Path, winner: str):
    for name in ORDER[ORDER.index(winner) :]:
        (tmp_path / name).write_text(FILES[name])
    config = read_pytest_config(tmp_path)
    assert config.python_functions == ("abcdefg"[ORDER.index(winner)] + "_",)
    assert config.source.startswith(winner + " [")


@pytest.mark.parametrize(
    ("name", "text", "later", "later_text"),
    [
        (
            "pyproject.toml",
            '[project]\nname = "x"\n',
            "tox.ini",
            "[pytest]\npython_functions = z_\n",
        ),
        (
            "tox.ini",
            "[tox]\nenvlist = py3\n",
            "setup.cfg",
            "[tool:pytest]\npython_functions = z_\n",
        ),
        (
            "setup.cfg",
            "[metadata]\nname = x\n",
            "../pytest.ini",
            "[pytest]\npython_functions = z_\n",
        ),
    ],
)
def test_a_file_without_a_pytest_section_is_passed_over(
    tmp_path: Path, name: str, text: str, later: str, later_text: str
):
    root = tmp_path / "root"
    root.mkdir()
    (root / name).write_text(text)
    (root / later).write_text(later_text)
    assert read_pytest_config(root).python_functions == ("z_",)


def test_an_empty_pytest_ini_wins_with_the_defaults(tmp_path: Path):
    (tmp_path / "pytest.ini").write_text("# nothing\n")
    (tmp_path / "tox.ini").write_text("[pytest]\npython_functions = tox_\n")
    config = read_pytest_config(tmp_path)
    assert (config.source, config.python_functions) == ("pytest.ini [pytest]", ("test",))


def test_a_pyproject_without_pytest_options_is_the_fallback(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    config = read_pytest_config(tmp_path)
    assert (config.source, config.python_files) == ("pyproject.toml", DEFAULT_PYTHON_FILES)


def test_the_search_walks_up_and_testpaths_apply_only_at_the_rootdir(tmp_path: Path):
    (tmp_path / "tox.ini").write_text("[pytest]\ntestpaths = tests\npython_classes = Check\n")
    inner = tmp_path / "sub" / "project"
    inner.mkdir(parents=True)
    here = read_pytest_config(tmp_path)
    below = read_pytest_config(inner)
    assert (here.testpaths, here.python_classes) == (("tests",), ("Check",))
    assert (below.testpaths, below.python_classes) == ((), ("Check",))
    assert below.source == f"{(tmp_path / 'tox.ini').as_posix()} [pytest]"


def test_ini_values_are_split_like_pytest(tmp_path: Path):
    (tmp_path / "setup.cfg").write_text(
        "[tool:pytest]\n"
        "testpaths =\n    tests/unit\n    tests/it\n"
        "python_files: check_*.py\n"
        "; a comment line\n"
        "collect_imported_tests = no\n"
        "norecursedirs = .* build  # inline comments are part of the value, as in pytest\n"
    )
    config = read_pytest_config(tmp_path)
    assert config.testpaths == ("tests/unit", "tests/it")
    assert config.python_files == ("check_*.py",)
    assert config.collect_imported_tests is False
    assert config.norecursedirs[:3] == (".*", "build", "#")


def test_native_toml_and_ini_mode_tables(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest]\ntestpaths = ["a", "b"]\ncollect_imported_tests = false\n'
    )
    config = read_pytest_config(tmp_path)
    assert (config.testpaths, config.collect_imported_tests) == (("a", "b"), False)
    assert config.source == "pyproject.toml [tool.pytest]"


@pytest.mark.parametrize(
    ("name", "text", "reason"),
    [
        ("pyproject.toml", "[tool.pytest.ini_options\n", "invalid TOML"),
        ("setup.cfg", "[pytest]\npython_files = x\n", "no longer supported"),
        ("tox.ini", "[pytest]\na = 1\na = 2\n", "duplicate name"),
        ("pytest.ini", "python_files = x\n", "no section header"),
        ("pytest.toml", "python_files = ['x']\n", "outside the [pytest] table"),
        ("pyproject.toml", "[tool.pytest]\npython_files = 3\n", "a string or a list of strings"),
        (
            "pyproject.toml",
            '[tool.pytest]\nx = 1\n[tool.pytest.ini_options]\ny = "2"\n',
            "both [tool.pytest] and",
        ),
        ("pytest.ini", "[pytest]\ncollect_imported_tests = maybe\n", "invalid truth value"),
        ("pytest.ini", "[pytest]\naddopts = --ignore='unclosed\n", "No closing quotation"),
    ],
)
def test_a_file_pytest_refuses_gives_defaults_and_a_note(
    tmp_path: Path, name: str, text: str, reason: str
):
    (tmp_path / name).write_text(text)
    config = read_pytest_config(tmp_path)
    assert config.python_files == DEFAULT_PYTHON_FILES
    assert len(config.notes) == 1
    assert reason in config.notes[0]
    assert "pytest would stop with a usage error" in config.notes[0]


def test_an_unreadable_file_is_a_note(tmp_path: Path):
    (tmp_path / "pytest.ini").write_bytes(b"[pytest]\npython_files = \xff\n")
    assert "cannot read it" in read_pytest_config(tmp_path).notes[0]


def test_addopts_that_change_collection():
    config = config_from_values(
        {
            "addopts": "--ignore=tests/old --ignore ./tests/x.py --ignore-glob=*_slow.py "
            "-p no:unittest -m 'not slow' --doctest-modules",
        },
        source="tox.ini [pytest]",
    )
    assert config.ignore == ("tests/old", "tests/x.py")
    assert config.ignore_glob == ("*_slow.py",)
    assert config.unittest is False
    assert config.notes == (
        "tox.ini [pytest]: addopts uses -m marker selection, doctest items (--doctest-modules): "
        "not modelled",
    )


def test_attached_plugin_option_and_list_addopts():
    config = config_from_values({"addopts": ["-pno:unittest", "-ra"]})
    assert (config.unittest, config.notes) == (False, ())


def test_parse_ini_rejects_a_continuation_without_a_key():
    with pytest.raises(PytestConfigError, match="unexpected value continuation"):
        parse_ini("[pytest]\n    orphan\n")
