"""Score our call graph, and published peers, on the hand-written call-graph micro-suite.

    python tests/benchmarks/bench_callgraph.py [--verbose] [--json] [--no-peers] [--no-readme]
                                               [--program SUBSTRING] [--validate]

Every program under ``tests/benchmarks/callgraph/<category>/<program>/`` is copied to
``tests/benchmarks/.data/callgraph/`` (so no cache lands in the suite) and indexed with
``ProjectIndex``; our ``call`` and ``instantiate`` edges become (caller, callee) pairs and are
scored against the program's ``callgraph.json``: precision and recall per category and overall,
micro-averaged over edges. The peers (jarviscg and PyCG from PyPI, installed into a throwaway
venv under ``.data/``) run on the same copies in the same run, their output converted to the
suite's naming (see ``callgraph/README.md``) and scored the same way.

``--validate`` runs every program instead (``callgraph_trace.py`` in a fresh interpreter per
program, under ``sys.setprofile``) and reports each expected edge that never happened and each
real call between program functions missing from the expected set, so the gold stays honest.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUITE = HERE / "callgraph"
DATA = HERE / ".data"
WORK = DATA / "callgraph"
PEER_VENV = DATA / "peer-venv"
README = HERE / "README.md"
TRACER = HERE / "callgraph_trace.py"
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE))

from callgraph_trace import LambdaNames, module_name  # noqa: E402

from impact_ls.config import Settings  # noqa: E402
from impact_ls.graph.project import ProjectIndex  # noqa: E402
from impact_ls.model import EdgeKind  # noqa: E402

AIM_PRECISION = 0.98
AIM_RECALL = 0.95
SCORED_KINDS = (EdgeKind.CALL, EdgeKind.INSTANTIATE)
PEER_TIMEOUT_S = 120
Pair = tuple[str, str]


@dataclass(frozen=True, slots=True, kw_only=True)
class Program:
    """One suite program: where it is, its category, how it runs and its expected edges."""

    name: str
    category: str
    path: Path
    entry: str
    gold: frozenset[Pair]


@dataclass(slots=True)
class Score:
    """Edge counts of one tool on a set of programs."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    failed: int = 0

    def add(self, other: Score) -> None:
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn
        self.failed += other.failed

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


@dataclass(slots=True)
class Outcome:
    """One tool on one program: what it found, what it missed, what it invented."""

    found: set[Pair] = field(default_factory=set)
    missed: set[Pair] = field(default_factory=set)
    extra: set[Pair] = field(default_factory=set)
    error: str | None = None

    def score(self) -> Score:
        return Score(
            tp=len(self.found),
            fp=len(self.extra),
            fn=len(self.missed),
            failed=int(self.error is not None),
        )


def load_programs(pattern: str | None = None) -> list[Program]:
    """Every program of the suite (filtered by a substring of ``category/name``), sorted."""
    programs = []
    for meta_path in sorted(SUITE.glob("*/*/meta.json")):
        folder = meta_path.parent
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        category = folder.parent.name
        if meta.get("category") != category:
            raise SystemExit(f"{meta_path}: category {meta.get('category')!r} ≠ folder {category}")
        name = f"{category}/{folder.name}"
        if pattern and pattern not in name:
            continue
        gold_raw = json.loads((folder / "callgraph.json").read_text(encoding="utf-8"))
        gold = frozenset((caller, callee) for caller, cs in gold_raw.items() for callee in cs)
        programs.append(
            Program(
                name=name,
                category=category,
                path=folder,
                entry=meta.get("run", "main.py"),
                gold=gold,
            )
        )
    return programs


def definitions(root: Path) -> tuple[set[str], set[str]]:
    """The node ids a program defines and its module names, by the suite's naming rules."""
    nodes: set[str] = set()
    modules: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        mod = module_name(path.relative_to(root).as_posix())
        modules.add(mod)
        nodes.add(mod)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes.update(LambdaNames(mod, tree).by_body.values())
        stack: list[tuple[str, ast.AST]] = [(mod, tree)]
        while stack:
            qual, node = stack.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    name = f"{qual}.{child.name}"
                    nodes.add(name)
                    stack.append((name, child))
                else:
                    stack.append((qual, child))
    return nodes, modules


def check_gold(program: Program) -> list[str]:
    """Problems with a program's expected edges: ids that name no definition of the program."""
    nodes, modules = definitions(program.path)
    problems = []
    for caller, callee in sorted(program.gold):
        if caller not in nodes:
            problems.append(f"caller {caller!r} is not defined in the program")
        in_project = any(callee == m or callee.startswith(m + ".") for m in modules)
        if in_project and callee not in nodes:
            problems.append(f"callee {callee!r} looks like a program id but is not defined")
        if callee.startswith(("builtins.", "<builtin>")):
            problems.append(f"callee {callee!r} is a builtin (builtins are never expected)")
    return problems


def external_gold(program: Program) -> set[Pair]:
    """The expected edges whose callee is outside the program (stdlib or an installed package)."""
    _, modules = definitions(program.path)
    return {
        (a, b) for a, b in program.gold if not any(b == m or b.startswith(m + ".") for m in modules)
    }


def is_builtin(target: str) -> bool:
    return target.startswith(("builtins.", "<builtin>"))


def workdir(program: Program) -> Path:
    """A fresh copy of the program under ``.data/`` (indexing writes a cache into its root)."""
    target = WORK / program.category / program.path.name
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(program.path, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def compare(program: Program, predicted: Iterable[Pair], error: str | None = None) -> Outcome:
    got = {p for p in predicted if not is_builtin(p[1])}
    return Outcome(
        found=got & program.gold,
        missed=set(program.gold) - got,
        extra=got - program.gold,
        error=error,
    )


def ours(root: Path) -> tuple[set[Pair], set[Pair]]:
    """Our scored edges as pairs, and the subset that only name matching produced."""
    index = ProjectIndex(root, Settings())
    index.build(jobs=1)
    pairs: set[Pair] = set()
    confirmed: set[Pair] = set()
    for edge in index.graph.edges():
        if edge.kind in SCORED_KINDS:
            pairs.add((edge.source, edge.target))
            if not edge.name_matched:
                confirmed.add((edge.source, edge.target))
    return pairs, pairs - confirmed


# ---------------------------------------------------------------------------------- peers


@dataclass(frozen=True, slots=True, kw_only=True)
class Peer:
    """A published call-graph tool: its PyPI name and how to run it on one program."""

    name: str
    dist: str
    command: tuple[str, ...]


PEERS = (
    Peer(name="jarviscg", dist="jarviscg", command=("bin/jarviscg",)),
    Peer(name="PyCG", dist="pycg", command=("bin/python", "-m", "pycg")),
)


def ensure_peer_venv() -> dict[str, str]:
    """Install the peers into a throwaway venv under ``.data/``; their versions by name."""
    python = PEER_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
    # PyCG 0.0.8 imports pkg_resources (gone from setuptools ≥ 81).
    wanted = ["jarviscg", "pycg", "setuptools<81"]
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *wanted],
        check=True,
        capture_output=True,
    )
    # The PyCG wheel installs its package as ``PyCG/`` but imports itself as ``pycg``.
    site = next((PEER_VENV / "lib").glob("python3*/site-packages"))
    if (site / "PyCG").is_dir() and not (site / "pycg").exists():
        (site / "pycg").symlink_to("PyCG")
    out = subprocess.run(
        [str(python), "-m", "pip", "list", "--format", "json", "--disable-pip-version-check"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return {p["name"].lower(): p["version"] for p in json.loads(out)}


def run_peer(peer: Peer, root: Path) -> tuple[dict[str, list[str]] | None, str | None]:
    """The peer's raw ``{caller: [callee]}`` for one program, or None and why it failed."""
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))
    out = root / f".{peer.name}.json"
    command = [str(PEER_VENV / peer.command[0]), *peer.command[1:]]
    try:
        proc = subprocess.run(
            [*command, "--package", ".", *files, "-o", str(out)],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=PEER_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, f"timed out after {PEER_TIMEOUT_S} s"
    if proc.returncode != 0 or not out.exists():
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"exit {proc.returncode}: {last[:160]}"
    return json.loads(out.read_text(encoding="utf-8")), None


class PeerNames:
    """Converts PyCG-family names and conventions to the suite's (README: "Peers")."""

    def __init__(self, root: Path) -> None:
        self.modules: set[str] = set()
        self.lambdas: dict[tuple[str, int], str] = {}
        self.defined_classes: set[tuple[str, str]] = set()
        for path in sorted(root.rglob("*.py")):
            mod = module_name(path.relative_to(root).as_posix())
            self.modules.add(mod)
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names = LambdaNames(mod, tree)
            by_scope: dict[str, list[str]] = {}
            # PyCG numbers lambdas per scope in source order: <lambda1>, <lambda2>, ...
            ordered = sorted(names.by_body.items())
            for _, name in ordered:
                scope = name.rsplit(".", 1)[0]
                by_scope.setdefault(scope, []).append(name)
            for scope, members in by_scope.items():
                for i, name in enumerate(members, start=1):
                    self.lambdas[(scope, i)] = name
            self._classes(mod, tree)

    def _classes(self, qual: str, node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                self.defined_classes.add((qual, f"{qual}.{child.name}"))
                self._classes(f"{qual}.{child.name}", child)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                self._classes(f"{qual}.{child.name}", child)
            else:
                self._classes(qual, child)

    def name(self, raw: str) -> str:
        parts = raw.split(".")
        out: list[str] = []
        for part in parts:
            match = re.fullmatch(r"<lambda(\d+)>", part)
            if match:
                scope = ".".join(out)
                out = self.lambdas.get((scope, int(match.group(1))), f"{scope}.{part}").split(".")
            else:
                out.append(part)
        return ".".join(out)

    def pairs(self, raw: dict[str, list[str]]) -> set[Pair]:
        pairs: set[Pair] = set()
        for caller_raw, callees in raw.items():
            if caller_raw.startswith("<builtin>"):
                continue
            caller = self.name(caller_raw)
            for callee_raw in callees:
                callee = self.name(callee_raw)
                if is_builtin(callee) or callee in self.modules:
                    continue  # builtins are never expected; an import is not a call
                if callee.startswith("<") or "." not in callee:
                    continue  # a builtin type's method (<str>.join) or an unresolved bare name
                if (caller, callee) in self.defined_classes:
                    continue  # PyCG models a class statement as its scope calling the class
                pairs.add((caller, callee))
                last = callee.rsplit(".", 1)
                if (
                    len(last) == 2
                    and last[1] == "__init__"
                    and not caller.endswith((".__init__", ".__new__"))
                    and any(last[0].startswith(m + ".") for m in self.modules)
                ):
                    pairs.add((caller, last[0]))  # PyCG names a construction by its __init__
        return pairs


# ---------------------------------------------------------------------------------- scoring


@dataclass(slots=True)
class Tool:
    """One tool's outcomes over the suite."""

    name: str
    version: str
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    seconds: float = 0.0
    name_matched: dict[str, set[Pair]] = field(default_factory=dict)


def by_category(tool: Tool, programs: list[Program]) -> dict[str, Score]:
    scores: dict[str, Score] = {}
    for program in programs:
        scores.setdefault(program.category, Score()).add(tool.outcomes[program.name].score())
    return scores


def overall(tool: Tool) -> Score:
    total = Score()
    for outcome in tool.outcomes.values():
        total.add(outcome.score())
    return total


def run(programs: list[Program], *, peers: bool) -> list[Tool]:
    import impact_ls

    us = Tool(name="impact_ls", version=getattr(impact_ls, "__version__", "main"))
    tools = [us]
    peer_tools: list[tuple[Peer, Tool]] = []
    if peers:
        versions = ensure_peer_venv()
        for peer in PEERS:
            tool = Tool(name=peer.name, version=versions.get(peer.dist, "?"))
            peer_tools.append((peer, tool))
            tools.append(tool)
    for program in programs:
        root = workdir(program)
        start = time.perf_counter()
        predicted, name_matched = ours(root)
        us.seconds += time.perf_counter() - start
        us.outcomes[program.name] = compare(program, predicted)
        us.name_matched[program.name] = name_matched
        for peer, tool in peer_tools:
            start = time.perf_counter()
            raw, error = run_peer(peer, root)
            tool.seconds += time.perf_counter() - start
            pairs = PeerNames(root).pairs(raw) if raw is not None else set()
            tool.outcomes[program.name] = compare(program, pairs, error)
    return tools


def render(tools: list[Tool], programs: list[Program]) -> str:
    """The markdown tables: per category P/R of every tool, then the overall line and aims."""
    categories = sorted({p.category for p in programs})
    counts = {c: sum(p.category == c for p in programs) for c in categories}
    edges = {c: sum(len(p.gold) for p in programs if p.category == c) for c in categories}
    scores = [by_category(t, programs) for t in tools]
    head = " | ".join(f"{t.name} P | {t.name} R" for t in tools)
    lines = [
        f"### call-graph micro-suite — {datetime.date.today().isoformat()}",
        "",
        f"{len(programs)} programs, {sum(len(p.gold) for p in programs)} expected edges, "
        f"{len(categories)} categories; Python {sys.version.split()[0]}; "
        + ", ".join(f"{t.name} {t.version}" for t in tools)
        + ". Micro-averaged over (caller, callee) edges; ours: `call` + `instantiate` edges.",
        "",
        f"| category | programs | edges | {head} |",
        "|---|---:|---:|" + "---:|---:|" * len(tools),
    ]

    def cell(score: Score) -> str:
        return f"{score.precision:.2f} | {score.recall:.2f}"

    for c in categories:
        row = " | ".join(cell(s.get(c, Score())) for s in scores)
        lines.append(f"| {c} | {counts[c]} | {edges[c]} | {row} |")
    totals = [overall(t) for t in tools]
    row = " | ".join(f"**{s.precision:.3f}** | **{s.recall:.3f}**" for s in totals)
    lines.append(f"| **all** | {len(programs)} | {sum(edges.values())} | {row} |")
    lines.append("")
    us = totals[0]
    ok_p = "ok" if us.precision >= AIM_PRECISION else "MISSED"
    ok_r = "ok" if us.recall >= AIM_RECALL else "MISSED"
    nm = sum(len(v) for v in tools[0].name_matched.values())
    lines.append(
        f"Aims for impact_ls: precision ≥ {AIM_PRECISION} ({ok_p}), recall ≥ {AIM_RECALL} "
        f"({ok_r}). Ours: {us.tp} found, {us.fp} false, {us.fn} missed; {nm} of our scored edges "
        f"are name-matched."
    )
    external = {p.name: external_gold(p) for p in programs}
    n_ext = sum(len(v) for v in external.values())
    found_ext = ", ".join(
        f"{t.name} {sum(len(t.outcomes[n].found & e) for n, e in external.items())}" for t in tools
    )
    lines.append(
        f"Of the expected edges, {n_ext} go to external targets (stdlib and installed "
        f"packages); found: {found_ext}."
    )
    for tool, total in zip(tools[1:], totals[1:], strict=True):
        lines.append(
            f"{tool.name}: {total.tp} found, {total.fp} false, {total.fn} missed; failed on "
            f"{total.failed} program(s) (scored as finding nothing); {tool.seconds:.1f} s."
        )
    return "\n".join(lines) + "\n"


def details(tools: list[Tool], programs: list[Program]) -> str:
    """Misses and false positives per program and tool (``--verbose``)."""
    out = []
    for program in programs:
        for tool in tools:
            o = tool.outcomes[program.name]
            if not (o.missed or o.extra or o.error):
                continue
            out.append(f"{program.name} [{tool.name}]")
            if o.error:
                out.append(f"  failed: {o.error}")
            out.extend(f"  missed {a} -> {b}" for a, b in sorted(o.missed))
            out.extend(f"  false  {a} -> {b}" for a, b in sorted(o.extra))
    return "\n".join(out) + "\n"


def raw_numbers(tools: list[Tool], programs: list[Program]) -> dict[str, object]:
    result: dict[str, object] = {}
    for tool in tools:
        cats = by_category(tool, programs)
        total = overall(tool)
        result[tool.name] = {
            "version": tool.version,
            "seconds": round(tool.seconds, 3),
            "overall": _score_json(total),
            "categories": {c: _score_json(s) for c, s in sorted(cats.items())},
            "programs": {
                name: {
                    **_score_json(o.score()),
                    "error": o.error,
                    "missed": sorted(o.missed),
                    "extra": sorted(o.extra),
                }
                for name, o in sorted(tool.outcomes.items())
            },
        }
    return result


def _score_json(score: Score) -> dict[str, object]:
    return {
        "tp": score.tp,
        "fp": score.fp,
        "fn": score.fn,
        "failed": score.failed,
        "precision": round(score.precision, 4),
        "recall": round(score.recall, 4),
    }


def write_readme(table: str) -> None:
    """Replace the suite's section of the README (between its markers) with ``table``."""
    start, end = "<!-- bench:callgraph -->", "<!-- /bench:callgraph -->"
    text = README.read_text(encoding="utf-8")
    block = f"{start}\n{table}{end}"
    if start in text and end in text:
        text = re.sub(
            re.escape(start) + r".*?" + re.escape(end), lambda _: block, text, flags=re.DOTALL
        )
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    README.write_text(text, encoding="utf-8")


# ---------------------------------------------------------------------------------- validate


def trace(program: Program) -> dict[str, object]:
    """Run the program under the tracer; the tracer's JSON."""
    root = workdir(program)
    proc = subprocess.run(
        [sys.executable, str(TRACER), str(root), program.entry, str(root / "callgraph.json")],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    marker = "@@TRACE@@"
    for line in proc.stdout.splitlines():
        if line.startswith(marker):
            return json.loads(line[len(marker) :])  # type: ignore[no-any-return]
    return {"error": f"tracer failed: {proc.stderr.strip()[-400:]}"}


def validate(programs: list[Program]) -> int:
    """Compare each program's gold with what running it does; the number of disagreements."""
    problems = 0
    for program in programs:
        result = trace(program)
        notes: list[str] = []
        if result.get("error"):
            notes.append(f"run failed: {result['error']}")
        _, modules = definitions(program.path)

        def internal(name: str, modules: set[str] = modules) -> bool:
            return any(name == m or name.startswith(m + ".") for m in modules)

        observed = {(a, b) for a, b, _ in result.get("edges", [])}  # type: ignore[attr-defined]
        generators = set(result.get("generators", []))  # type: ignore[arg-type]
        gold_internal = {(a, b) for a, b in program.gold if internal(b)}
        into = {b for _, b in program.gold}
        for a, b in sorted(gold_internal - observed):
            if b in generators and any(y == b for _, y in observed):
                continue  # a generator runs when resumed, maybe by someone else
            notes.append(f"expected, never happened: {a} -> {b}")
        for a, b in sorted(observed - gold_internal):
            if b in generators and b in into:
                continue
            notes.append(f"happened, not expected:   {a} -> {b}")
        ext = result.get("externals", {})
        for a, b in ext.get("not_observed", []):  # type: ignore[union-attr]
            notes.append(f"external expected, not seen: {a} -> {b}")
        seen = ext.get("observed_not_expected", [])  # type: ignore[union-attr]
        info = [f"(info) external seen, not expected: {a} -> {b}" for a, b in seen]
        problems += len(notes)
        if notes or info:
            print(program.name)
            for note in notes + info:
                print(f"  {note}")
    print(f"{len(programs)} programs run; {problems} disagreement(s) with the gold")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="misses and false edges per program")
    parser.add_argument("--json", action="store_true", help="print the raw numbers")
    parser.add_argument("--no-peers", action="store_true", help="score only impact_ls")
    parser.add_argument("--no-readme", action="store_true", help="do not update README.md")
    parser.add_argument("--program", help="only programs whose category/name contains this")
    parser.add_argument("--validate", action="store_true", help="run the programs, check the gold")
    args = parser.parse_args()
    programs = load_programs(args.program)
    bad = [(p.name, m) for p in programs for m in check_gold(p)]
    for name, message in bad:
        print(f"{name}: {message}", file=sys.stderr)
    if bad:
        return 2
    if args.validate:
        return 1 if validate(programs) else 0
    tools = run(programs, peers=not args.no_peers)
    table = render(tools, programs)
    print(table)
    if args.verbose:
        print(details(tools, programs))
    if args.json:
        print(json.dumps(raw_numbers(tools, programs), indent=1))
    if not args.no_readme and not args.program:
        write_readme(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
