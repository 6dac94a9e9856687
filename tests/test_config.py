"""Settings: defaults, camelCase keys, one warning per bad key, pyproject loading."""

from pathlib import Path

from impact_ls.config import MAX_DEPTH, Settings, settings_from_mapping, settings_from_pyproject


def test_defaults_are_the_spec_numbers():
    settings = Settings()
    assert settings.max_depth == MAX_DEPTH == 3
    assert (settings.must_min, settings.may_min) == (0.70, 0.35)
    assert (settings.max_batches, settings.max_batch_members) == (32, 50)


def test_camel_case_keys_apply():
    settings, warnings = settings_from_mapping({"debounceMs": 100, "maySeverity": "hint"})
    assert (settings.debounce_ms, settings.may_severity, warnings) == (100, "hint", [])


def test_every_bad_key_warns_once_and_keeps_its_default():
    settings, warnings = settings_from_mapping(
        {"maxDepth": "deep", "baseline": "yesterday", "noSuchKey": 1, "mustMin": 0.9}
    )
    assert settings.max_depth == 3
    assert settings.baseline == "head"
    assert settings.must_min == 0.9
    assert len(warnings) == 3
    assert any("noSuchKey" in w for w in warnings)
    assert any("maxDepth" in w and "integer" in w for w in warnings)


def test_pytest_command_accepts_a_string():
    settings, _ = settings_from_mapping({"pytestCommand": "python -m pytest -x"})
    assert settings.pytest_command == ("python", "-m", "pytest", "-x")


def test_pyproject_section_is_read(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.impact-ls]\nexclude = ["legacy/*"]\nmax-depth = 2\n', encoding="utf-8"
    )
    settings, warnings = settings_from_pyproject(tmp_path)
    assert (settings.exclude, settings.max_depth, warnings) == (("legacy/*",), 2, [])


def test_broken_pyproject_is_one_warning(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[tool.impact-ls\n", encoding="utf-8")
    settings, warnings = settings_from_pyproject(tmp_path)
    assert settings == Settings()
    assert len(warnings) == 1 and "pyproject.toml" in warnings[0]


def test_missing_pyproject_is_silent(tmp_path: Path):
    assert settings_from_pyproject(tmp_path) == (Settings(), [])
