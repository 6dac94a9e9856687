"""Hidden channels: string-keyed lookups, dynamic imports and module ``__getattr__``."""

from __future__ import annotations

from impact_ls.analysis.hidden import find_hidden_channels
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import (
    Change,
    ChangeType,
    DynamicKind,
    DynamicRef,
    Edge,
    EdgeKind,
    Node,
    NodeKind,
    QualName,
    Span,
    Unanalyzable,
)

Q = QualName


def _change(kind: ChangeType, entity: str, **kw) -> Change:
    return Change(change_type=kind, entity=Q(entity), file="pkg/auth.py", line_range=(5, 9), **kw)


def _ref(source: str, name: str, kind: DynamicKind, file: str, line: int) -> DynamicRef:
    return DynamicRef(source=Q(source), name=name, kind=kind, file=file, span=Span(line=line))


def _method(qual: str, file: str, line: int) -> Node:
    return Node(id=Q(qual), kind=NodeKind.METHOD, file=file, span=Span(line=line))


def _views_import(target: str) -> Edge:
    """``pkg/views.py`` importing ``target``: what ties its strings to the changed module."""
    return Edge(
        source=Q("pkg.views"),
        target=Q(target),
        kind=EdgeKind.IMPORT,
        file="pkg/views.py",
        span=Span(line=1),
    )


def _graph() -> CodeGraph:
    nodes = [
        Node(id=Q("pkg.auth"), kind=NodeKind.MODULE, file="pkg/auth.py", span=Span(line=1)),
        Node(id=Q("pkg.auth.Login"), kind=NodeKind.CLASS, file="pkg/auth.py", span=Span(line=3)),
    ]
    dynamic = [
        _ref("pkg.plugins.run", "login", DynamicKind.GETATTR, "pkg/plugins.py", 7),
        _ref("pkg.registry", "login", DynamicKind.STRING_LITERAL, "pkg/registry.py", 3),
        _ref("pkg.loader.load", "pkg.auth", DynamicKind.IMPORT_MODULE, "pkg/loader.py", 12),
        _ref("pkg", "__getattr__", DynamicKind.MODULE_GETATTR, "pkg/__init__.py", 20),
        _ref("other", "__getattr__", DynamicKind.MODULE_GETATTR, "other/__init__.py", 2),
        _ref("pkg.plugins.run", "logout", DynamicKind.GETATTR, "pkg/plugins.py", 9),
        _ref("pkg.plugins.make", "Login", DynamicKind.GETATTR, "pkg/plugins.py", 15),
    ]
    return CodeGraph.of(nodes, (), dynamic)


def test_signature_change_finds_every_channel_that_may_serve_its_name():
    hidden = find_hidden_channels(
        _change(ChangeType.METHOD_SIGNATURE, "pkg.auth.Login.login"), _graph()
    )
    seed = Q("pkg.auth.Login.login")
    assert hidden == (
        Unanalyzable(
            file="pkg/__init__.py",
            line=20,
            entity=Q("pkg"),
            name="__getattr__",
            reason="module-level __getattr__ may serve any name",
            seed=seed,
        ),
        Unanalyzable(
            file="pkg/loader.py",
            line=12,
            entity=Q("pkg.loader.load"),
            name="pkg.auth",
            reason="importlib.import_module('pkg.auth')",
            seed=seed,
        ),
        Unanalyzable(
            file="pkg/plugins.py",
            line=7,
            entity=Q("pkg.plugins.run"),
            name="login",
            reason="string-keyed getattr of 'login'",
            seed=seed,
        ),
        Unanalyzable(
            file="pkg/registry.py",
            line=3,
            entity=Q("pkg.registry"),
            name="login",
            reason="string literal 'login' names a definition",
            seed=seed,
            weak=True,  # a bare string: data more often than a name (see the next test)
        ),
    )


def test_constructor_change_looks_for_the_class_name():
    hidden = find_hidden_channels(
        _change(ChangeType.CONSTRUCTOR, "pkg.auth.Login.__init__"), _graph()
    )
    assert [(u.file, u.line, u.name) for u in hidden] == [
        ("pkg/__init__.py", 20, "__getattr__"),
        ("pkg/loader.py", 12, "pkg.auth"),
        ("pkg/plugins.py", 15, "Login"),
    ]


def test_changes_without_dependents_have_no_hidden_channels():
    graph = _graph()
    assert find_hidden_channels(_change(ChangeType.ADD, "pkg.auth.Login.login"), graph) == ()
    local = _change(ChangeType.METHOD_BODY, "pkg.auth.Login.login", escapes=False)
    assert find_hidden_channels(local, graph) == ()


def test_a_bare_string_is_weak_even_in_a_file_importing_the_module_a_lookup_is_not():
    nodes = [
        Node(id=Q("pkg.auth"), kind=NodeKind.MODULE, file="pkg/auth.py", span=Span(line=1)),
        Node(
            id=Q("pkg.auth.Login.get"), kind=NodeKind.METHOD, file="pkg/auth.py", span=Span(line=5)
        ),
        Node(id=Q("pkg.cache.get"), kind=NodeKind.FUNCTION, file="pkg/cache.py", span=Span(line=1)),
    ]
    dynamic = [
        _ref("pkg.http", "get", DynamicKind.STRING_LITERAL, "pkg/http.py", 3),
        _ref("pkg.views", "get", DynamicKind.STRING_LITERAL, "pkg/views.py", 8),
        _ref("pkg.plugins", "get", DynamicKind.GETATTR, "pkg/plugins.py", 2),
    ]
    graph = CodeGraph.of(nodes, [_views_import("pkg.auth.Login")], dynamic)
    hidden = find_hidden_channels(_change(ChangeType.METHOD_SIGNATURE, "pkg.auth.Login.get"), graph)
    # a bare "get" is weak, also in views.py, which imports pkg.auth (a dict key, an HTTP
    # method); a getattr of a name that is no dunder is an attribute lookup by that name,
    # never weak
    assert [(u.file, u.weak) for u in hidden] == [
        ("pkg/http.py", True),
        ("pkg/plugins.py", False),
        ("pkg/views.py", True),
    ]
    # so is a bare string of a name only the changed definition has: "login" names one
    unique = find_hidden_channels(
        _change(ChangeType.METHOD_SIGNATURE, "pkg.auth.Login.login"), _graph()
    )
    assert [(u.file, u.weak) for u in unique if u.reason.startswith("string")] == [
        ("pkg/plugins.py", False),
        ("pkg/registry.py", True),
    ]


def test_a_module_getattr_that_serves_fixed_names_hides_only_those():
    nodes = [Node(id=Q("pkg.auth"), kind=NodeKind.MODULE, file="pkg/auth.py", span=Span(line=1))]
    # pkg/__init__.py keeps a deprecation shim for two names; an open forwarder in pkg/auth.py
    dynamic = [
        _ref("pkg", "OldLogin", DynamicKind.MODULE_GETATTR, "pkg/__init__.py", 20),
        _ref("pkg", "auth", DynamicKind.MODULE_GETATTR, "pkg/__init__.py", 20),
        _ref("pkg.auth", "__getattr__", DynamicKind.MODULE_GETATTR, "pkg/auth.py", 40),
    ]
    graph = CodeGraph.of(nodes, (), dynamic)

    def found(kind: ChangeType, entity: str) -> list[tuple[str, str, str]]:
        return [
            (u.file, u.name, u.reason) for u in find_hidden_channels(_change(kind, entity), graph)
        ]

    forwarder = ("pkg/auth.py", "__getattr__", "module-level __getattr__ may serve any name")
    # the shim serves "auth" (a name on the way to pkg.auth.Login.login), so it may hand out
    # the changed function's module
    assert found(ChangeType.METHOD_SIGNATURE, "pkg.auth.Login.login") == [
        ("pkg/__init__.py", "auth", "module-level __getattr__ serves 'auth'"),
        forwarder,
    ]
    assert found(ChangeType.CONSTRUCTOR, "pkg.util.OldLogin.__init__") == [
        ("pkg/__init__.py", "OldLogin", "module-level __getattr__ serves 'OldLogin'")
    ]
    # neither served name is on the way to pkg.util.parse: no channel
    assert found(ChangeType.METHOD_SIGNATURE, "pkg.util.parse") == []


def test_a_lookup_of_a_shared_dunder_by_string_is_weak():
    nodes = [
        Node(id=Q("pkg.auth"), kind=NodeKind.MODULE, file="pkg/auth.py", span=Span(line=1)),
        _method("pkg.auth.Login.__call__", "pkg/auth.py", 5),
        _method("pkg.cache.Cache.__call__", "pkg/cache.py", 2),
    ]
    dynamic = [
        _ref("pkg.source.probe", "__call__", DynamicKind.GETATTR, "pkg/source.py", 3),
        _ref("pkg.views.call", "__call__", DynamicKind.GETATTR, "pkg/views.py", 8),
    ]
    graph = CodeGraph.of(nodes, [_views_import("pkg.auth")], dynamic)
    change = _change(ChangeType.METHOD_SIGNATURE, "pkg.auth.Login.__call__")
    # ``getattr(obj, "__call__")`` probes a protocol every class may implement, wherever it is
    assert [(u.file, u.weak) for u in find_hidden_channels(change, graph)] == [
        ("pkg/source.py", True),
        ("pkg/views.py", True),
    ]


def test_an_import_change_is_served_by_strings_of_the_removed_names_not_of_its_module():
    graph = CodeGraph.of(
        [Node(id=Q("pkg.auth"), kind=NodeKind.MODULE, file="pkg/auth.py", span=Span(line=1))],
        (),
        [
            _ref("pkg.plugins.run", "login", DynamicKind.GETATTR, "pkg/plugins.py", 7),
            # the module's own name: a host name, a plugin's label — the change left it as it was
            _ref("tests.test_views", "auth", DynamicKind.STRING_LITERAL, "tests/test_views.py", 4),
            _ref("pkg.loader.load", "pkg.auth", DynamicKind.IMPORT_MODULE, "pkg/loader.py", 12),
        ],
    )
    change = _change(ChangeType.IMPORT, "pkg.auth", removed_names=("login",))
    assert [(u.file, u.line, u.name) for u in find_hidden_channels(change, graph)] == [
        ("pkg/loader.py", 12, "pkg.auth"),
        ("pkg/plugins.py", 7, "login"),
    ]
