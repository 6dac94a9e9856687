"""The hidden-channel probe (spec §7.4): edges no static graph can see, planted with git history.

Each ``commits_hidden/<name>.toml`` describes one small project:

* ``kind``, ``description`` — what hides the edge;
* ``seed`` — the file whose change is analyzed; ``partner`` — the file that holds the hidden use
  of the changed definition (it has to change with the seed); ``regions`` — the files where a flag
  counts as honest (default: the partner; a module ``__getattr__`` that forwards the name is a
  boundary too);
* ``[files]`` — the project at its first commit; ``[change]`` — the seed's new text, written
  into the working tree after the history is planted;
* ``commits`` — ``[date, message, [paths…]]`` rows, replayed with ``plant_history`` (each listed
  path gets a comment line appended), the hidden pair changing together a few times among
  commits of unrelated pairs. A fourth element ``{branch = "pr-1"}`` puts the commit on a side
  branch and ``{merge = "pr-1"}`` merges it into main, as a repository that merges pull requests
  does (four projects keep their joint commits behind such merges). The last commit touches
  neither file, since the baseline commit itself is not history for co-change (strictly before
  HEAD).

``run_probe`` plants every project under ``dest``, runs ``Engine.analyze_worktree`` (the
``analyze --no-llm`` path) and reports per project whether the partner appears in the report's
``cochange`` list (and its score), whether a region is flagged ``unanalyzable`` (in the report's
``unanalyzable`` list or a MAY-IMPACT entry so marked), and the partner's best bucket otherwise:
``must``, ``may``, ``low`` or ``absent``. A project is *silent* when nothing flags it and the
partner is LOW-RISK or absent — the confident false negative the spec scores down.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the benchmark runs on the project's 3.11
    import tomli as tomllib

from impact_ls.engine import Engine
from impact_ls.history.plant import plant_history
from impact_ls.report.json_report import report_to_dict

CORPUS = Path(__file__).resolve().parent / "commits_hidden"


@dataclass(frozen=True, slots=True, kw_only=True)
class HiddenResult:
    """What the analysis said about one hidden edge."""

    name: str
    kind: str
    partner: str
    cochange: bool
    cochange_score: float
    flagged: bool
    bucket: str  # best bucket of the partner file: must, may, low, absent

    @property
    def silent(self) -> bool:
        """Nothing flags the region and the partner is LOW-RISK or absent."""
        return not self.flagged and self.bucket in {"low", "absent"}


def _history_toml(commits: list[list[Any]]) -> str:
    rows = []
    for date, message, paths, *more in commits:
        options = more[0] if more else {}
        extra = "".join(f"{key} = {json.dumps(value)}\n" for key, value in options.items())
        rows.append(
            "[[commit]]\n"
            f"message = {json.dumps(message)}\n"
            f'date = "{date}T10:00:00Z"\n'
            f"touch = {json.dumps(paths)}\n{extra}"
        )
    return "\n".join(rows)


def plant_project(spec: Path, dest: Path) -> tuple[dict[str, Any], Path]:
    """Build ``spec`` into a git repository under ``dest`` with the seed change applied."""
    data = tomllib.loads(spec.read_text(encoding="utf-8"))
    source = dest / "source"
    for path, text in data["files"].items():
        target = source / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    (source / "history.toml").write_text(_history_toml(data["commits"]), encoding="utf-8")
    root = plant_history(source, dest / "repo")
    for path, text in data["change"].items():
        (root / path).write_text(text, encoding="utf-8")
    return data, root


def _bucket(report: dict[str, Any], file: str) -> str:
    triage = report["triage"]
    for bucket, key in (("must", "must_inspect"), ("may", "may_impact"), ("low", "low_risk")):
        if any(entry["file"] == file for entry in triage[key]):
            return bucket
    return "absent"


def probe(spec: Path, dest: Path) -> tuple[HiddenResult, dict[str, Any]]:
    """Plant one project, analyze its change, and judge the hidden edge."""
    data, root = plant_project(spec, dest)
    engine = Engine.open(root)
    report = report_to_dict(engine.analyze_worktree())
    partner = data["partner"]
    regions = set(data.get("regions", [partner]))
    scores = {c["file"]: c["score"] for c in report["cochange"]}
    flagged = any(u["file"] in regions for u in report["unanalyzable"]) or any(
        e["file"] in regions and e["unanalyzable"] for e in report["triage"]["may_impact"]
    )
    result = HiddenResult(
        name=spec.stem,
        kind=data["kind"],
        partner=partner,
        cochange=partner in scores,
        cochange_score=float(scores.get(partner, 0.0)),
        flagged=flagged,
        bucket=_bucket(report, partner),
    )
    return result, report


def run_probe(dest: Path) -> list[tuple[HiddenResult, dict[str, Any]]]:
    """Every project of the corpus, planted afresh under ``dest``, in name order."""
    if dest.exists():
        shutil.rmtree(dest)
    specs = sorted(CORPUS.glob("*.toml"))
    if not specs:
        raise SystemExit(f"no hidden-channel projects in {CORPUS}")
    return [probe(spec, dest / spec.stem) for spec in specs]
