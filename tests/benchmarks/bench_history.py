"""Benchmark the co-change index: full build against ``git log``, and one-commit refresh.

Usage::

    python tests/benchmarks/bench_history.py REPO            # any git repository (bare is fine)
    python tests/benchmarks/bench_history.py --synthetic 3000

The repository is cloned into a temporary folder first, so nothing of it is modified. Reported:

* build: CPU seconds of ``CoChangeIndex.build`` (no cache) over every commit reachable from
  HEAD, the ``git log`` it runs when git is installed included, and of ``git log --no-merges
  --name-only --no-renames`` over the same commits in the same run (the child's CPU time), once
  into a pipe its reader drains as it goes and once into /dev/null (git's floor: through a
  drained pipe git spends a third more); the ratios are the figure of merit; also the build
  without a git command on PATH (the pygit2 walk);
* cache: writing and reading the per-HEAD cache file;
* refresh: wall and CPU milliseconds of ``refresh`` after one new commit (median of several),
  including the write of its delta cache file; the target is 10 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from impact_ls.history.cochange import CoChangeIndex
from impact_ls.history.commits import CommitKind
from impact_ls.history.plant import plant_history
from impact_ls.history.repo import GitRepo

REFRESH_ROUNDS = 7


def _git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True, env=env
    ).stdout


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


_PEER = [
    *("git", "log", "--no-merges", "--name-only", "--no-renames"),
    "--format=%x01%H%x00%ct%x00%B%x00",
]


def _git_log_cpu(root: Path) -> tuple[float, int]:
    """git's CPU listing the history into a pipe its reader drains as it goes, and the count."""
    before = _children_cpu()
    out = subprocess.run(_PEER, cwd=root, capture_output=True, check=True).stdout
    return _children_cpu() - before, out.count(b"\x01")


def _git_log_floor_cpu(root: Path) -> float:
    """git's CPU listing the history into /dev/null: no reader wakes it after every commit's
    flush (through a drained pipe git itself spends a third more)."""
    before = _children_cpu()
    subprocess.run(_PEER, cwd=root, stdout=subprocess.DEVNULL, check=True)
    return _children_cpu() - before


def _pygit2_build_cpu(repo: GitRepo) -> float:
    """CPU seconds of a build where no git command is installed: the pygit2 walk alone."""
    path = os.environ.get("PATH", "")
    with tempfile.TemporaryDirectory(prefix="bench-no-git-") as empty:
        os.environ["PATH"] = empty
        try:
            started = time.process_time()
            CoChangeIndex.build(repo, cache_dir=None)
            return time.process_time() - started
        finally:
            os.environ["PATH"] = path


def _synthetic(folder: Path, commits: int) -> Path:
    """A project of 400 modules whose history couples modules in small random-looking groups."""
    source = folder / "synthetic-source"
    (source / "pkg").mkdir(parents=True)
    modules = [f"pkg/mod_{n:03}.py" for n in range(400)]
    for path in modules:
        (source / path).write_text(f'"""Module {path}."""\n', encoding="utf-8")
    words = ["login", "session", "token", "invoice", "billing", "cache", "parser", "retry"]
    lines = []
    state = 12345
    for number in range(commits):
        state = (state * 1103515245 + 12345) % 2**31
        group = state % 40
        size = 1 + state % 5
        touched = sorted({modules[(group * 10 + k * 3 + number % 7) % 400] for k in range(size)})
        day = 1_704_067_200 + 3600 * (number + 1)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(day))
        message = f"{words[state % 8]} {words[group % 8]} change {number}"
        lines.append(
            f'[[commit]]\nmessage = {json.dumps(message)}\ndate = "{stamp}"\n'
            f"touch = {json.dumps(touched)}\n"
        )
    (source / "history.toml").write_text("\n".join(lines), encoding="utf-8")
    root = plant_history(source, folder / "synthetic")
    _git(root, "repack", "-adq")  # packed, as a cloned repository would be
    return root


def _add_commit(root: Path, number: int) -> None:
    target = root / f"bench_touch_{number % 3}.py"
    with target.open("a", encoding="utf-8") as handle:
        handle.write(f"# bench {number}\n")
    partner = root / "bench_partner.py"
    with partner.open("a", encoding="utf-8") as handle:
        handle.write(f"# bench {number}\n")
    _git(root, "add", target.name, partner.name)
    stamp = f"2099-01-01T00:{number:02}:00Z"
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "Bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
        "GIT_AUTHOR_DATE": stamp,
        "GIT_COMMITTER_DATE": stamp,
    }
    _git(root, "commit", "-q", "-m", f"bench commit {number}", env=env)


def _run(clone: Path, work: Path) -> dict[str, float | int | str]:
    repo = GitRepo.discover(clone)
    assert repo is not None
    walked = list(repo.history())
    non_merge = sum(1 for fact in walked if fact.kind is not CommitKind.MERGE)

    git_cpu, git_commits = _git_log_cpu(clone)
    # the build's own CPU and that of the git log it may run (gitlog.py)
    started, children = time.process_time(), _children_cpu()
    index = CoChangeIndex.build(repo, cache_dir=None)
    build_cpu = time.process_time() - started + _children_cpu() - children
    git_cpu_again, _ = _git_log_cpu(clone)  # bracket the build so a warm cache favours neither
    git_cpu = min(git_cpu, git_cpu_again)
    floor_cpu = min(_git_log_floor_cpu(clone), _git_log_floor_cpu(clone))
    walk_cpu = _pygit2_build_cpu(repo)

    cache = work / "cache"
    started = time.perf_counter()
    CoChangeIndex.build(repo, cache_dir=cache)
    build_and_write = time.perf_counter() - started
    started = time.perf_counter()
    cached = CoChangeIndex.build(repo, cache_dir=cache)
    load = time.perf_counter() - started
    assert cached.mined_commits == 0

    walls: list[float] = []
    cpus: list[float] = []
    current = cached
    for number in range(REFRESH_ROUNDS):
        _add_commit(clone, number)
        fresh_repo = GitRepo.discover(clone)
        assert fresh_repo is not None
        wall, cpu = time.perf_counter(), time.process_time()
        current = current.refresh(fresh_repo)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        assert current.mined_commits == 1

    # the Python file with the most history (co-change pairs Python files only)
    touched = Counter(path for fact in walked for path in fact.files if path.endswith(".py"))
    hot_path = touched.most_common(1)[0][0] if touched else ""
    query_started = time.perf_counter()
    index.partners([hot_path], task_text="fix bug in parser", before=2**40)
    query = time.perf_counter() - query_started

    return {
        "reachable_commits": len(walked),
        "non_merge_commits": non_merge,
        "git_log_commits": git_commits,
        "indexed_commits": index.commit_count,
        "git_log_cpu_s": round(git_cpu, 4),
        "build_cpu_s": round(build_cpu, 4),
        "build_to_git_log_ratio": round(build_cpu / git_cpu, 2) if git_cpu else float("nan"),
        "git_log_to_devnull_cpu_s": round(floor_cpu, 4),
        "build_to_git_log_devnull_ratio": (
            round(build_cpu / floor_cpu, 2) if floor_cpu else float("nan")
        ),
        "pygit2_walk_build_cpu_s": round(walk_cpu, 4),
        "pygit2_walk_to_git_log_ratio": round(walk_cpu / git_cpu, 2) if git_cpu else float("nan"),
        "build_and_write_cache_s": round(build_and_write, 4),
        "cache_load_s": round(load, 4),
        "refresh_one_commit_ms_median": round(statistics.median(walls) * 1000, 2),
        "refresh_one_commit_cpu_ms_median": round(statistics.median(cpus) * 1000, 2),
        "query_hottest_file_ms": round(query * 1000, 2),
        "hottest_file": hot_path,
    }


def main(argv: list[str]) -> int:
    """Clone or generate the repository, measure, print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", nargs="?", type=Path, help="a git repository to clone")
    parser.add_argument("--synthetic", type=int, default=0, help="generate N commits instead")
    args = parser.parse_args(argv)
    if not args.repo and not args.synthetic:
        parser.error("give a repository or --synthetic N")
    with tempfile.TemporaryDirectory(prefix="bench-history-") as tmp:
        work = Path(tmp)
        if args.synthetic:
            clone = _synthetic(work, args.synthetic)
            source = f"synthetic ({args.synthetic} commits)"
        else:
            clone = work / "clone"
            _git(work, "clone", "-q", str(args.repo.resolve()), str(clone))
            source = str(args.repo)
        result = {"repo": source, **_run(clone, work)}
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
