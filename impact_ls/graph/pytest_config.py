"""The project's pytest configuration, found and read the way pytest finds it; nothing executed.

``read_pytest_config(root)`` walks up from ``root`` (pytest's invocation directory when a user
runs ``pytest`` there) and, in each directory, tries pytest's config files in its precedence
order: ``pytest.toml``, ``.pytest.toml``, ``pytest.ini``, ``.pytest.ini``, ``pyproject.toml``,
``tox.ini``, ``setup.cfg``. The first file that holds pytest configuration wins:

- ``pytest.toml``/``.pytest.toml`` (table ``[pytest]``) and ``pytest.ini``/``.pytest.ini``
  (section ``[pytest]``) win even when they hold no pytest section at all;
- ``pyproject.toml`` counts when it has ``[tool.pytest.ini_options]`` (values are strings or
  lists of strings) or ``[tool.pytest]`` (native TOML types), ``tox.ini`` when it has
  ``[pytest]``, ``setup.cfg`` when it has ``[tool:pytest]``;
- when nothing is found, the first ``pyproject.toml`` seen on the way up is the rootdir with
  an empty configuration.

This follows pytest 9's ``_pytest/config/findpaths.py`` (``locate_config``); pytest 8 lacks the
two ``.toml`` files and ``[tool.pytest]``, which a pytest-8 project does not have either.

Only the options that decide *which* tests exist are kept: ``python_files``, ``python_classes``,
``python_functions``, ``testpaths``, ``norecursedirs``, ``collect_imported_tests``, and from
``addopts`` the ``--ignore``/``--ignore-glob`` paths and ``-p no:unittest``. ``testpaths`` applies
only when the config file's directory is ``root`` itself (pytest uses it only when invoked from
its rootdir). A file pytest would refuse (bad TOML or INI, a ``[pytest]`` section in setup.cfg, a
value of the wrong type) gives the defaults and a note: pytest itself would stop with a usage
error there, so no collection is right and none is better than a guess. Not modelled (named in
``PytestConfig.notes`` when ``addopts`` uses them): ``-k``/``-m``/``--deselect`` selections,
``--doctest-modules`` items, ``PYTEST_ADDOPTS``, and ``collect_ignore`` in conftest files.
"""

from __future__ import annotations

import logging
import posixpath
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib

logger = logging.getLogger(__name__)

DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")
DEFAULT_PYTHON_CLASSES = ("Test",)
DEFAULT_PYTHON_FUNCTIONS = ("test",)
DEFAULT_NORECURSEDIRS = (
    "*.egg",
    ".*",
    "_darcs",
    "build",
    "CVS",
    "dist",
    "node_modules",
    "venv",
    "{arch}",
)
_LIST_OPTIONS = frozenset(
    {"python_files", "python_classes", "python_functions", "testpaths", "norecursedirs"}
)
_UNMODELLED_OPTS = {
    "-k": "-k selection",
    "-m": "-m marker selection",
    "--deselect": "--deselect",
    "--doctest-modules": "doctest items (--doctest-modules)",
    "--doctest-glob": "doctest files (--doctest-glob)",
    "--pyargs": "--pyargs",
}

Values = Mapping[str, object]


class PytestConfigError(ValueError):
    """A config file pytest would refuse to start with."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PytestConfig:
    """The collection options of one project, defaulted as pytest defaults them.

    ``source`` says where they came from (``"pyproject.toml [tool.pytest.ini_options]"``; empty
    for pytest's defaults). ``root`` is the absolute posix path of the project root, used only
    for patterns with a ``/`` (pytest matches those against absolute paths).
    """

    python_files: tuple[str, ...] = DEFAULT_PYTHON_FILES
    python_classes: tuple[str, ...] = DEFAULT_PYTHON_CLASSES
    python_functions: tuple[str, ...] = DEFAULT_PYTHON_FUNCTIONS
    testpaths: tuple[str, ...] = ()
    norecursedirs: tuple[str, ...] = DEFAULT_NORECURSEDIRS
    collect_imported_tests: bool = True
    unittest: bool = True
    ignore: tuple[str, ...] = ()
    ignore_glob: tuple[str, ...] = ()
    source: str = ""
    root: str = ""
    notes: tuple[str, ...] = field(default=(), compare=False)


def read_pytest_config(root: Path) -> PytestConfig:
    """The pytest configuration in force for ``pytest`` run in ``root``; never raises."""
    root = Path(root).resolve()
    base = PytestConfig(root=root.as_posix())
    try:
        found = _locate(root)
    except OSError as exc:
        logger.info("cannot look for pytest configuration above %s: %s", root, exc)
        return replace(base, notes=(f"pytest configuration not read: {exc}",))
    if found is None:
        return base
    where = _display(found.path, root)
    try:
        if found.error:
            raise PytestConfigError(found.error)
        return config_from_values(
            found.values,
            source=f"{where} {found.section}".strip(),
            root=root.as_posix(),
            at_rootdir=found.path.parent == root,
        )
    except PytestConfigError as exc:
        return replace(base, notes=(f"{where}: {exc}; pytest would stop with a usage error",))


@dataclass(frozen=True, slots=True, kw_only=True)
class _Found:
    path: Path
    section: str = ""
    values: Values = field(default_factory=dict)
    error: str = ""


def _locate(root: Path) -> _Found | None:
    """The config file pytest uses when run in ``root``, with its raw values, or None."""
    first_pyproject: Path | None = None
    for directory in (root, *root.parents):
        for name, loader in _LOADERS:
            path = directory / name
            if not path.is_file():
                continue
            if name == "pyproject.toml" and first_pyproject is None:
                first_pyproject = path
            try:
                loaded = loader(_read(path))
            except PytestConfigError as exc:
                # pytest stops at this file too: it is the one it tried to use
                return _Found(path=path, error=str(exc))
            if loaded is not None:
                return _Found(path=path, section=loaded[0], values=loaded[1])
    if first_pyproject is not None:
        return _Found(path=first_pyproject)
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise PytestConfigError(f"cannot read it ({exc})") from exc


def config_from_values(
    values: Values, *, source: str = "", root: str = "", at_rootdir: bool = True
) -> PytestConfig:
    """A ``PytestConfig`` from one file's raw option values (strings, lists or TOML types).

    Raises ``PytestConfigError`` where pytest would raise a usage error.
    """
    lists = {name: _as_list(name, values[name]) for name in _LIST_OPTIONS if name in values}
    # pytest reads testpaths only when run in its rootdir (the config file's folder)
    testpaths = tuple(lists.get("testpaths", ())) if at_rootdir else ()
    notes: list[str] = []
    addopts = _as_list("addopts", values.get("addopts", ()))
    opts = _addopts(addopts, notes, source)
    return PytestConfig(
        python_files=tuple(lists.get("python_files", DEFAULT_PYTHON_FILES)),
        python_classes=tuple(lists.get("python_classes", DEFAULT_PYTHON_CLASSES)),
        python_functions=tuple(lists.get("python_functions", DEFAULT_PYTHON_FUNCTIONS)),
        testpaths=testpaths,
        norecursedirs=tuple(lists.get("norecursedirs", DEFAULT_NORECURSEDIRS)),
        collect_imported_tests=_as_bool(
            "collect_imported_tests", values.get("collect_imported_tests", True)
        ),
        unittest=opts.unittest,
        ignore=tuple(opts.ignore),
        ignore_glob=tuple(opts.ignore_glob),
        source=source,
        root=root,
        notes=tuple(notes),
    )


@dataclass(slots=True)
class _Opts:
    unittest: bool = True
    ignore: list[str] = field(default_factory=list)
    ignore_glob: list[str] = field(default_factory=list)


def _addopts(args: Sequence[str], notes: list[str], source: str) -> _Opts:
    """The ``addopts`` that change collection; the unmodelled ones become notes."""
    opts = _Opts()
    unmodelled: set[str] = set()
    items = list(args)
    index = 0
    while index < len(items):
        arg = items[index]
        index += 1
        name, eq, inline = arg.partition("=")
        if name in ("--ignore", "--ignore-glob"):
            value = inline if eq else (items[index] if index < len(items) else "")
            index += 0 if eq else 1
            target = opts.ignore if name == "--ignore" else opts.ignore_glob
            target.append(_relative(value))
        elif arg.startswith("-p") and not arg.startswith("--"):
            plugin = arg[2:] if len(arg) > 2 else (items[index] if index < len(items) else "")
            index += 0 if len(arg) > 2 else 1
            if plugin.strip() == "no:unittest":
                opts.unittest = False
        else:
            for option, label in _UNMODELLED_OPTS.items():
                # a short option may carry its value attached (``-mslow``)
                if name == option or (len(option) == 2 and arg.startswith(option)):
                    unmodelled.add(label)
    if unmodelled:
        notes.append(f"{source}: addopts uses {', '.join(sorted(unmodelled))}: not modelled")
    return opts


def _relative(path: str) -> str:
    """An ``--ignore`` path as a normalised posix path (pytest resolves it against cwd)."""
    text = posixpath.normpath(path.replace("\\", "/")) if path else ""
    return "" if text == "." else text


def _as_list(name: str, value: object) -> list[str]:
    if isinstance(value, str):
        # ini files and [tool.pytest.ini_options] strings: pytest shlex-splits ``args`` options
        try:
            return shlex.split(value)
        except ValueError as exc:
            raise PytestConfigError(f"{name}: {exc}") from exc
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise PytestConfigError(f"{name} must be a string or a list of strings, not {value!r}")


def _as_bool(name: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("y", "yes", "t", "true", "on", "1"):
        return True
    if text in ("n", "no", "f", "false", "off", "0"):
        return False
    raise PytestConfigError(f"{name}: invalid truth value {value!r}")


def _display(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


Loaded = tuple[str, Values] | None


def _pytest_toml(text: str) -> Loaded:
    data = _toml(text)
    table = data.get("pytest")
    if table is None:
        loose = [key for key, value in data.items() if not isinstance(value, dict)]
        if loose:
            raise PytestConfigError(
                f"options outside the [pytest] table ({', '.join(sorted(loose))})"
            )
        return "[pytest]", {}
    return "[pytest]", _table("[pytest]", table)


def _pyproject(text: str) -> Loaded:
    data = _toml(text)
    tool = data.get("tool")
    tool_pytest = tool.get("pytest") if isinstance(tool, dict) else None
    if not isinstance(tool_pytest, dict):
        return None
    native = {k: v for k, v in tool_pytest.items() if k != "ini_options"}
    ini = tool_pytest.get("ini_options")
    if native and ini is not None:
        raise PytestConfigError("both [tool.pytest] and [tool.pytest.ini_options]")
    if native:
        return "[tool.pytest]", native
    if ini is None:
        return None
    table = _table("[tool.pytest.ini_options]", ini)
    # ini mode: every scalar is read as its string
    # pytest's str(True) is "True", which its bool parser accepts
    return "[tool.pytest.ini_options]", {
        k: v if isinstance(v, list) else str(v) for k, v in table.items()
    }


def _toml(text: str) -> dict[str, object]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PytestConfigError(f"invalid TOML ({exc})") from exc


def _table(label: str, value: object) -> dict[str, object]:
    if not isinstance(value, dict):
        raise PytestConfigError(f"{label} is not a table")
    return value


def _pytest_ini(text: str) -> Loaded:
    sections = parse_ini(text)
    return "[pytest]", sections.get("pytest", {})


def _tox_ini(text: str) -> Loaded:
    sections = parse_ini(text)
    if "pytest" not in sections:
        return None
    return "[pytest]", sections["pytest"]


def _setup_cfg(text: str) -> Loaded:
    sections = parse_ini(text)
    if "tool:pytest" in sections:
        return "[tool:pytest]", sections["tool:pytest"]
    if "pytest" in sections:
        raise PytestConfigError("a [pytest] section in setup.cfg is no longer supported")
    return None


def parse_ini(text: str) -> dict[str, dict[str, str]]:
    """Sections of an ini file as pytest's ``iniconfig`` reads them (values joined by newlines).

    ``key = value`` or ``key: value``; indented lines continue the previous value; lines
    starting with ``#`` or ``;`` are comments; inline comments stay part of the value. A
    duplicate section or key, a value before any section or a line that is none of these is a
    ``PytestConfigError``, as it is for pytest.
    """
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    last: str | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.lstrip()
        if not stripped or stripped[0] in "#;":
            continue
        line = raw.rstrip()
        if line[0] == "[":
            header = line.split("#")[0].split(";")[0].rstrip()
            if header.endswith("]"):
                name = header[1:-1]
                if not name:
                    raise PytestConfigError(f"line {number}: empty section name")
                if name in sections:
                    raise PytestConfigError(f"line {number}: duplicate section {name!r}")
                current = sections[name] = {}
                last = None
                continue
        if line[0].isspace():
            if current is None or last is None:
                raise PytestConfigError(f"line {number}: unexpected value continuation")
            current[last] = f"{current[last]}\n{line.strip()}" if current[last] else line.strip()
            continue
        key, value = _key_value(line, number)
        if current is None:
            raise PytestConfigError(f"line {number}: no section header defined")
        if key in current:
            raise PytestConfigError(f"line {number}: duplicate name {key!r}")
        current[key] = value
        last = key
    return sections


def _key_value(line: str, number: int) -> tuple[str, str]:
    name, eq, value = line.partition("=")
    if not eq or ":" in name:
        name, colon, value = line.partition(":")
        if not colon:
            raise PytestConfigError(f"line {number}: unexpected line {line!r}")
    return name.strip(), value.strip()


_LOADERS: tuple[tuple[str, Callable[[str], Loaded]], ...] = (
    ("pytest.toml", _pytest_toml),
    (".pytest.toml", _pytest_toml),
    ("pytest.ini", _pytest_ini),
    (".pytest.ini", _pytest_ini),
    ("pyproject.toml", _pyproject),
    ("tox.ini", _tox_ini),
    ("setup.cfg", _setup_cfg),
)
