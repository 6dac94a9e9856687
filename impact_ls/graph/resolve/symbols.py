"""What a module-level name is: modules by name, imports, re-exports and star imports followed.

``Symbols`` answers for one file's resolution and memoizes within it; every read of another
file goes through ``Project``, which records it. Following ``from .a import b`` ends at the
definition of ``b`` (through any chain of re-exports), at a module, at a dangling name under a
module of ours, or at an external (an installed package's name).
"""

from __future__ import annotations

from impact_ls.graph.facts import DefFact, ImportFact
from impact_ls.graph.kinds import NODE_CLASS
from impact_ls.graph.resolve.fileinfo import FileInfo, Project
from impact_ls.graph.resolve.values import EXTERNAL_VALUE, UNKNOWN_VALUE, Kind, Value, external

MAX_DEPTH = 24


class Symbols:
    """Module-level lookups seen from one file; ``Evaluator`` adds expressions and classes."""

    def __init__(self, info: FileInfo, project: Project) -> None:
        self.info = info
        self.project = project
        self._symbols: dict[tuple[str, str], Value] = {}
        self._module_infos: dict[str, FileInfo | None] = {}

    def assigned_type(
        self, info: FileInfo, scope: str, target: tuple[str, ...], line: int | None
    ) -> Value | None:
        """The type a typed assignment gives ``target`` (a module constant, here)."""
        raise NotImplementedError  # ``Evaluator`` evaluates the assigned expression

    def decorated_value(self, info: FileInfo, d: DefFact, val: Value) -> Value:
        """What the decorated definition ``d`` is bound to (``Evaluator`` follows decorators)."""
        return val

    def info_of(self, module: str) -> FileInfo | None:
        """The file defining ``module``, asked of the project once per module."""
        if module in self._module_infos:
            return self._module_infos[module]
        info = self._module_infos[module] = self.project.info_of_module(module)
        return info

    def module_exists(self, module: str) -> bool:
        """Whether ``module`` is a module or (namespace) package of the project."""
        return self.info_of(module) is not None or self.project.is_namespace(module)

    def module_value(self, module: str) -> Value:
        """A module by name: ours, a missing one of our packages (dangling), or a library's."""
        if self.module_exists(module):
            return Value(Kind.MODULE, module)
        if "." in module and self.module_exists(module.split(".", 1)[0]):
            parent, _, last = module.rpartition(".")
            return Value(Kind.DANGLING, parent, last)
        return external(module)

    @staticmethod
    def absolute(info: FileInfo, imp: ImportFact) -> str:
        """The absolute module an import names ('' when a relative import climbs out)."""
        if imp.level == 0:
            return imp.module
        parts = info.module.split(".") if info.module else []
        if not info.facts.is_package:
            parts = parts[:-1]
        climb = imp.level - 1
        if climb > len(parts):
            return ""
        base = parts[: len(parts) - climb] if climb else parts
        if imp.module:
            base = [*base, *imp.module.split(".")]
        return ".".join(base)

    def import_symbol(self, info: FileInfo, imp: ImportFact, depth: int) -> Value:
        """What the name bound by ``imp`` (in ``info``'s file) is."""
        module = self.absolute(info, imp)
        if not module:
            return EXTERNAL_VALUE
        if imp.name is None:
            return self.module_value(module if imp.asname else module.split(".", 1)[0])
        return self.symbol(module, imp.name, depth + 1)

    def symbol(self, module: str, name: str, depth: int) -> Value:
        """What ``module.name`` is, following imports and re-exports to the definition."""
        key = (module, name)
        cached = self._symbols.get(key)
        if cached is not None:
            return cached
        if depth > MAX_DEPTH:
            return UNKNOWN_VALUE
        self._symbols[key] = UNKNOWN_VALUE  # cycle guard
        val = self._symbol_uncached(module, name, depth)
        self._symbols[key] = val
        return val

    def _symbol_uncached(self, module: str, name: str, depth: int) -> Value:
        target = self.info_of(module)
        sub = f"{module}.{name}"
        if target is None:
            if self.project.is_namespace(module):
                if self.module_exists(sub):
                    return Value(Kind.MODULE, sub)
                return Value(Kind.DANGLING, module, name)
            if "." in module and self.module_exists(module.split(".", 1)[0]):
                return Value(Kind.DANGLING, module, name)  # a module of ours that is gone
            return external(f"{module}.{name}")
        d = target.top.get(name)
        if d is not None:
            kind = Kind.CLASS if d.kind is NODE_CLASS else Kind.FUNCTION
            return self.decorated_value(target, d, Value(kind, module, name))
        imp = target.top_imports.get(name)
        if imp is not None:
            val = self.import_symbol(target, imp, depth)
            if val.kind != Kind.UNKNOWN:
                return val
        if name in target.constants:
            return Value(Kind.FIELD, module, name, self.assigned_type(target, "", (name,), None))
        for star in target.stars:
            star_module = self.absolute(target, star)
            if not star_module:
                continue
            val = self.symbol(star_module, name, depth + 1)
            if val.kind not in (Kind.DANGLING, Kind.EXTERNAL, Kind.UNKNOWN):
                return val
        if self.module_exists(sub):
            return Value(Kind.MODULE, sub)
        return Value(Kind.DANGLING, module, name)
