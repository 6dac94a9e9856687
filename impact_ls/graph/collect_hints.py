"""The few facts pytest's collection needs that the code graph does not record, read from text.

The graph knows definitions, imports and bases, but not (1) the values of ``__test__``
assignments (``__test__ = False`` in a class or module body, ``test_f.__test__ = False`` after a
definition), (2) the name a ``from m import x as y`` binds (pytest collects ``y``), (3) which
imports are ``from m import *`` (they bind every public name of ``m``), (4) a module's
``__all__`` (which a star import obeys) and (5) which definitions sit in a branch of a
``sys.platform``/``os.name``/``platform.system()`` test that is not taken on this platform (a
Windows-only test does not exist on Linux; naming it makes pytest stop with "not found").
``scan_hints(text, platform=...)`` extracts exactly these from one file without executing
anything; ``graph/collection.py`` reads them.

Cheap on purpose: a few anchored line patterns, each run only when a substring check says it
can match; the file is never parsed, and the caller caches the result by content digest.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

_TEST_ASSIGN = re.compile(
    r"^(?P<indent>[ \t]*)(?:(?P<owner>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\.)?__test__[ \t]*"
    r"(?::[^=\n]*)?=(?!=)[ \t]*(?P<value>[^\n#;]*)",
    re.M,
)
_BLOCK = re.compile(
    r"^(?P<indent>[ \t]*)(?:async[ \t]+)?(?P<kind>def|class)[ \t]+(?P<name>\w+)", re.M
)
_FROM = re.compile(r"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]*(?P<names>\([^)]*\)|[^\n]*)", re.M)
_STAR = re.compile(r"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]+\*", re.M)
_ALL = re.compile(r"^__all__[ \t]*(?::[^=\n]*)?=[ \t]*(?P<value>[\[(][^\])]*[\])])", re.M)
_ALIAS = re.compile(r"^(?P<name>\w+)(?:\s+as\s+(?P<bound>\w+))?$")
_BRANCH = re.compile(
    r"^(?P<indent>[ \t]*)(?:"
    r"(?P<kw>if|elif)[ \t]+(?P<cond>.*?):[ \t]*(?:#.*)?$"
    r"|(?P<else>else)[ \t]*:"
    r"|(?:async[ \t]+)?(?P<kind>def|class)[ \t]+(?P<name>\w+))",
    re.M,
)
_PLATFORM_WORDS = ("sys.platform", "os.name", "platform.system")


@dataclass(frozen=True, slots=True, kw_only=True)
class FileHints:
    """What one file says about collection beyond the graph.

    ``test_flags``: (module-relative scope, value) per literal ``__test__`` assignment in the
    module body or a class body, or ``X.__test__ = v`` there (scope ``X``); the value is True
    for ``True``, False for a falsy constant and None for anything else (not a literal ``True``,
    so not enough to collect a class by, but not known falsy either). The last assignment wins.
    ``imports``: (imported name, bound name) of every from-import, when the file has an aliased
    one (else empty: every import binds its own name); the model reads them only for the
    module-level import edges of the graph. ``star_lines``: lines of
    module-level ``from m import *``. ``all_names``: a literal module-level ``__all__``.
    ``absent``: module-relative names of classes and functions defined only in branches that
    a platform test rules out here (``if sys.platform == "win32":`` on Linux).
    """

    test_flags: tuple[tuple[str, bool | None], ...] = ()
    imports: tuple[tuple[str, str], ...] = ()
    star_lines: tuple[int, ...] = ()
    all_names: tuple[str, ...] | None = None
    absent: frozenset[str] = frozenset()

    def flag(self, scope: str) -> bool | None:
        """The last ``__test__`` value assigned in ``scope`` (None: none, or not a literal)."""
        found: bool | None = None
        for name, value in self.test_flags:
            if name == scope:
                found = value
        return found

    def has_flag(self, scope: str) -> bool:
        """Whether ``scope`` assigns ``__test__`` at all."""
        return any(name == scope for name, _ in self.test_flags)

    def bound_names(self, name: str) -> tuple[str, ...]:
        """The names a module-level from-import of ``name`` binds here (``name`` by default)."""
        bound = tuple(b for n, b in self.imports if n == name)
        return bound or (name,)


EMPTY_HINTS = FileHints()


def scan_hints(text: str, *, platform: str) -> FileHints:
    """The collection facts of one file's text (line patterns only; no parse of the file).

    ``platform`` is ``sys.platform`` of the interpreter that runs the tests. Scopes come from
    indentation: a ``__test__`` line belongs to the classes whose ``class`` lines enclose it,
    and is ignored inside a ``def``. Text inside a multi-line string that looks like code may
    be misread; that costs at most a hint about a name the graph lacks.
    """
    flags = _test_flags(text) if "__test__" in text else ()
    imports: tuple[tuple[str, str], ...] = ()
    if " as " in text and "from" in text:
        pairs = [p for m in _FROM.finditer(text) for p in _import_pairs(m.group("names"))]
        if any(name != bound for name, bound in pairs):
            imports = tuple(pairs)
    stars: tuple[int, ...] = ()
    if "*" in text and "import" in text:
        stars = tuple(text.count("\n", 0, m.start()) + 1 for m in _STAR.finditer(text))
    all_names = _all_names(text) if "__all__" in text else None
    absent = _absent(text, platform) if any(w in text for w in _PLATFORM_WORDS) else frozenset()
    if not (flags or imports or stars or absent or all_names is not None):
        return EMPTY_HINTS
    return FileHints(
        test_flags=flags, imports=imports, star_lines=stars, all_names=all_names, absent=absent
    )


def _test_flags(text: str) -> tuple[tuple[str, bool | None], ...]:
    events = sorted(
        [(m.start(), "block", m) for m in _BLOCK.finditer(text)]
        + [(m.start(), "flag", m) for m in _TEST_ASSIGN.finditer(text)],
        key=lambda e: e[0],
    )
    stack: list[tuple[int, str, str]] = []  # (indent width, "def" | "class", name)
    flags: list[tuple[str, bool | None]] = []
    for _, event, match in events:
        width = len(match.group("indent").expandtabs())
        while stack and stack[-1][0] >= width:
            stack.pop()
        if event == "block":
            stack.append((width, match.group("kind"), match.group("name")))
            continue
        if any(kind == "def" for _, kind, _ in stack):
            continue  # a function's local: never seen by collection
        scope = ".".join(name for _, _, name in stack)
        owner = match.group("owner")
        if owner:
            scope = f"{scope}.{owner}" if scope else owner
        flags.append((scope, _flag(match.group("value"))))
    return tuple(flags)


def _flag(value: str) -> bool | None:
    try:
        literal = ast.literal_eval(value.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if literal is True:
        return True
    return False if not literal else None


def _import_pairs(names: str) -> list[tuple[str, str]]:
    text = " ".join(line.split("#", 1)[0] for line in names.splitlines())
    pairs = []
    for part in text.strip().strip("()").replace("\\", " ").split(","):
        found = _ALIAS.match(part.strip())
        if found is not None:
            pairs.append((found.group("name"), found.group("bound") or found.group("name")))
    return pairs


def _all_names(text: str) -> tuple[str, ...] | None:
    found = _ALL.search(text)
    if found is None:
        return None
    try:
        value = ast.literal_eval(found.group("value"))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _absent(text: str, platform: str) -> frozenset[str]:
    """Names defined only under platform branches not taken on ``platform``."""
    # frames: (indent width, "def" | "class" | "branch", name, taken, earlier results of the chain)
    stack: list[tuple[int, str, str, bool | None, tuple[bool | None, ...]]] = []
    kept: set[str] = set()
    dropped: set[str] = set()
    for match in _BRANCH.finditer(text):
        width = len(match.group("indent").expandtabs())
        keyword = match.group("kw") or match.group("else")
        if keyword in ("elif", "else"):
            while stack and stack[-1][0] > width:
                stack.pop()
            if not stack or stack[-1][:2] != (width, "branch"):
                continue  # the else of a loop or a try: not a platform branch
            earlier = (*stack[-1][4], stack[-1][3])
            cond = _platform_test(match.group("cond"), platform) if keyword == "elif" else True
            stack[-1] = (width, "branch", "", _chain(earlier, cond), earlier)
            continue
        while stack and stack[-1][0] >= width:
            stack.pop()
        if keyword == "if":
            stack.append((width, "branch", "", _platform_test(match.group("cond"), platform), ()))
            continue
        if any(frame[1] == "def" for frame in stack):
            continue  # a local definition: never collected
        scope = ".".join([*(f[2] for f in stack if f[1] == "class"), match.group("name")])
        ruled_out = any(f[1] == "branch" and f[3] is False for f in stack)
        (dropped if ruled_out else kept).add(scope)
        stack.append((width, match.group("kind"), match.group("name"), None, ()))
    return frozenset(dropped - kept)


def _chain(earlier: tuple[bool | None, ...], cond: bool | None) -> bool | None:
    """Whether an ``elif``/``else`` runs after ``earlier`` conditions (None: unknown)."""
    if any(e is True for e in earlier):
        return False
    if cond is False:
        return False
    if any(e is None for e in earlier):
        return None
    return cond


def _platform_test(source: str | None, platform: str) -> bool | None:
    """The value of a condition on ``sys.platform``/``os.name``/``platform.system()``, or None."""
    if not source or not any(w in source for w in _PLATFORM_WORDS):
        return None
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return None
    return _evaluate(tree.body, platform)


def _evaluate(node: ast.expr, platform: str) -> bool | None:
    if isinstance(node, ast.BoolOp):
        values = [_evaluate(v, platform) for v in node.values]
        # one False decides an ``and``, one True an ``or``; else an unknown leaves it unknown
        decisive = isinstance(node.op, ast.Or)
        if any(v is decisive for v in values):
            return decisive
        return None if any(v is None for v in values) else not decisive
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _evaluate(node.operand, platform)
        return None if inner is None else not inner
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "startswith" and len(node.args) == 1 and not node.keywords:
            subject = _value_of(node.func.value, platform)
            prefix = _literal(node.args[0])
            if subject is not None and isinstance(prefix, (str, tuple)):
                return subject.startswith(prefix)
        return None
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        subject = _value_of(node.left, platform)
        other = _literal(node.comparators[0])
        if subject is None or other is None:
            return None
        op = node.ops[0]
        if isinstance(op, (ast.Eq, ast.NotEq)):
            return (subject == other) is isinstance(op, ast.Eq)
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(other, (tuple, list, set)):
            return (subject in other) is isinstance(op, ast.In)
    return None


def _value_of(node: ast.expr, platform: str) -> str | None:
    """``sys.platform``, ``os.name`` or ``platform.system()`` on ``platform``, else None."""
    text = ast.unparse(node)
    if text == "sys.platform":
        return platform
    if text == "os.name":
        return "nt" if platform.startswith("win") else "posix"
    if text == "platform.system()":
        systems = {"win32": "Windows", "cygwin": "Windows", "darwin": "Darwin"}
        return systems.get(platform, platform.split("-", 1)[0].rstrip("0123456789").title())
    return None


def _literal(node: ast.expr) -> object:
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if isinstance(value, list):
        return tuple(value)
    return value
