"""Hard gate and lexical soft rank with the §3.6 weights."""

from __future__ import annotations

from impact_ls.analysis.rank import Ranked, rank_members
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import (
    Change,
    ChangeType,
    Edge,
    EdgeKind,
    Member,
    Node,
    NodeKind,
    QualName,
    Relation,
    Site,
    Span,
)

Q = QualName


def _node(qid: str, kind: NodeKind, file: str, sig: str = "", strings=()) -> Node:
    return Node(id=Q(qid), kind=kind, file=file, span=Span(line=3), signature=sig, strings=strings)


def _import(source: str, target: str, file: str) -> Edge:
    return Edge(
        source=Q(source), target=Q(target), kind=EdgeKind.IMPORT, file=file, span=Span(line=1)
    )


def _graph() -> CodeGraph:
    nodes = [
        _node("pkg.auth", NodeKind.MODULE, "pkg/auth.py"),
        _node(
            "pkg.auth.login",
            NodeKind.FUNCTION,
            "pkg/auth.py",
            "def login(user):",
            ("user id", "token"),
        ),
        _node("pkg.db", NodeKind.MODULE, "pkg/db.py"),
        _node("pkg.db.query", NodeKind.FUNCTION, "pkg/db.py", "def query(sql):"),
        _node(
            "pkg.api.login_page",
            NodeKind.FUNCTION,
            "pkg/api.py",
            "def login_page(request):",
            ("token",),
        ),
        _node(
            "pkg.web.LoginService.getHTTPResponse",
            NodeKind.METHOD,
            "pkg/web.py",
            "def getHTTPResponse(self, user):",
        ),
        _node("other.util.tick", NodeKind.FUNCTION, "other/util.py", "def tick():"),
    ]
    edges = [
        _import("pkg.auth", "pkg.db", "pkg/auth.py"),
        _import("pkg.auth", "os", "pkg/auth.py"),
        _import("pkg.api", "pkg.db.query", "pkg/api.py"),
        _import("pkg.api", "os", "pkg/api.py"),
    ]
    return CodeGraph.of(nodes, edges)


def _member(entity: str, file: str, distance: int = 1, *, hard: bool = True) -> Member:
    return Member(
        entity=Q(entity),
        file=file,
        line=4,
        distance=distance,
        relations=(Relation.CALLED_BY,) if hard else (),
        via=Q("pkg.auth.login"),
        sites=(Site(file=file, span=Span(line=4), relation=Relation.CALLED_BY),) if hard else (),
        seed=Q("pkg.auth.login"),
    )


SEED = Change(
    change_type=ChangeType.METHOD_SIGNATURE,
    entity=Q("pkg.auth.login"),
    file="pkg/auth.py",
    line_range=(3, 5),
    before_sig="def login(user):",
    after_sig="def login(user, mfa):",
)


def test_lex_uses_the_spec_weights_exactly():
    page = _member("pkg.api.login_page", "pkg/api.py")
    ranked = rank_members([page], SEED, _graph(), cochange={}, test_conf={})
    # ids: {pkg, login} of {pkg, auth, login, user, mfa, api, page, request} → 2/8
    # strings: {token} of {user, id, token} → 1/3; imports: {pkg.db, os} both sides → 1
    assert ranked == (
        Ranked(
            member=page,
            lex=round(0.5 * 2 / 8 + 0.3 * 1 / 3 + 0.2 * 1.0, 4),
            cochange=0.0,
            test_conf=0.0,
            hard=True,
        ),
    )
    assert ranked[0].lex == 0.425


def test_camel_case_and_underscores_split_into_ids():
    web = _member("pkg.web.LoginService.getHTTPResponse", "pkg/web.py")
    (ranked,) = rank_members([web], SEED, _graph(), cochange={}, test_conf={})
    # {pkg, login, user} shared of {pkg, auth, login, user, mfa, web, service, get, http, response}
    assert ranked.lex == round(0.5 * 3 / 10, 4)


def test_soft_only_candidates_are_not_members_and_order_is_stable():
    graph = _graph()
    members = [
        _member("other.util.tick", "other/util.py"),
        _member("pkg.api.login_page", "pkg/api.py"),
        _member("pkg.web.LoginService.getHTTPResponse", "pkg/web.py", distance=2),
        _member("pkg.soft.only", "pkg/soft.py", hard=False),
    ]
    ranked = rank_members(
        members,
        SEED,
        graph,
        cochange={"pkg/soft.py": 0.9, "other/util.py": 0.4, "pkg/history_only.py": 0.8},
        test_conf={Q("pkg.api.login_page"): 0.56},
    )
    assert [
        (r.member.entity, r.member.distance, r.lex, r.cochange, r.test_conf) for r in ranked
    ] == [
        ("pkg.api.login_page", 1, 0.425, 0.0, 0.56),
        ("other.util.tick", 1, 0.0, 0.4, 0.0),
        ("pkg.web.LoginService.getHTTPResponse", 2, 0.15, 0.0, 0.0),
    ]
    assert all(r.hard for r in ranked)
