"""Benchmark the blast radius on real commits: what maintainers actually had to change (issue 11).

Usage::

    python tests/benchmarks/bench_commits.py              # the default repositories, 60 cases each
    python tests/benchmarks/bench_commits.py --repos starlette,jinja --cases 20 --skip-ablation
    python tests/benchmarks/bench_commits.py --json /tmp/commits.json --no-readme

Repositories are git directories brought in with their full history (the agent's ``fetch`` tool
puts them under ``/work/.mirror/<owner>+<name>/repo``; ``--mirror`` points elsewhere); each is
cloned once with ``git clone --no-checkout`` into ``.data/repos/<name>`` (never committed) and
pinned to that clone's HEAD, which the output records.

Cases (``commits_cases.py``): non-merge commits touching 2 to 8 ``.py`` files where exactly one
non-test module changes a def's parameter list; gold = the other ``.py`` files the commit
changed that existed at the parent. The ``--pool`` most recent qualifying commits (default
twice ``--cases``) are mined and cached under ``.data/cases/``; a sample of ``--cases`` of them,
seeded by ``--seed``, is replayed.

Replay (``commits_replay.py``): the parent checked out in a work tree of the clone (history ends
at the parent), the seed's new text written over it, ``Engine.analyze_worktree`` in-process
(the ``impact-ls analyze --format json --no-llm`` path) with the engine kept warm across the
cases of one repository. Ours = files of MUST-INSPECT and MAY-IMPACT minus the seed, ranked
MUST first, then by conf (a row adds the ``tests[].test_file`` of every selected test).

Peers in the same run on the same cases (``commits_peers.py``): ``git grep -c -w`` of the changed
names at the parent, and plain co-change of the seed in commits strictly before the parent, cut
at K = our prediction's size for that case and at K = 10.

Ablation (``commits_ablation.py``): one row per evidence channel removed alone. Hidden-channel
probe (``commits_hidden.py``): our own small projects with planted history.

Metrics (``commits_metrics.py``): micro recall/precision/F1, macro recall/precision, MRR, MUST-
INSPECT recall/precision. The tables are printed and written into ``tests/benchmarks/README.md``
between the ``bench-commits`` markers (unless ``--no-readme``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import re
import statistics
import subprocess
import sys
import time
import traceback
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE))

from commits_ablation import CHANNELS, RULES, AblationError  # noqa: E402
from commits_cases import Case, is_test_path, mine_cases, select_cases, unique_cases  # noqa: E402
from commits_hidden import HiddenResult, run_probe  # noqa: E402
from commits_metrics import Scores, score  # noqa: E402
from commits_peers import CoChangeHistory, grep_files  # noqa: E402
from commits_replay import Prediction, Replayer, Timing, seed_text  # noqa: E402

DATA = HERE / ".data"
README = HERE / "README.md"
MIRROR = Path("/work/.mirror")
REPOS = {
    "pytest": "pytest-dev/pytest",
    "rich": "Textualize/rich",
    "starlette": "encode/starlette",
    "jinja": "pallets/jinja",
    "aiohttp": "aio-libs/aiohttp",
    "black": "psf/black",
    "flask": "pallets/flask",
    "click": "pallets/click",
}
DEFAULT_REPOS = ("pytest", "rich", "starlette", "jinja", "aiohttp", "black")
# Triage rules are decided on these; the others are held out and reported beside them.
DEV_REPOS = ("pytest", "rich", "aiohttp")
# the ablation that switches every issue-11 triage rule off: the "before" row of the same run
BEFORE = "issue11-rules"
BEFORE_LABEL = "ours before the issue-11 triage rules (MUST ∪ MAY)"
FIXED_K = 10
NOISE = 0.05  # spec §7.6: |Δ| ≤ 5% (absolute) is noise
AIM_ANALYZE_S = 0.5
START, END = "<!-- bench-commits -->", "<!-- /bench-commits -->"


@dataclass(slots=True)
class CaseRun:
    """Everything one replayed case produced."""

    case: Case
    ours: Prediction | None = None
    grep: tuple[str, ...] = ()
    cochange: tuple[str, ...] = ()
    ablations: dict[str, tuple[str, ...]] = field(default_factory=dict)
    ablation_must: dict[str, tuple[str, ...]] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)
    low_risk: tuple[str, ...] = ()
    report_cochange: tuple[str, ...] = ()
    change_types: tuple[str, ...] = ()
    analyze: Timing = field(default_factory=Timing)
    refresh: Timing = field(default_factory=Timing)
    error: str = ""

    def methods(self) -> dict[str, tuple[str, ...]]:
        """Ranked file lists of ours and the peers (empty when the replay failed)."""
        ours = self.ours.ranked if self.ours else ()
        return {
            "ours": ours,
            "ours_must": self.ours.must if self.ours else (),
            "ours_test_ids": self.ours.with_test_ids if self.ours else (),
            "grep": self.grep,
            "cochange_k_ours": self.cochange[: len(ours)],
            "cochange_k10": self.cochange[:FIXED_K],
            "whatif_no_name": tuple(f for f in ours if self.why.get(f) not in _NAME_ONLY),
            "whatif_d1": tuple(f for f in ours if self.why.get(f) in _DISTANCE_1),
            "whatif_cochange3": _union(
                ours, [f for f in self.report_cochange if f.endswith(".py")][:3]
            ),
        }


_NAME_ONLY = frozenset({"name-matched", "unanalyzable"})
_DISTANCE_1 = frozenset({"must", "resolved-d1"})


def _union(first: tuple[str, ...], second: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*first, *second]))


@dataclass(slots=True)
class RepoRun:
    """One repository's pin, cases and engine timings."""

    name: str
    slug: str
    head: str
    mined: int
    unique: int
    files: int = 0
    build_s: float = 0.0
    runs: list[CaseRun] = field(default_factory=list)


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout.strip()


def ensure_clone(name: str, mirror: Path, data: Path = DATA) -> Path:
    """The local clone of ``name`` (cloned from the mirror on first use), with full history."""
    clone = data / "repos" / name
    if (clone / ".git").exists():
        return clone
    slug = REPOS[name]
    source = mirror / slug.replace("/", "+") / "repo"
    if not source.exists():
        raise SystemExit(
            f"{name}: no fetched repository at {source}; fetch github:{slug} with its history "
            "first (or pass --mirror)"
        )
    clone.parent.mkdir(parents=True, exist_ok=True)
    _git(clone.parent, "clone", "-q", "--no-checkout", str(source), str(clone))
    if _git(clone, "rev-parse", "--is-shallow-repository") == "true":
        raise SystemExit(f"{name}: {source} is shallow; the benchmark needs the full history")
    return clone


def _why(report: dict[str, Any], file: str) -> str:
    """Why a file is in our prediction: the strongest kind of evidence among its entries."""
    triage = report["triage"]
    if any(e["file"] == file for e in triage["must_inspect"]):
        return "must"
    entries = [e for e in triage["may_impact"] if e["file"] == file]
    if not entries:
        return "test-file"
    if any(not e["name_matched"] and not e["unanalyzable"] and e["distance"] == 1 for e in entries):
        return "resolved-d1"
    if any(not e["name_matched"] and not e["unanalyzable"] for e in entries):
        return "resolved-d2+"
    if all(e["unanalyzable"] for e in entries):
        return "unanalyzable"
    return "name-matched"


def run_case(
    replayer: Replayer,
    history: CoChangeHistory,
    case: Case,
    *,
    ablate: tuple[str, ...],
    dump: Path | None = None,
) -> CaseRun:
    """Replay one case: our analysis (and its ablations) and both peers."""
    run = CaseRun(case=case)
    run.grep = grep_files(replayer.clone, case.parent, case.names, case.seed)
    run.cochange = history.ranking(case.parent, case.seed)
    try:
        text = seed_text(replayer.clone, case.sha, case.seed)
        run.refresh = replayer.move_to(case.parent, case.seed, text)
        run.ours, report, run.analyze = _analyze(replayer, case.seed)
    except AblationError:
        raise
    except Exception:  # a product crash on a real commit is a finding, not the end of the run
        run.error = traceback.format_exc(limit=6)
        return run
    if dump is not None:
        dump.mkdir(parents=True, exist_ok=True)
        (dump / f"{case.repo}-{case.sha[:10]}.json").write_text(
            json.dumps(report, indent=1, sort_keys=True), encoding="utf-8"
        )
    run.why = {f: _why(report, f) for f in run.ours.ranked}
    run.low_risk = tuple(sorted({e["file"] for e in report["triage"]["low_risk"]} - {case.seed}))
    run.report_cochange = tuple(c["file"] for c in report["cochange"])
    run.change_types = tuple(f"{c['change_type']}:{c['entity']}" for c in report["changes"])
    if ablate:
        for channel in ablate:
            ablated, _, _ = _analyze(
                replayer, case.seed, channel, expect_call=bool(report["changes"])
            )
            run.ablations[channel] = ablated.ranked
            run.ablation_must[channel] = ablated.must
    return run


_ATTEMPTS = 5


def _analyze(
    replayer: Replayer, seed: str, channel: str | None = None, *, expect_call: bool = True
) -> tuple[Prediction, dict[str, Any], Timing]:
    """``replayer.analyze``, run again when CPython 3.11's ast converter fails spuriously.

    Its recursion counter is one per interpreter, so an ``ast.parse`` racing another thread's
    (a jedi confirmation past its budget) can raise ``SystemError``; the same call succeeds
    when repeated.
    """
    for attempt in range(_ATTEMPTS):
        try:
            return replayer.analyze(seed, channel, expect_call=expect_call)
        except SystemError:
            if attempt == _ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def run_repo(
    name: str,
    *,
    mirror: Path,
    cases: int,
    pool: int,
    seed: int,
    ablate: tuple[str, ...],
    only: str | None = None,
    dump: Path | None = None,
    jsonl: Path | None = None,
    data: Path = DATA,
    settings: dict[str, Any] | None = None,
) -> RepoRun:
    """Mine, select and replay one repository's cases (``only``: the case whose sha starts so)."""
    clone = ensure_clone(name, mirror, data)
    head = _git(clone, "rev-parse", "HEAD")
    mined = mine_cases(clone, name, pool=pool, cache_dir=data / "cases")
    chosen = select_cases(mined, count=cases, seed=seed)
    if only:
        chosen = [c for c in unique_cases(mined) if c.sha.startswith(only)]
    repo = RepoRun(
        name=name, slug=REPOS[name], head=head, mined=len(mined), unique=len(unique_cases(mined))
    )
    replayer = Replayer(clone=clone, tree=data / "trees" / name, settings=settings)
    history = CoChangeHistory(clone)
    for number, case in enumerate(chosen, start=1):
        started = time.perf_counter()
        run = run_case(replayer, history, case, ablate=ablate, dump=dump)
        repo.runs.append(run)
        if jsonl is not None:  # a row per case as it ends: a cut run still has its cases
            with jsonl.open("a", encoding="utf-8") as out:
                out.write(json.dumps(case_row(run)) + "\n")
        status = (
            "ERROR"
            if run.error
            else f"analyze {run.analyze.cpu_s:.2f} s CPU, refresh {run.refresh.wall_s:.1f} s"
        )
        print(
            f"  {name} {number}/{len(chosen)} {case.key} {case.seed}: {status} "
            f"(case {time.perf_counter() - started:.1f} s)",
            file=sys.stderr,
            flush=True,
        )
    if replayer.engine is not None:
        repo.files = len(replayer.engine.index.files())
        repo.build_s = replayer.build_s
    return repo


# --------------------------------------------------------------------------- scoring


def _scores(runs: list[CaseRun], method: str) -> Scores:
    return score([(r.methods()[method], r.case.gold) for r in runs])


def _ablation_scores(runs: list[CaseRun], channel: str, *, must: bool = False) -> Scores:
    source = "ablation_must" if must else "ablations"
    return score([(getattr(r, source).get(channel, ()), r.case.gold) for r in runs])


METHOD_LABELS = {
    "ours": "ours: MUST ∪ MAY",
    "ours_must": "ours: MUST-INSPECT only",
    "ours_test_ids": "ours + tests[].test_file of every selected test",
    "grep": "git grep -w changed names",
    "cochange_k_ours": "co-change, top K = size of ours",
    "cochange_k10": "co-change, top 10",
}
WHATIF_LABELS = {
    "whatif_no_name": "ours without files reached only by name matching or string literals",
    "whatif_d1": "ours limited to MUST-INSPECT and resolved distance-1 sites",
    "whatif_cochange3": "ours plus the report's top 3 co-change partners (.py)",
}


def _row(label: str, s: Scores) -> str:
    return (
        f"| {label} | {s.recall:.2f} | {s.precision:.2f} | {s.f1:.2f} | {s.macro_recall:.2f} | "
        f"{s.macro_precision:.2f} | {s.mrr:.2f} | {s.size:.1f} | {s.empty} |"
    )


_HEAD = (
    "| method | recall | precision | F1 | macro R | macro P | MRR | mean files | empty |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def _aim(value: float, aim: float) -> str:
    return "ok" if value >= aim else "MISSED"


def render_accuracy(repos: list[RepoRun]) -> str:
    """The overall table, the per-repository table and the aims."""
    runs = [r for repo in repos for r in repo.runs]
    out = ["### All repositories", "", _HEAD]
    out += [_row(label, _scores(runs, method)) for method, label in METHOD_LABELS.items()]
    ours, must = _scores(runs, "ours"), _scores(runs, "ours_must")
    out += [
        "",
        "What-ifs, filtered from the same reports (not product behaviour; they show what a fix "
        "of issue items 6 and 7 could buy):",
        "",
        _HEAD,
    ]
    out += [_row(label, _scores(runs, method)) for method, label in WHATIF_LABELS.items()]
    out += [
        "",
        f"Aims (issue 11): recall {ours.recall:.2f} ≥ 0.80 ({_aim(ours.recall, 0.80)}) at "
        f"precision {ours.precision:.2f} ≥ 0.45 ({_aim(ours.precision, 0.45)}); MRR "
        f"{ours.mrr:.2f} ≥ 0.65 ({_aim(ours.mrr, 0.65)}); MUST-INSPECT recall {must.recall:.2f}"
        f" ≥ 0.30 ({_aim(must.recall, 0.30)}) at precision {must.precision:.2f} ≥ 0.90 "
        f"({_aim(must.precision, 0.90)}).",
        "",
        "### Rules' development repositories and held-out repositories",
        "",
        render_halves(repos),
        "### Per repository",
        "",
        "| repository | cases | method | recall | precision | F1 | MRR | mean files |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for repo in repos:
        for method in ("ours", "ours_must", "grep", "cochange_k_ours", "cochange_k10"):
            s = _scores(repo.runs, method)
            out.append(
                f"| {repo.name} | {s.cases} | {METHOD_LABELS[method]} | {s.recall:.2f} | "
                f"{s.precision:.2f} | {s.f1:.2f} | {s.mrr:.2f} | {s.size:.1f} |"
            )
    return "\n".join(out) + "\n"


def render_halves(repos: list[RepoRun]) -> str:
    """Ours and the peers on the development repositories, the held-out ones and all."""
    halves = [
        (f"dev ({', '.join(r.name for r in repos if r.name in DEV_REPOS)})", True),
        (f"held out ({', '.join(r.name for r in repos if r.name not in DEV_REPOS)})", False),
    ]
    out = [
        "| repositories | cases | method | recall | precision | F1 | MRR | mean files |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    groups = [
        (label, [r for repo in repos if (repo.name in DEV_REPOS) == dev for r in repo.runs])
        for label, dev in halves
    ]
    groups.append(("all", [r for repo in repos for r in repo.runs]))
    for label, runs in groups:
        if not runs:
            continue
        rows = [(METHOD_LABELS[m], _scores(runs, m)) for m in ("ours", "ours_must")]
        if any(BEFORE in r.ablations for r in runs):
            rows.append((BEFORE_LABEL, _ablation_scores(runs, BEFORE)))
        rows += [
            (METHOD_LABELS[m], _scores(runs, m))
            for m in ("grep", "cochange_k_ours", "cochange_k10")
        ]
        for method_label, s in rows:
            out.append(
                f"| {label} | {s.cases} | {method_label} | {s.recall:.2f} | "
                f"{s.precision:.2f} | {s.f1:.2f} | {s.mrr:.2f} | {s.size:.1f} |"
            )
    return "\n".join(out) + "\n"


def render_ablation(repos: list[RepoRun]) -> str:
    """One row per evidence channel removed alone, with the deltas and the deletion verdict."""
    runs = [r for repo in repos for r in repo.runs if not r.error]
    full, full_must = _scores(runs, "ours"), _scores(runs, "ours_must")
    out = [
        "| configuration | recall | precision | F1 | MRR | MUST R | MUST P | Δ recall | "
        "Δ precision | verdict |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        f"| full pipeline | {full.recall:.2f} | {full.precision:.2f} | {full.f1:.2f} | "
        f"{full.mrr:.2f} | {full_must.recall:.2f} | {full_must.precision:.2f} | | | |",
    ]
    for channel in CHANNELS:
        if not any(channel in r.ablations for r in runs):
            continue
        s = _ablation_scores(runs, channel)
        m = _ablation_scores(runs, channel, must=True)
        d_recall, d_precision = s.recall - full.recall, s.precision - full.precision
        verdict = (
            "candidate for deletion"
            if abs(d_recall) <= NOISE and abs(d_precision) <= NOISE
            else "keep"
        )
        out.append(
            f"| − {'rule: ' if channel in RULES else ''}{channel} | {s.recall:.2f} | "
            f"{s.precision:.2f} | {s.f1:.2f} | {s.mrr:.2f} | "
            f"{m.recall:.2f} | {m.precision:.2f} | {d_recall:+.3f} | {d_precision:+.3f} | "
            f"{verdict} |"
        )
    return "\n".join(out) + "\n"


def render_hidden(results: list[HiddenResult]) -> str:
    """Per project: co-change recovery, unanalyzable flag, the partner's bucket; then shares."""
    out = [
        "| project | hidden edge | partner in co-change (score) | flagged unanalyzable | "
        "partner's bucket | silent |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        recovered = f"yes ({r.cochange_score:.2f})" if r.cochange else "no"
        out.append(
            f"| {r.name} | {r.kind} | {recovered} | {'yes' if r.flagged else 'no'} | "
            f"{r.bucket} | {'SILENT' if r.silent else ''} |"
        )
    count = len(results) or 1
    recall = sum(r.cochange for r in results) / count
    flags = sum(r.flagged for r in results) / count
    silent = sum(r.silent for r in results) / count
    out += [
        "",
        f"co_change_recall_on_hidden = {recall:.2f}; unanalyzable_flag_rate = {flags:.2f}; "
        f"silent (neither flagged nor MAY/MUST) = {silent:.2f} — over {len(results)} projects.",
    ]
    return "\n".join(out) + "\n"


def render_timing(repos: list[RepoRun]) -> str:
    """Seconds per case, warm: the analysis, and the move of the tree to the next parent."""
    out = [
        "| repository | pinned HEAD | indexed files | mined / unique / replayed | errors | "
        "first open s | "
        "refresh s (median CPU / wall) | analyze CPU s (median / p90 / max) | "
        "analyze wall s (median) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    every: list[float] = []
    for repo in repos:
        ok = [r for r in repo.runs if not r.error]
        cpu = sorted(r.analyze.cpu_s for r in ok)
        wall = sorted(r.analyze.wall_s for r in ok)
        moves = ok[1:]  # the first case pays the cold build instead
        every += cpu
        errors = len(repo.runs) - len(ok)
        out.append(
            f"| {repo.name} ({repo.slug}) | `{repo.head[:12]}` | {repo.files} | {repo.mined} / "
            f"{repo.unique} / {len(repo.runs)} | {errors} | {repo.build_s:.1f} | "
            f"{_median([r.refresh.cpu_s for r in moves]):.2f} / "
            f"{_median([r.refresh.wall_s for r in moves]):.2f} | {_median(cpu):.2f} / "
            f"{_quantile(cpu, 0.9):.2f} / {max(cpu, default=0):.2f} | {_median(wall):.2f} |"
        )
    median = _median(every)
    out += [
        "",
        f"All cases: analyze median {median:.2f} s CPU, p90 {_quantile(sorted(every), 0.9):.2f} s"
        f" (aim ≤ {AIM_ANALYZE_S} s warm: {'ok' if median <= AIM_ANALYZE_S else 'MISSED'}). "
        "Wall times are those of a 2-core machine shared with other jobs; CPU is the steadier "
        "figure (the analysis runs in this process).",
    ]
    return "\n".join(out) + "\n"


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    return values[min(len(values) - 1, int(q * len(values)))]


def render_misses(repos: list[RepoRun]) -> str:
    """Where we miss (gold files we do not predict) and why we are wrong (files not in gold)."""
    runs = [r for repo in repos for r in repo.runs if not r.error and r.ours is not None]
    missed: dict[str, Counter[str]] = {}

    def count(table: dict[str, Counter[str]], row: str, file: str) -> None:
        column = "test" if is_test_path(file) else "production"
        table.setdefault(row, Counter()).update(["all", column])

    for r in runs:
        ours = set(r.ours.ranked) if r.ours else set()
        grep, cochange10 = set(r.grep), set(r.cochange[:FIXED_K])
        for gold in r.case.gold:
            if gold in ours:
                continue
            count(missed, "all missed gold files", gold)
            if gold in r.low_risk:
                count(missed, "in our LOW-RISK", gold)
            if gold in r.report_cochange:
                count(missed, "in our report's cochange list", gold)
            if gold in grep:
                count(missed, "grep finds it", gold)
            if gold in cochange10:
                count(missed, "co-change top 10 finds it", gold)
            if not {gold} & (grep | cochange10 | set(r.low_risk) | set(r.report_cochange)):
                count(missed, "none of these", gold)
    wrong: dict[str, Counter[str]] = {}
    for r in runs:
        gold_set = set(r.case.gold)
        for file in r.ours.ranked if r.ours else ():
            if file in gold_set:
                continue
            count(wrong, "all wrong files", file)
            count(wrong, f"strongest evidence: {r.why.get(file, '?')}", file)
            if re.match(r"(docs?|examples?)/", file):
                count(wrong, "under docs/ or examples/", file)
            if file in r.cochange[:FIXED_K]:
                count(wrong, "co-change top 10 has it too", file)
    out = [
        "Missed gold files (rows overlap; columns: all, test files, production files):",
        "",
        "| missed gold files | all | test | production |",
        "|---|---:|---:|---:|",
    ]
    for label, c in missed.items():
        out.append(f"| {label} | {c['all']} | {c['test']} | {c['production']} |")
    out += [
        "",
        "Wrong files (predicted, not gold; the evidence rows partition them):",
        "",
        "| wrong files | all | test | production |",
        "|---|---:|---:|---:|",
    ]
    for label, c in sorted(wrong.items(), key=lambda kv: (not kv[0].startswith("all"), kv[0])):
        out.append(f"| {label} | {c['all']} | {c['test']} | {c['production']} |")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- output


def render(
    repos: list[RepoRun], hidden: list[HiddenResult] | None, args: argparse.Namespace
) -> str:
    """The README block: settings, pins, and every table."""
    today = datetime.date.today().isoformat()
    commit = _git(HERE, "log", "-1", "--format=%h", "--", str(HERE.parent.parent / "impact_ls"))
    pins = ", ".join(f"{r.slug} `{r.head[:12]}`" for r in repos)
    parts = [
        f"### Run of {today} (impact_ls as of `{commit}`, Python {platform.python_version()})",
        "",
        f"Repositories (pinned HEAD): {pins}. Cases: the {args.pool or 2 * args.cases} most "
        f"recent qualifying commits per repository, a sample of {args.cases} seeded {args.seed}.",
        "",
        render_accuracy(repos),
    ]
    if not args.skip_ablation:
        parts += [
            "### Ablation (each evidence channel and each issue-11 triage rule removed alone)",
            "",
            render_ablation(repos),
        ]
    if hidden is not None:
        parts += ["### Hidden-channel probe", "", render_hidden(hidden)]
    parts += ["### Seconds per case (warm engine)", "", render_timing(repos)]
    parts += ["### Where we miss", "", render_misses(repos)]
    return "\n".join(parts)


def write_readme(block: str) -> None:
    """Replace the text between the ``bench-commits`` markers of the README."""
    text = README.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise SystemExit(f"{README} has no {START} … {END} markers")
    text = re.sub(
        re.escape(START) + r".*?" + re.escape(END),
        lambda _: f"{START}\n{block}{END}",
        text,
        flags=re.DOTALL,
    )
    README.write_text(text, encoding="utf-8")


def case_row(r: CaseRun) -> dict[str, Any]:
    """One replayed case as a JSON row (seed, names, gold, ours, peers, ablations, timings)."""
    return {
        "repo": r.case.repo,
        "sha": r.case.sha,
        "parent": r.case.parent,
        "subject": r.case.subject,
        "seed": r.case.seed,
        "changed": list(r.case.changed),
        "names": list(r.case.names),
        "signatures": [list(s) for s in r.case.signatures],
        "gold": list(r.case.gold),
        "ours": list(r.ours.ranked) if r.ours else [],
        "ours_must": list(r.ours.must) if r.ours else [],
        "ours_test_ids": list(r.ours.with_test_ids) if r.ours else [],
        "why": r.why,
        "low_risk": list(r.low_risk),
        "report_cochange": list(r.report_cochange),
        "unanalyzable": list(r.ours.unanalyzable) if r.ours else [],
        "changes": list(r.change_types),
        "grep": list(r.grep),
        "cochange": list(r.cochange[:50]),
        "ablations": {k: list(v) for k, v in r.ablations.items()},
        "ablation_must": {k: list(v) for k, v in r.ablation_must.items()},
        "analyze_wall_s": round(r.analyze.wall_s, 4),
        "analyze_cpu_s": round(r.analyze.cpu_s, 4),
        "refresh_wall_s": round(r.refresh.wall_s, 4),
        "refresh_cpu_s": round(r.refresh.cpu_s, 4),
        "error": r.error,
    }


def to_json(repos: list[RepoRun], hidden: list[HiddenResult] | None) -> dict[str, Any]:
    """Per-repository pins and per-case rows (seed, names, gold, ours, grep, co-change, …)."""
    rows = [case_row(r) for repo in repos for r in repo.runs]
    return {
        "repos": [
            {
                "name": r.name,
                "slug": r.slug,
                "head": r.head,
                "mined": r.mined,
                "unique": r.unique,
                "replayed": len(r.runs),
                "files": r.files,
                "build_s": round(r.build_s, 3),
            }
            for r in repos
        ],
        "cases": rows,
        "hidden": [asdict(h) | {"silent": h.silent} for h in hidden] if hidden else [],
    }


def from_rows(rows: list[dict[str, Any]], *, pool: int, data: Path = DATA) -> list[RepoRun]:
    """Rebuild the runs of ``--jsonl`` rows (a cut run's cases), repositories in row order."""
    repos: dict[str, RepoRun] = {}
    for row in rows:
        name = row["repo"]
        if name not in repos:
            clone = data / "repos" / name
            head = _git(clone, "rev-parse", "HEAD") if (clone / ".git").exists() else "?"
            mined = mine_cases(clone, name, pool=pool, cache_dir=data / "cases") if head else []
            repos[name] = RepoRun(
                name=name,
                slug=REPOS[name],
                head=head,
                mined=len(mined),
                unique=len(unique_cases(mined)),
            )
        case = Case(
            repo=name,
            sha=row["sha"],
            parent=row["parent"],
            time=0,
            subject=row["subject"],
            seed=row["seed"],
            changed=tuple(row["changed"]),
            names=tuple(row["names"]),
            gold=tuple(row["gold"]),
            signatures=tuple((a, b, c) for a, b, c in row["signatures"]),
        )
        run = CaseRun(case=case, error=row["error"])
        if not row["error"]:
            run.ours = Prediction(
                ranked=tuple(row["ours"]),
                must=tuple(row["ours_must"]),
                with_test_ids=tuple(row["ours_test_ids"]),
                changes=len(row["changes"]),
                unanalyzable=tuple(row["unanalyzable"]),
            )
        run.grep, run.cochange = tuple(row["grep"]), tuple(row["cochange"])
        run.why, run.low_risk = row["why"], tuple(row["low_risk"])
        run.report_cochange, run.change_types = tuple(row["report_cochange"]), tuple(row["changes"])
        run.ablations = {k: tuple(v) for k, v in row["ablations"].items()}
        run.ablation_must = {k: tuple(v) for k, v in row.get("ablation_must", {}).items()}
        run.analyze = Timing(wall_s=row["analyze_wall_s"], cpu_s=row["analyze_cpu_s"])
        run.refresh = Timing(wall_s=row["refresh_wall_s"], cpu_s=row["refresh_cpu_s"])
        repos[name].runs.append(run)
    return list(repos.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repos",
        default=",".join(DEFAULT_REPOS),
        help=f"comma-separated, from {', '.join(REPOS)} (default: {', '.join(DEFAULT_REPOS)})",
    )
    parser.add_argument("--cases", type=int, default=60, help="cases replayed per repository")
    parser.add_argument("--pool", type=int, default=0, help="recent cases mined (default 2×)")
    parser.add_argument("--seed", type=int, default=11, help="seed of the case sample")
    parser.add_argument("--skip-ablation", action="store_true", help="no ablation rows")
    parser.add_argument(
        "--ablate",
        default=",".join(CHANNELS),
        help=f"channels and rules removed one at a time (default: {', '.join(CHANNELS)})",
    )
    parser.add_argument("--skip-hidden", action="store_true", help="no hidden-channel probe")
    parser.add_argument("--mirror", type=Path, default=MIRROR, help="where fetched repos are")
    parser.add_argument("--json", type=Path, help="write per-case rows here")
    parser.add_argument("--only", help="replay only the case whose commit sha starts so")
    parser.add_argument("--dump", type=Path, help="write each case's report JSON into this folder")
    parser.add_argument("--jsonl", type=Path, help="append each case's row here as it ends")
    parser.add_argument(
        "--from-jsonl", type=Path, help="render the tables of a (possibly cut) run's --jsonl rows"
    )
    parser.add_argument("--no-readme", action="store_true", help="do not update README.md")
    parser.add_argument(
        "--data",
        type=Path,
        default=DATA,
        help="where the clones, work trees and mined cases go (default: .data; one run per folder)",
    )
    parser.add_argument(
        "--jedi-budget",
        type=float,
        help="seconds of jedi per analysis (default: the setting's); 0 leaves every candidate "
        "undecided, so the reports do not depend on the machine's speed",
    )
    args = parser.parse_args()
    if args.from_jsonl:
        lines = args.from_jsonl.read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line]
        block = render(
            from_rows(rows, pool=args.pool or 2 * args.cases, data=args.data), None, args
        )
        print(block)
        if not args.no_readme:
            write_readme(block)
        return 0
    names = [n.strip() for n in args.repos.split(",") if n.strip()]
    unknown = [n for n in names if n not in REPOS]
    if unknown:
        parser.error(f"unknown repositories {unknown}; known: {', '.join(REPOS)}")
    if args.cases < 1:
        parser.error("--cases must be at least 1")
    pool = args.pool or 2 * args.cases
    ablate = tuple(c.strip() for c in args.ablate.split(",") if c.strip())
    if set(ablate) - set(CHANNELS):
        parser.error(f"unknown --ablate {sorted(set(ablate) - set(CHANNELS))}; known: {CHANNELS}")
    repos = []
    for name in names:
        print(f"{name}: mining and replaying", file=sys.stderr, flush=True)
        repos.append(
            run_repo(
                name,
                mirror=args.mirror,
                cases=args.cases,
                pool=pool,
                seed=args.seed,
                ablate=() if args.skip_ablation else ablate,
                only=args.only,
                dump=args.dump,
                jsonl=args.jsonl,
                data=args.data,
                settings=None if args.jedi_budget is None else {"jedi_budget_s": args.jedi_budget},
            )
        )
    hidden = None
    if not args.skip_hidden:
        print("hidden-channel probe", file=sys.stderr, flush=True)
        hidden = [result for result, _ in run_probe(args.data / "hidden")]
    block = render(repos, hidden, args)
    print(block)
    if args.json:
        args.json.write_text(json.dumps(to_json(repos, hidden), indent=1), encoding="utf-8")
    if not args.no_readme and not args.only:
        write_readme(block)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
