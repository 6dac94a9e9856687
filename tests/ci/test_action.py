"""The GitHub Action's script steps, run as the runner would run them, on real git checkouts.

``action.yml``'s ``run`` lines are taken from the file, their ``${{ }}`` expressions filled in the
way the runner fills them, and executed by bash in a shallow clone of a pull request's branch,
with the runner's environment (event payload, step summary and output files).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from impact_ls.ci.action import rebase_sarif
from impact_ls.history.plant import plant_history

REPO = Path(__file__).resolve().parents[2]
SHOP = REPO / "fixtures" / "lsp_shop"
ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
STEPS = {step.get("id") or step["name"]: step for step in ACTION["runs"]["steps"]}
GIT = ["git", "-c", "user.name=PR Author", "-c", "user.email=author@example.com"]

pytestmark = pytest.mark.slow


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        [*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def pull_request(tmp_path: Path) -> dict[str, Any]:
    """An origin with main and a PR branch that adds a required parameter; a shallow checkout."""
    origin = plant_history(SHOP, tmp_path / "origin")
    # What GitHub allows: fetching any commit of the repository by its sha.
    _git(origin, "config", "uploadpack.allowAnySHA1InWant", "true")
    base = _git(origin, "rev-parse", "HEAD")
    _git(origin, "checkout", "-q", "-b", "feature")
    pricing = origin / "shop" / "pricing.py"
    pricing.write_text(
        pricing.read_text(encoding="utf-8").replace("(amount, rate)", "(amount, rate, currency)"),
        encoding="utf-8",
    )
    _git(origin, "commit", "-q", "-am", "pricing: a currency for every price")
    head = _git(origin, "rev-parse", "HEAD")
    workspace = tmp_path / "checkout"
    # actions/checkout's default: one commit deep, the base commit absent
    _git(
        tmp_path,
        "clone",
        "-q",
        "--depth",
        "1",
        "--branch",
        "feature",
        origin.as_uri(),
        str(workspace),
    )
    assert (
        subprocess.run(
            ["git", "cat-file", "-e", f"{base}^{{commit}}"],
            cwd=workspace,
            capture_output=True,
            check=False,
        ).returncode
        != 0
    )
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"base": {"sha": base}, "head": {"sha": head}}}))
    return {"workspace": workspace, "event": event, "base": base, "head": head, "tmp": tmp_path}


def _expand(text: str, context: Mapping[str, str]) -> str:
    """Fill ``${{ expr }}`` as the runner does, for the expressions action.yml uses."""

    def one(match: re.Match[str]) -> str:
        expr = match.group(1).strip()
        assert expr in context, f"action.yml uses ${{{{ {expr} }}}}, unknown to this test"
        return context[expr]

    return re.sub(r"\$\{\{(.*?)\}\}", one, text)


def _run_step(
    name: str, context: Mapping[str, str], env: Mapping[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    step = STEPS[name]
    assert step["shell"] == "bash"
    step_env = {k: _expand(str(v), context) for k, v in step.get("env", {}).items()}
    return subprocess.run(
        ["bash", "-e", "-c", _expand(step["run"], context)],
        cwd=cwd,
        env={**env, **step_env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _action(pr: dict[str, Any], **inputs: str) -> dict[str, Any]:
    """Run the action's analyze step (and its fail step when it asks) like a runner."""
    tmp: Path = pr["tmp"]
    summary, output = tmp / "summary.md", tmp / "output.txt"
    for path in (summary, output):
        path.write_text("", encoding="utf-8")
    defaults = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    values = {**defaults, **inputs}
    context = {f"inputs.{name}": value for name, value in values.items()}
    context["github.action_path"] = str(REPO)
    env = {
        # the venv's python first, as actions/setup-python plus the install step would leave it
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "HOME": os.environ.get("HOME", str(tmp)),
        "GITHUB_WORKSPACE": str(pr["workspace"]),
        "GITHUB_EVENT_PATH": str(pr["event"]),
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(output),
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "acme/shop",
        "GITHUB_SHA": pr["head"],
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    done = _run_step("analyze", context, env, pr["workspace"])
    outputs = dict(
        line.split("=", 1) for line in output.read_text(encoding="utf-8").splitlines() if line
    )
    result: dict[str, Any] = {
        "analyze": done,
        "outputs": outputs,
        "summary": summary.read_text(encoding="utf-8"),
    }
    fail = STEPS[next(k for k in STEPS if k.startswith("Fail on"))]
    for key, value in outputs.items():
        context[f"steps.analyze.outputs.{key}"] = value
    condition = re.fullmatch(r"(\S+) == '(.*)'", fail["if"])  # the runner's comparison
    assert condition is not None, fail["if"]
    if context.get(condition.group(1)) == condition.group(2):
        result["fail"] = _run_step(fail["name"], context, env, pr["workspace"])
    return result


def test_the_install_step_installs_this_checkout_of_impact_ls() -> None:
    install = STEPS["Install impact-ls"]
    assert install["run"] == (
        'python -m pip install --disable-pip-version-check --quiet "${{ github.action_path }}"'
    )
    upload = STEPS["Upload SARIF to code scanning"]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == "${{ steps.analyze.outputs.sarif-file }}"
    assert upload["if"].startswith("always()")


def test_a_pull_request_gets_sarif_a_summary_and_outputs(pull_request: dict[str, Any]) -> None:
    run = _action(pull_request)
    done = run["analyze"]
    assert done.returncode == 0, done.stdout + done.stderr
    outputs = run["outputs"]
    assert outputs["base"] == pull_request["base"]  # the PR's base, fetched into the shallow clone
    # the clone is one commit deep: no co-change, so the cart's test, two calls away, is
    # LOW-RISK
    assert (outputs["must-inspect"], outputs["may-impact"], outputs["affected-tests"]) == (
        "4",
        "0",
        "3",
    )
    assert outputs["failed"] == "false"
    assert "fail" not in run  # fail-on defaults to never

    sarif = json.loads(Path(outputs["sarif-file"]).read_text(encoding="utf-8"))
    assert sarif["version"] == "2.1.0"
    sites = {
        (
            loc["physicalLocation"]["artifactLocation"]["uri"],
            loc["physicalLocation"]["region"]["startLine"],
        )
        for result in sarif["runs"][0]["results"]
        for loc in result["locations"]
    }
    assert ("shop/cart.py", 19) in sites and ("shop/invoice.py", 8) in sites

    summary = run["summary"]
    assert summary.startswith(f"## impact-ls: blast radius against `{pull_request['base'][:12]}`")
    assert "**4 must-inspect · 0 may-impact · 1 batch · 3 affected tests**" in summary
    link = f"https://github.com/acme/shop/blob/{pull_request['head']}/shop/cart.py#L19"
    assert f"| 🔴 must | [`shop/cart.py:19`]({link}) | `shop.cart.Cart.total` |" in summary
    assert "missing required argument 'currency'" in summary
    assert (
        "python -m pytest tests/test_cart.py::test_cart_total "
        "tests/test_pricing.py::test_price_adds_tax "
        "tests/test_pricing.py::test_price_planted_failure"
    ) in summary


def test_fail_on_must_fails_the_job_after_the_reports(pull_request: dict[str, Any]) -> None:
    run = _action(pull_request, **{"fail-on": "must"})
    assert run["analyze"].returncode == 0  # the SARIF upload still runs after it
    assert run["outputs"]["failed"] == "true"
    assert "::error title=impact-ls::4 must-inspect and 0 may-impact sites" in run["analyze"].stdout
    assert run["fail"].returncode == 1
    assert "4 must-inspect and 0 may-impact sites (fail-on: must)" in run["fail"].stdout


def test_a_base_that_cannot_be_found_is_a_clear_error(pull_request: dict[str, Any]) -> None:
    missing = _action(pull_request, base="0123456789abcdef0123456789abcdef01234567")
    assert missing["analyze"].returncode == 1
    assert "::error title=impact-ls::the base commit 0123456789abcdef" in missing["analyze"].stdout
    assert "could not be fetched from origin" in missing["analyze"].stdout
    # a push without a previous commit falls back to HEAD~1, absent from a one-commit clone
    pull_request["event"].write_text(json.dumps({"before": "0" * 40}))
    shallow = _action(pull_request)
    assert shallow["analyze"].returncode == 1
    assert "the base 'HEAD~1' names no commit in this checkout" in shallow["analyze"].stdout
    bad = _action(pull_request, **{"fail-on": "sometimes"})
    assert "fail-on 'sometimes': expected one of never, must, may" in bad["analyze"].stdout


def test_sarif_paths_are_made_relative_to_the_repository() -> None:
    log = {
        "runs": [
            {
                "results": [
                    {
                        "locations": [
                            {
                                "physicalLocation": {
                                    "artifactLocation": {"uri": "shop/cart.py"},
                                    "region": {"startLine": 19},
                                }
                            }
                        ]
                    }
                ]
            }
        ]
    }
    rebased = rebase_sarif(log, "services/shop/")
    location = rebased["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "services/shop/shop/cart.py"
