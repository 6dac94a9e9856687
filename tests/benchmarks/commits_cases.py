"""Mine benchmark cases from a repository's history: one signature change, its co-changed files.

A case is a non-merge commit that touches 2 to 8 ``.py`` files of which exactly one non-test module
changes the parameter list of a function or method that exists, under the same qualname, both
at the parent and at the commit (``ast`` of both texts; the parameter list is each parameter's
kind, name and whether it has a default — annotations and default values are ignored). That
module is the *seed*; the *gold* set is every other ``.py`` file the commit changed that existed
at the parent (modified or deleted; added files cannot be predicted from the parent tree).

Mining walks every non-merge commit reachable from HEAD, newest first (``git log --no-merges
--no-renames``; a rename counts as a delete plus an add), and stops once ``pool`` qualifying
cases are found. ``select_cases`` then keeps the ``count`` cases of a seeded sample of that pool
(all of it when the pool is no larger), sorted oldest first so that a replaying work tree moves
forward through history. Everything is deterministic for a given repository HEAD.

The mined pool is cached as JSON under ``.data/cases/`` keyed by repository name, HEAD sha,
pool size and ``MINING_VERSION``.
"""

from __future__ import annotations

import ast
import json
import random
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

MINING_VERSION = 1
MIN_PY_FILES = 2
MAX_PY_FILES = 8


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One mined commit: the seed module, its changed defs and the files the maintainer changed."""

    repo: str
    sha: str
    parent: str
    time: int
    subject: str
    seed: str
    changed: tuple[str, ...]  # qualnames (``Class.method``) whose parameter list changed
    names: tuple[str, ...]  # the short names grep looks for (a constructor: its class)
    gold: tuple[str, ...]
    signatures: tuple[tuple[str, str, str], ...]  # (qualname, before, after)

    @property
    def key(self) -> str:
        """A stable id: repository and short sha."""
        return f"{self.repo}@{self.sha[:10]}"


def is_test_path(path: str) -> bool:
    """True for a test module or test support file by the usual pytest layout conventions."""
    parts = path.split("/")
    name = parts[-1]
    folders = {p.lower() for p in parts[:-1]}
    return (
        bool(folders & {"tests", "test", "testing"})
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
    )


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "core.quotepath=off", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
        errors="replace",
    ).stdout


def _blob(repo: Path, rev: str, path: str) -> str | None:
    done = subprocess.run(
        ["git", "cat-file", "blob", f"{rev}:{path}"], cwd=repo, capture_output=True, check=False
    )
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", errors="replace")


def _param_list(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    parts: list[str] = []
    for number, arg in enumerate(positional):
        kind = "po" if number < len(args.posonlyargs) else "pk"
        parts.append(f"{kind}:{arg.arg}{'=' if number >= first_default else ''}")
    if args.vararg is not None:
        parts.append(f"*{args.vararg.arg}")
    elif args.kwonlyargs:
        parts.append("*")
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        parts.append(f"kw:{arg.arg}{'=' if default is not None else ''}")
    if args.kwarg is not None:
        parts.append(f"**{args.kwarg.arg}")
    return ", ".join(parts)


def signatures(text: str) -> dict[str, str] | None:
    """Parameter lists of module-level functions and (nested) class methods by qualname.

    ``None`` when the text does not parse (old Python 2 code, for instance). Functions nested in
    functions are left out: their signatures are not an interface other files can call.
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    found: dict[str, str] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                # A redefinition (property setter, overload) keeps the last, as Python does.
                found[prefix + node.name] = _param_list(node)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.If | ast.Try):
                # Version-dependent definitions (``if sys.version_info``, ``try: import``).
                visit(node.body, prefix)
                visit(node.orelse, prefix)

    visit(tree.body, "")
    return found


def _short_name(qualname: str) -> str:
    parts = qualname.split(".")
    last = parts[-1]
    if last.startswith("__") and last.endswith("__") and len(parts) > 1:
        # A dunder is reached through its class (construction, operators, calls), not by name.
        return parts[-2]
    return last


def _commits(repo: Path) -> list[tuple[str, str, int, str, list[tuple[str, str]]]]:
    """Every non-merge commit reachable from HEAD, newest first, with its name-status entries."""
    out = _git(
        repo,
        "log",
        "--no-merges",
        "--no-renames",
        "--format=%x01%H %P%x00%ct%x00%s",
        "--name-status",
        "HEAD",
    )
    commits = []
    for chunk in out.split("\x01")[1:]:
        header, _, rest = chunk.partition("\n")
        ids, when, subject = header.split("\x00", 2)
        shas = ids.split()
        if len(shas) != 2:  # root commits have no parent to replay from
            continue
        entries = []
        for line in rest.splitlines():
            status, _, path = line.partition("\t")
            if path:
                entries.append((status[:1], path))
        commits.append((shas[0], shas[1], int(when), subject, entries))
    return commits


def _case_of(
    repo: Path, name: str, commit: tuple[str, str, int, str, list[tuple[str, str]]]
) -> Case | None:
    sha, parent, when, subject, entries = commit
    py = [(status, path) for status, path in entries if path.endswith(".py")]
    if not MIN_PY_FILES <= len(py) <= MAX_PY_FILES:
        return None
    seeds: list[tuple[str, list[tuple[str, str, str]]]] = []
    for status, path in py:
        if status != "M" or is_test_path(path):
            continue
        before_text, after_text = _blob(repo, parent, path), _blob(repo, sha, path)
        if before_text is None or after_text is None:
            return None
        before, after = signatures(before_text), signatures(after_text)
        if before is None or after is None:
            return None  # an unparsable module might hide a signature change: not a clean case
        changed = [
            (qual, before[qual], after[qual])
            for qual in sorted(before.keys() & after.keys())
            if before[qual] != after[qual]
        ]
        if changed:
            seeds.append((path, changed))
    if len(seeds) != 1:
        return None
    seed, changed = seeds[0]
    gold = sorted(path for status, path in py if path != seed and status in {"M", "D"})
    if not gold:
        return None
    return Case(
        repo=name,
        sha=sha,
        parent=parent,
        time=when,
        subject=subject,
        seed=seed,
        changed=tuple(q for q, _, _ in changed),
        names=tuple(sorted({_short_name(q) for q, _, _ in changed})),
        gold=tuple(gold),
        signatures=tuple(changed),
    )


def mine_cases(repo: Path, name: str, *, pool: int, cache_dir: Path) -> list[Case]:
    """The ``pool`` most recent qualifying cases of ``repo`` (newest first), cached by HEAD."""
    head = _git(repo, "rev-parse", "HEAD").strip()
    cache = cache_dir / f"{name}-{head[:12]}-pool{pool}-v{MINING_VERSION}.json"
    if cache.exists():
        rows = json.loads(cache.read_text(encoding="utf-8"))
        return [_case_from(row) for row in rows]
    cases: list[Case] = []
    for commit in _commits(repo):
        case = _case_of(repo, name, commit)
        if case is not None:
            cases.append(case)
            if len(cases) >= pool:
                break
    cache_dir.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps([asdict(c) for c in cases], indent=1), encoding="utf-8")
    return cases


def _case_from(row: dict[str, object]) -> Case:
    def strings(key: str) -> tuple[str, ...]:
        value = row[key]
        assert isinstance(value, list)
        return tuple(str(v) for v in value)

    sigs = row["signatures"]
    assert isinstance(sigs, list)
    when = row["time"]
    assert isinstance(when, int)
    return Case(
        repo=str(row["repo"]),
        sha=str(row["sha"]),
        parent=str(row["parent"]),
        time=when,
        subject=str(row["subject"]),
        seed=str(row["seed"]),
        changed=strings("changed"),
        names=strings("names"),
        gold=strings("gold"),
        signatures=tuple((str(q), str(b), str(a)) for q, b, a in sigs),
    )


def unique_cases(cases: list[Case]) -> list[Case]:
    """``cases`` with each change kept once, at its newest commit.

    A change seen twice — a backport cherry-picked onto a branch that was merged back, often
    with a "[PR #n backport]" subject — has the same seed, the same signatures before and after
    and the same gold.
    """
    unique: dict[tuple[str, tuple[tuple[str, str, str], ...], tuple[str, ...]], Case] = {}
    for case in cases:
        unique.setdefault((case.seed, case.signatures, case.gold), case)
    return list(unique.values())


def select_cases(cases: list[Case], *, count: int, seed: int) -> list[Case]:
    """A seeded sample of ``count`` of the unique cases (all when fewer), oldest first."""
    pool = unique_cases(cases)
    chosen = pool if len(pool) <= count else random.Random(seed).sample(pool, count)
    return sorted(chosen, key=lambda c: (c.time, c.sha))
