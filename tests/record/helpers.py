"""Helpers of the record tests: record in-process or through the CLI, git, processes, venvs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from impact_ls.config import Settings
from impact_ls.record.run import RecordRequest, RecordResult, record_suite

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "record_shop"
STEERING = (
    "RECORD_SHOP_STARTED",
    "RECORD_SHOP_WAIT_FOR",
    "RECORD_SHOP_HANG",
    "RECORD_SHOP_FAIL",
    "RECORD_SHOP_BREAK",
)
# Every test the shop's pytest collects.
ALL_TESTS = frozenset(
    {
        "tests/test_control.py::test_steered",
        "tests/test_plugins.py::test_double",
        "tests/test_pricing.py::TestCart::test_owner",
        "tests/test_pricing.py::TestCart::test_total",
        "tests/test_pricing.py::TestTaxFreeCart::test_owner",
        "tests/test_pricing.py::TestTaxFreeCart::test_total",
        "tests/test_pricing.py::test_add",
        "tests/test_pricing.py::test_scale[1]",
        "tests/test_pricing.py::test_scale[3]",
    }
)


def child_env(patch: pytest.MonkeyPatch) -> None:
    patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    for name in STEERING:
        patch.delenv(name, raising=False)


def record(
    root: Path, *pytest_args: str, python: str = sys.executable, timeout_s: float | None = 120
) -> RecordResult:
    """Record ``root`` in-process (the suite still runs in a child pytest)."""
    request = RecordRequest(
        root=root, python=python, pytest_args=tuple(pytest_args), timeout_s=timeout_s
    )
    return record_suite(request, Settings())


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` with a fixed identity; return its stdout."""
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def cli(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """Start ``impact-ls record --root ROOT ARGS`` as a real process."""
    return subprocess.Popen(
        [sys.executable, "-m", "impact_ls", "record", "--root", str(root), *args],
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_file(path: Path, *, timeout_s: float = 60) -> str:
    """The text of ``path`` once it exists (the shop's test writes its pid there)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.is_file() and path.read_text(encoding="utf-8"):
            return path.read_text(encoding="utf-8")
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pid: int, *, timeout_s: float = 15) -> bool:
    """True once ``pid`` has ended, False if it still runs after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.1)
    return False


def copy_project(source: Path, dest: Path) -> Path:
    """A copy of a planted (and maybe recorded) project, without the shareable runtime."""
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("record-runtime", "__pycache__"))
    return dest


def bare_python(where: Path, base: str, *, packages: Sequence[str]) -> str:
    """A venv of ``base`` without pip that sees only ``packages`` of this environment."""
    subprocess.run([base, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    shelf = where / "shelf"
    shelf.mkdir()
    for name in packages:
        module = __import__(name)
        origin = Path(module.__file__ or "")
        source = origin.parent if origin.name == "__init__.py" else origin
        (shelf / source.name).symlink_to(source)
        # pytest reads its plugins' versions from their metadata.
        for info in source.parent.glob(f"{name}-*.dist-info"):
            (shelf / info.name).symlink_to(info)
    Path(site, "shelf.pth").write_text(f"{shelf}\n", encoding="utf-8")
    return str(python)


PYTEST_PACKAGES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py")


def other_python() -> str | None:
    """A CPython 3.10+ of another minor version than this one, if the machine has one."""
    home = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    candidates = [
        *(shutil.which(f"python3.{minor}") for minor in (13, 12, 10)),
        *(str(p) for p in sorted(home.glob("versions/3.1[0-9]*/bin/python3"), reverse=True)),
    ]
    for candidate in candidates:
        if candidate is None:
            continue
        try:
            done = subprocess.run(
                [candidate, "-c", "import sys; print(sys.executable, *sys.version_info[:2])"],
                capture_output=True,
                text=True,
                check=True,
                timeout=30,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        executable, major, minor = done.stdout.split()
        if int(major) == 3 and int(minor) >= 10 and (3, int(minor)) != sys.version_info[:2]:
            return executable
    return None
