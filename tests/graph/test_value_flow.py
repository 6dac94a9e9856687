"""Calls that follow values: implicit special-method calls, functions held, passed, returned and
decorated, subclass dispatch, and calls into installed packages — each program's exact edges."""

from __future__ import annotations

import textwrap

from impact_ls.graph.builder import GraphBuilder
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import EdgeKind

CALL, NEW = EdgeKind.CALL, EdgeKind.INSTANTIATE


def _graph(**files: str) -> CodeGraph:
    builder = GraphBuilder()
    for name, text in files.items():
        builder.update(f"{name}.py", textwrap.dedent(text))
    return builder.graph


def _calls(graph: CodeGraph, source: str) -> set[tuple[str, EdgeKind, int]]:
    """The call and instantiate edges out of ``source``: (target, kind, line)."""
    return {(e.target, e.kind, e.span.line) for e in graph.dependencies(source, kinds=(CALL, NEW))}


def test_operators_subscripts_comparisons_and_calls_of_instances():
    graph = _graph(
        m="""\
        class V:
            def __add__(self, other): ...
            def __radd__(self, other): ...
            def __getitem__(self, i): ...
            def __setitem__(self, i, v): ...
            def __eq__(self, other): ...
            def __call__(self, x): ...

        def use(a: V, b: V):
            c = a + b
            a[0] = a[1]
            if a == b:
                a(1)
            return 1 + a
        """
    )
    assert _calls(graph, "m.use") == {
        ("m.V.__add__", CALL, 10),
        ("m.V.__radd__", CALL, 10),
        ("m.V.__getitem__", CALL, 11),
        ("m.V.__setitem__", CALL, 11),
        ("m.V.__eq__", CALL, 12),
        ("m.V.__call__", CALL, 13),
        ("m.V.__radd__", CALL, 14),  # 1 + a: the int does not know V
    }


def test_with_for_fstrings_and_builtins_call_their_special_methods():
    graph = _graph(
        m="""\
        class Box:
            def __enter__(self): ...
            def __exit__(self, *exc): ...
            def __iter__(self):
                return self
            def __next__(self): ...
            def __len__(self): ...
            def __repr__(self): ...

        def use(box: Box):
            with box:
                for item in box:
                    print(f"{box}", len(box))
        """
    )
    assert _calls(graph, "m.use") == {
        ("m.Box.__enter__", CALL, 11),
        ("m.Box.__exit__", CALL, 11),
        ("m.Box.__iter__", CALL, 12),
        ("m.Box.__next__", CALL, 12),  # __iter__ returns self, a Box
        ("m.Box.__repr__", CALL, 13),  # f"{box}": no __format__ or __str__, so __repr__
        ("m.Box.__len__", CALL, 13),
    }


def test_special_methods_of_unknown_receivers_are_not_guessed_by_name():
    graph = _graph(
        m="""\
        class V:
            def __getitem__(self, i): ...

        def use(x, rows):
            return x[0] + rows[1]
        """
    )
    assert _calls(graph, "m.use") == set()


def test_construction_calls_new_init_and_post_init_and_raise_constructs():
    graph = _graph(
        m="""\
        from dataclasses import dataclass

        @dataclass
        class Point:
            x: int
            def __post_init__(self): ...

        class Token:
            def __new__(cls, text): ...
            def __init__(self, text): ...

        class Oops(Exception):
            pass

        def make():
            Point(1)
            Token("t")
            raise Oops
        """
    )
    assert _calls(graph, "m.make") == {
        ("m.Point", NEW, 16),
        ("m.Point.__post_init__", CALL, 16),
        ("m.Token", NEW, 17),
        ("m.Token.__new__", CALL, 17),
        ("m.Token.__init__", CALL, 17),
        ("m.Oops", NEW, 18),
    }


def test_nested_functions_returned_functions_and_callbacks():
    graph = _graph(
        m="""\
        def outer():
            def helper():
                return 1
            return helper() + helper()

        def make():
            def inner():
                pass
            return inner

        def run(cb, *, done=None):
            cb()
            done()

        def finish():
            pass

        def use():
            make()()
            g = make()
            g()
            run(outer, done=finish)
        """
    )
    assert _calls(graph, "m.outer") == {("m.outer.helper", CALL, 4)}
    assert _calls(graph, "m.use") == {
        ("m.make", CALL, 19),
        ("m.make.inner", CALL, 19),  # make()(): what make returns
        ("m.make", CALL, 20),
        ("m.make.inner", CALL, 21),
        ("m.run", CALL, 22),
    }
    # the parameters hold what this file's callers pass: the calls happen inside run
    assert _calls(graph, "m.run") == {("m.outer", CALL, 12), ("m.finish", CALL, 13)}


def test_a_decorated_name_calls_the_wrapper_which_calls_the_original():
    graph = _graph(
        m="""\
        import functools

        def logged(func):
            @functools.wraps(func)
            def wrapper(*args, **kwargs):
                return func(*args, **kwargs)
            return wrapper

        def retry(times):
            def decorate(func):
                def again(*args):
                    return func(*args)
                return again
            return decorate

        @logged
        def save(x):
            pass

        @retry(3)
        def load():
            pass

        def use():
            save(1)
            load()
        """
    )
    assert _calls(graph, "m") == {
        ("m.logged", CALL, 16),  # applying the decorator calls it
        ("m.retry", CALL, 20),
        ("m.retry.decorate", CALL, 20),  # and the factory's decorator
    }
    assert _calls(graph, "m.use") == {
        ("m.logged.wrapper", CALL, 25),
        ("m.retry.decorate.again", CALL, 26),
    }
    assert ("m.save", CALL, 6) in _calls(graph, "m.logged.wrapper")
    assert ("m.load", CALL, 12) in _calls(graph, "m.retry.decorate.again")
    assert ("functools.wraps", CALL, 4) in _calls(graph, "m.logged")


def test_functions_handed_to_builtins_and_libraries_are_called_from_the_hand_over():
    graph = _graph(
        m="""\
        import functools
        import threading

        def key(x):
            return x

        def work():
            pass

        def use(items):
            sorted(items, key=key)
            list(map(key, items))
            functools.partial(work)
            threading.Thread(target=work)
            isinstance(items, list)
        """
    )
    assert _calls(graph, "m.use") == {
        ("m.key", CALL, 11),
        ("m.key", CALL, 12),
        ("m.work", CALL, 13),
        ("functools.partial", CALL, 13),
        ("m.work", CALL, 14),
        ("threading.Thread", CALL, 14),
    }


def test_equal_callees_handing_over_different_functions_call_each_one():
    # one scope, one callee, two functions handed over: each site calls its own
    graph = _graph(
        m="""\
        def first(x):
            return x

        def second(x):
            return x

        def use(items):
            sorted(items, key=first)
            sorted(items, key=second)
        """
    )
    assert _calls(graph, "m.use") == {("m.first", CALL, 8), ("m.second", CALL, 9)}


def test_a_repeated_callee_gets_its_own_source_span_and_arguments_in_every_scope():
    # equal callees in other scopes (module-level heads, methods of one class) reuse one
    # resolution; each edge still names its own caller, line and argument shape
    graph = _graph(
        m="""\
        def helper(a, b=0):
            return a

        class Box:
            def load(self):
                pass

            def one(self):
                helper(1)
                self.load()

            def two(self):
                helper(1, b=2)
                self.load()

        def alone():
            helper(3)
        """
    )
    assert _calls(graph, "m.Box.one") == {("m.helper", CALL, 9), ("m.Box.load", CALL, 10)}
    assert _calls(graph, "m.Box.two") == {("m.helper", CALL, 13), ("m.Box.load", CALL, 14)}
    assert _calls(graph, "m.alone") == {("m.helper", CALL, 17)}
    shapes = {
        e.source: (e.args.positional, e.args.keywords)
        for e in graph.dependents("m.helper", kinds=(CALL,))
        if e.args is not None
    }
    assert shapes == {"m.Box.one": (1, ()), "m.Box.two": (1, ("b",)), "m.alone": (1, ())}


def test_self_and_super_calls_dispatch_through_every_subclass_mro():
    graph = _graph(
        m="""\
        class Base:
            def dump(self):
                return self.load()
            def handle(self):
                pass

        class JsonMixin:
            def load(self):
                pass
            def handle(self):
                return super().handle()

        class Doc(JsonMixin, Base):
            pass
        """
    )
    # Base has no load: only the mixin's, for the Doc that combines them
    assert _calls(graph, "m.Base.dump") == {("m.JsonMixin.load", CALL, 3)}
    # the next handle after JsonMixin in Doc's MRO is Base.handle
    assert _calls(graph, "m.JsonMixin.handle") == {("m.Base.handle", CALL, 11)}


def test_calls_into_installed_packages_end_at_their_dotted_names():
    graph = _graph(
        m="""\
        import os.path
        import json as j
        from collections import Counter
        from http.server import BaseHTTPRequestHandler

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)

        def use(path: "os.PathLike"):
            os.path.join("a", "b")
            j.dumps({})
            c = Counter()
            c.most_common()
            len(path)
        """
    )
    assert _calls(graph, "m.use") == {
        ("os.path.join", CALL, 11),
        ("json.dumps", CALL, 12),
        ("collections.Counter", CALL, 13),
        ("collections.Counter.most_common", CALL, 14),
    }
    assert _calls(graph, "m.Handler.do_GET") == {
        ("http.server.BaseHTTPRequestHandler.send_response", CALL, 8)
    }
    assert graph.node("json.dumps") is None  # an end point, not a node of the project


def test_functions_held_in_variables_tuples_containers_and_loops():
    graph = _graph(
        m="""\
        def save():
            pass

        def load():
            pass

        HANDLERS = {"save": save}

        def use(kind):
            a, b = save, load
            a()
            b()
            HANDLERS[kind]()
            steps = [save]
            steps.append(load)
            for step in steps:
                step()
        """
    )
    assert _calls(graph, "m.use") == {
        ("m.save", CALL, 11),
        ("m.load", CALL, 12),
        ("m.save", CALL, 13),
        ("m.save", CALL, 17),
        ("m.load", CALL, 17),
    }


def _nodes(graph: CodeGraph, prefix: str) -> set[str]:
    return {n.id for n in graph.nodes() if n.id.startswith(prefix)}


def test_lambdas_are_functions_of_their_own_named_by_their_scope():
    graph = _graph(
        m="""\
        def work(x):
            return x

        square = lambda x: work(x)

        def run(cb):
            return cb(1)

        def use(items):
            cube = lambda x: square(x)
            cube(2)
            run(lambda y: work(y))
            both = (lambda: 1, lambda: 2)
            return sorted(items, key=lambda i: work(i))

        def lookup(key, fallback=lambda k: work(k)):
            return fallback(key)

        AREAS = {"a": lambda: work(1)}

        def area(kind):
            return AREAS[kind]()
        """
    )
    # one lambda in its scope is <lambda>; several are numbered by line, then by column
    assert _nodes(graph, "m.") >= {
        "m.<lambda:4>",
        "m.<lambda:16>",
        "m.<lambda:19>",
        "m.use.<lambda:10>",
        "m.use.<lambda:12>",
        "m.use.<lambda:13:12>",
        "m.use.<lambda:13:23>",
        "m.use.<lambda:14>",
    }
    assert _calls(graph, "m.<lambda:4>") == {("m.work", CALL, 4)}
    assert _calls(graph, "m.use.<lambda:10>") == {("m.<lambda:4>", CALL, 10)}
    assert _calls(graph, "m.use") == {
        ("m.use.<lambda:10>", CALL, 11),  # calling the local that holds it
        ("m.run", CALL, 12),
        ("m.use.<lambda:14>", CALL, 14),  # handed to sorted: called from here
    }
    assert _calls(graph, "m.run") == {("m.use.<lambda:12>", CALL, 7)}  # cb is the lambda
    assert _calls(graph, "m.use.<lambda:12>") == {("m.work", CALL, 12)}
    assert _calls(graph, "m.lookup") == {("m.<lambda:16>", CALL, 17)}  # the default
    assert _calls(graph, "m.area") == {("m.<lambda:19>", CALL, 22)}
    assert _calls(graph, "m") == set()  # the lambdas' calls are theirs, not the module's


def test_lambda_names_survive_nesting_and_methods():
    graph = _graph(
        m="""\
        class Button:
            def __init__(self):
                self.on_click = lambda: self.clicked()
                self.twice = lambda: (lambda: self.clicked())()

            def clicked(self):
                pass

        def press():
            b = Button()
            b.on_click()
        """
    )
    assert _calls(graph, "m.Button.__init__.<lambda:3>") == {("m.Button.clicked", CALL, 3)}
    assert _calls(graph, "m.Button.__init__.<lambda:4>") == {
        ("m.Button.__init__.<lambda:4>.<lambda>", CALL, 4)
    }
    assert _calls(graph, "m.Button.__init__.<lambda:4>.<lambda>") == {("m.Button.clicked", CALL, 4)}
    assert _calls(graph, "m.press") == {
        ("m.Button", NEW, 10),
        ("m.Button.__init__", CALL, 10),
        ("m.Button.__init__.<lambda:3>", CALL, 11),  # the field holds the lambda
    }


def test_class_attributes_and_fields_holding_functions_are_called_through():
    graph = _graph(
        m="""\
        def parse_int(t): ...
        def parse_float(t): ...
        def describe(self):
            return self.size()

        class User: ...
        class Group: ...

        class Field:
            parser = staticmethod(parse_int)
            model = None
            summary = describe

            def __init__(self, strict):
                self.handle = self.fail if strict else self.skip

            def fail(self): ...
            def skip(self): ...
            def size(self): ...

            def load(self, t):
                self.handle()
                self.model()
                return self.parser(t)

            @classmethod
            def make(cls):
                return cls(cls.parser(1))

        class FloatField(Field):
            parser = staticmethod(parse_float)
            model = User

        class GroupField(Field):
            model = Group

        def use(f: Field):
            f.summary()
        """
    )
    assert _calls(graph, "m.Field.load") == {
        ("m.Field.fail", CALL, 22),  # either bound method the field was given
        ("m.Field.skip", CALL, 22),
        ("m.User", NEW, 23),  # each subclass's class attribute
        ("m.Group", NEW, 23),
        ("m.parse_int", CALL, 24),
        ("m.parse_float", CALL, 24),
    }
    assert _calls(graph, "m.Field.make") == {
        ("m.Field", NEW, 28),  # cls() makes the class it is called on: any subclass
        ("m.Field.__init__", CALL, 28),
        ("m.FloatField", NEW, 28),
        ("m.GroupField", NEW, 28),
        ("m.parse_int", CALL, 28),
        ("m.parse_float", CALL, 28),
    }
    assert _calls(graph, "m.use") == {("m.describe", CALL, 38)}
    # ``self`` of a plain function is unknown, never the module's name ``m.self``
    assert {e.target for e in graph.dependencies("m.describe")} <= {"m.Field.size"}


def test_property_reads_writes_and_deletes_call_the_property():
    graph = _graph(
        m="""\
        import functools

        class Thermostat:
            def __init__(self, target):
                self.target = target

            @property
            def target(self):
                return self._target

            @target.setter
            def target(self, value):
                self._target = value

            @target.deleter
            def target(self):
                pass

            @functools.cached_property
            def words(self):
                return []

        def use(t: Thermostat, other):
            t.target = 2
            print(t.target, t.words)
            del t.target
            other.target = 3
            return Thermostat.target
        """
    )
    assert _calls(graph, "m.Thermostat.__init__") == {("m.Thermostat.target", CALL, 5)}
    assert _calls(graph, "m.use") == {
        ("m.Thermostat.target", CALL, 24),  # the setter
        ("m.Thermostat.target", CALL, 25),  # the getter
        ("m.Thermostat.words", CALL, 25),
        ("m.Thermostat.target", CALL, 26),  # the deleter
    }  # an unknown receiver and the class's own attribute (the property object) call nothing


def test_disagreeing_returns_and_parameter_defaults_give_each_value():
    graph = _graph(
        lib="""\
        def fast(d): ...
        def small(d): ...

        def choose(level):
            if level > 5:
                return small
            if level < 0:
                return None
            return fast

        def handler_for(kind):
            def text(p): ...
            def raw(p): ...
            return text if kind else raw

        def unknown(x):
            y = fast
            if x:
                return y
            return small
        """,
        m="""\
        from lib import choose, handler_for, unknown, fast

        class Console:
            def write(self, t): ...

        class Null:
            def write(self, t): ...

        def deploy(log=Console(), key=fast):
            log.write("x")
            key(1)

        def use():
            choose(1)(b"x")
            handler_for("t")("x")
            unknown(1)()
        """,
    )
    assert _calls(graph, "m.use") == {
        ("lib.choose", CALL, 14),
        ("lib.small", CALL, 14),  # across files; ``return None`` leaves no option
        ("lib.fast", CALL, 14),
        ("lib.handler_for", CALL, 15),
        ("lib.handler_for.text", CALL, 15),  # both arms of the if-else
        ("lib.handler_for.raw", CALL, 15),
        ("lib.unknown", CALL, 16),  # one return is a local: nothing is guessed for the call
    }
    assert _calls(graph, "m.deploy") == {
        ("m.Console.write", CALL, 10),  # the default's type, not every ``write``
        ("lib.fast", CALL, 11),
    }


def test_globals_filled_elsewhere_elements_and_operator_results_are_typed():
    graph = _graph(
        m="""\
        HOOKS = []
        TABLE = (print, len)

        def on_start(): ...
        def on_stop(): ...

        def register(fn):
            HOOKS.append(fn)

        def setup():
            register(on_start)
            register(on_stop)

        def fire(k):
            for hook in HOOKS:
                hook()
            HOOKS[k]()

        class Vector:
            def __add__(self, other):
                return Vector()
            def __neg__(self):
                return Vector()
            def norm(self): ...

        def use(a: Vector):
            b = a + a
            c = -b
            c.norm()
        """
    )
    assert _calls(graph, "m.fire") == {
        ("m.on_start", CALL, 16),  # what register, called here with them, appended
        ("m.on_stop", CALL, 16),
        ("m.on_start", CALL, 17),
        ("m.on_stop", CALL, 17),
    }
    assert _calls(graph, "m.use") == {
        ("m.Vector.__add__", CALL, 27),
        ("m.Vector.__neg__", CALL, 28),
        ("m.Vector.norm", CALL, 29),  # c is what __neg__ of what __add__ returned returns
    }


def test_descriptors_in_a_class_body_are_called_on_access_and_at_class_creation():
    graph = _graph(
        m="""\
        class Positive:
            def __set_name__(self, owner, name): ...
            def __get__(self, obj, kind=None): ...
            def __set__(self, obj, value): ...

        class Product:
            price = Positive()
            label = "x"

            def __init__(self, price):
                self.price = price
                self.label = "y"

        def use(p: Product):
            p.price = 4
            return p.price, Product.price
        """
    )
    assert _calls(graph, "m") >= {("m.Positive.__set_name__", CALL, 7)}  # at class creation
    assert _calls(graph, "m.Product.__init__") == {("m.Positive.__set__", CALL, 11)}
    assert _calls(graph, "m.use") == {
        ("m.Positive.__set__", CALL, 15),
        ("m.Positive.__get__", CALL, 16),  # through the instance; the class's read is left out
    }


def test_documented_library_returns_super_into_installed_bases_and_methods_only_guesses():
    graph = _graph(
        m="""\
        import argparse
        import logging
        import re
        from datetime import date
        from pathlib import Path

        log = logging.getLogger("app")
        VERSION = re.compile("x")

        class Cli(argparse.ArgumentParser):
            def __init__(self):
                super().__init__(prog="tool")

        def lower(s):
            return s.lower()

        class Text:
            def lower(self): ...

        def use(text, folder: Path):
            found = VERSION.search(text)
            found.group(1)
            log.warning("x")
            date(2024, 1, 1).isoformat()
            (folder / "a").exists()
            note = folder / "b"
            note.exists()
        """
    )
    assert _calls(graph, "m.Cli.__init__") == {("argparse.ArgumentParser.__init__", CALL, 12)}
    assert _calls(graph, "m.use") == {
        ("re.Pattern.search", CALL, 21),
        ("re.Match.group", CALL, 22),  # what re.Pattern.search is documented to return
        ("logging.Logger.warning", CALL, 23),
        ("datetime.date", CALL, 24),
        ("datetime.date.isoformat", CALL, 24),
        ("pathlib.Path.exists", CALL, 27),  # ``/`` of a Path is a Path
    }
    # ``s.lower()`` on an unknown receiver may be any method named lower, never the function
    assert {(e.target, e.name_matched) for e in graph.dependencies("m.lower")} == {
        ("m.Text.lower", True)
    }
