"""Triage partition: MUST by a proven break per site, MAY for the unprovable, LOW for the rest."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

from impact_ls.analysis.binding import Breaks, bind_sites
from impact_ls.analysis.rank import Ranked, rank_members
from impact_ls.analysis.triage import TestedSite, triage_members
from impact_ls.analysis.walk import walk_dependents
from impact_ls.config import Settings
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import (
    ArgShape,
    Break,
    Bucket,
    Change,
    ChangeType,
    Edge,
    EdgeKind,
    Member,
    Node,
    NodeKind,
    Param,
    QualName,
    Relation,
    Site,
    Span,
    TriageEntry,
    Unanalyzable,
)

Q = QualName
SEED = Q("pkg.auth.login")
CHANGE = Change(
    change_type=ChangeType.METHOD_SIGNATURE,
    entity=SEED,
    file="pkg/auth.py",
    line_range=(3, 5),
    before_sig="def login(user):",
    after_sig="def login(user, mfa):",
    before_params=(Param(name="user"),),
    after_params=(Param(name="user"), Param(name="mfa")),
)
CAUSE = "method-signature changed (added param mfa) → {} must re-bind via CalledBy"


def _breaks(
    change: Change, *, args: ArgShape | None, relation: Relation, name_matched: bool = False
) -> tuple[Break, ...]:
    """The binding rule of this scripted signature: ``login`` now needs two arguments."""
    assert change is CHANGE and relation is Relation.CALLED_BY
    if args is None or not args.provable or args.positional + len(args.keywords) >= 2:
        return ()
    return (Break(kind="missing-argument", detail="missing required argument 'mfa'"),)


def _site(file: str, line: int, args: ArgShape | None, *, name_matched: bool = False) -> Site:
    return Site(
        file=file,
        span=Span(line=line, col=8, end_line=line, end_col=30),
        args=args,
        name_matched=name_matched,
        relation=Relation.CALLED_BY,
    )


def _ranked(
    entity: str, distance: int, sites, *, lex=0.0, cochange=0.0, test_conf=0.0, imports=False
) -> Ranked:
    member = Member(
        entity=Q(entity),
        file=sites[0].file,
        line=sites[0].span.line,
        distance=distance,
        relations=(Relation.CALLED_BY,),
        via=SEED if distance == 1 else Q("pkg.api.handle"),
        sites=tuple(sites),
        seed=SEED,
        name_matched=all(s.name_matched for s in sites),
    )
    return Ranked(
        member=member,
        lex=lex,
        cochange=cochange,
        test_conf=test_conf,
        hard=True,
        imports_seed=imports,
    )


ONE = ArgShape(positional=1)
TWO = ArgShape(positional=2)
STAR = ArgShape(positional=0, star=True)


def _scripted(ranked, rule, changes) -> Breaks:
    """Binding's verdicts for distance-1 sites under a scripted ``rule`` instead of the real one."""
    change_of: dict[QualName, Change] = {}
    for change in changes:
        change_of.setdefault(change.entity, change)
    found = {}
    for item in ranked:
        member = item.member
        if member.distance != 1 or member.seed not in change_of:
            continue
        for site in member.sites:
            relation = site.relation or member.relations[0]
            breaks = rule(change_of[member.seed], args=site.args, relation=relation)
            if breaks:
                found[(member.seed, member.entity, site)] = tuple(breaks)
    return Breaks(MappingProxyType(found))


def _triage(ranked, hidden=(), changes=(CHANGE,)):
    breaks = _scripted(ranked, _breaks, changes)
    return triage_members(ranked, changes, breaks=breaks, hidden=hidden, settings=Settings())


def _rows(entries: tuple[TriageEntry, ...]) -> list[tuple]:
    return [(e.entity, e.file, e.line, e.conf, e.distance) for e in entries]


def test_partition_is_exact():
    ranked = [
        _ranked(
            "pkg.api.handle",
            1,
            [_site("pkg/api.py", 4, ONE), _site("pkg/api.py", 9, ONE)],
            lex=0.425,
        ),
        _ranked("pkg.api.spread", 1, [_site("pkg/api.py", 20, STAR)], lex=0.05),
        _ranked("pkg.views.page", 1, [_site("pkg/views.py", 7, ONE, name_matched=True)]),
        # a name-matched site in a file that imports the changed module is plausible
        _ranked(
            "pkg.forms.post", 1, [_site("pkg/forms.py", 3, ONE, name_matched=True)], imports=True
        ),
        _ranked("pkg.api.route", 2, [_site("pkg/api.py", 30, ArgShape())], lex=0.4),
        # beyond distance 1 co-change supports the reach; a test's confidence alone does not
        _ranked("pkg.api.batch", 2, [_site("pkg/batch.py", 8, ONE)], cochange=0.4),
        _ranked("tests.test_api.test_route", 2, [_site("tests/test_api.py", 5, ONE)], test_conf=1),
        _ranked("pkg.jobs.tick", 1, [_site("pkg/jobs.py", 5, TWO)], lex=0.05),
        # binding proved these calls still bind: history must tie the file to the change
        _ranked("pkg.auth.relogin", 1, [_site("pkg/auth.py", 40, TWO)], lex=0.8),
        _ranked("pkg.auth.renew", 1, [_site("pkg/auth.py", 50, TWO)], lex=0.8, cochange=0.1),
        _ranked("pkg.hist.sync", 1, [_site("pkg/hist.py", 2, TWO)], cochange=0.3),
        _ranked("pkg.deep.far", 3, [_site("pkg/deep.py", 2, ArgShape())], lex=0.05),
    ]
    hidden = (
        Unanalyzable(
            file="pkg/plugins.py",
            line=7,
            reason="string-keyed getattr of 'login'",
            entity=Q("pkg.plugins.run"),
            name="login",
            seed=SEED,
        ),
    )
    triage = _triage(ranked, hidden)
    assert _rows(triage.must_inspect) == [
        ("pkg.api.handle", "pkg/api.py", 4, 0.7, 1),
        ("pkg.api.handle", "pkg/api.py", 9, 0.7, 1),
    ]
    assert _rows(triage.may_impact) == [
        ("pkg.auth.renew", "pkg/auth.py", 50, 0.8, 1),
        ("pkg.api.batch", "pkg/batch.py", 8, 0.4, 2),
        ("pkg.api.spread", "pkg/api.py", 20, 0.35, 1),
        ("pkg.forms.post", "pkg/forms.py", 3, 0.35, 1),
        ("pkg.hist.sync", "pkg/hist.py", 2, 0.35, 1),
        ("pkg.plugins.run", "pkg/plugins.py", 7, 0.35, 1),
    ]
    assert _rows(triage.low_risk) == [
        ("pkg.auth.relogin", "pkg/auth.py", 40, 0.3499, 1),
        ("pkg.api.route", "pkg/api.py", 30, 0.2, 2),
        ("pkg.jobs.tick", "pkg/jobs.py", 5, 0.05, 1),
        ("pkg.deep.far", "pkg/deep.py", 2, 0.0125, 3),
        ("pkg.views.page", "pkg/views.py", 7, 0.0, 1),
        ("tests.test_api.test_route", "tests/test_api.py", 5, 0.3499, 2),
    ]
    assert all(e.conf >= 0.70 for e in triage.must_inspect)
    assert all(e.conf >= 0.35 for e in triage.may_impact)
    assert all(e.conf < 0.35 for e in triage.low_risk)


def test_must_entry_carries_its_site_range_break_and_cause():
    triage = _triage([_ranked("pkg.api.handle", 1, [_site("pkg/api.py", 4, ONE)], lex=0.9)])
    assert triage.must_inspect == (
        TriageEntry(
            entity=Q("pkg.api.handle"),
            file="pkg/api.py",
            line=4,
            range=((4, 8), (4, 30)),
            conf=0.9,
            distance=1,
            relation=Relation.CALLED_BY,
            reason=CAUSE.format("pkg.api.handle"),
            seed=SEED,
            change_type=ChangeType.METHOD_SIGNATURE,
            bucket=Bucket.MUST_INSPECT,
            breaks=(Break(kind="missing-argument", detail="missing required argument 'mfa'"),),
            via=SEED,
        ),
    )


def test_name_matched_break_is_only_may_and_hidden_is_flagged():
    page = _ranked(
        "pkg.views.page", 1, [_site("pkg/views.py", 7, ONE, name_matched=True)], cochange=0.3
    )
    hidden = (
        Unanalyzable(
            file="pkg/plugins.py",
            line=7,
            reason="string-keyed getattr of 'login'",
            entity=Q("pkg.plugins.run"),
            name="login",
            seed=SEED,
        ),
    )
    triage = _triage([page], hidden)
    assert triage.must_inspect == ()
    matched, plugin = sorted(triage.may_impact, key=lambda e: e.file, reverse=True)
    assert (matched.name_matched, matched.unanalyzable, len(matched.breaks)) == (True, False, 1)
    assert (plugin.unanalyzable, plugin.range, plugin.relation) == (
        True,
        ((7, 0), (7, 0)),
        Relation.CALLED_BY,
    )
    assert plugin.reason == (
        CAUSE.format("pkg.plugins.run") + " (unanalyzable: string-keyed getattr of 'login')"
    )


def test_a_site_is_reported_once_in_its_highest_bucket():
    body = Change(
        change_type=ChangeType.METHOD_BODY,
        entity=Q("pkg.auth.audit"),
        file="pkg/auth.py",
        line_range=(20, 22),
        escape_reason="writes self.last",
    )
    site = _site("pkg/api.py", 4, ONE)
    broken = _ranked("pkg.api.handle", 1, [site], lex=0.5)
    also = Ranked(
        member=Member(
            entity=Q("pkg.api.handle"),
            file="pkg/api.py",
            line=4,
            distance=1,
            relations=(Relation.CALLERS,),
            via=body.entity,
            sites=(Site(file="pkg/api.py", span=site.span, args=ONE, relation=Relation.CALLERS),),
            seed=body.entity,
        ),
        lex=0.5,
        cochange=0.0,
        test_conf=0.0,
        hard=True,
    )

    def breaks(change: Change, *, args, relation, name_matched=False):
        return _breaks(change, args=args, relation=relation) if change is CHANGE else ()

    triage = triage_members(
        [also, broken],
        [CHANGE, body],
        breaks=_scripted([also, broken], breaks, [CHANGE, body]),
        hidden=(),
        settings=Settings(),
    )
    assert [(e.entity, e.line, e.seed) for e in triage.must_inspect] == [
        ("pkg.api.handle", 4, SEED)
    ]
    assert triage.may_impact == () and triage.low_risk == ()


def test_real_binding_through_walk_and_rank_for_an_import_change():
    graph = CodeGraph.of(
        [Node(id=Q("pkg.auth"), kind=NodeKind.MODULE, file="pkg/auth.py", span=Span(line=1))],
        [
            Edge(
                source=Q("pkg.api"),
                target=Q("pkg.auth.helper"),
                kind=EdgeKind.IMPORT,
                file="pkg/api.py",
                span=Span(line=2, col=0, end_line=2, end_col=30),
            ),
            Edge(
                source=Q("pkg.cli"),
                target=Q("pkg.auth"),
                kind=EdgeKind.IMPORT,
                file="pkg/cli.py",
                span=Span(line=1, col=0, end_line=1, end_col=15),
            ),
        ],
    )
    change = Change(
        change_type=ChangeType.IMPORT,
        entity=Q("pkg.auth"),
        file="pkg/auth.py",
        line_range=(1, 1),
        removed_names=("pkg.util.helper as helper",),
        what="removed import pkg.util.helper",
    )
    walk = walk_dependents(change, graph, max_depth=3, max_nodes=200)
    ranked = rank_members(walk.members, change, graph, cochange={}, test_conf={})
    breaks = bind_sites(walk.members, [change], graph)
    triage = triage_members(ranked, [change], breaks=breaks, hidden=(), settings=Settings())
    assert [(e.entity, e.line, e.breaks[0].detail) for e in triage.must_inspect] == [
        ("pkg.api", 2, "pkg.auth no longer imports helper")
    ]
    assert triage.must_inspect[0].reason == (
        "import changed (removed import pkg.util.helper) → pkg.api must re-bind via ImportedBy"
    )
    assert [(e.entity, e.breaks) for e in triage.may_impact] == [("pkg.cli", ())]


def test_tests_rank_below_production_sites():
    ranked = [
        _ranked(
            "tests.test_auth.test_login", 1, [_site("tests/test_auth.py", 4, ONE)], test_conf=1.0
        ),
        _ranked("zeta.api.handle", 1, [_site("zeta/api.py", 9, ONE)]),
        _ranked("pkg.test_helpers.make", 1, [_site("pkg/test_helpers.py", 2, ONE)]),
    ]
    triage = _triage(ranked)
    # test_*.py files are tests wherever they live; among tests, confidence decides.
    assert [e.file for e in triage.must_inspect] == [
        "zeta/api.py",
        "tests/test_auth.py",
        "pkg/test_helpers.py",
    ]


def test_docs_and_examples_rank_below_tests_and_production():
    ranked = [
        _ranked("examples.demo.main", 1, [_site("examples/demo.py", 3, ONE)], lex=0.9),
        _ranked("docs.conf.setup", 1, [_site("docs/conf.py", 8, ONE)], lex=0.9),
        _ranked("tests.test_auth.test_a", 1, [_site("tests/test_auth.py", 4, ONE)]),
        _ranked("pkg.api.handle", 1, [_site("pkg/api.py", 9, ONE)]),
    ]
    triage = _triage(ranked)
    assert [e.file for e in triage.must_inspect] == [
        "pkg/api.py",
        "tests/test_auth.py",
        "docs/conf.py",
        "examples/demo.py",
    ]


def test_a_weak_hidden_channel_is_listed_low_unless_its_file_co_changes():
    def weak(file: str) -> Unanalyzable:
        return Unanalyzable(
            file=file,
            line=3,
            reason="string literal 'login' names a definition",
            entity=Q("pkg.other"),
            name="login",
            seed=SEED,
            weak=True,
        )

    hidden = (weak("pkg/http.py"), weak("pkg/views.py"))
    triage = triage_members(
        [],
        [CHANGE],
        breaks=Breaks(),
        hidden=hidden,
        settings=Settings(),
        cochange={"pkg/views.py": 0.5},
    )
    # with history, a MAY conf is may_min + (1 - may_min) · share: 0.35 + 0.65 · 0.5
    assert [(e.file, e.unanalyzable, e.conf) for e in triage.may_impact] == [
        ("pkg/views.py", True, 0.675)
    ]
    assert [(e.file, e.unanalyzable, e.conf) for e in triage.low_risk] == [
        ("pkg/http.py", True, 0.3499)
    ]


def _history_triage(ranked, *, cochange, hidden=(), tested=()):
    breaks = _scripted(ranked, _breaks, (CHANGE,))
    return triage_members(
        ranked,
        (CHANGE,),
        breaks=breaks,
        hidden=hidden,
        settings=Settings(),
        cochange=cochange,
        tested=tested,
    )


def test_with_history_only_co_changed_files_of_unproven_sites_are_may_impact():
    ranked = [
        _ranked("pkg.a.f", 1, [_site("pkg/a.py", 4, STAR)], lex=0.5, cochange=0.2),
        _ranked("pkg.b.g", 1, [_site("pkg/b.py", 7, STAR)], lex=0.5, test_conf=1.0),
        _ranked("pkg.c.h", 2, [_site("pkg/c.py", 9, TWO)], lex=0.9, cochange=0.3),
        _ranked("pkg.f.n", 2, [_site("pkg/f.py", 6, TWO)], lex=0.9, cochange=0.2),  # far, weak tie
        _ranked("pkg.d.k", 1, [_site("pkg/d.py", 3, ONE, name_matched=True)], cochange=0.05),
        _ranked("pkg.auth.other", 1, [_site("pkg/auth.py", 12, STAR)]),  # the edited file
        _ranked("pkg.e.m", 1, [_site("pkg/e.py", 2, ONE)], cochange=0.05),  # a proven break
    ]
    cochange = {"pkg/a.py": 0.2, "pkg/c.py": 0.3, "pkg/d.py": 0.05, "pkg/e.py": 0.05}
    cochange["pkg/f.py"] = 0.2
    triage = _history_triage(ranked, cochange=cochange)
    assert _rows(triage.must_inspect) == [("pkg.e.m", "pkg/e.py", 2, 0.7, 1)]
    # ordered by the share that admitted them: may_min + (1 - may_min) · share
    assert _rows(triage.may_impact) == [
        ("pkg.auth.other", "pkg/auth.py", 12, 1.0, 1),
        ("pkg.c.h", "pkg/c.py", 9, 0.545, 2),
        ("pkg.a.f", "pkg/a.py", 4, 0.48, 1),
    ]
    # beyond distance 1 the tie must reach cochange_min (0.3), as without history
    assert _rows(triage.low_risk) == [
        ("pkg.b.g", "pkg/b.py", 7, 0.3499, 1),
        ("pkg.f.n", "pkg/f.py", 6, 0.3499, 2),
        ("pkg.d.k", "pkg/d.py", 3, 0.05, 1),
    ]
    # the same members without history: the unprovable, the tested caller and the far one
    # whose lex alone reaches may_min are MAY-IMPACT
    without = _triage(ranked)
    assert {e.file for e in without.may_impact} == {
        "pkg/a.py",
        "pkg/b.py",
        "pkg/c.py",
        "pkg/f.py",
        "pkg/auth.py",
    }


def test_with_history_a_hidden_channel_stays_may_impact_ordered_by_its_co_change():
    def ref(file: str) -> Unanalyzable:
        return Unanalyzable(
            file=file,
            line=5,
            reason="string-keyed getattr of 'login'",
            entity=Q("pkg.plugins.run"),
            name="login",
            seed=SEED,
        )

    hidden = (ref("pkg/plugins.py"), ref("pkg/hooks.py"))
    triage = _history_triage([], cochange={"pkg/hooks.py": 0.1}, hidden=hidden)
    # what no analysis sees is never LOW-RISK for want of a co-change tie; the tie orders it
    assert [(e.file, e.unanalyzable, e.conf) for e in triage.may_impact] == [
        ("pkg/hooks.py", True, 0.415),
        ("pkg/plugins.py", True, 0.35),
    ]
    assert triage.low_risk == ()
    plain = _triage([], hidden=hidden)
    assert {e.file for e in plain.may_impact} == {"pkg/plugins.py", "pkg/hooks.py"}


def test_a_selected_test_file_that_co_changes_gets_one_tested_by_entry():
    def tested(file: str, entity: str, line: int = 3) -> TestedSite:
        return TestedSite(
            test_file=file, entity=Q(entity), line=line, conf=0.56, changed_file="pkg/auth.py"
        )

    sites = (
        tested("tests/test_login.py", "tests.test_login.test_ok"),
        tested("tests/test_far.py", "tests.test_far.test_far"),  # co-changes too little
        tested("tests/test_api.py", "tests.test_api.test_call"),  # already a MAY site
        tested("pkg/selftest.py", "pkg.selftest.test_self"),  # not a test file
    )
    ranked = [
        _ranked("tests.test_api.test_x", 1, [_site("tests/test_api.py", 9, STAR)], cochange=0.3)
    ]
    cochange = {
        "tests/test_login.py": 0.4,
        "tests/test_far.py": 0.05,
        "tests/test_api.py": 0.3,
        "pkg/selftest.py": 0.9,
    }
    triage = _history_triage(ranked, cochange=cochange, tested=sites)
    rows = [(e.file, e.line, e.relation, e.conf) for e in triage.may_impact]
    assert rows == [
        ("tests/test_login.py", 3, Relation.TESTED_BY, 0.61),
        ("tests/test_api.py", 9, Relation.CALLED_BY, 0.545),
    ]
    entry = triage.may_impact[0]
    assert entry.reason == (
        "method-signature changed (added param mfa) → tests.test_login.test_ok "
        "must be re-tested via TestedBy"
    )
    # without history no test file is listed as a site
    plain = triage_members(
        ranked, (CHANGE,), breaks=Breaks(), hidden=(), settings=Settings(), tested=sites
    )
    assert "tests/test_login.py" not in {e.file for e in plain.may_impact}


def test_a_selected_test_file_named_for_the_edited_module_gets_a_tested_by_entry():
    def tested(file: str, changed: str) -> TestedSite:
        entity = Q(file.removesuffix(".py").replace("/", ".") + ".test_it")
        return TestedSite(test_file=file, entity=entity, line=3, conf=0.56, changed_file=changed)

    sites = (
        tested("tests/test_auth.py", "pkg/auth.py"),  # the module's own tests
        tested("tests/unit/auth_test.py", "pkg/auth.py"),
        tested("tests/test_store.py", "pkg/_store.py"),  # a private module's
        tested("tests/test_pkg.py", "pkg/__init__.py"),  # a package's
        tested("tests/test_authz.py", "pkg/auth.py"),  # another module's name
        tested("tests/test_views.py", "pkg/auth.py"),
    )
    changes = (
        CHANGE,
        replace(CHANGE, file="pkg/_store.py", entity=Q("pkg._store.login")),
        replace(CHANGE, file="pkg/__init__.py", entity=Q("pkg.login")),
    )
    # the edited files have history, none of it shared with these test files
    triage = triage_members(
        [],
        changes,
        breaks=Breaks(),
        hidden=(),
        settings=Settings(),
        cochange={"pkg/other.py": 0.5},
        tested=sites,
    )
    assert [(e.file, e.relation, e.conf) for e in triage.may_impact] == [
        ("tests/test_auth.py", Relation.TESTED_BY, 0.35),
        ("tests/test_pkg.py", Relation.TESTED_BY, 0.35),
        ("tests/test_store.py", Relation.TESTED_BY, 0.35),
        ("tests/unit/auth_test.py", Relation.TESTED_BY, 0.35),
    ]
