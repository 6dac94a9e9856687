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
