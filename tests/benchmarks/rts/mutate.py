"""Seeded source mutations of five kinds, found with ``ast`` and applied as text edits.

Kinds (each a real edit a developer makes):

* ``add-param``: a required parameter ``bench_extra`` first (after ``self``/``cls``) in a
  function or method whose name is called somewhere in the project or its tests;
* ``return-value``: one ``return X`` returns ``None`` instead (``0`` for ``return None``,
  the negation for a boolean constant);
* ``rename-local``: a local temporary (assigned in the body, not a parameter, not seen by an
  inner scope) renamed everywhere in its function: must break nothing, the ideal selection is
  empty;
* ``rename-attr``: a class attribute or module constant renamed at its definition only;
* ``delete-def``: a module-level function or a method deleted (``pass`` left where the body
  would be empty).

Targets come from every module of the package; per kind the candidates are shuffled with the
seed and picked round-robin over modules (also shuffled), so a run spreads over the code and
the same seed always gives the same list. Nothing is chosen by hand.
"""

from __future__ import annotations

import ast
import hashlib
import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

KINDS = ("add-param", "return-value", "rename-local", "rename-attr", "delete-def")
NEW_PARAM = "bench_extra"
RENAME_SUFFIX = "_bench"
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_INTROSPECTION = {"locals", "vars", "eval", "exec", "dir", "globals"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Edit:
    """Replace the text between two (line, col) positions (1-based lines, 0-based columns)."""

    start: tuple[int, int]
    end: tuple[int, int]
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Mutation:
    """One mutation: where, what kind, which entity, and the edits that make it."""

    file: str
    kind: str
    target: str
    line: int
    edits: tuple[Edit, ...]

    @property
    def key(self) -> str:
        """A stable id of the mutation: its place and a hash of its edits."""
        digest = hashlib.sha256(repr(self.edits).encode()).hexdigest()[:10]
        return f"{self.kind}:{self.file}:{self.line}:{self.target}:{digest}"

    def to_json(self) -> dict[str, object]:
        """The mutation as a JSON-ready dict (enough to reproduce it)."""
        return {
            "key": self.key,
            "file": self.file,
            "kind": self.kind,
            "target": self.target,
            "line": self.line,
            "edits": [[list(e.start), list(e.end), e.text] for e in self.edits],
        }


def apply(text: str, edits: tuple[Edit, ...]) -> str:
    """``text`` with ``edits`` applied (positions refer to the original text)."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def pos(at: tuple[int, int]) -> int:
        line, col = at
        if line > len(lines):
            return len(text)
        # ast columns are UTF-8 byte offsets.
        prefix = lines[line - 1].encode("utf-8")[:col].decode("utf-8", errors="ignore")
        return offsets[line - 1] + len(prefix)

    out = text
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        out = out[: pos(edit.start)] + edit.text + out[pos(edit.end) :]
    return out


def _qual(stack: list[str], name: str) -> str:
    return ".".join([*stack, name])


class _Finder(ast.NodeVisitor):
    """Collects the candidates of every kind in one module."""

    def __init__(self, rel: str, module: str, text: str, called: set[str]) -> None:
        self.rel, self.module, self.text, self.called = rel, module, text, called
        self.lines = text.splitlines()
        self.stack: list[str] = [module]
        self.in_class: list[bool] = [False]
        self.found: dict[str, list[Mutation]] = defaultdict(list)

    def _add(self, kind: str, target: str, line: int, edits: tuple[Edit, ...]) -> None:
        self.found[kind].append(
            Mutation(file=self.rel, kind=kind, target=target, line=line, edits=edits)
        )

    def visit_Module(self, node: ast.Module) -> None:
        self._definitions(node.body, in_class=False)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.stack.append(node.name)
        self._definitions(node.body, in_class=True)
        self.in_class.append(True)
        self.generic_visit(node)
        self.stack.pop()
        self.in_class.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        qual = _qual(self.stack, node.name)
        in_class = self.in_class[-1]
        self._add_param(node, qual, in_class)
        if not any(isinstance(n, ast.Yield | ast.YieldFrom) for n in _own_nodes(node)):
            self._returns(node, qual)
        self._locals(node, qual)
        self.stack.append(node.name)
        self.in_class.append(False)
        self.generic_visit(node)
        self.stack.pop()
        self.in_class.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815 (ast's visitor naming)

    def _definitions(self, body: list[ast.stmt], *, in_class: bool) -> None:
        """Deletions and renames at definitions: direct children of a module or class body."""
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self._delete(stmt, body)
            names = _assigned_names(stmt)
            for name_node in names:
                name = name_node.id
                if name.startswith("__") or name == "_" or (not in_class and not _constant(name)):
                    continue
                self._add(
                    "rename-attr",
                    _qual(self.stack, name),
                    name_node.lineno,
                    (
                        Edit(
                            start=(name_node.lineno, name_node.col_offset),
                            end=(
                                name_node.end_lineno or name_node.lineno,
                                name_node.end_col_offset or 0,
                            ),
                            text=name + RENAME_SUFFIX,
                        ),
                    ),
                )

    def _delete(self, node: ast.FunctionDef | ast.AsyncFunctionDef, body: list[ast.stmt]) -> None:
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        last = node.end_lineno or node.lineno
        indent = self.lines[node.lineno - 1][: node.col_offset]
        alone = len(body) == 1 or all(
            isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
            for s in body
            if s is not node
        )
        text = f"{indent}pass\n" if alone else ""
        self._add(
            "delete-def",
            _qual(self.stack, node.name),
            node.lineno,
            (Edit(start=(first, 0), end=(last + 1, 0), text=text),),
        )

    def _add_param(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, qual: str, in_class: bool
    ) -> None:
        if node.name not in self.called or _decorated(node, {"property", "setter", "deleter"}):
            return
        positional = [*node.args.posonlyargs, *node.args.args]
        static = _decorated(node, {"staticmethod"})
        skip = 1 if (in_class and not static and positional) else 0
        if len(positional) > skip:
            first = positional[skip]
            edit = Edit(
                start=(first.lineno, first.col_offset),
                end=(first.lineno, first.col_offset),
                text=f"{NEW_PARAM}, ",
            )
        elif skip:
            self_arg = positional[0]
            at = (self_arg.end_lineno or self_arg.lineno, self_arg.end_col_offset or 0)
            edit = Edit(start=at, end=at, text=f", {NEW_PARAM}")
        else:
            paren = self._open_paren(node)
            if paren is None:
                return
            others = node.args.vararg or node.args.kwonlyargs or node.args.kwarg
            edit = Edit(start=paren, end=paren, text=f"{NEW_PARAM}, " if others else NEW_PARAM)
        self._add("add-param", qual, node.lineno, (edit,))

    def _open_paren(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int] | None:
        line = self.lines[node.lineno - 1]
        at = line.find(f"def {node.name}")
        if at < 0:
            return None
        paren = line.find("(", at)
        if paren < 0:
            return None
        return (node.lineno, len(line[: paren + 1].encode("utf-8")))

    def _returns(self, node: ast.FunctionDef | ast.AsyncFunctionDef, qual: str) -> None:
        for ret in _own_nodes(node):
            if not isinstance(ret, ast.Return) or ret.value is None:
                continue
            value = ret.value
            if isinstance(value, ast.Constant) and value.value is None:
                new = "0"
            elif isinstance(value, ast.Constant) and isinstance(value.value, bool):
                new = str(not value.value)
            else:
                new = "None"
            self._add(
                "return-value",
                qual,
                ret.lineno,
                (
                    Edit(
                        start=(value.lineno, value.col_offset),
                        end=(value.end_lineno or value.lineno, value.end_col_offset or 0),
                        text=new,
                    ),
                ),
            )

    def _locals(self, node: ast.FunctionDef | ast.AsyncFunctionDef, qual: str) -> None:
        params = {
            a.arg
            for a in [
                *node.args.posonlyargs,
                *node.args.args,
                *node.args.kwonlyargs,
                node.args.vararg,
                node.args.kwarg,
            ]
            if a is not None
        }
        own = list(_own_nodes(node))
        if any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _INTROSPECTION
            for n in own
        ) or any(isinstance(n, ast.Match) for n in own):
            return
        blocked = set(params)
        for n in own:
            if isinstance(n, ast.Global | ast.Nonlocal):
                blocked.update(n.names)
            elif isinstance(n, ast.ExceptHandler) and n.name:
                blocked.add(n.name)
            elif isinstance(n, ast.Import | ast.ImportFrom):
                blocked.update((a.asname or a.name).split(".")[0] for a in n.names)
            elif isinstance(n, ast.JoinedStr):
                # ast positions inside f-strings are unreliable before Python 3.12.
                blocked.update(x.id for x in ast.walk(n) if isinstance(x, ast.Name))
        for inner in ast.walk(node):
            if inner is not node and isinstance(inner, _SCOPES):
                blocked.update(
                    x.id if isinstance(x, ast.Name) else x.arg
                    for x in ast.walk(inner)
                    if isinstance(x, ast.Name | ast.arg)
                )
        names = [n for n in own if isinstance(n, ast.Name)]
        stored = sorted(
            {n.id for n in names if isinstance(n.ctx, ast.Store)} - blocked,
        )
        taken = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        for name in stored:
            new = name + RENAME_SUFFIX
            if new in taken:
                continue
            uses = [n for n in names if n.id == name]
            edits = tuple(
                Edit(
                    start=(n.lineno, n.col_offset),
                    end=(n.end_lineno or n.lineno, n.end_col_offset or 0),
                    text=new,
                )
                for n in uses
            )
            self._add("rename-local", f"{qual}.<locals>.{name}", uses[0].lineno, edits)


def _own_nodes(node: ast.AST) -> list[ast.AST]:
    """Nodes of a function's body, not descending into nested functions, lambdas or classes."""
    out: list[ast.AST] = []
    todo = list(ast.iter_child_nodes(node))
    while todo:
        n = todo.pop()
        out.append(n)
        if not isinstance(n, _SCOPES):
            todo.extend(ast.iter_child_nodes(n))
    return out


def _assigned_names(stmt: ast.stmt) -> list[ast.Name]:
    if isinstance(stmt, ast.Assign):
        return [t for t in stmt.targets if isinstance(t, ast.Name)]
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return [stmt.target]
    return []


def _constant(name: str) -> bool:
    letters = name.lstrip("_")
    return bool(letters) and letters.upper() == letters and any(c.isalpha() for c in letters)


def _decorated(node: ast.FunctionDef | ast.AsyncFunctionDef, names: set[str]) -> bool:
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(target, ast.Name) and target.id in names:
            return True
        if isinstance(target, ast.Attribute) and target.attr in names:
            return True
    return False


def _called_names(paths: list[Path]) -> set[str]:
    called: set[str] = set()
    for path in paths:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for n in ast.walk(tree):
            if isinstance(n, ast.Call):
                if isinstance(n.func, ast.Name):
                    called.add(n.func.id)
                elif isinstance(n.func, ast.Attribute):
                    called.add(n.func.attr)
    return called


def candidates(root: Path, package_dir: Path, tests_dir: Path) -> dict[str, list[Mutation]]:
    """Every candidate mutation of the package, by kind (paths relative to ``root``)."""
    sources = sorted(p for p in package_dir.rglob("*.py") if "__pycache__" not in p.parts)
    called = _called_names(sources + sorted(tests_dir.rglob("*.py")))
    found: dict[str, list[Mutation]] = defaultdict(list)
    for path in sources:
        text = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        rel = path.relative_to(root).as_posix()
        parts = path.relative_to(package_dir.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        finder = _Finder(rel, module, text, called)
        finder.visit(tree)
        for kind, items in finder.found.items():
            found[kind].extend(items)
    return found


def choose(found: dict[str, list[Mutation]], count: int, seed: int) -> list[Mutation]:
    """``count`` mutations spread evenly over the kinds and round-robin over modules.

    A kind with too few candidates leaves its share to the other kinds, in ``KINDS`` order.
    """
    rng = random.Random(seed)
    queues = {kind: _round_robin(found.get(kind, []), rng) for kind in KINDS}
    quota = {kind: count // len(KINDS) for kind in KINDS}
    for kind in KINDS[: count % len(KINDS)]:
        quota[kind] += 1
    taken = {kind: min(quota[kind], len(queues[kind])) for kind in KINDS}
    short = count - sum(taken.values())
    while short > 0 and any(taken[k] < len(queues[k]) for k in KINDS):
        for kind in KINDS:
            if short > 0 and taken[kind] < len(queues[kind]):
                taken[kind] += 1
                short -= 1
    return [m for kind in KINDS for m in queues[kind][: taken[kind]]]


def _round_robin(items: list[Mutation], rng: random.Random) -> list[Mutation]:
    by_file: dict[str, list[Mutation]] = defaultdict(list)
    for m in items:
        by_file[m.file].append(m)
    files = sorted(by_file)
    rng.shuffle(files)
    for name in files:
        rng.shuffle(by_file[name])
    order: list[Mutation] = []
    while any(by_file.values()):
        for name in files:
            if by_file[name]:
                order.append(by_file[name].pop())
    return order
