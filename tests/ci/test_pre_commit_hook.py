"""The real ``pre-commit`` runs ``.pre-commit-hooks.yaml``: a commit that breaks callers is refused.

The hook repository is a snapshot of this checkout (tracked and new files, as a fresh clone of
the branch would have them); the project is the lsp_shop fixture with its planted history, where
``pre-commit install`` puts the hook in front of ``git commit``. pre-commit builds the hook's own
environment with pip, as it does for a user.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from impact_ls.history.plant import plant_history

REPO = Path(__file__).resolve().parents[2]
SHOP = REPO / "fixtures" / "lsp_shop"
SIGNATURE = ("def price(amount, rate):", "def price(amount, rate, currency):")

pytestmark = pytest.mark.slow


def _env(tmp_path: Path) -> dict[str, str]:
    bin_dir = Path(sys.executable).parent
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "GIT_AUTHOR_NAME": "Dev",
        "GIT_AUTHOR_EMAIL": "dev@example.com",
        "GIT_COMMITTER_NAME": "Dev",
        "GIT_COMMITTER_EMAIL": "dev@example.com",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def _run(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def _snapshot_of_this_checkout(dest: Path, env: dict[str, str]) -> str:
    """This checkout's files (tracked and new, not ignored) as a one-commit repository."""
    listed = _run(REPO, env, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in filter(None, listed.stdout.split("\0")):
        source = REPO / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-q", "-m", "snapshot")):
        assert _run(dest, env, "git", *args).returncode == 0
    return _run(dest, env, "git", "rev-parse", "HEAD").stdout.strip()


def test_the_hook_refuses_a_staged_break_and_lets_a_staged_fix_through(tmp_path: Path) -> None:
    hook = REPO / ".pre-commit-hooks.yaml"
    [definition] = yaml.safe_load(hook.read_text(encoding="utf-8"))
    assert definition["id"] == "impact-ls"
    assert definition["entry"].startswith("impact-ls analyze --fail-on must")
    assert definition["language"] == "python"

    env = _env(tmp_path)
    source = tmp_path / "hook-repo"
    source.mkdir()
    rev = _snapshot_of_this_checkout(source, env)
    project = plant_history(SHOP, tmp_path / "shop")
    config = {"repos": [{"repo": str(source), "rev": rev, "hooks": [{"id": "impact-ls"}]}]}
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    pre_commit = [sys.executable, "-m", "pre_commit"]
    for args in (["git", "add", ".pre-commit-config.yaml"], ["git", "commit", "-qm", "hooks"]):
        assert _run(project, env, *args).returncode == 0
    installed = _run(project, env, *pre_commit, "install")
    assert installed.returncode == 0, installed.stderr
    head = _run(project, env, "git", "rev-parse", "HEAD").stdout

    pricing = project / "shop" / "pricing.py"
    original = pricing.read_text(encoding="utf-8")
    broken = original.replace(*SIGNATURE)
    pricing.write_text(broken, encoding="utf-8")
    _run(project, env, "git", "add", "shop/pricing.py")
    refused = _run(project, env, "git", "commit", "-m", "price takes a currency")
    out = refused.stdout + refused.stderr
    assert refused.returncode == 1, out
    assert "impact-ls (blast radius of the staged change)" in out and "Failed" in out
    assert "MUST-INSPECT · 4 sites" in out
    assert "shop/cart.py:19" in out
    assert _run(project, env, "git", "rev-parse", "HEAD").stdout == head  # nothing committed

    # Stage a harmless edit and leave the break unstaged: pre-commit analyzes what is staged.
    harmless = original.replace("The gross price", "The gross price, rounded to cents,")
    pricing.write_text(harmless, encoding="utf-8")
    _run(project, env, "git", "add", "shop/pricing.py")
    pricing.write_text(harmless.replace(*SIGNATURE), encoding="utf-8")
    accepted = _run(project, env, "git", "commit", "-m", "pricing: say it rounds")
    out = accepted.stdout + accepted.stderr
    assert accepted.returncode == 0, out
    assert "impact-ls (blast radius of the staged change)" in out and "Passed" in out
    assert _run(project, env, "git", "show", "HEAD:shop/pricing.py").stdout == harmless
    assert pricing.read_text(encoding="utf-8") == harmless.replace(*SIGNATURE)  # kept, unstaged
