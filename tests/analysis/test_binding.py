"""Binding a call site's argument shape to a changed signature, and the other provable breaks."""

from __future__ import annotations

from dataclasses import replace

import pytest

from impact_ls.analysis.binding import bind_arguments, bind_sites, find_breaks
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import (
    ArgShape,
    Break,
    Change,
    ChangeType,
    Edge,
    EdgeKind,
    Member,
    Param,
    ParamKind,
    QualName,
    Relation,
    Site,
    Span,
)

PO = ParamKind.POSITIONAL_ONLY
PK = ParamKind.POSITIONAL_OR_KEYWORD
VP = ParamKind.VAR_POSITIONAL
KO = ParamKind.KEYWORD_ONLY
VK = ParamKind.VAR_KEYWORD


def _p(name: str, kind: ParamKind = PK, *, default: bool = False) -> Param:
    return Param(name=name, kind=kind, has_default=default)


def _change(kind: ChangeType, entity: str = "pkg.auth.LoginService.login", **kw: object) -> Change:
    return Change(
        change_type=kind,
        entity=QualName(entity),
        file="pkg/auth.py",
        line_range=(14, 16),
        **kw,  # type: ignore[arg-type]
    )


def _sig(before: tuple[Param, ...], after: tuple[Param, ...], *, method: bool = True) -> Change:
    return _change(
        ChangeType.METHOD_SIGNATURE,
        before_params=before,
        after_params=after,
        binds_first_param=method,
    )


LOGIN_BEFORE = (_p("self"), _p("user"))
LOGIN_AFTER = (_p("self"), _p("user"), _p("mfa_code"))


def test_added_required_param_is_a_missing_argument_at_a_bound_call() -> None:
    change = _sig(LOGIN_BEFORE, LOGIN_AFTER)
    breaks = find_breaks(change, args=ArgShape(positional=1), relation=Relation.CALLED_BY)
    assert breaks == (
        Break(kind="missing-argument", detail="missing required argument 'mfa_code'"),
    )


def test_call_that_already_passes_the_new_argument_still_binds() -> None:
    change = _sig(LOGIN_BEFORE, LOGIN_AFTER)
    assert find_breaks(change, args=ArgShape(positional=2), relation=Relation.CALLED_BY) == ()
    by_keyword = ArgShape(positional=1, keywords=("mfa_code",))
    assert find_breaks(change, args=by_keyword, relation=Relation.CALLED_BY) == ()


def test_added_param_with_a_default_breaks_nothing() -> None:
    change = _sig(LOGIN_BEFORE, (*LOGIN_BEFORE, _p("mfa_code", default=True)))
    assert find_breaks(change, args=ArgShape(positional=1), relation=Relation.CALLED_BY) == ()


def test_removed_param_passed_positionally_is_too_many_positional() -> None:
    change = _sig(LOGIN_BEFORE, (_p("self"),))
    breaks = find_breaks(change, args=ArgShape(positional=1), relation=Relation.CALLED_BY)
    assert breaks == (
        Break(kind="too-many-positional", detail="takes 0 positional arguments but 1 was given"),
    )


def test_keyword_naming_a_removed_param_is_removed_parameter() -> None:
    change = _sig(LOGIN_BEFORE, (_p("self"), _p("username")))
    breaks = find_breaks(change, args=ArgShape(keywords=("user",)), relation=Relation.CALLED_BY)
    assert breaks == (
        Break(kind="removed-parameter", detail="keyword 'user' names a removed parameter"),
        Break(kind="missing-argument", detail="missing required argument 'username'"),
    )


def test_keyword_that_never_existed_is_unknown_keyword() -> None:
    change = _sig(LOGIN_BEFORE, LOGIN_AFTER)
    args = ArgShape(positional=2, keywords=("remember",))
    assert find_breaks(change, args=args, relation=Relation.CALLED_BY) == (
        Break(kind="unknown-keyword", detail="unexpected keyword argument 'remember'"),
    )


def test_site_with_star_arguments_is_not_provable() -> None:
    change = _sig(LOGIN_BEFORE, LOGIN_AFTER)
    for args in (ArgShape(positional=0, star=True), ArgShape(positional=1, double_star=True)):
        assert find_breaks(change, args=args, relation=Relation.CALLED_BY) == ()


def test_name_matched_site_proves_nothing() -> None:
    change = _sig(LOGIN_BEFORE, LOGIN_AFTER)
    args = ArgShape(positional=1)
    assert find_breaks(change, args=args, relation=Relation.CALLED_BY, name_matched=True) == ()
    assert find_breaks(change, args=args, relation=Relation.CALLED_BY) != ()


def test_unbound_call_passes_self_explicitly() -> None:
    change = _sig(LOGIN_BEFORE, LOGIN_AFTER)
    # LoginService.login(service, user): the first positional fills self
    unbound = find_breaks(
        change, args=ArgShape(positional=2), relation=Relation.CALLED_BY, bound=False
    )
    assert unbound == (
        Break(kind="missing-argument", detail="missing required argument 'mfa_code'"),
    )
    ok = find_breaks(change, args=ArgShape(positional=3), relation=Relation.CALLED_BY, bound=False)
    assert ok == ()


def test_staticmethod_does_not_bind_a_first_param() -> None:
    change = _sig((_p("name"),), (_p("name"), _p("locale")), method=False)
    assert find_breaks(change, args=ArgShape(positional=1), relation=Relation.CALLED_BY) == (
        Break(kind="missing-argument", detail="missing required argument 'locale'"),
    )
    assert find_breaks(change, args=ArgShape(positional=2), relation=Relation.CALLED_BY) == ()


def test_override_relations_and_unknown_shapes_prove_nothing() -> None:
    change = _sig(LOGIN_BEFORE, LOGIN_AFTER)
    args = ArgShape(positional=1)
    assert find_breaks(change, args=args, relation=Relation.OVERRIDDEN_BY) == ()
    assert find_breaks(change, args=args, relation=Relation.OVERRIDES) == ()
    assert find_breaks(change, args=None, relation=Relation.CALLED_BY) == ()


def test_body_add_and_incomplete_changes_never_break_a_site() -> None:
    args = ArgShape(positional=5)
    for kind in (ChangeType.METHOD_BODY, ChangeType.ADD, ChangeType.INCOMPLETE):
        change = _change(kind, after_params=(_p("self"),), binds_first_param=True)
        assert find_breaks(change, args=args, relation=Relation.CALLERS) == ()


def test_any_reference_to_a_deleted_symbol_breaks() -> None:
    change = _change(
        ChangeType.DELETE, entity="pkg.auth.helper", removed_names=("pkg.auth.helper",)
    )
    expected = (
        Break(kind="deleted-symbol", detail="references 'pkg.auth.helper', which no longer exists"),
    )
    for relation in (Relation.CALLED_BY, Relation.IMPORTED_BY, Relation.USED_BY):
        assert find_breaks(change, args=None, relation=relation) == expected
    assert find_breaks(change, args=ArgShape(positional=2), relation=Relation.CALLED_BY) == expected


def test_removed_field_breaks_its_users_but_a_value_change_does_not() -> None:
    removed = _change(ChangeType.FIELD, entity="pkg.auth.TIMEOUT", before_sig="TIMEOUT = 30")
    assert find_breaks(removed, args=None, relation=Relation.USED_BY) == (
        Break(kind="removed-field", detail="field 'TIMEOUT' was removed"),
    )
    changed = _change(
        ChangeType.FIELD,
        entity="pkg.auth.TIMEOUT",
        before_sig="TIMEOUT = 30",
        after_sig="TIMEOUT = 60",
    )
    assert find_breaks(changed, args=None, relation=Relation.USED_BY) == ()


INIT_BEFORE = (_p("self"), _p("db"))
INIT_AFTER = (_p("self"), _p("db"), _p("cache"))
CTOR_CHANGE = _change(
    ChangeType.CONSTRUCTOR,
    entity="pkg.auth.LoginService.__init__",
    before_params=INIT_BEFORE,
    after_params=INIT_AFTER,
    binds_first_param=True,
)


def test_instantiation_that_no_longer_binds_is_a_constructor_mismatch() -> None:
    change = CTOR_CHANGE
    assert find_breaks(change, args=ArgShape(positional=1), relation=Relation.INSTANTIATED_BY) == (
        Break(kind="constructor-mismatch", detail="missing required argument 'cache'"),
    )
    ok = ArgShape(positional=1, keywords=("cache",))
    assert find_breaks(change, args=ok, relation=Relation.INSTANTIATED_BY) == ()


def test_super_init_call_binds_with_ordinary_break_kinds() -> None:
    change = CTOR_CHANGE
    assert find_breaks(change, args=ArgShape(positional=1), relation=Relation.CALLED_BY) == (
        Break(kind="missing-argument", detail="missing required argument 'cache'"),
    )


def test_class_decl_binds_instantiations_only() -> None:
    change = _change(
        ChangeType.CLASS_DECL,
        entity="pkg.auth.LoginService",
        before_params=INIT_AFTER,
        after_params=INIT_AFTER,
        binds_first_param=True,
    )
    args = ArgShape(positional=3)
    assert find_breaks(change, args=args, relation=Relation.INSTANTIATED_BY) == (
        Break(kind="constructor-mismatch", detail="takes 2 positional arguments but 3 were given"),
    )
    assert find_breaks(change, args=args, relation=Relation.SUBCLASS_OF) == ()
    no_init = _change(ChangeType.CLASS_DECL, entity="pkg.auth.LoginService")
    assert find_breaks(no_init, args=args, relation=Relation.INSTANTIATED_BY) == ()


def test_site_importing_a_removed_name_breaks() -> None:
    change = _change(
        ChangeType.IMPORT,
        entity="pkg.views",
        removed_names=("os", "pkg.auth.login as login"),
    )
    expected = (Break(kind="removed-import", detail="pkg.views no longer imports login"),)
    for imported in ("login", "pkg.views.login", "pkg.auth.login"):
        assert (
            find_breaks(change, args=None, relation=Relation.IMPORTED_BY, imported=imported)
            == expected
        )
    assert find_breaks(change, args=None, relation=Relation.IMPORTED_BY, imported="logout") == ()
    assert find_breaks(change, args=None, relation=Relation.IMPORTED_BY) == (
        Break(kind="removed-import", detail="pkg.views no longer imports login, os"),
    )


def test_import_change_that_removed_nothing_breaks_nothing() -> None:
    change = _change(ChangeType.IMPORT, entity="pkg.views")
    assert find_breaks(change, args=None, relation=Relation.IMPORTED_BY) == ()


@pytest.mark.parametrize(
    ("params", "args", "expected"),
    [
        # defaults fill what the site leaves out
        ((_p("a"), _p("b", default=True)), ArgShape(positional=1), ()),
        # keyword-only parameters: required ones must be named, positionals cannot reach them
        (
            (_p("a"), _p("key", KO)),
            ArgShape(positional=1),
            (
                Break(
                    kind="missing-argument", detail="missing required keyword-only argument 'key'"
                ),
            ),
        ),
        (
            (_p("a"), _p("key", KO)),
            ArgShape(positional=2, keywords=("key",)),
            (
                Break(
                    kind="too-many-positional",
                    detail="takes 1 positional argument but 2 were given",
                ),
            ),
        ),
        ((_p("a"), _p("key", KO, default=True)), ArgShape(positional=1), ()),
        # positional-only parameters cannot be passed by keyword
        (
            (_p("a", PO), _p("b")),
            ArgShape(keywords=("a", "b")),
            (
                Break(
                    kind="unknown-keyword",
                    detail="'a' is positional-only and cannot be passed by keyword",
                ),
                Break(kind="missing-argument", detail="missing required argument 'a'"),
            ),
        ),
        # ... unless **kwargs swallows the name (and the positional one is still filled)
        ((_p("a", PO), _p("kw", VK)), ArgShape(positional=1, keywords=("a",)), ()),
        # *args in the signature accepts extra positionals
        ((_p("a"), _p("rest", VP)), ArgShape(positional=5), ()),
        # **kwargs in the signature accepts unknown keywords
        ((_p("a"), _p("kw", VK)), ArgShape(positional=1, keywords=("x", "y")), ()),
        # a positional and a keyword for the same parameter
        (
            (_p("a"), _p("b")),
            ArgShape(positional=1, keywords=("a",)),
            (
                Break(kind="too-many-positional", detail="got multiple values for argument 'a'"),
                Break(kind="missing-argument", detail="missing required argument 'b'"),
            ),
        ),
        # a star at the site: nothing is provable
        ((_p("a"), _p("b")), ArgShape(star=True), ()),
    ],
)
def test_bind_arguments_follows_python_rules(
    params: tuple[Param, ...], args: ArgShape, expected: tuple[Break, ...]
) -> None:
    assert bind_arguments(params, args, skip_first=False) == expected


def test_bind_arguments_skips_the_bound_first_param() -> None:
    params = (_p("self"), _p("user"))
    assert bind_arguments(params, ArgShape(positional=1), skip_first=True) == ()
    assert bind_arguments(params, ArgShape(positional=1), skip_first=False) == (
        Break(kind="missing-argument", detail="missing required argument 'user'"),
    )
    # def method(*args): the implicit self goes into *args, nothing to skip
    star_only = (_p("args", VP),)
    assert bind_arguments(star_only, ArgShape(positional=3), skip_first=True) == ()


def _member(entity: str, distance: int, *sites: Site) -> Member:
    return Member(
        entity=QualName(entity),
        file=sites[0].file,
        line=sites[0].span.line,
        distance=distance,
        relations=(Relation.CALLED_BY,),
        via=QualName("pkg.auth.LoginService.login"),
        sites=sites,
        seed=QualName("pkg.auth.LoginService.login"),
    )


def _call(file: str, line: int, positional: int, *, name_matched: bool = False) -> Site:
    return Site(
        file=file,
        span=Span(line=line, col=4, end_line=line, end_col=20),
        args=ArgShape(positional=positional),
        name_matched=name_matched,
        relation=Relation.CALLED_BY,
    )


def test_bind_sites_binds_each_site_of_distance_one_members_only() -> None:
    change = _sig(LOGIN_BEFORE, LOGIN_AFTER)
    short, full = _call("pkg/api.py", 4, 1), _call("pkg/api.py", 9, 2)
    guessed = _call("pkg/views.py", 7, 1, name_matched=True)
    near = _member("pkg.api.handle", 1, short, full)
    matched = _member("pkg.views.page", 1, guessed)
    far = _member("pkg.api.route", 2, _call("pkg/api.py", 30, 1))
    breaks = bind_sites([near, matched, far], [change], CodeGraph())
    missing = (Break(kind="missing-argument", detail="missing required argument 'mfa_code'"),)
    assert breaks.at(near, short) == missing
    assert breaks.at(near, full) == ()
    assert breaks.at(matched, guessed) == ()  # a name-matched site proves nothing
    assert breaks.at(far, far.sites[0]) == ()  # beyond distance 1 nothing is bound
    assert list(breaks.by_site) == [(near.seed, near.entity, short)]


def test_bind_sites_tells_import_sites_apart_by_the_name_each_imports() -> None:
    change = _change(
        ChangeType.IMPORT, entity="pkg.auth", removed_names=("pkg.util.helper as helper",)
    )
    takes_helper = Site(file="pkg/api.py", span=Span(line=2, end_line=2, end_col=30))
    takes_other = Site(file="pkg/cli.py", span=Span(line=1, end_line=1, end_col=25))
    graph = CodeGraph.of(
        [],
        [
            Edge(
                source=QualName("pkg.api"),
                target=QualName("pkg.auth.helper"),
                kind=EdgeKind.IMPORT,
                file="pkg/api.py",
                span=takes_helper.span,
            ),
            Edge(
                source=QualName("pkg.cli"),
                target=QualName("pkg.auth.other"),
                kind=EdgeKind.IMPORT,
                file="pkg/cli.py",
                span=takes_other.span,
            ),
        ],
    )
    api = replace(_member("pkg.api", 1, takes_helper), seed=QualName("pkg.auth"))
    cli = replace(_member("pkg.cli", 1, takes_other), seed=QualName("pkg.auth"))
    breaks = bind_sites([api, cli], [change], graph)
    assert breaks.at(api, takes_helper) == (
        Break(kind="removed-import", detail="pkg.auth no longer imports helper"),
    )
    assert breaks.at(cli, takes_other) == ()
