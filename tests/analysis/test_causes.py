"""Cause labels: the template and the verb of each change type."""

from __future__ import annotations

from impact_ls.analysis.causes import cause_label
from impact_ls.model import Change, ChangeType, Param, QualName, Relation

SEED = QualName("pkg.auth.login")
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


def _change(kind: ChangeType, **kw) -> Change:
    return Change(change_type=kind, entity=SEED, file="pkg/auth.py", line_range=(3, 5), **kw)


def test_cause_label_template_and_verbs():
    assert cause_label(CHANGE, site="pkg.api.handle", relation=Relation.CALLED_BY) == (
        "method-signature changed (added param mfa) → pkg.api.handle must re-bind via CalledBy"
    )
    assert (
        cause_label(
            _change(ChangeType.FIELD, what="timeout 5 → 10"),
            site="pkg.api.read",
            relation=Relation.USED_BY,
        )
        == "field changed (timeout 5 → 10) → pkg.api.read must be updated via UsedBy"
    )
    assert (
        cause_label(
            _change(ChangeType.METHOD_BODY, escape_reason="writes self.last"),
            site="pkg.api.handle",
            relation=Relation.CALLERS,
        )
        == "method-body changed (writes self.last) → pkg.api.handle must be re-checked via Callers"
    )
    assert (
        cause_label(_change(ChangeType.DELETE), site="pkg.api.handle", relation=Relation.CALLED_BY)
        == "delete changed (login removed) → pkg.api.handle must re-bind via CalledBy"
    )
    assert (
        cause_label(
            _change(ChangeType.IMPORT, removed_names=("helper",)),
            site="pkg.api",
            relation=Relation.IMPORTED_BY,
        )
        == "import changed (removed helper) → pkg.api must re-bind via ImportedBy"
    )
    assert (
        cause_label(
            _change(
                ChangeType.CONSTRUCTOR,
                before_params=(Param(name="self"), Param(name="db")),
                after_params=(Param(name="self"),),
            ),
            site="pkg.api.make",
            relation=Relation.INSTANTIATED_BY,
        )
        == "constructor changed (removed param db) → pkg.api.make must be updated via "
        "InstantiatedBy"
    )
    assert (
        cause_label(
            _change(ChangeType.CLASS_DECL, what="bases"),
            site="tests/test_a.py::test_a",
            relation=Relation.TESTED_BY,
        )
        == "class-decl changed (bases) → tests/test_a.py::test_a must be re-tested via TestedBy"
    )
