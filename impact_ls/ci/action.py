"""``python -m impact_ls.ci.action``: what the composite GitHub Action (``action.yml``) runs.

Inputs come from the environment the action step sets (``INPUT_BASE``, ``INPUT_ROOT``,
``INPUT_FAIL_ON``, ``INPUT_SARIF_FILE``) and from the runner's (``GITHUB_EVENT_PATH``,
``GITHUB_WORKSPACE``, ``GITHUB_STEP_SUMMARY``, ``GITHUB_OUTPUT``, ``GITHUB_SERVER_URL``,
``GITHUB_REPOSITORY``, ``GITHUB_SHA``). Steps:

1. the base: ``INPUT_BASE``, else the pull request's base commit, else the merge group's base,
   else the commit before a push, else ``HEAD~1``;
2. a base commit missing from a shallow checkout is fetched from ``origin`` (depth 1);
3. ``impact-ls analyze --base <base> --format sarif -o <file>`` and ``--format json`` (the
   CLI, so the action and a developer's terminal agree); SARIF paths are made relative to the
   repository when the root is a subfolder, as code scanning expects;
4. the blast radius and the affected tests go to the job summary (``report/markdown.py``);
5. step outputs: ``sarif-file``, ``must-inspect``, ``may-impact``, ``affected-tests``,
   ``base``, ``failed`` (whether ``INPUT_FAIL_ON`` matched; a later step fails the job, after
   the SARIF upload).

Exit status 0, also when sites were found; 1 with a ``::error::`` line when the base cannot be
found or the analysis fails.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from impact_ls.model import Report
from impact_ls.report.json_report import report_from_dict
from impact_ls.report.markdown import render_markdown

_SHA = re.compile(r"^[0-9a-f]{7,40}$")
_NO_COMMIT = "0" * 40
FAIL_CHOICES = ("never", "must", "may")


class ActionError(Exception):
    """A failure the action reports as ``::error::`` with exit status 1."""


def resolve_base(env: Mapping[str, str]) -> str:
    """The revision to compare with, from the input or the event that started the workflow."""
    given = env.get("INPUT_BASE", "").strip()
    if given:
        return given
    event: dict[str, Any] = {}
    path = env.get("GITHUB_EVENT_PATH", "")
    if path:
        try:
            event = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ActionError(f"cannot read the event payload {path}: {exc}") from exc
    pull = event.get("pull_request") or {}
    group = event.get("merge_group") or {}
    for candidate in (
        (pull.get("base") or {}).get("sha"),
        group.get("base_sha"),
        event.get("before"),
    ):
        if isinstance(candidate, str) and candidate and candidate != _NO_COMMIT:
            return candidate
    return "HEAD~1"


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
    )


def ensure_commit(root: Path, base: str) -> None:
    """Make ``base`` resolvable, fetching a commit sha that a shallow checkout lacks."""
    if _git(root, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}").returncode == 0:
        return
    if not _SHA.match(base):
        raise ActionError(
            f"the base {base!r} names no commit in this checkout; pass a commit sha or fetch "
            "the branch first (actions/checkout with fetch-depth: 0)"
        )
    fetched = _git(root, "fetch", "--no-tags", "--quiet", "--depth=1", "origin", base)
    if fetched.returncode != 0 or (
        _git(root, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}").returncode != 0
    ):
        raise ActionError(
            f"the base commit {base} is not in this checkout and could not be fetched from "
            f"origin: {fetched.stderr.strip() or 'not found'}"
        )


def _analyze(root: Path, base: str, fmt: str, output: Path) -> None:
    command = [sys.executable, "-m", "impact_ls", "analyze", "--root", str(root)]
    command += ["--base", base, "--no-llm", "--format", fmt, "-o", str(output)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ActionError(f"impact-ls analyze --format {fmt} failed: {done.stderr.strip()}")


def rebase_sarif(log: dict[str, Any], prefix: str) -> dict[str, Any]:
    """``log`` with every artifact URI prefixed by ``prefix`` (the root inside the repo)."""
    if not prefix:
        return log

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            location = value.get("artifactLocation")
            if isinstance(location, dict) and isinstance(location.get("uri"), str):
                location["uri"] = prefix + location["uri"]
            for child in value.values():
                walk(child)
        elif isinstance(value, list):
            for child in value:
                walk(child)

    walk(log)
    return log


def _failed(report: Report, fail_on: str) -> bool:
    if fail_on == "must":
        return bool(report.triage.must_inspect)
    if fail_on == "may":
        return bool(report.triage.must_inspect or report.triage.may_impact)
    return False


def _append(path: str, text: str) -> None:
    if path:
        with Path(path).open("a", encoding="utf-8") as out:
            out.write(text)
    else:
        sys.stdout.write(text)


def _link(env: Mapping[str, str], prefix: str) -> Any:
    server, repo, sha = (
        env.get(k, "") for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_SHA")
    )
    if not (server and repo and sha):
        return None
    return lambda file, line: f"{server}/{repo}/blob/{sha}/{prefix}{file}#L{line}"


def run(env: Mapping[str, str]) -> int:
    """Do the action's work under ``env``; return the exit status."""
    workspace = Path(env.get("GITHUB_WORKSPACE") or ".").resolve()
    root = (workspace / (env.get("INPUT_ROOT") or ".")).resolve()
    fail_on = (env.get("INPUT_FAIL_ON") or "never").strip().lower()
    if fail_on not in FAIL_CHOICES:
        raise ActionError(f"fail-on {fail_on!r}: expected one of {', '.join(FAIL_CHOICES)}")
    if not root.is_dir():
        raise ActionError(f"root {root} is not a folder of the checkout")
    try:
        prefix = root.relative_to(workspace).as_posix()
    except ValueError:
        prefix = ""
    prefix = "" if prefix in ("", ".") else prefix + "/"
    base = resolve_base(env)
    ensure_commit(root, base)
    sarif = (workspace / (env.get("INPUT_SARIF_FILE") or "impact-ls.sarif")).resolve()
    _analyze(root, base, "sarif", sarif)
    log = rebase_sarif(json.loads(sarif.read_text(encoding="utf-8")), prefix)
    sarif.write_text(json.dumps(log, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    with tempfile.TemporaryDirectory() as scratch:
        as_json = Path(scratch) / "report.json"
        _analyze(root, base, "json", as_json)
        report = report_from_dict(json.loads(as_json.read_text(encoding="utf-8")))
    shown = base[:12] if _SHA.match(base) else base
    _append(
        env.get("GITHUB_STEP_SUMMARY", ""),
        render_markdown(report, base=shown, link=_link(env, prefix)),
    )
    failed = _failed(report, fail_on)
    outputs = {
        "sarif-file": str(sarif),
        "must-inspect": len(report.triage.must_inspect),
        "may-impact": len(report.triage.may_impact),
        "affected-tests": len(report.selected_tests()),
        "base": base,
        "failed": "true" if failed else "false",
    }
    if env.get("GITHUB_OUTPUT"):
        _append(env["GITHUB_OUTPUT"], "".join(f"{k}={v}\n" for k, v in outputs.items()))
    if failed:
        sys.stdout.write(
            f"::error title=impact-ls::{outputs['must-inspect']} must-inspect and "
            f"{outputs['may-impact']} may-impact sites (fail-on: {fail_on})\n"
        )
    return 0


def main() -> int:
    """The action step's entry point."""
    try:
        return run(os.environ)
    except ActionError as exc:
        sys.stdout.write(f"::error title=impact-ls::{exc}\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
