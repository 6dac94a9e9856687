"""Run one call-graph program and record the calls that really happen (for ``--validate``).

    python tests/benchmarks/callgraph_trace.py PROGRAM_DIR ENTRY GOLD_JSON

``ENTRY`` is ``main.py`` (run as ``__main__``) or ``pytest`` (``pytest.main`` on the folder).
Prints one JSON object: the project-internal edges observed, which callees are generators, and
which of the gold's external targets were seen called. Standalone on purpose: it imports nothing
of impact_ls, runs in a fresh interpreter per program, and names nodes by the suite's convention
(``tests/benchmarks/callgraph/README.md``), independently of the graph under test.

How a call is attributed: the caller is the nearest frame on the stack that runs program code
(builtins and library code in between are skipped), comprehensions and generator expressions
belong to the scope they are written in, a class body is the class. Constructions of program
classes are seen by wrapping each program class's ``__new__`` as the class statement creates it
(``builtins.__build_class__``), since calling a class whose ``__init__`` is not Python code shows
no profiler event. A generator's body runs when it is resumed, not when it is called, so its
observed caller is whoever resumes it; the bench checks generator callees more loosely.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import enum
import importlib
import inspect
import json
import os
import runpy
import sys
import types
from pathlib import Path

COMPREHENSIONS = {"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"}
GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_FUNCTION_FLAGS = inspect.CO_OPTIMIZED | inspect.CO_NEWLOCALS
_SELF = __file__


def module_name(rel: str) -> str:
    """``pkg/mod.py`` → ``pkg.mod``; ``pkg/__init__.py`` → ``pkg``."""
    parts = rel.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


class LambdaNames:
    """The suite's name of every lambda in a file: ``<scope>.<lambda>``, or ``<lambda:LINE>``."""

    def __init__(self, module: str, tree: ast.Module) -> None:
        # (line, column of the body) → dotted name
        self.by_body: dict[tuple[int, int], str] = {}
        self.by_line: dict[int, list[str]] = {}
        self._scope(module, tree.body)

    def _scope(self, qual: str, body: list[ast.AST] | ast.AST) -> None:
        found: list[ast.Lambda] = []
        nested: list[tuple[str, ast.AST]] = []
        stack = list(body) if isinstance(body, list) else [body]
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Lambda):
                found.append(node)
                stack.extend(node.args.defaults)
                stack.extend(d for d in node.args.kw_defaults if d is not None)
                continue
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                stack.extend(node.decorator_list)
                stack.extend(node.args.defaults)
                stack.extend(d for d in node.args.kw_defaults if d is not None)
                nested.append((f"{qual}.{node.name}", node.body))  # type: ignore[arg-type]
                continue
            if isinstance(node, ast.ClassDef):
                stack.extend(node.decorator_list)
                stack.extend(node.bases)
                stack.extend(k.value for k in node.keywords)
                nested.append((f"{qual}.{node.name}", node.body))  # type: ignore[arg-type]
                continue
            stack.extend(ast.iter_child_nodes(node))
        found.sort(key=lambda n: (n.lineno, n.col_offset))
        lines = [n.lineno for n in found]
        for node in found:
            if len(found) == 1:
                name = f"{qual}.<lambda>"
            elif lines.count(node.lineno) == 1:
                name = f"{qual}.<lambda:{node.lineno}>"
            else:
                name = f"{qual}.<lambda:{node.lineno}:{node.col_offset}>"
            self.by_body[(node.body.lineno, node.body.col_offset)] = name
            self.by_line.setdefault(node.lineno, []).append(name)
            nested.append((name, node.body))
        for name, inner in nested:
            self._scope(name, inner)

    def name_of(self, code: types.CodeType) -> str | None:
        for _, _, col, end_col in code.co_positions():
            if end_col:
                for (line, body_col), name in self.by_body.items():
                    if line >= code.co_firstlineno and body_col == col:
                        return name
                break
        names = self.by_line.get(code.co_firstlineno, [])
        return names[0] if len(names) == 1 else None


class Program:
    """Maps the program's code objects and frames to node ids."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.prefix = str(root) + os.sep
        self.modules: dict[str, str] = {}
        self.lambdas: dict[str, LambdaNames] = {}
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            mod = module_name(rel)
            self.modules[str(path)] = mod
            tree = ast.parse(path.read_text(encoding="utf-8"))
            self.lambdas[str(path)] = LambdaNames(mod, tree)
        self._cache: dict[types.CodeType, str | None] = {}

    def owns(self, code: types.CodeType) -> bool:
        return code.co_filename in self.modules

    def node_of(self, code: types.CodeType) -> str | None:
        """The node a code object's statements belong to (comprehensions → their scope)."""
        try:
            return self._cache[code]
        except KeyError:
            pass
        node = self._node_of(code)
        self._cache[code] = node
        return node

    def _node_of(self, code: types.CodeType) -> str | None:
        module = self.modules.get(code.co_filename)
        if module is None:
            return None
        if code.co_name == "<module>":
            return module
        parts = [p for p in code.co_qualname.split(".") if p != "<locals>"]
        while parts and parts[-1] in COMPREHENSIONS:
            parts.pop()
        if not parts:
            return module
        if parts[-1] == "<lambda>":
            return self.lambdas[code.co_filename].name_of(code)
        parts = [p for p in parts if p not in COMPREHENSIONS]
        if "<lambda>" in parts:
            return None
        return ".".join([module, *parts])

    def callee_of(self, code: types.CodeType) -> str | None:
        """The node called when ``code`` starts; None for modules, class bodies, comprehensions."""
        if code.co_name == "<module>" or code.co_name in COMPREHENSIONS:
            return None
        if not code.co_flags & _FUNCTION_FLAGS:
            return None  # a class body runs when the class statement does: not a call
        return self.node_of(code)

    def nearest(self, frame: types.FrameType | None) -> types.FrameType | None:
        while frame is not None and frame.f_code.co_filename not in self.modules:
            frame = frame.f_back
        return frame


class Recorder:
    """The profiler hook and the ``__new__`` wrappers, collecting what runs."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.edges: set[tuple[str, str, str]] = set()
        self.generators: set[str] = set()
        self.py_ext: set[tuple[str, types.CodeType]] = set()
        self.c_ext: list[tuple[str, object]] = []
        self._c_seen: set[tuple[str, int]] = set()

    def hook(self, frame: types.FrameType, event: str, arg: object) -> None:
        program = self.program
        if event == "call":
            code = frame.f_code
            if program.owns(code):
                callee = program.callee_of(code)
                if callee is None:
                    return
                caller_frame = program.nearest(frame.f_back)
                if caller_frame is None:
                    return
                caller = program.node_of(caller_frame.f_code)
                if caller is None:
                    return
                self.edges.add((caller, callee, "call"))
                if code.co_flags & GENERATOR_FLAGS:
                    self.generators.add(callee)
            elif code.co_filename != _SELF:
                back = frame.f_back
                if back is not None and program.owns(back.f_code):
                    caller = program.node_of(back.f_code)
                    if caller is not None:
                        self.py_ext.add((caller, code))
        elif event == "c_call" and program.owns(frame.f_code):
            caller = program.node_of(frame.f_code)
            if caller is not None and (caller, id(arg)) not in self._c_seen:
                self._c_seen.add((caller, id(arg)))
                self.c_ext.append((caller, arg))

    def instantiated(self, cls_node: str) -> None:
        caller_frame = self.program.nearest(sys._getframe(2))
        if caller_frame is not None:
            caller = self.program.node_of(caller_frame.f_code)
            if caller is not None:
                self.edges.add((caller, cls_node, "instantiate"))


def install_class_hook(recorder: Recorder) -> None:
    """Wrap ``__new__`` of every class a program ``class`` statement creates."""
    original = builtins.__build_class__
    program = recorder.program

    def build_class(func, name, *bases, **kwargs):  # type: ignore[no-untyped-def]
        cls = original(func, name, *bases, **kwargs)
        code = getattr(func, "__code__", None)
        if isinstance(cls, type) and code is not None and program.owns(code):
            node = program.node_of(code)
            # pytest refuses to collect a test class with a __new__; only pytest makes them.
            test_class = name.startswith("Test") and ".test_" in f".{node}"
            if node is not None and not isinstance(cls, enum.EnumMeta) and not test_class:
                _wrap_new(cls, node, recorder)
        return cls

    builtins.__build_class__ = build_class


def _wrap_new(cls: type, node: str, recorder: Recorder) -> None:
    own = cls.__dict__.get("__new__")
    own_fn = own.__func__ if isinstance(own, staticmethod) else own
    holder: list[staticmethod] = []

    def new(c, *args, **kwargs):  # type: ignore[no-untyped-def]
        mro = c.__mro__
        index = next((i for i, k in enumerate(mro) if k.__dict__.get("__new__") is holder[0]), None)
        if index == 0:
            recorder.instantiated(node)
        if own_fn is not None:
            return own_fn(c, *args, **kwargs)
        rest = mro[index + 1 :] if index is not None else mro[1:]
        for base in rest:
            found = base.__dict__.get("__new__")
            if found is not None:
                sup = found.__func__ if isinstance(found, staticmethod) else found
                break
        else:
            sup = object.__new__
        if sup is object.__new__:
            return sup(c)
        return sup(c, *args, **kwargs)

    wrapper = staticmethod(new)
    holder.append(wrapper)
    with contextlib.suppress(TypeError, AttributeError):
        cls.__new__ = wrapper  # type: ignore[method-assign]


def resolve(dotted: str) -> object | None:
    """The object a dotted external name denotes, importing its module; None if it has none."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        except Exception:
            return None
        for attr in parts[cut:]:
            try:
                obj = getattr(obj, attr)
            except AttributeError:
                return None
        return obj
    return None


def _codes_of(obj: object) -> set[types.CodeType]:
    """Python code objects whose running means ``obj`` was called (empty: not observable)."""
    codes: set[types.CodeType] = set()
    if isinstance(obj, type):
        for klass in obj.__mro__:
            if klass is object:
                continue
            for name in ("__new__", "__init__"):
                found = klass.__dict__.get(name)
                found = getattr(found, "__func__", found)
                code = getattr(found, "__code__", None)
                if isinstance(code, types.CodeType):
                    codes.add(code)
        return codes
    found = getattr(obj, "__func__", obj)
    code = getattr(found, "__code__", None)
    if isinstance(code, types.CodeType):
        codes.add(code)
    elif not callable(obj) or isinstance(obj, types.BuiltinFunctionType):
        pass
    else:
        call = inspect.getattr_static(type(obj), "__call__", None)
        code = getattr(call, "__code__", None)
        if isinstance(code, types.CodeType):
            codes.add(code)
    return codes


def _c_matches(arg: object, obj: object) -> bool:
    if arg is obj:
        return True
    name = getattr(obj, "__name__", None)
    objclass = getattr(obj, "__objclass__", None)
    owner = getattr(arg, "__self__", None)
    return (
        name is not None
        and getattr(arg, "__name__", None) == name
        and objclass is not None
        and isinstance(owner, objclass)
    )


def check_externals(recorder: Recorder, gold: dict[str, list[str]], project: set[str]):  # type: ignore[no-untyped-def]
    """Which expected external edges were seen, not seen, or cannot be seen by a profiler."""
    confirmed, missing, unverifiable = [], [], []
    matched_py: set[tuple[str, types.CodeType]] = set()
    matched_c: set[int] = set()
    for caller, callees in sorted(gold.items()):
        for callee in sorted(callees):
            if _is_project(callee, project):
                continue
            obj = resolve(callee)
            if obj is None:
                unverifiable.append([caller, callee, "does not resolve"])
                continue
            codes = _codes_of(obj)
            seen_py = {(c, code) for c, code in recorder.py_ext if c == caller and code in codes}
            seen_c = [
                i
                for i, (c, arg) in enumerate(recorder.c_ext)
                if c == caller and _c_matches(arg, obj)
            ]
            if seen_py or seen_c:
                confirmed.append([caller, callee])
                matched_py |= seen_py
                matched_c.update(seen_c)
            elif codes or isinstance(obj, types.BuiltinFunctionType | types.MethodDescriptorType):
                missing.append([caller, callee])
            else:
                unverifiable.append([caller, callee, "implemented in C"])
    extra = set()
    for caller, code in recorder.py_ext - matched_py:
        if code.co_name.startswith("__") and code.co_name not in ("__init__", "__new__"):
            continue
        module = _module_of_code(code)
        if module is None or _noise(module):
            continue
        extra.add((caller, f"{module}.{code.co_qualname}"))
    for i, (caller, arg) in enumerate(recorder.c_ext):
        if i in matched_c:
            continue
        module = getattr(arg, "__module__", None)
        owner = getattr(arg, "__self__", None)
        if module in (None, "builtins") or _noise(module):
            continue
        if owner is not None and not isinstance(owner, types.ModuleType):
            continue
        extra.add((caller, f"{module}.{getattr(arg, '__qualname__', '?')}"))
    return confirmed, missing, unverifiable, sorted(extra)


_MODULE_OF_FILE: dict[str, str | None] = {}


def _module_of_code(code: types.CodeType) -> str | None:
    if code.co_filename not in _MODULE_OF_FILE:
        found = None
        for name, module in list(sys.modules.items()):
            if getattr(module, "__file__", None) == code.co_filename:
                found = name
                break
        _MODULE_OF_FILE[code.co_filename] = found
    return _MODULE_OF_FILE[code.co_filename]


def _noise(module: str) -> bool:
    """Machinery every program runs through (imports, typing subscripts), never a gold edge."""
    return module.startswith(("importlib", "_frozen_importlib", "typing", "_pytest", "abc"))


def _is_project(name: str, project: set[str]) -> bool:
    return any(name == m or name.startswith(m + ".") for m in project)


def main(argv: list[str]) -> int:
    root = Path(argv[1]).resolve()
    entry = argv[2]
    gold = json.loads(Path(argv[3]).read_text(encoding="utf-8"))
    program = Program(root)
    recorder = Recorder(program)
    sys.dont_write_bytecode = True
    os.chdir(root)
    sys.path.insert(0, str(root))
    install_class_hook(recorder)
    error = None
    if entry == "pytest":
        import pytest

        # An empty ini of its own, so no enclosing project's pytest configuration applies.
        ini = root / "pytest.ini"
        ini.write_text("[pytest]\n", encoding="utf-8")
        args = [str(root), "-q", "-p", "no:cacheprovider", "--assert=plain", "-c", str(ini)]
        args += ["--rootdir", str(root)]
        sys.setprofile(recorder.hook)
        try:
            code = pytest.main(args)
        finally:
            sys.setprofile(None)
        if code != 0:
            error = f"pytest exited {int(code)}"
    else:
        sys.argv = [str(root / entry)]
        sys.setprofile(recorder.hook)
        try:
            runpy.run_path(str(root / entry), run_name="__main__")
        except SystemExit as exc:
            if exc.code not in (0, None):
                error = f"exit {exc.code}"
        except BaseException as exc:  # the program's own failure is the report
            error = f"{type(exc).__name__}: {exc}"
        finally:
            sys.setprofile(None)
    project = set(program.modules.values())
    confirmed, missing, unverifiable, extra = check_externals(recorder, gold, project)
    result = {
        "error": error,
        "edges": sorted(recorder.edges),
        "generators": sorted(recorder.generators),
        "externals": {
            "confirmed": confirmed,
            "not_observed": missing,
            "unverifiable": unverifiable,
            "observed_not_expected": extra,
        },
    }
    sys.__stdout__.write("\n@@TRACE@@" + json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
