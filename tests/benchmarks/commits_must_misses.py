"""Why MUST-INSPECT misses the gold files of ``bench_commits.py`` cases (issue 11), by counts.

Usage::

    python tests/benchmarks/bench_commits.py --repos pytest,rich,aiohttp --skip-ablation \\
        --skip-hidden --no-readme --jsonl rows.jsonl --dump reports/
    python tests/benchmarks/commits_must_misses.py rows.jsonl --dump reports/ [--list KIND]

Each gold file of a case (a file the maintainer changed with the signature) is read at the
parent and compared with its text at the commit; only the lines the commit edited count. An
oracle binds by *name* — every call on an edited line whose callee is named like a changed def
(its class for ``__init__``) is bound to the def's old and new parameter lists, whatever its
receiver — so it sees what a perfect receiver inference would prove, and no more:

* ``call-break`` — an edited call that bound to the old parameters and does not bind to the new
  ones: a provable break once the call is resolved to the changed def;
* ``removed-name`` — an edited import from the seed module, or attribute read, of a name the
  seed module no longer defines (a module-level name, or a method / attribute no class of the
  seed has any more): a provable break once the reference is resolved to the seed;
* ``call-still-binds`` — an edited call that binds to both (a new optional argument passed, a
  positional parameter renamed, a deprecated keyword): not a break the parameter lists show;
* ``call-star`` — an edited call with ``*args``/``**kwargs``: not provable;
* ``same-name-def`` — an edited definition named like a changed method (an override, a hook
  implementation or specification);
* ``none`` — no edited line uses a changed def or a removed name: the file changed alongside
  (a refactor, typing, a new test of the new behaviour, code inside a string).

A file gets the first kind in that order that it shows. The report dump tells where our analysis
put the file (the strongest bucket of any of its entries, and whether the oracle's break sites
are name-matched there). Read-only: it runs ``git`` in the clones under ``.data/repos``.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from impact_ls.analysis.arguments import bind_arguments  # noqa: E402
from impact_ls.model import ArgShape, Param, ParamKind  # noqa: E402

REPOS = HERE / ".data" / "repos"
KINDS = (
    "call-break",
    "removed-name",
    "call-still-binds",
    "call-star",
    "same-name-def",
    "none",
)
_KIND_OF = {"po": ParamKind.POSITIONAL_ONLY, "pk": ParamKind.POSITIONAL_OR_KEYWORD}
_KIND_OF["kw"] = ParamKind.KEYWORD_ONLY
_BUCKETS = ("must_inspect", "may_impact", "low_risk")


@dataclass(frozen=True, slots=True)
class Changed:
    """One changed def of a case: the name its calls use, its old and new parameters."""

    name: str
    last: str
    method: bool
    before: tuple[Param, ...]
    after: tuple[Param, ...]


def parse_params(text: str) -> tuple[Param, ...]:
    """``bench_commits``' parameter list text (``pk:self, pk:x=, *args, kw:y, **kw``) as Params."""
    out: list[Param] = []
    for raw in (p.strip() for p in text.split(",")):
        if not raw or raw == "*":
            continue
        if raw.startswith("**"):
            out.append(Param(name=raw[2:], kind=ParamKind.VAR_KEYWORD))
        elif raw.startswith("*"):
            out.append(Param(name=raw[1:], kind=ParamKind.VAR_POSITIONAL))
        else:
            kind, name = raw.split(":", 1)
            out.append(
                Param(name=name.rstrip("="), kind=_KIND_OF[kind], has_default=name.endswith("="))
            )
    return tuple(out)


def _git(repo: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=REPOS / repo, capture_output=True, check=False)


def _blob(repo: str, rev: str, path: str) -> str | None:
    done = _git(repo, "cat-file", "blob", f"{rev}:{path}")
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


def _edited_lines(repo: str, parent: str, sha: str, path: str) -> set[int]:
    """Lines of the parent's text that the commit removed or replaced."""
    diff = _git(repo, "diff", "-U0", parent, sha, "--", path).stdout.decode("utf-8", "replace")
    lines: set[int] = set()
    for match in re.finditer(r"^@@ -(\d+)(?:,(\d+))?", diff, re.MULTILINE):
        start, count = int(match.group(1)), int(match.group(2) or 1)
        lines.update(range(start, start + max(count, 1)))
    return lines


def _parse(text: str | None) -> ast.Module | None:
    try:
        return ast.parse(text) if text is not None else None
    except (SyntaxError, ValueError):
        return None


def _defined(tree: ast.Module | None) -> tuple[set[str], set[str]]:
    """Module-level names, and every method or attribute name any class of the module has."""
    top: set[str] = set()
    members: set[str] = set()
    if tree is None:
        return top, members
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            top.add(node.name)
        elif isinstance(node, ast.Assign):
            top.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            top.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            top.update((a.asname or a.name).split(".")[0] for a in node.names)
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for node in ast.walk(cls):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                members.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                members.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                members.add(node.id)
    return top, members


def _changed(row: dict[str, object]) -> list[Changed]:
    out = []
    for qualname, before, after in row["signatures"]:  # type: ignore[attr-defined]
        parts = qualname.split(".")
        dunder = parts[-1] in ("__init__", "__new__") and len(parts) > 1
        out.append(
            Changed(
                name=parts[-2] if dunder else parts[-1],
                last=parts[-1],
                method=len(parts) > 1,
                before=parse_params(before),
                after=parse_params(after),
            )
        )
    return out


def _shape(call: ast.Call) -> ArgShape:
    return ArgShape(
        positional=sum(1 for a in call.args if not isinstance(a, ast.Starred)),
        keywords=tuple(k.arg for k in call.keywords if k.arg),
        star=any(isinstance(a, ast.Starred) for a in call.args),
        double_star=any(k.arg is None for k in call.keywords),
    )


def _callee(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def _reads_removed(node: ast.AST, removed: set[str], seed: str) -> bool:
    """An import of a removed name from the seed module, or an attribute read named so."""
    if isinstance(node, ast.ImportFrom):
        module = (node.module or "").rsplit(".", 1)[-1]
        return module == seed and any(a.name in removed for a in node.names)
    return isinstance(node, ast.Attribute) and node.attr in removed


def classify_file(
    tree: ast.Module, edited: set[int], changed: list[Changed], removed: set[str], seed: str
) -> tuple[str, list[int]]:
    """The file's kind (see the module docstring) and the lines of its oracle break sites."""
    found: set[str] = set()
    breaks: list[int] = []

    def touched(node: ast.AST) -> bool:
        first = getattr(node, "lineno", 0)
        last = getattr(node, "end_lineno", None) or first
        return any(line in edited for line in range(first, last + 1))

    for node in ast.walk(tree):
        if not touched(node):
            continue
        if isinstance(node, ast.Call):
            name = _callee(node)
            for each in (c for c in changed if c.name == name):
                args = _shape(node)
                if not args.provable:
                    found.add("call-star")
                    continue
                # a bound call (``obj.m()``, ``Class()``) supplies the first parameter itself
                bound = each.last == "__init__" or isinstance(node.func, ast.Attribute)
                skip = each.method and bound
                if not bind_arguments(each.before, args, skip_first=skip) and bind_arguments(
                    each.after, args, skip_first=skip
                ):
                    found.add("call-break")
                    breaks.append(node.lineno)
                else:
                    found.add("call-still-binds")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.lineno in edited and any(c.method and c.last == node.name for c in changed):
                found.add("same-name-def")
        elif _reads_removed(node, removed, seed):
            found.add("removed-name")
            breaks.append(getattr(node, "lineno", 0))
    kind = next((k for k in KINDS if k in found), "none")
    return kind, sorted(set(breaks))


def _where(report: dict[str, object] | None, file: str, lines: list[int]) -> str:
    """Where the report put ``file``: its strongest bucket, and how the oracle's sites fare."""
    if report is None:
        return "no report"
    triage = report["triage"]
    entries = {b: [e for e in triage[b] if e["file"] == file] for b in _BUCKETS}  # type: ignore[index]
    bucket = next((b for b in _BUCKETS if entries[b]), "unreached")
    at = [e for b in _BUCKETS for e in entries[b] if e["line"] in lines]
    if lines and not at:
        return f"{bucket}, break site unreached"
    if at and all(e["name_matched"] for e in at):
        return f"{bucket}, break site name-matched"
    return bucket


def main() -> None:
    """Print the counts of MUST-INSPECT's misses by kind and where our analysis put them."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("rows", type=Path, help="bench_commits --jsonl rows")
    parser.add_argument("--dump", type=Path, required=True, help="bench_commits --dump folder")
    parser.add_argument("--list", default="", help="also list the misses of this kind")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.rows.read_text(encoding="utf-8").splitlines()]
    kinds: Counter[str] = Counter()
    places: Counter[tuple[str, str]] = Counter()
    gold = hits = 0
    listed = []
    for row in rows:
        if row["error"]:
            continue
        repo = row["repo"]
        seed_before = _defined(_parse(_blob(repo, row["parent"], row["seed"])))
        seed_after = _defined(_parse(_blob(repo, row["sha"], row["seed"])))
        removed = (seed_before[0] - seed_after[0]) | {
            m for m in seed_before[1] - seed_after[1] if not m.startswith("__")
        }
        path = args.dump / f"{repo}-{row['sha'][:10]}.json"
        report = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
        for file in row["gold"]:
            gold += 1
            if file in row["ours_must"]:
                hits += 1
                continue
            tree = _parse(_blob(repo, row["parent"], file))
            if tree is None:
                kinds["unparsable"] += 1
                continue
            edited = _edited_lines(repo, row["parent"], row["sha"], file)
            stem = Path(row["seed"]).stem
            seed = Path(row["seed"]).parent.name if stem == "__init__" else stem
            kind, lines = classify_file(tree, edited, _changed(row), removed, seed)
            kinds[kind] += 1
            places[(kind, _where(report, file, lines))] += 1
            if kind == args.list:
                listed.append(f"{repo}@{row['sha'][:10]} {row['seed']} → {file} {lines}")
    print(f"{len(rows)} cases, {gold} gold files, {hits} in MUST-INSPECT, {gold - hits} missed")
    print("| kind of miss | files | share of misses |\n|---|---:|---:|")
    for kind in (*KINDS, "unparsable"):
        if kinds[kind]:
            print(f"| {kind} | {kinds[kind]} | {kinds[kind] / max(gold - hits, 1):.2f} |")
    print("\n| kind of miss | where our report put the file | files |\n|---|---|---:|")
    for (kind, where), count in sorted(
        places.items(), key=lambda kv: (KINDS.index(kv[0][0]), -kv[1])
    ):
        print(f"| {kind} | {where} | {count} |")
    for line in listed:
        print(line)


if __name__ == "__main__":
    main()
