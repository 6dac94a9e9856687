"""The blast radius of the edits real commits make (issue 11): each break at its exact site.

Every case builds the real graph of a small project with ``GraphBuilder`` (current text of the
edited file included), runs the whole pipeline on the edit and asserts the buckets of exact
``file:line`` sites.
"""

from __future__ import annotations

from pathlib import Path

from impact_ls.analysis.hierarchy import still_provided
from impact_ls.engine import Engine
from impact_ls.history.plant import plant_history
from impact_ls.model import Change, ChangeType, QualName, Report
from impact_ls.report.text import render_text
from tests.builders import analyze_texts


def _analyze(files: dict[str, str], path: str, after: str) -> Report:
    return analyze_texts(files, path, after)[1]


def _sites(report: Report, bucket: str) -> list[tuple[str, int, tuple[str, ...]]]:
    entries = getattr(report.triage, bucket)
    return sorted((e.file, e.line, tuple(b.kind for b in e.breaks)) for e in entries)


def _where(report: Report, bucket: str) -> list[tuple[str, int]]:
    return [(file, line) for file, line, _ in _sites(report, bucket)]


def _flags(report: Report, bucket: str) -> set[tuple[str, int, bool]]:
    """Each site of ``bucket`` with whether it is flagged unanalyzable."""
    return {(e.file, e.line, e.unanalyzable) for e in getattr(report.triage, bucket)}


NAMES = {
    "pkg/__init__.py": "from .mod import CONST, helper\n\n__all__ = ['CONST', 'helper']\n",
    "pkg/mod.py": "def helper(x):\n    return x\n\n\nCONST = 1\n",
    "pkg/a.py": "from pkg.mod import helper\n\n\ndef f(args):\n    return helper(*args)\n",
    "pkg/b.py": "from pkg import mod\n\n\ndef g():\n    return mod.helper, mod.CONST\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/c.py": "from ..mod import CONST\n\n\ndef h():\n    return CONST + 1\n",
    "pkg/d.py": "from pkg import CONST, helper\n",
}


def test_a_renamed_function_breaks_every_import_reexport_and_use():
    report = _analyze(NAMES, "pkg/mod.py", NAMES["pkg/mod.py"].replace("helper", "assist"))
    assert _sites(report, "must_inspect") == [
        ("pkg/__init__.py", 1, ("deleted-symbol",)),
        ("pkg/a.py", 1, ("deleted-symbol",)),
        # a ``*args`` call cannot be bound, but a call of a name that is gone fails anyway
        ("pkg/a.py", 5, ("deleted-symbol",)),
        ("pkg/b.py", 5, ("deleted-symbol",)),
        ("pkg/d.py", 1, ("deleted-symbol",)),
    ]


def test_a_removed_module_constant_breaks_its_imports_not_only_its_reads():
    report = _analyze(NAMES, "pkg/mod.py", NAMES["pkg/mod.py"].replace("CONST", "LIMIT"))
    assert _sites(report, "must_inspect") == [
        ("pkg/__init__.py", 1, ("removed-field",)),
        ("pkg/b.py", 5, ("removed-field",)),
        ("pkg/d.py", 1, ("removed-field",)),
        ("pkg/sub/c.py", 1, ("removed-field",)),
        ("pkg/sub/c.py", 5, ("removed-field",)),
    ]


def test_a_constant_whose_value_changed_breaks_no_import():
    report = _analyze(NAMES, "pkg/mod.py", NAMES["pkg/mod.py"].replace("CONST = 1", "CONST = 2"))
    assert report.triage.must_inspect == ()
    assert ("pkg/d.py", 1) not in _where(report, "may_impact")


def test_the_changed_modules_own_all_entry_of_a_removed_name_is_a_break():
    exported = "__all__ = [\n    'helper',\n    'CONST',\n]\n\n\n" + NAMES["pkg/mod.py"]
    files = {**NAMES, "pkg/mod.py": exported}
    renamed = exported.replace("def helper", "def assist")
    report = _analyze(files, "pkg/mod.py", renamed)
    stale = [s for s in _sites(report, "must_inspect") if s[0] == "pkg/mod.py"]
    # ``from pkg.mod import *`` raises at the entry that names what is gone
    assert stale == [("pkg/mod.py", 2, ("stale-export",))]
    [entry] = [e for e in report.triage.must_inspect if e.file == "pkg/mod.py"]
    assert entry.breaks[0].detail == "__all__ still lists 'helper', which no longer exists"
    # renamed in ``__all__`` too: nothing stale in the module itself
    both = _analyze(files, "pkg/mod.py", exported.replace("helper", "assist"))
    assert [s for s in _sites(both, "must_inspect") if s[0] == "pkg/mod.py"] == []
    # a removed constant whose entry was appended later
    appended = NAMES["pkg/mod.py"] + "\n__all__ = ['helper']\n__all__.append('CONST')\n"
    gone = _analyze(
        {**NAMES, "pkg/mod.py": appended}, "pkg/mod.py", appended.replace("CONST = 1\n", "")
    )
    assert [s for s in _sites(gone, "must_inspect") if s[0] == "pkg/mod.py"] == [
        ("pkg/mod.py", 7, ("stale-export",))
    ]


def test_a_deleted_class_breaks_its_subclasses():
    files = {
        "pkg/__init__.py": "",
        "pkg/base.py": "class Plugin:\n    pass\n",
        "pkg/ext.py": "from pkg.base import Plugin\n\n\nclass Extra(Plugin):\n    pass\n",
    }
    report = _analyze(files, "pkg/base.py", "")
    assert _where(report, "must_inspect") == [("pkg/ext.py", 1), ("pkg/ext.py", 4)]


REWRITE = {
    "pkg/__init__.py": "",
    "pkg/big.py": "".join(f"def f{i}(x):\n    return x\n\n\n" for i in range(70))
    + "".join(f"C{i} = {i}\n" for i in range(70)),
    "pkg/user.py": "from pkg import big\nfrom pkg.big import C68, f69\n\n\n"
    "def run():\n    return big.f66(1) + f69(C68)\n",
    "pkg/lazy.py": "from pkg import big\n\n\ndef load():\n    return getattr(big, 'f67')\n",
}


def test_a_rewrite_beyond_the_change_cap_still_breaks_the_users_of_every_removed_name():
    # 140 removals: the cap of 64 changes folds the last ones into their neighbours
    report = _analyze(REWRITE, "pkg/big.py", "VERSION = 2\n")
    assert len(report.changes) == 64
    must = {(e.file, e.line, b.detail) for e in report.triage.must_inspect for b in e.breaks}
    assert must >= {
        ("pkg/user.py", 2, "references 'pkg.big.f69', which no longer exists"),
        ("pkg/user.py", 6, "references 'pkg.big.f66', which no longer exists"),
        ("pkg/user.py", 2, "field 'C68' was removed"),
    }
    [f69] = [
        e
        for e in report.triage.must_inspect
        if (e.file, e.line) == ("pkg/user.py", 2) and e.breaks[0].kind == "deleted-symbol"
    ]
    assert f69.reason.startswith("delete changed (removed f69) → pkg.user must re-bind")
    # a string naming a folded removal is a hidden channel to it, as to any removal
    assert ("pkg/lazy.py", 5, True) in _flags(report, "may_impact")
    # the report says which removals a listed change holds
    [host] = [c for c in report.changes if "pkg.big.f69" in c.removed_names]
    assert host.what.endswith(f"and {len(host.removed_names) - 1} more the change cap folded in")


BOX = """\
class Box:
    def __init__(self, size, mode="r"):
        self.size = size
        self.mode = mode

    def describe(self):
        return f"{self.size} {self.mode}"
"""
BOX_USERS = {
    "pkg/__init__.py": "",
    "pkg/box.py": BOX,
    "pkg/use.py": """\
from pkg.box import Box


def make():
    box = Box(1)
    return box.size


def show(box: Box):
    return box.mode


def probe(box):
    return getattr(box, "mode", None)
""",
    "tests/test_box.py": """\
from pkg.box import Box


def test_mode():
    box = Box(1, mode="w")
    assert box.mode == "w"
""",
}


def test_a_dropped_stored_parameter_breaks_the_readers_of_its_attribute():
    after = BOX.replace(', mode="r"', "").replace("        self.mode = mode\n", "")
    after = after.replace(' {self.mode}"', '"')
    report = _analyze(BOX_USERS, "pkg/box.py", after)
    changes = [(c.change_type.value, c.entity) for c in report.changes]
    assert ("field", "pkg.box.Box.mode") in changes
    assert _sites(report, "must_inspect") == [
        ("pkg/use.py", 10, ("removed-field",)),
        ("tests/test_box.py", 5, ("constructor-mismatch",)),
        ("tests/test_box.py", 6, ("removed-field",)),
    ]
    # item 5: the string-keyed read of the attribute is reported, flagged
    flagged = [(e.file, e.line) for e in report.triage.may_impact if e.unanalyzable]
    assert flagged == [("pkg/use.py", 14)]
    # the construction that still binds reads nothing that is gone
    assert ("pkg/use.py", 5) not in _where(report, "must_inspect")


def test_a_renamed_attribute_breaks_its_readers_and_keeps_the_kept_one():
    after = BOX.replace("self.mode", "self._mode")
    report = _analyze(BOX_USERS, "pkg/box.py", after)
    assert [c.entity for c in report.changes if c.change_type.value == "field"] == [
        "pkg.box.Box.mode"
    ]
    assert _where(report, "must_inspect") == [("pkg/use.py", 10), ("tests/test_box.py", 6)]


def test_an_attribute_served_by_getattr_is_never_proved_removed():
    before = BOX + "\n    def __getattr__(self, name):\n        return None\n"
    files = {**BOX_USERS, "pkg/box.py": before}
    report = _analyze(files, "pkg/box.py", before.replace("self.mode", "self._mode"))
    assert [c.change_type.value for c in report.changes] == ["method-body", "method-body"]
    assert report.triage.must_inspect == ()


CONFIG = """\
class Config(dict):
    def __init__(self, root):
        super().__init__()
        self.root = root

    def load(self):
        self.update(a=1)
        return self.get("a")


class BaseError(Exception):
    pass


class ConfigError(BaseError):
    pass
"""
CONFIG_USERS = {
    "pkg/__init__.py": "",
    "pkg/config.py": CONFIG,
    "pkg/app.py": """\
from pkg.config import BaseError, Config


def run():
    cfg = Config("/")
    cfg.update(debug=True)
    print(cfg.root)
    try:
        return cfg.get("debug")
    except BaseError:
        return None


def is_ours(err):
    return isinstance(err, BaseError)


def is_our_kind(kind):
    return issubclass(kind, BaseError)
""",
}


def test_a_dropped_builtin_base_breaks_every_use_of_what_it_gave():
    after = CONFIG.replace("class Config(dict):", "class Config:")
    after = after.replace("        super().__init__()\n", "")
    report = _analyze(CONFIG_USERS, "pkg/config.py", after)
    assert _sites(report, "must_inspect") == [
        ("pkg/app.py", 6, ("inherited-member",)),
        ("pkg/app.py", 9, ("inherited-member",)),
        ("pkg/config.py", 6, ("inherited-member",)),
        ("pkg/config.py", 7, ("inherited-member",)),
    ]
    # ``cfg.root`` is the class's own attribute: untouched
    assert ("pkg/app.py", 7) not in _where(report, "must_inspect")


def test_a_changed_exception_hierarchy_reaches_the_except_and_isinstance_sites():
    after = CONFIG.replace("class ConfigError(BaseError):", "class ConfigError(Exception):")
    report = _analyze(CONFIG_USERS, "pkg/config.py", after)
    assert report.triage.must_inspect == ()
    may = _where(report, "may_impact")
    assert ("pkg/app.py", 10) in may and ("pkg/app.py", 15) in may and ("pkg/app.py", 19) in may


def test_a_dataclass_turned_plain_breaks_its_constructions():
    point = (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass P:\n    x: int\n    y: int = 0\n"
    )
    files = {
        "pkg/__init__.py": "",
        "pkg/point.py": point,
        "pkg/use.py": "from pkg.point import P\n\n\ndef origin():\n    return P(0)\n",
    }
    plain = point.replace("@dataclass\n", "")
    report = _analyze(files, "pkg/point.py", plain)
    assert _sites(report, "must_inspect") == [("pkg/use.py", 5, ("constructor-mismatch",))]
    back = _analyze({**files, "pkg/point.py": plain}, "pkg/point.py", point)
    assert back.triage.must_inspect == ()  # ``P(0)`` binds the generated ``__init__``


WORKER = """\
class Worker:
    def run(self, job):
        return job

    def jobs(self):
        return [1, 2]

    @property
    def name(self):
        return "w"

    def stop(self, force=False):
        return force
"""
WORKER_USERS = {
    "pkg/__init__.py": "",
    "pkg/worker.py": WORKER,
    "pkg/use.py": """\
from pkg.worker import Worker


def main(args):
    w = Worker()
    w.run(*args)
    for job in w.jobs():
        print(job)
    print(w.name)
    return w.stop()
""",
}


def _shape(old: str, new: str) -> Report:
    assert WORKER.count(old) == 1
    return _analyze(WORKER_USERS, "pkg/worker.py", WORKER.replace(old, new))


def test_a_function_turned_async_breaks_every_call_even_a_star_args_one():
    report = _shape("def run", "async def run")
    assert _sites(report, "must_inspect") == [("pkg/use.py", 6, ("call-shape",))]
    assert "must be awaited" in report.triage.must_inspect[0].breaks[0].detail


def test_a_function_turned_generator_breaks_its_calls():
    report = _shape("return [1, 2]", "yield 1")
    assert [c.what for c in report.changes] == ["now a generator"]
    assert _sites(report, "must_inspect") == [("pkg/use.py", 7, ("call-shape",))]


def test_a_property_turned_method_breaks_its_reads():
    report = _shape("    @property\n", "")
    assert _sites(report, "must_inspect") == [("pkg/use.py", 9, ("call-shape",))]


def test_a_method_turned_property_breaks_its_calls():
    report = _shape("    def stop", "    @property\n    def stop")
    assert _sites(report, "must_inspect") == [("pkg/use.py", 10, ("call-shape",))]


def test_a_method_turned_staticmethod_breaks_its_bound_calls():
    report = _shape("    def stop", "    @staticmethod\n    def stop")
    assert _sites(report, "must_inspect") == [("pkg/use.py", 10, ("missing-argument",))]


def test_parameters_made_keyword_only_or_required_break_the_calls_they_break():
    files = {
        "pkg/__init__.py": "",
        "pkg/f.py": "def f(a, b=1, *rest, **opts):\n    return a\n",
        "pkg/use.py": "from pkg.f import f\n\n\ndef g():\n    f(1, 2)\n    f(1)\n    f(1, 2, 3)\n"
        "    f(a=1, z=2)\n",
    }
    cases = {
        "def f(a, *, b=1, **opts):": [5, 7],  # keyword-only b; *rest gone
        "def f(a, b, *rest, **opts):": [6, 8],  # b's default gone
        "def f(a, b=1, *rest):": [8],  # **opts gone
        "def f(a, /, b=1, *rest, **opts):": [8],  # positional-only a named by keyword
    }
    for header, lines in cases.items():
        after = files["pkg/f.py"].replace("def f(a, b=1, *rest, **opts):", header)
        report = _analyze(files, "pkg/f.py", after)
        assert _where(report, "must_inspect") == [("pkg/use.py", n) for n in lines], header


def test_a_decorated_function_turned_generator_is_not_a_proved_break():
    fixture = "import pytest\n\n\n@pytest.fixture\ndef db():\n    return 1\n"
    files = {
        "pkg/__init__.py": "",
        "pkg/conf.py": fixture,
        "pkg/use.py": "from pkg.conf import db\n\n\ndef g():\n    return db()\n",
    }
    report = _analyze(files, "pkg/conf.py", fixture.replace("return 1", "yield 1"))
    assert report.triage.must_inspect == ()


def test_a_test_that_calls_a_changed_signature_is_a_site_and_names_its_file():
    after = BOX.replace('def __init__(self, size, mode="r"):', "def __init__(self, size, mode):")
    report = _analyze(BOX_USERS, "pkg/box.py", after)
    assert _sites(report, "must_inspect") == [("pkg/use.py", 5, ("constructor-mismatch",))]
    assert [(t.test, t.test_file) for t in report.tests] == [
        ("tests/test_box.py::test_mode", "tests/test_box.py")
    ]


PLUGIN = """\
class Plugin:
    LIMIT = 3

    def __init__(self):
        self.ready = True

    @classmethod
    def create(cls, name):
        return cls()

    def handle(self, event):
        return event
"""
PLUGIN_USERS = {
    "pkg/__init__.py": "",
    "pkg/plugin.py": PLUGIN,
    "pkg/host.py": """\
from pkg.plugin import Plugin


def boot(p: Plugin):
    Plugin.create("x")
    if hasattr(p, "handle"):
        setattr(p, "ready", False)
    return Plugin.LIMIT + p.LIMIT, getattr(p, "LIMIT")
""",
}


def _plugin(old: str, new: str) -> Report:
    assert PLUGIN.count(old) == 1
    return _analyze(PLUGIN_USERS, "pkg/plugin.py", PLUGIN.replace(old, new))


def _flagged(report: Report) -> list[tuple[str, int]]:
    return [(e.file, e.line) for e in report.triage.may_impact if e.unanalyzable]


def test_a_renamed_class_attribute_breaks_its_reads_through_the_class_and_instances():
    report = _plugin("LIMIT = 3", "MAX = 3")
    assert _sites(report, "must_inspect") == [
        ("pkg/host.py", 8, ("removed-field",)),  # ``Plugin.LIMIT``
        ("pkg/host.py", 8, ("removed-field",)),  # ``p.LIMIT`` of the annotated ``p``
    ]
    assert _flagged(report) == [("pkg/host.py", 8)]  # ``getattr(p, "LIMIT")``


def test_hasattr_and_setattr_naming_a_changed_method_or_attribute_are_flagged_sites():
    assert _flagged(_plugin("def handle(self, event):", "def handle(self, event, extra):")) == [
        ("pkg/host.py", 6)
    ]
    renamed = _plugin("self.ready = True", "self.is_ready = True")
    assert _flagged(renamed) == [("pkg/host.py", 7)]
    assert renamed.triage.must_inspect == ()


def test_a_classmethod_turned_plain_method_is_only_may_impact_at_its_calls():
    # ``Plugin.create("x")`` breaks, ``p.create("x")`` would not; the site does not say which
    # receiver it has, so no break is proved
    report = _plugin("    @classmethod\n", "")
    assert report.triage.must_inspect == ()
    assert _where(report, "may_impact") == [("pkg/host.py", 5)]


def _planted(tmp_path: Path, files: dict[str, str], history: str) -> Path:
    source = tmp_path / "src"
    for name, text in {**files, "history.toml": history}.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(text, encoding="utf-8")
    return plant_history(source, tmp_path / "repo")


def test_a_call_that_still_binds_is_may_impact_only_where_history_ties_its_file(
    tmp_path: Path,
):
    files = {
        **BOX_USERS,
        "pkg/shelf.py": "from pkg.box import Box\n\n\ndef stack():\n    return [Box(2)]\n",
        "tests/test_shelf.py": "from pkg.box import Box\n\n\ndef test_size():\n"
        "    assert Box(3).size == 3\n",
    }
    # the test changed with the box before; the shelf never did (co-change reads the commits
    # older than the baseline, HEAD, so a later commit follows)
    history = (
        '[[commit]]\nmessage = "box: modes"\ndate = "2024-01-05T10:00:00Z"\n'
        'touch = ["pkg/box.py", "tests/test_box.py"]\n\n'
        '[[commit]]\nmessage = "use: probe"\ndate = "2024-01-09T10:00:00Z"\n'
        'touch = ["pkg/use.py"]\n'
    )
    root = _planted(tmp_path, files, history)
    box = root / "pkg/box.py"
    box.write_text(BOX.replace('mode="r"', 'mode="r", label=None'), encoding="utf-8")
    report = Engine.open(root, {"jedi_confirm": False}).analyze_worktree()
    assert [(c.file, c.score) for c in report.cochange] == [("tests/test_box.py", 1.0)]
    assert report.triage.must_inspect == ()
    # ``Box(1, mode="w")`` binds the new ``__init__``: history keeps it in view
    assert _where(report, "may_impact") == [("tests/test_box.py", 5)]
    # a test that calls it directly is re-run (``tests[]``), not listed as a site to edit
    low = _where(report, "low_risk")
    assert ("tests/test_shelf.py", 5) in low and ("pkg/shelf.py", 5) in low
    assert "tests/test_shelf.py::test_size" in [t.test for t in report.tests]


PRICES = {
    "pkg/__init__.py": "",
    "pkg/price.py": "def total(items):\n    return sum(items)\n",
    # binds the new signature; history ties it to price.py
    "pkg/cart.py": "from pkg.price import total\n\n\ndef checkout(items):\n"
    "    return total(items)\n",
    # unprovable (*rows) and never edited with price.py
    "pkg/report.py": "from pkg.price import total\n\n\ndef summarize(rows):\n"
    "    return total(*rows)\n",
    # a string-keyed lookup of the name, never edited with price.py
    "pkg/legacy.py": "from pkg import price\n\n\ndef run(name):\n"
    '    return getattr(price, "total")\n',
    # four calls from the change: past the walk's depth 3, inside the test map's reach
    "pkg/deep.py": "from pkg.cart import checkout\n\n\ndef one():\n    return checkout([1])\n\n\n"
    "def two():\n    return one()\n\n\ndef three():\n    return two()\n",
    "tests/__init__.py": "",
    "tests/test_deep.py": "from pkg.deep import three\n\n\ndef test_three():\n"
    "    assert three() == 1\n",
    "tests/test_far.py": "from pkg.deep import three\n\n\ndef test_far():\n    assert three()\n",
}
PRICE_HISTORY = "".join(
    f'[[commit]]\nmessage = "price: {n}"\ndate = "2024-01-0{n}T10:00:00Z"\ntouch = {touch}\n\n'
    for n, touch in (
        (2, '["pkg/price.py", "pkg/cart.py", "tests/test_deep.py"]'),
        (3, '["pkg/price.py", "pkg/cart.py"]'),
        (4, '["pkg/price.py"]'),
        (5, '["pkg/report.py", "pkg/legacy.py", "tests/test_far.py"]'),
        (6, '["pkg/deep.py"]'),
    )
)


def test_with_history_a_site_nothing_proves_broken_is_may_only_where_its_file_co_changes(
    tmp_path: Path,
):
    root = _planted(tmp_path, PRICES, PRICE_HISTORY)
    price = root / "pkg/price.py"
    price.write_text("def total(items, tax=0):\n    return sum(items) + tax\n", encoding="utf-8")
    report = Engine.open(root, {"jedi_confirm": False}).analyze_worktree()
    shares = {c.file: c.score for c in report.cochange}
    assert shares["pkg/cart.py"] >= 0.1 and shares["tests/test_deep.py"] >= 0.1
    assert "pkg/report.py" not in shares and "pkg/legacy.py" not in shares
    assert report.triage.must_inspect == ()
    may = {(e.file, e.line, e.relation.value, e.unanalyzable) for e in report.triage.may_impact}
    # the caller history ties to the edit, and the co-changed test only the test map reaches
    assert ("pkg/cart.py", 5, "CalledBy", False) in may
    assert ("tests/test_deep.py", 4, "TestedBy", False) in may
    # the callers of checkout in deep.py are reached too, but history never tied that file;
    # the hidden channel stays MAY-IMPACT without a tie (no analysis can see what it reaches)
    assert {f for f, *_ in may} == {"pkg/cart.py", "tests/test_deep.py", "pkg/legacy.py"}
    assert ("pkg/legacy.py", 5, "CalledBy", True) in may
    assert "pkg/deep.py" in {e.file for e in report.triage.low_risk}
    low = _flags(report, "low_risk")
    # unprovable but unsupported: listed LOW-RISK
    assert ("pkg/report.py", 5, False) in low
    assert [(u.file, u.line) for u in report.unanalyzable] == [("pkg/legacy.py", 5)]
    # a selected test file history does not tie to the edit is re-run, not listed
    assert "tests/test_far.py" not in {e.file for e in report.triage.may_impact}
    assert "tests/test_far.py::test_far" in {t.test for t in report.tests}
    # MAY-IMPACT is ordered by the co-change share that admitted each site
    cart = next(e for e in report.triage.may_impact if e.file == "pkg/cart.py")
    assert cart.conf == round(0.35 + 0.65 * shares["pkg/cart.py"], 4)


def test_with_history_the_edited_modules_own_selected_test_file_is_listed_without_a_tie(
    tmp_path: Path,
):
    own = "from pkg.cart import checkout\n\n\ndef test_checkout():\n    assert checkout([2])\n"
    root = _planted(tmp_path, {**PRICES, "tests/test_price.py": own}, PRICE_HISTORY)
    price = root / "pkg/price.py"
    price.write_text("def total(items, tax=0):\n    return sum(items) + tax\n", encoding="utf-8")
    report = Engine.open(root, {"jedi_confirm": False}).analyze_worktree()
    assert "tests/test_price.py" not in {c.file for c in report.cochange}
    may = {(e.file, e.line, e.relation.value) for e in report.triage.may_impact}
    # test_price.py is price.py's own test file by name, and the test map selects it
    assert ("tests/test_price.py", 4, "TestedBy") in may
    # test_far.py is selected too, but neither history nor its name ties it to price.py
    assert "tests/test_far.py" not in {f for f, *_ in may}


def test_without_history_the_same_edit_keeps_the_unprovable_and_hidden_sites():
    after = "def total(items, tax=0):\n    return sum(items) + tax\n"
    report = _analyze(PRICES, "pkg/price.py", after)
    may = _flags(report, "may_impact")
    assert ("pkg/report.py", 5, False) in may
    assert ("pkg/legacy.py", 5, True) in may
    assert "tests/test_deep.py" not in {f for f, *_ in may}
    # binding proves the call still binds and nothing else ties it: LOW-RISK
    assert ("pkg/cart.py", 5) in _where(report, "low_risk")


STORE = {
    "pkg/__init__.py": "",
    "pkg/store.py": """\
import typing


class Mapping:
    def get(self, key):
        return key


class Params(Mapping):
    def get(self, key):
        return key.lower()

    def items(self):
        return []

    def __repr__(self):
        return "Params()"


class Typed(typing.Mapping):
    def get(self, key):
        return key


class Loose(SomeBase):
    def get(self, key):
        return key


class Table(typing.Mapping):
    pass


class Rows(Table):
    def keys(self):
        return []


class Grand(Params):
    pass


class Leaf(Grand):
    def items(self):
        return [1]
""",
    "pkg/use.py": """\
from pkg.store import Loose, Params, Rows, Typed


def read(p: Params, t: Typed, loose: Loose, rows: Rows):
    return p.get("a"), p.items(), repr(p), t.get("b"), loose.get("c"), rows.keys()
""",
}


def _store(old: str, new: str) -> Report:
    text = STORE["pkg/store.py"]
    assert text.count(old) == 1
    return _analyze(STORE, "pkg/store.py", text.replace(old, new))


def test_a_method_deleted_from_a_class_whose_bases_still_give_it_breaks_no_call():
    # the project base defines ``get``: ``p.get`` now runs ``Mapping.get``
    inherited = _store("    def get(self, key):\n        return key.lower()\n\n", "")
    assert inherited.triage.must_inspect == ()
    # ``object`` gives every class a ``__repr__``
    assert (
        _store('    def __repr__(self):\n        return "Params()"\n', "").triage.must_inspect == ()
    )
    # ``typing.Mapping`` stands for a dict, which has ``get``; an unknown base may have it
    typed = _store(
        "class Typed(typing.Mapping):\n    def get(self, key):\n        return key\n",
        "class Typed(typing.Mapping):\n    pass\n",
    )
    assert typed.triage.must_inspect == ()
    loose = _store(
        "class Loose(SomeBase):\n    def get(self, key):\n        return key\n",
        "class Loose(SomeBase):\n    pass\n",
    )
    assert loose.triage.must_inspect == ()


def test_a_deleted_methods_class_still_has_what_a_base_of_its_project_bases_provides():
    # ``Table`` is a ``typing.Mapping``: ``Rows`` keeps ``keys`` through its project base
    text = STORE["pkg/store.py"].replace("    def keys(self):\n        return []\n", "    pass\n")
    graph, _ = analyze_texts(STORE, "pkg/store.py", text)

    def deleted(entity: str, bases: tuple[str, ...]) -> Change:
        return Change(
            change_type=ChangeType.DELETE,
            entity=QualName(f"pkg.store.{entity}"),
            file="pkg/store.py",
            line_range=(1, 2),
            bases_after=bases,
        )

    assert still_provided(deleted("Rows.keys", ("Table",)), graph) == (True, None)
    assert still_provided(deleted("Rows.lookup", ("Table",)), graph) == (False, None)
    assert still_provided(deleted("Params.items", ("Mapping",)), graph) == (False, None)
    assert still_provided(deleted("Loose.items", ("SomeBase",)), graph) == (True, None)
    # the project method that runs instead, for binding to check calls against
    assert still_provided(deleted("Params.get", ("Mapping",)), graph) == (
        True,
        QualName("pkg.store.Mapping.get"),
    )
    # the nearest class of the MRO that defines it, past one that does not
    assert still_provided(deleted("Leaf.items", ("Grand",)), graph) == (
        True,
        QualName("pkg.store.Params.items"),
    )


# Filters a template language looks up by name: nothing in the graph calls ``do_trim``.
FILTERS = {
    "pkg/__init__.py": "",
    "pkg/filters.py": "def do_trim(value):\n    return value.strip()\n",
    "pkg/render.py": "from pkg import filters\n\n\ndef render(name, value):\n"
    "    return getattr(filters, 'do_' + name)(value)\n",
    "tests/test_filters.py": "from pkg.render import render\n\n\ndef test_trim():\n"
    "    assert render('trim', ' a ') == 'a'\n",
    "tests/test_render.py": "from pkg.render import render\n\n\ndef test_render():\n"
    "    assert render('trim', 'a') == 'a'\n",
}
TRIM_CHARS = "def do_trim(value, chars=None):\n    return value.strip(chars)\n"


def test_a_change_no_path_reaches_a_test_of_selects_its_modules_own_test_files():
    report = _analyze(FILTERS, "pkg/filters.py", TRIM_CHARS)
    selected = {(t.test, t.conf, t.evidence.value) for t in report.tests}
    assert selected == {("tests/test_filters.py::test_trim", 0.5, "named")}
    lines = render_text(report, color=False).splitlines()
    assert (
        "  0.50  tests/test_filters.py::test_trim  (its module's own test file: no path reaches "
        "a test)"
    ) in lines
    # the same test file is no fallback for a change a static path reaches a test from
    after = FILTERS["pkg/render.py"].replace("(name, value)", "(name, value, strict=False)")
    report = _analyze(FILTERS, "pkg/render.py", after)
    assert {(t.test, t.evidence.value) for t in report.tests} == {
        ("tests/test_filters.py::test_trim", "static"),
        ("tests/test_render.py::test_render", "static"),
    }


def test_an_added_definition_alone_selects_no_named_test_file():
    after = FILTERS["pkg/filters.py"] + "\n\ndef do_upper(value):\n    return value.upper()\n"
    assert _analyze(FILTERS, "pkg/filters.py", after).tests == ()


def test_with_history_the_named_fallback_test_file_is_listed_may_impact(tmp_path: Path):
    history = "".join(
        f'[[commit]]\nmessage = "filters {n}"\ndate = "2024-01-0{n}T10:00:00Z"\n'
        'touch = ["pkg/filters.py", "pkg/render.py"]\n\n'
        for n in (2, 3, 4)
    )
    root = _planted(tmp_path, FILTERS, history)
    (root / "pkg/filters.py").write_text(TRIM_CHARS, encoding="utf-8")
    report = Engine.open(root, {"jedi_confirm": False}).analyze_worktree()
    assert report.cochange, "history knows the edit"
    may = {(e.file, e.line, e.relation.value) for e in report.triage.may_impact}
    assert ("tests/test_filters.py", 4, "TestedBy") in may
    assert "tests/test_render.py" not in {f for f, *_ in may}


# An event bus builds the handler's name: no edge reaches ``on_click``, a pattern may.
BUS = {
    "ui/__init__.py": "",
    "ui/widgets.py": "class Button:\n    def on_click(self, x):\n        return x\n\n"
    "    def press(self):\n        return 1\n",
    "ui/bus.py": "def dispatch(widget, kind, x):\n"
    "    handler = getattr(widget, 'on_' + kind, None)\n"
    "    return handler(x) if handler else None\n",
}


def test_a_lookup_of_a_computed_name_the_changed_name_completes_is_unanalyzable():
    after = BUS["ui/widgets.py"].replace("on_click(self, x)", "on_click(self, x, button)")
    report = _analyze(BUS, "ui/widgets.py", after)
    assert [(u.file, u.line, u.reason) for u in report.unanalyzable] == [
        ("ui/bus.py", 2, "getattr of a computed name 'on_*'")
    ]
    may = _flags(report, "may_impact")
    assert ("ui/bus.py", 2, True) in may
    # a name the pattern cannot make is not served there
    after = BUS["ui/widgets.py"].replace("press(self)", "press(self, force)")
    assert _analyze(BUS, "ui/widgets.py", after).unanalyzable == ()


# Settings name a task and a middleware class by their dotted paths; a loader imports them.
SETTINGS = {
    "tasks/__init__.py": "from tasks.mail import send_bye\n",
    "tasks/mail.py": "def send_welcome(address):\n    return address\n\n\n"
    "def send_bye(address):\n    return address\n",
    "app/__init__.py": "",
    "app/middleware.py": "class Audit:\n    def __init__(self, app):\n        self.app = app\n\n"
    "    def process(self, request):\n        return request\n",
    "tests/test_mail.py": "from unittest import mock\n\n\ndef test_send():\n"
    "    with mock.patch('tasks.mail.send_welcome'):\n        pass\n",
    "log.py": "import logging\n\nLOG = logging.getLogger('tasks.mail')\n",
    "settings.py": "TASKS = {'welcome': 'tasks.mail:send_welcome'}\n"
    "MIDDLEWARE = ['app.middleware.Audit', 'e.g.', 'tasks.mail']\n"
    "FAREWELL = 'tasks:send_bye'\n",
}


def test_a_string_naming_the_changed_definition_by_its_dotted_path_is_unanalyzable():
    after = SETTINGS["tasks/mail.py"].replace(
        "send_welcome(address)", "send_welcome(address, lang)"
    )
    report = _analyze(SETTINGS, "tasks/mail.py", after)
    assert [(u.file, u.line, u.reason) for u in report.unanalyzable] == [
        ("settings.py", 1, "a string names 'tasks.mail.send_welcome' by its dotted path"),
        ("tests/test_mail.py", 5, "a string names 'tasks.mail.send_welcome' by its dotted path"),
    ]
    may = _flags(report, "may_impact")
    assert ("settings.py", 1, True) in may
    # in a test it is what a patch replaces: listed, flagged, weak (LOW-RISK without history)
    low = _flags(report, "low_risk")
    assert ("tests/test_mail.py", 5, True) in low
    # module-level code changed: the module's path (a logger's name) is no route to it
    after = SETTINGS["tasks/mail.py"] + "\nprint('loaded')\n"
    assert "log.py" not in {u.file for u in _analyze(SETTINGS, "tasks/mail.py", after).unanalyzable}
    # a method of a class a string names: its loader instantiates it and calls the method
    after = SETTINGS["app/middleware.py"].replace("process(self, request)", "process(self, req, n)")
    report = _analyze(SETTINGS, "app/middleware.py", after)
    assert [(u.file, u.line, u.name) for u in report.unanalyzable] == [
        ("settings.py", 2, "app.middleware.Audit")
    ]
    # a name the strings do not name by its own path, and the module path alone, serve nothing
    after = SETTINGS["tasks/mail.py"].replace("send_bye(address)", "send_bye(address, lang)")
    assert _analyze(SETTINGS, "tasks/mail.py", after).unanalyzable == ()
    # a re-export removed: the string that loads it through the package loses it
    report = _analyze(SETTINGS, "tasks/__init__.py", "")
    assert [(u.file, u.line, u.name) for u in report.unanalyzable] == [
        ("settings.py", 3, "tasks.send_bye")
    ]


# Drivers are imported by a configured name; a deserializer instantiates the class it is told.
LOADERS = {
    "drivers/__init__.py": "",
    "drivers/s3.py": "def upload(path, data):\n    return path, data\n",
    "storage.py": "import importlib\n\n\ndef save(kind, path, data):\n"
    "    driver = importlib.import_module('drivers.' + kind)\n"
    "    return driver.upload(path, data)\n",
    "orm/__init__.py": "",
    "orm/fields.py": "def validate(value):\n    return value\n",
    "orm/models.py": "class User:\n    def __init__(self, name):\n        self.name = name\n\n"
    "    def save(self):\n        return self.name\n\n\ndef field(name):\n"
    "    return getattr(User, name)\n",
    "orm/serde.py": "import json\n\nfrom . import models\n\n\ndef load(payload, name):\n"
    "    cls = getattr(models, payload['type'])\n    getattr(json, name)\n"
    "    return cls(**payload['fields'])\n",
    "tests/test_models.py": "from orm import models\n\n\ndef test_exports():\n"
    "    for name in dir(models):\n        assert getattr(models, name)\n",
}


def test_a_module_or_class_a_computed_name_is_looked_up_in_is_unanalyzable():
    after = LOADERS["drivers/s3.py"].replace("upload(path, data)", "upload(path, data, bucket)")
    report = _analyze(LOADERS, "drivers/s3.py", after)
    assert [(u.file, u.line, u.reason) for u in report.unanalyzable] == [
        ("storage.py", 5, "importlib.import_module of a computed name 'drivers.*'")
    ]
    assert ("storage.py", 5, True) in _flags(report, "may_impact")
    # a constructor of a class in the module the lookup searches (imported relatively)
    after = LOADERS["orm/models.py"].replace("(self, name)", "(self, name, role)")
    report = _analyze(LOADERS, "orm/models.py", after)
    assert [(u.file, u.line, u.reason) for u in report.unanalyzable] == [
        ("orm/models.py", 10, "getattr of a computed name on 'orm.models.User'"),
        ("orm/serde.py", 7, "getattr of a computed name on 'orm.models'"),
        ("tests/test_models.py", 6, "getattr of a computed name on 'orm.models'"),
    ]
    assert ("orm/serde.py", 7, True) in _flags(report, "may_impact")
    # in a test it checks what the module exports, and its run shows a break: weak, LOW-RISK
    assert ("tests/test_models.py", 6, True) in _flags(report, "low_risk")
    # a method too: the looked-up class is instantiated and used; and looked up in its own
    # module (a class defined beside the lookup)
    after = LOADERS["orm/models.py"].replace("save(self)", "save(self, force)")
    assert [
        (u.file, u.line, u.name) for u in _analyze(LOADERS, "orm/models.py", after).unanalyzable
    ] == [
        ("orm/models.py", 10, "orm.models.User"),
        ("orm/serde.py", 7, "orm.models"),
        ("tests/test_models.py", 6, "orm.models"),
    ]
    # another module of the package, and the module's own top-level code, are not looked up
    after = LOADERS["orm/fields.py"].replace("validate(value)", "validate(value, strict)")
    assert _analyze(LOADERS, "orm/fields.py", after).unanalyzable == ()
    after = LOADERS["orm/models.py"] + "\nprint('loaded')\n"
    assert _analyze(LOADERS, "orm/models.py", after).unanalyzable == ()


# Encoders register themselves under a format name; the exporter looks the format up.
REGISTRY = {
    "export/__init__.py": "",
    "export/registry.py": "ENCODERS = {}\nHOOKS = []\n\n\ndef register(name):\n"
    "    def wrap(function):\n        ENCODERS[name] = function\n        return function\n\n"
    "    return wrap\n\n\ndef hook(cls):\n    HOOKS.append(cls)\n    return cls\n\n\n"
    "def logged(function):\n    print(ENCODERS)\n    return function\n\n\n"
    "def add_encoder(name, function):\n    ENCODERS[name] = function\n",
    "export/sinks.py": "SINKS = {}\nLIVE = []\n\n\nclass Sink:\n    kind = ''\n\n"
    "    def __init_subclass__(cls):\n        SINKS[cls.kind] = cls\n\n"
    "    def __init__(self):\n        LIVE.append(self)\n\n\n"
    "class FileSink(Sink):\n    kind = 'file'\n\n    def open(self, path):\n        return path\n",
    "export/pipe.py": "from export.sinks import LIVE, SINKS\n\n\ndef sink_for(kind):\n"
    "    return SINKS[kind]()\n\n\ndef close_all():\n    return [s.open('x') for s in LIVE]\n",
    "export/formats.py": "from export.registry import add_encoder\n\n\n"
    "def encode_upper(rows):\n    return str(rows).upper()\n\n\n"
    "add_encoder('upper', encode_upper)\n",
    "export/encoders.py": "import json\n\nfrom export.registry import hook, logged, register\n\n\n"
    "@register('json')\ndef encode_json(rows):\n    return json.dumps(rows)\n\n\n"
    "@logged\ndef encode_text(rows):\n    return str(rows)\n\n\n"
    "@hook\nclass Flush:\n    def run(self, rows):\n        return rows\n",
    "export/exporter.py": "from export.registry import ENCODERS, HOOKS\n\n\n"
    "def export(rows, fmt):\n    encoder = ENCODERS[fmt]\n"
    "    for h in HOOKS:\n        h().run(rows)\n    return encoder(rows)\n",
}


def test_the_readers_of_a_registry_a_decorator_stores_the_changed_definition_in_are_unanalyzable():
    after = REGISTRY["export/encoders.py"].replace("encode_json(rows)", "encode_json(rows, indent)")
    report = _analyze(REGISTRY, "export/encoders.py", after)
    reason = "the registry 'export.registry.ENCODERS' holds it (@register)"
    # every read of the registry outside the registering function: each may dispatch to it
    assert [(u.file, u.line, u.entity, u.reason) for u in report.unanalyzable] == [
        ("export/exporter.py", 5, "export.exporter.export", reason),
        ("export/registry.py", 19, "export.registry.logged", reason),
    ]
    assert ("export/exporter.py", 5, True) in _flags(report, "may_impact")
    # a method of a class a decorator registers: its readers instantiate it and call the method
    after = REGISTRY["export/encoders.py"].replace("run(self, rows)", "run(self, rows, force)")
    report = _analyze(REGISTRY, "export/encoders.py", after)
    assert [(u.file, u.line, u.reason) for u in report.unanalyzable] == [
        ("export/exporter.py", 6, "the registry 'export.registry.HOOKS' holds it (@hook)")
    ]
    # a decorator that only reads the container registers nothing
    after = REGISTRY["export/encoders.py"].replace("encode_text(rows)", "encode_text(rows, n)")
    assert _analyze(REGISTRY, "export/encoders.py", after).unanalyzable == ()
    # registered by a call it is an argument of; the other function storing there is no read
    after = REGISTRY["export/formats.py"].replace("encode_upper(rows)", "encode_upper(rows, n)")
    report = _analyze(REGISTRY, "export/formats.py", after)
    reason = "the registry 'export.registry.ENCODERS' holds it (passed to add_encoder())"
    assert [(u.file, u.line, u.reason) for u in report.unanalyzable] == [
        ("export/exporter.py", 5, reason),
        ("export/registry.py", 19, reason),
    ]
    # a subclass a base's __init_subclass__ registers, instances its __init__ keeps; a file
    # that reads the registry only as ``SINKS[kind]()`` (no edge) is flagged where it imports it
    after = REGISTRY["export/sinks.py"].replace("open(self, path)", "open(self, path, mode)")
    report = _analyze(REGISTRY, "export/sinks.py", after)
    assert [(u.file, u.line, u.reason) for u in report.unanalyzable] == [
        (
            "export/pipe.py",
            1,
            "the registry 'export.sinks.SINKS' holds it (__init_subclass__ of Sink)",
        ),
        ("export/pipe.py", 9, "the registry 'export.sinks.LIVE' holds it (__init__ of Sink)"),
    ]
