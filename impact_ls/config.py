"""Every cap and threshold of the pipeline as a named constant, plus the frozen ``Settings``.

The numbers are the defaults of ``seeds/impact-analysis-spec.md`` (§3, §4). ``Settings`` is fully
defaulted; ``settings_from_mapping`` turns user configuration (``[tool.impact-ls]``,
LSP ``initializationOptions``, CLI flags) into ``Settings``, accepting camelCase or snake_case
keys, and collects one warning per bad key while keeping that key's default.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib

# classify (§3.1)
MAX_CHANGES = 64
MAX_ENTITY_CHARS = 200
# walk (§3.3)
MAX_DEPTH = 3
MAX_WALK_NODES = 200
# cochange (§3.4)
MAX_COMMIT_FILES = 50
MAX_COCHANGE_PER_FILE = 40
COCHANGE_DECIMALS = 4
# testmap (§3.5)
TEST_WEIGHT_TESTS = 1.0
TEST_WEIGHT_CALL = 0.56
TEST_WEIGHT_INHERIT = 0.56
TEST_WEIGHT_CONTAINS = 0.5
TEST_WEIGHT_IMPORT = 0.45
# the tests of a changed module's own test file (``test_<module>.py``) when no path reaches one
TEST_WEIGHT_NAMED = 0.5
# recorded coverage (impact-ls record): a test that executed a changed entity, or a reached one
TEST_WEIGHT_RECORDED = 1.0
TEST_WEIGHT_RECORDED_REACHED = 0.56
TEST_MAP_MIN = 0.45
MAX_TEST_PAIRS = 256  # (file, test) pairs a report lists; `impact-ls tests` prints them all
# entities the test search expands per changed file (its cost bound; not in the spec)
MAX_TEST_NODES = 20_000
# the same bound for the editor's analysis per keystroke (latency first; the lens says it was cut
# and `impact-ls tests` searches to MAX_TEST_NODES)
MAX_TEST_NODES_LIVE = 250
# rank (§3.6)
LEX_W_ID = 0.5
LEX_W_STR = 0.3
LEX_W_IMP = 0.2
# triage (§3.7)
MUST_MIN = 0.70
MAY_MIN = 0.35
COCHANGE_MIN = 0.3
# the co-change share at which history ties a reached file to the edit: with history, a site
# nothing proves broken is MAY-IMPACT only at or above it (issue 11: on real commits, reached
# files below it were nearly never edited with the change)
COCHANGE_SUPPORT = 0.1
TEST_MIN = 0.56
LEX_MIN = 0.1
# batch (§3.8)
MAX_BATCHES = 32
MAX_BATCH_MEMBERS = 50
# dag (§3.9)
MAX_DAG_NODES = 200
MAX_DAG_EDGES = 400
MAX_DAG_TOKENS = 12_000
# nextedit (§4)
LLM_TEMPERATURE = 0.0
LLM_MAX_TOKENS = 1024
LLM_MAX_ENTITIES = 50
LLM_SUMMARY_CHARS = 200
LLM_TIMEOUT_S = 30.0
# files
MAX_FILE_BYTES = 1024 * 1024
CACHE_DIR_NAME = ".impact_ls"
# server
DEBOUNCE_MS = 250
# jedi confirmation of name-matched candidates: seconds one (CLI) analysis may spend on cache misses
JEDI_BUDGET_S = 2.0
JEDI_CACHE_SIZE = 1024  # files whose verdicts are kept

DEFAULT_EXCLUDES = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    "env",
    ".env",
    "node_modules",
    "build",
    "dist",
    "__pycache__",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".impact_ls",
    "site-packages",
    ".eggs",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """Everything configurable, each field defaulted from the constants above."""

    baseline: str = "head"  # "head" | "saved"
    debounce_ms: int = DEBOUNCE_MS
    may_severity: str = "information"  # "information" | "hint" | "off"
    max_changes: int = MAX_CHANGES
    max_depth: int = MAX_DEPTH
    max_walk_nodes: int = MAX_WALK_NODES
    max_commit_files: int = MAX_COMMIT_FILES
    max_cochange: int = MAX_COCHANGE_PER_FILE
    test_map_min: float = TEST_MAP_MIN
    max_test_pairs: int = MAX_TEST_PAIRS
    max_test_nodes: int = MAX_TEST_NODES
    max_test_nodes_live: int = MAX_TEST_NODES_LIVE
    must_min: float = MUST_MIN
    may_min: float = MAY_MIN
    cochange_min: float = COCHANGE_MIN
    cochange_support: float = COCHANGE_SUPPORT
    test_min: float = TEST_MIN
    lex_min: float = LEX_MIN
    max_batches: int = MAX_BATCHES
    max_batch_members: int = MAX_BATCH_MEMBERS
    max_dag_nodes: int = MAX_DAG_NODES
    max_dag_edges: int = MAX_DAG_EDGES
    max_dag_tokens: int = MAX_DAG_TOKENS
    max_file_bytes: int = MAX_FILE_BYTES
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    pytest_command: tuple[str, ...] = ()
    python: str = ""
    test_timeout_s: float = 600.0
    record_timeout_s: float = 3600.0  # impact-ls record: the whole suite under coverage
    llm_base_url: str = ""
    llm_model: str = ""
    llm_api_key_env: str = ""
    llm_timeout_s: float = LLM_TIMEOUT_S
    jedi_budget_s: float = JEDI_BUDGET_S
    jedi_confirm: bool = True
    hierarchy: bool = True  # call and type hierarchy; off beside a server that offers them


_CHOICES: dict[str, tuple[str, ...]] = {
    "baseline": ("head", "saved"),
    "may_severity": ("information", "hint", "off"),
}


def _snake(key: str) -> str:
    out = []
    for ch in key.replace("-", "_"):
        if ch.isupper():
            out.append("_" + ch.lower())
        else:
            out.append(ch)
    return "".join(out)


def _coerce(name: str, default: Any, value: Any) -> Any:
    """Convert ``value`` to the type of ``default`` or raise ``ValueError`` saying why."""
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        raise ValueError("expected true or false")
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError("expected a non-negative integer")
        return value
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ValueError("expected a non-negative number")
        return float(value)
    if isinstance(default, tuple):
        if isinstance(value, str):
            return tuple(value.split()) if name == "pytest_command" else (value,)
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return tuple(value)
        raise ValueError("expected a list of strings")
    if isinstance(default, str):
        if not isinstance(value, str):
            raise ValueError("expected a string")
        choices = _CHOICES.get(name)
        if choices and value.lower() not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}")
        return value.lower() if choices else value
    raise ValueError("unsupported setting")


def settings_from_mapping(
    values: Mapping[str, Any], base: Settings | None = None
) -> tuple[Settings, list[str]]:
    """Overlay ``values`` on ``base``; bad keys keep their default and yield one warning each."""
    base = base or Settings()
    fields = {f.name for f in dataclasses.fields(Settings)}
    changes: dict[str, Any] = {}
    warnings: list[str] = []
    for raw_key, value in values.items():
        name = _snake(str(raw_key))
        if name not in fields:
            warnings.append(f"unknown setting {raw_key!r} ignored")
            continue
        if value is None:
            continue
        try:
            changes[name] = _coerce(name, getattr(base, name), value)
        except ValueError as exc:
            warnings.append(f"setting {raw_key!r}={value!r}: {exc}; using {getattr(base, name)!r}")
    return dataclasses.replace(base, **changes), warnings


def settings_from_pyproject(root: Path, base: Settings | None = None) -> tuple[Settings, list[str]]:
    """Read ``[tool.impact-ls]`` from ``root/pyproject.toml``; a broken file is one warning."""
    path = root / "pyproject.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return base or Settings(), []
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return base or Settings(), [f"{path}: cannot read [tool.impact-ls] ({exc}); using defaults"]
    section = data.get("tool", {}).get("impact-ls", {})
    if not isinstance(section, dict):
        return base or Settings(), [f"{path}: [tool.impact-ls] is not a table; using defaults"]
    return settings_from_mapping(section, base)
