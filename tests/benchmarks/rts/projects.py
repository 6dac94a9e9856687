"""The benchmarked libraries: pinned sdists, a git work tree each and a throwaway venv each.

Everything lands in ``tests/benchmarks/.data/rts/`` (git-ignored): ``dl/`` holds the sdists,
``<lib>-<version>/tree`` is a git repository whose HEAD is the unpacked sdist (so
``impact-ls tests`` and pytest-impacted see a mutation as the working-tree diff against HEAD),
``<lib>-<version>/venv`` has the library's test dependencies, pytest, pytest-timeout,
pytest-testmon and pytest-impacted. The library is not installed: a ``.pth`` file puts the tree's
import root on the venv's path, so the mutated source is what the tests import.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / ".data" / "rts"

# Peers and runners, pinned so that a rerun measures the same tools.
RUNNER_PACKAGES = (
    "pytest==9.2.0",
    "pytest-timeout==2.4.0",
    "pytest-testmon==2.2.0",
    "pytest-impacted==0.36.0",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Library:
    """A library to mutate: its sdist pin, layout and what its tests need."""

    name: str
    dist: str
    version: str
    package: str
    import_root: str = "."
    tests: str = "tests"
    deps: tuple[str, ...] = ()
    pytest_args: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """``name-version``: the folder and cache key of this pin."""
        return f"{self.name}-{self.version}"

    @property
    def home(self) -> Path:
        """This pin's folder under ``.data/rts``."""
        return DATA / self.key

    @property
    def tree(self) -> Path:
        """The git work tree holding the unmutated sdist at HEAD."""
        return self.home / "tree"

    @property
    def config(self) -> Path:
        """The pytest configuration file of the tree, else an empty one beside it.

        Without one, pytest would look upwards and find this repository's own pyproject.toml.
        """
        for name, marker in _CONFIG_MARKERS:
            path = self.tree / name
            if path.is_file() and marker in path.read_text(encoding="utf-8"):
                return path
        empty = self.home / "pytest.ini"
        if not empty.exists():
            empty.write_text("[pytest]\n", encoding="utf-8")
        return empty

    @property
    def python(self) -> Path:
        """The interpreter of this library's venv."""
        return self.home / "venv" / "bin" / "python"

    @property
    def package_dir(self) -> Path:
        """The folder of the importable package inside the tree."""
        return self.tree / self.import_root / self.package


_CONFIG_MARKERS = (
    ("pytest.ini", ""),
    ("pyproject.toml", "[tool.pytest.ini_options]"),
    ("tox.ini", "[pytest]"),
    ("setup.cfg", "[tool:pytest]"),
)

LIBRARIES = {
    lib.name: lib
    for lib in (
        Library(
            name="more-itertools",
            dist="more-itertools",
            version="11.2.1",
            package="more_itertools",
            # One test is half of the suite's time (35 of 64 s on a loaded machine): left
            # out of every run, truth and selectors alike, so 40 full runs fit in a session.
            pytest_args=("--deselect=tests/test_recipes.py::PrimeFunctionTests::test_primes",),
        ),
        Library(name="boltons", dist="boltons", version="26.2.0", package="boltons"),
        Library(
            name="tomlkit",
            dist="tomlkit",
            version="0.15.2",
            package="tomlkit",
            deps=("PyYAML",),
        ),
        Library(
            name="python-dateutil",
            dist="python-dateutil",
            version="4.0.0",
            package="dateutil",
            import_root="src",
            deps=("tzdata", "freezegun", "hypothesis", "attrs", "pytest-cov"),
            # Hypothesis draws examples at random unless seeded: the ground truth must not.
            pytest_args=("--hypothesis-seed=0",),
        ),
    )
}

# Paths the runs leave in the tree that git must not report as changes (pytest-impacted
# reads the diff; a stray untracked file would look like an edit).
GIT_EXCLUDES = (".testmondata*", ".impact_ls/", "__pycache__/", ".hypothesis/", "*.pyc")


def _run(cmd: list[str], cwd: Path | None = None) -> None:
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL)


def _sdist(lib: Library) -> Path:
    downloads = DATA / "dl"
    downloads.mkdir(parents=True, exist_ok=True)
    stem = lib.dist.replace("-", "_")
    found = [
        p
        for p in downloads.glob("*.tar.gz")
        if p.name.lower() in {f"{stem}-{lib.version}.tar.gz", f"{lib.dist}-{lib.version}.tar.gz"}
    ]
    if not found:
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-binary",
                ":all:",
                "--no-deps",
                "-d",
                str(downloads),
                f"{lib.dist}=={lib.version}",
            ]
        )
        return _sdist(lib)
    return found[0]


def _make_tree(lib: Library) -> None:
    archive = _sdist(lib)
    unpack = lib.home / "unpack"
    shutil.rmtree(unpack, ignore_errors=True)
    with tarfile.open(archive) as tar:
        tar.extractall(unpack, filter="data")
    (top,) = list(unpack.iterdir())
    shutil.rmtree(lib.tree, ignore_errors=True)
    top.rename(lib.tree)
    shutil.rmtree(unpack)
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    _run([*git, "init", "-q", "-b", "main"], cwd=lib.tree)
    (lib.tree / ".git" / "info" / "exclude").write_text("\n".join(GIT_EXCLUDES) + "\n")
    _run([*git, "add", "-A", "-f", "."], cwd=lib.tree)
    _run([*git, "commit", "-q", "-m", f"{lib.key} sdist"], cwd=lib.tree)


def _make_venv(lib: Library) -> None:
    venv = lib.home / "venv"
    shutil.rmtree(venv, ignore_errors=True)
    _run([sys.executable, "-m", "venv", str(venv)])
    _run(
        [
            str(lib.python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            *RUNNER_PACKAGES,
            *lib.deps,
        ]
    )
    # A dependency may pull in a released copy of the library itself (freezegun needs
    # python-dateutil): it would shadow the tree, so it goes.
    subprocess.run(
        [str(lib.python), "-m", "pip", "uninstall", "--quiet", "--yes", lib.dist],
        check=False,
        capture_output=True,
    )
    purelib = subprocess.run(
        [str(lib.python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(purelib) / "rts_bench_tree.pth").write_text(f"{lib.tree / lib.import_root}\n")


def prepare(lib: Library) -> None:
    """Fetch, unpack, commit and equip ``lib`` once; later calls find it ready."""
    lib.home.mkdir(parents=True, exist_ok=True)
    if not (lib.tree / ".git").is_dir():
        _make_tree(lib)
    if not lib.python.exists():
        _make_venv(lib)


def reset_tree(lib: Library) -> None:
    """Put the tree back to HEAD (tracked files only; caches and databases stay)."""
    _run(["git", "checkout", "-q", "--", "."], cwd=lib.tree)


def child_env(extra_path: Path | None = None) -> dict[str, str]:
    """The environment of every child run: no bytecode (a same-size edit within one second
    would otherwise import a stale ``.pyc``), a fixed hash seed, no inherited pytest options."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "VIRTUAL_ENV", "PYTHONPATH", "COV_", "COVERAGE"))
    }
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONHASHSEED"] = "0"
    if extra_path is not None:
        env["PYTHONPATH"] = str(extra_path)
    return env


def tool_versions(lib: Library) -> dict[str, str]:
    """Installed versions of the runners and peers in ``lib``'s venv."""
    code = (
        "import importlib.metadata as m, json; print(json.dumps({n: m.version(n) for n in "
        "('pytest', 'pytest-testmon', 'pytest-impacted', 'pytest-timeout')}))"
    )
    out = subprocess.run([str(lib.python), "-c", code], capture_output=True, text=True, check=True)
    versions: dict[str, str] = json.loads(out.stdout)
    return versions
