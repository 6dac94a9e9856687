"""Cached resolutions: a warm load reuses a file's edges only when nothing it read has changed."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import impact_ls
from impact_ls.config import Settings
from impact_ls.graph.builder import GraphBuilder
from impact_ls.graph.extract import extract_facts
from impact_ls.graph.facts import FileFacts
from impact_ls.graph.modules import module_for, source_roots
from impact_ls.graph.project import ProjectIndex
from impact_ls.graph.resolved import CachedResolution, decode_resolution, stamped_sources
from impact_ls.graph.store import FactStore
from tests.graph.test_builder import VARIANTS, fresh, snapshot


def _facts(texts: dict[str, str]) -> list[FileFacts]:
    roots = source_roots(texts)
    out = []
    for path in sorted(texts):
        module, is_package = module_for(path, roots)
        out.append(extract_facts(texts[path], file=path, module=module, is_package=is_package))
    return out


def _resolutions(texts: dict[str, str]) -> dict[str, tuple[str, CachedResolution]]:
    """A load of ``texts`` through an empty cache: every file's encoded resolution, by path."""
    builder = GraphBuilder()
    builder.load(_facts(texts), cached=[])
    rows = list(builder.take_resolutions())
    assert list(builder.take_resolutions()) == []  # handed out once
    out = {}
    for path, data in rows:
        decoded = decode_resolution(data)
        assert decoded is not None
        out[path] = (texts[path], decoded)
    return out


def _warm(before: dict[str, str], after: dict[str, str]) -> GraphBuilder:
    """Load ``after`` with the resolutions of ``before`` for the files whose text is unchanged."""
    cached = {
        path: resolution
        for path, (text, resolution) in _resolutions(before).items()
        # the store matches rows by content hash; rows of vanished files must be skipped
        if after.get(path) == text or path not in after
    }
    builder = GraphBuilder()
    builder.load(_facts(after), cached=sorted(cached.items()))
    return builder


def test_an_unchanged_project_reuses_every_file_and_equals_a_cold_load() -> None:
    texts = {path: variants[0] for path, variants in VARIANTS.items()}
    warm = _warm(texts, texts)
    assert warm.reused == len(texts)
    assert list(warm.take_resolutions()) == []
    assert snapshot(warm.graph) == snapshot(fresh(texts).graph)


def test_a_file_whose_import_changed_its_interface_is_resolved_again() -> None:
    before = {path: variants[0] for path, variants in VARIANTS.items()}
    # pkg/a.py now exports Base as an alias of pkg.b.Child and helper takes two parameters:
    # pkg/b.py (unchanged text) calls helper and subclasses Base, so its edges must change
    after = {**before, "pkg/a.py": VARIANTS["pkg/a.py"][1]}
    warm = _warm(before, after)
    cold = fresh(after)
    assert snapshot(warm.graph) == snapshot(cold.graph)
    resolved_again = {path for path, _ in warm.take_resolutions()}
    assert {"pkg/a.py", "pkg/b.py"} <= resolved_again
    assert "ns/x/y.py" not in resolved_again  # reads nothing pkg/a.py defines
    assert warm.reused == len(after) - len(resolved_again)
    assert sorted(
        e.target for e in warm.graph.edges() if e.file == "pkg/b.py" and e.source == "pkg.b.Child"
    ) == sorted(
        e.target for e in cold.graph.edges() if e.file == "pkg/b.py" and e.source == "pkg.b.Child"
    )


def test_a_damaged_record_is_a_miss() -> None:
    texts = {"m.py": "def f():\n    return 1\n"}
    builder = GraphBuilder()
    builder.load(_facts(texts), cached=[])
    [(path, data)] = list(builder.take_resolutions())
    assert path == "m.py"
    assert decode_resolution(data[:-1] + bytes([data[-1] ^ 1])) is None
    assert decode_resolution(b"") is None


def test_the_store_keeps_one_resolution_per_path_and_matches_it_by_content_hash() -> None:
    store = FactStore.in_memory()
    texts = {"m.py": "def f():\n    return 1\n"}
    builder = GraphBuilder()
    builder.load(_facts(texts), cached=[])
    [(path, data)] = list(builder.take_resolutions())
    assert store.put_resolutions([(path, "sha1", data)]) == 1
    assert list(store.iter_resolutions({"m.py": "sha2"})) == []
    assert [path for path, _ in store.iter_resolutions({"m.py": "sha1"})] == ["m.py"]
    store.prune([])
    assert list(store.iter_resolutions({"m.py": "sha1"})) == []


_STATE = st.fixed_dictionaries(
    {},
    optional={path: st.sampled_from(variants) for path, variants in VARIANTS.items()},
)


@settings(max_examples=40, deadline=None, database=None)
@given(before=_STATE, after=_STATE)
def test_a_warm_load_from_any_earlier_state_equals_a_fresh_build(
    before: dict[str, str], after: dict[str, str]
) -> None:
    assert snapshot(_warm(before, after).graph) == snapshot(fresh(after).graph)


def test_a_warm_project_build_after_an_edit_equals_a_cold_one(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    texts = {path: variants[0] for path, variants in VARIANTS.items()}
    for path, text in texts.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    ProjectIndex.open(root, Settings(), jobs=1)
    (root / "pkg/a.py").write_text(VARIANTS["pkg/a.py"][1])
    warm = ProjectIndex.open(root, Settings(), jobs=1)
    assert warm.stats.from_cache == len(texts) - 1
    shutil.rmtree(root / ".impact_ls")
    cold = ProjectIndex.open(root, Settings(), jobs=1)
    assert cold.stats.from_cache == 0
    assert snapshot(warm.graph) == snapshot(cold.graph)
    assert ProjectIndex.open(root, Settings(), jobs=1).stats.from_cache == len(texts)


def _imported_modules(path: Path, package_dir: Path) -> set[Path]:
    """The files of the ``impact_ls`` modules that ``path`` imports (any import statement)."""
    found: set[Path] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            if not name.startswith("impact_ls."):
                continue
            base = package_dir.parent.joinpath(*name.split("."))
            for candidate in (base.with_suffix(".py"), base / "__init__.py"):
                if candidate.is_file():
                    found.add(candidate)
    return found


def test_the_stamp_covers_every_module_the_resolver_runs() -> None:
    # a cached resolution is reused only under the same stamp: code that makes edges but is
    # left out of it would let a warm start serve edges the current code no longer makes
    package_dir = Path(impact_ls.__file__).parent
    graph = package_dir / "graph"
    todo = [*sorted((graph / "resolve").glob("*.py")), graph / "builder.py", graph / "resolved.py"]
    needed: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in needed:
            continue
        needed.add(path)
        # what the resolver imports runs when it resolves; the builder's own imports do not
        if path.parent == graph / "resolve" or path.name in ("facts.py", "fastinit.py", "kinds.py"):
            todo.extend(_imported_modules(path, package_dir))
    assert len(needed) > 12
    stamped = {p.resolve() for p in stamped_sources()}
    assert sorted(str(p) for p in needed if p.resolve() not in stamped) == []
