"""How far any ranking of our evidence can go on ``bench_commits.py`` cases (issue 11).

Usage::

    python tests/benchmarks/bench_commits.py --skip-ablation --skip-hidden --no-readme \\
        --jsonl rows.jsonl --dump reports/
    python tests/benchmarks/commits_frontier.py rows.jsonl --dump reports/

Every file some channel names for a case is a candidate: a triage entry of any bucket, a co-change
partner, a file ``git grep -w`` finds the changed names in, a test file of a selected test. Each
candidate gets the features the report and the peers show at the parent — its strongest bucket,
its least distance, resolved or name-matched, flagged unanalyzable, a proven break, co-change
score and rank, grep, selected tests, test or production file, same folder as the seed, named
after the seed, under ``docs/`` or ``examples/``, and the co-change score crossed with the others.
A logistic regression (full-batch gradient descent on standardized features, deterministic) is
fitted on one half of the repositories and ranks the candidates of the other half by one global
threshold; the table gives the recall it reaches at the issue's precision (0.45), the precision
it keeps at the issue's recall (0.80) and its best F1, beside our MUST-INSPECT and MAY-IMPACT
files. The same ranker fitted and measured on all cases (in sample, so optimistic) bounds what a
linear ranking of these features could claim. Reads only the rows and the report dump.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_commits import DEV_REPOS  # noqa: E402
from commits_cases import is_test_path  # noqa: E402
from commits_metrics import score  # noqa: E402

_BUCKETS = ("must_inspect", "may_impact", "low_risk")
AIM_PRECISION = 0.45
AIM_RECALL = 0.80


@dataclass(slots=True)
class Candidate:
    """One file some channel names for a case, with what each channel says of it."""

    buckets: set[str]
    distance: int = 9
    resolved: bool = False
    unanalyzable: bool = False
    breaks: bool = False
    conf: float = 0.0
    cochange: float = 0.0
    rank: int = -1
    grep: bool = False
    tests: float = 0.0


def candidates(row: dict[str, Any], report: dict[str, Any]) -> dict[str, Candidate]:
    """Every file a channel names for the case's seed, except the seed itself."""
    out: dict[str, Candidate] = {}

    def at(file: str) -> Candidate:
        return out.setdefault(file, Candidate(buckets=set()))

    for bucket in _BUCKETS:
        for entry in report["triage"][bucket]:
            c = at(entry["file"])
            c.buckets.add(bucket)
            c.distance = min(c.distance, entry["distance"])
            c.resolved |= not entry["name_matched"]
            c.unanalyzable |= entry["unanalyzable"]
            c.breaks |= bool(entry["breaks"])
            c.conf = max(c.conf, entry["conf"])
    for rank, partner in enumerate(p for p in report["cochange"] if p["file"].endswith(".py")):
        c = at(partner["file"])
        c.cochange, c.rank = partner["score"], rank
    for file in row["grep"]:
        at(file).grep = True
    for test in report["tests"]:
        c = at(test["test_file"])
        c.tests = max(c.tests, test["conf"])
    out.pop(row["seed"], None)
    return out


def features(file: str, c: Candidate, seed: str) -> list[float]:
    """The candidate's features; the first is the intercept."""
    seed_path, path = Path(seed), Path(file)
    stem = seed_path.stem
    named = stem != "__init__" and stem in path.name
    docs = bool({"docs", "doc", "examples"} & set(path.parts[:-1]))
    cc, test, same_dir = c.cochange, is_test_path(file), path.parent == seed_path.parent
    return [
        1.0,
        *(float(b in c.buckets) for b in _BUCKETS),
        *(float(c.distance == d) for d in (1, 2, 3)),
        float(c.resolved),
        float(c.unanalyzable),
        float(c.breaks),
        c.conf,
        cc,
        math.sqrt(cc),
        1.0 / (c.rank + 1) if c.rank >= 0 else 0.0,
        float(c.grep),
        float(c.tests > 0),
        c.tests,
        float(test),
        float(same_dir),
        float(named),
        float(docs),
        cc * test,
        cc * c.grep,
        cc * same_dir,
        cc * bool(c.buckets),
    ]


@dataclass(frozen=True, slots=True)
class Sample:
    """The candidates of a set of cases: features, whether each is gold, and the gold count."""

    x: list[list[float]]
    y: list[bool]
    gold: int


def sample(cases: list[tuple[dict[str, Any], dict[str, Any]]]) -> Sample:
    x: list[list[float]] = []
    y: list[bool] = []
    gold = 0
    for row, report in cases:
        truth = set(row["gold"])
        gold += len(truth)
        for file, c in candidates(row, report).items():
            x.append(features(file, c, row["seed"]))
            y.append(file in truth)
    return Sample(x, y, gold)


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def fit(s: Sample, *, steps: int = 400, rate: float = 0.5, l2: float = 0.01) -> list[float]:
    """Logistic-regression weights over standardized features (the intercept left as is)."""
    n = len(s.x[0])
    mean = [0.0] + [sum(r[j] for r in s.x) / len(s.x) for j in range(1, n)]
    spread = [1.0] + [
        max(1e-6, math.sqrt(sum((r[j] - mean[j]) ** 2 for r in s.x) / len(s.x)))
        for j in range(1, n)
    ]
    z = [[(r[j] - mean[j]) / spread[j] for j in range(n)] for r in s.x]
    w = [0.0] * n
    for _ in range(steps):
        grad = [0.0] * n
        for row, label in zip(z, s.y, strict=True):
            logit = max(-30.0, min(30.0, _dot(w, row)))
            err = 1.0 / (1.0 + math.exp(-logit)) - label
            for j in range(n):
                grad[j] += err * row[j]
        w = [w[j] - rate * (grad[j] / len(z) + l2 * w[j]) for j in range(n)]
    # fold the standardization into the weights so they apply to raw features
    raw = [w[j] / spread[j] for j in range(n)]
    raw[0] = w[0] - sum(w[j] * mean[j] / spread[j] for j in range(1, n))
    return raw


@dataclass(frozen=True, slots=True)
class Frontier:
    """What one global threshold over a ranking reaches."""

    recall_at_precision: float
    precision_at_recall: float
    best: tuple[float, float, float]  # recall, precision, F1


def frontier(weights: list[float], s: Sample) -> Frontier:
    scored = sorted(
        ((_dot(weights, r), y) for r, y in zip(s.x, s.y, strict=True)), key=lambda p: -p[0]
    )
    tp = fp = 0
    r_at_p = 0.0
    p_at_r = 0.0
    best = (0.0, 0.0, 0.0)
    for _, label in scored:
        tp, fp = tp + label, fp + (not label)
        recall, precision = tp / max(s.gold, 1), tp / (tp + fp)
        if precision >= AIM_PRECISION:
            r_at_p = max(r_at_p, recall)
        if recall >= AIM_RECALL and not p_at_r:
            p_at_r = precision
        f1 = 2 * recall * precision / (recall + precision) if tp else 0.0
        if f1 > best[2]:
            best = (recall, precision, f1)
    return Frontier(r_at_p, p_at_r, best)


def ours(cases: list[tuple[dict[str, Any], dict[str, Any]]]) -> tuple[float, float, float]:
    s = score([(row["ours"], row["gold"]) for row, _ in cases])
    return s.recall, s.precision, s.f1


def render(cases: list[tuple[dict[str, Any], dict[str, Any]]]) -> str:
    halves = {
        "dev": [c for c in cases if c[0]["repo"] in DEV_REPOS],
        "held out": [c for c in cases if c[0]["repo"] not in DEV_REPOS],
    }
    fits = [("dev", "held out"), ("held out", "dev"), ("all", "all")]
    parts = {**halves, "all": cases}
    samples = {name: sample(group) for name, group in parts.items()}
    reached = sum(samples["all"].y)
    lines = [
        f"{len(cases)} cases, {samples['all'].gold} gold files, {len(samples['all'].y)} candidates;"
        f" some channel names {reached} gold files ({reached / max(samples['all'].gold, 1):.2f})",
        "",
        "| measured on | ours: R / P / F1 | ranker fitted on | R at P ≥ 0.45 | P at R ≥ 0.80 "
        "| best F1 (R / P) |",
        "|---|---|---|---:|---:|---|",
    ]
    for trained, measured in fits:
        f = frontier(fit(samples[trained]), samples[measured])
        r, p, f1 = ours(parts[measured])
        br, bp, bf = f.best
        lines.append(
            f"| {measured} | {r:.2f} / {p:.2f} / {f1:.2f} | {trained}"
            f"{' (in sample)' if trained == measured else ''} | {f.recall_at_precision:.2f}"
            f" | {f.precision_at_recall:.2f} | {bf:.2f} ({br:.2f} / {bp:.2f}) |"
        )
    return "\n".join(lines)


def main() -> None:
    """Print the frontier table of the rows' cases."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("rows", type=Path, help="bench_commits --jsonl rows")
    parser.add_argument("--dump", type=Path, required=True, help="bench_commits --dump folder")
    args = parser.parse_args()
    cases = []
    for line in args.rows.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        path = args.dump / f"{row['repo']}-{row['sha'][:10]}.json"
        if not row["error"] and path.exists():
            cases.append((row, json.loads(path.read_text(encoding="utf-8"))))
    print(render(cases))


if __name__ == "__main__":
    main()
