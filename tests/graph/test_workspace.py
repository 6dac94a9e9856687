"""File discovery and reading: excludes, .gitignore, globs, symlinks and every kind of bad file."""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path

import pytest

from impact_ls.config import Settings
from impact_ls.graph.workspace import (
    Discovery,
    PathFilter,
    SkipKind,
    Skipped,
    decode_source,
    discover_files,
    read_source,
)

DEFAULT = Settings()


def _tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def _git_init(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def test_walk_lists_py_files_sorted_and_skips_default_excludes(tmp_path: Path):
    _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/b.py": "x = 1\n",
            "pkg/a.py": "x = 1\n",
            "setup.py": "",
            "README.md": "not python",
            "pkg/data.json": "{}",
            ".venv/lib/site.py": "",
            "node_modules/x/y.py": "",
            "pkg/__pycache__/a.cpython-311.py": "",
            "build/lib/pkg/a.py": "",
            ".impact_ls/junk.py": "",
            ".git/hooks/h.py": "",
        },
    )
    assert discover_files(tmp_path, DEFAULT) == Discovery(
        files=("pkg/__init__.py", "pkg/a.py", "pkg/b.py", "setup.py"), skipped=()
    )


def test_gitignore_prunes_dirs_and_files_when_root_is_a_git_repo(tmp_path: Path):
    _git_init(tmp_path)
    _tree(
        tmp_path,
        {
            ".gitignore": "generated/\n*_pb2.py\n/scratch.py\n",
            "pkg/a.py": "",
            "pkg/msg_pb2.py": "",
            "generated/deep/x.py": "",
            "scratch.py": "",
            "pkg/scratch.py": "",
        },
    )
    assert discover_files(tmp_path, DEFAULT).files == ("pkg/a.py", "pkg/scratch.py")


def test_gitignore_applies_when_root_is_a_subfolder_of_the_repo(tmp_path: Path):
    _git_init(tmp_path)
    _tree(
        tmp_path,
        {
            ".gitignore": "sub/skip/\n",
            "sub/keep.py": "",
            "sub/skip/x.py": "",
        },
    )
    assert discover_files(tmp_path / "sub", DEFAULT).files == ("keep.py",)


def test_a_root_outside_git_ignores_gitignore_files(tmp_path: Path):
    # Not a repository: a stray .gitignore is not git's business, so nothing is ignored by it.
    _tree(tmp_path, {".gitignore": "a.py\n", "a.py": "", "b.py": ""})
    assert discover_files(tmp_path, DEFAULT).files == ("a.py", "b.py")


def test_include_and_exclude_globs(tmp_path: Path):
    _tree(
        tmp_path,
        {
            "src/pkg/a.py": "",
            "src/pkg/migrations/0001.py": "",
            "src/pkg/gen/x.py": "",
            "docs/conf.py": "",
            "tests/test_a.py": "",
        },
    )
    settings = Settings(exclude=("migrations", "src/pkg/gen/"), include=("src/*", "tests/*"))
    assert discover_files(tmp_path, settings).files == ("src/pkg/a.py", "tests/test_a.py")
    only_exclude = Settings(exclude=("docs/**", "**/test_*.py"))
    assert discover_files(tmp_path, only_exclude).files == (
        "src/pkg/a.py",
        "src/pkg/gen/x.py",
        "src/pkg/migrations/0001.py",
    )


def test_path_filter_agrees_with_the_walk(tmp_path: Path):
    _git_init(tmp_path)
    _tree(tmp_path, {".gitignore": "out/\n", "a.py": ""})
    path_filter = PathFilter(tmp_path, Settings(exclude=("legacy",)))
    assert path_filter.allows("pkg/a.py")
    assert not path_filter.allows("out/a.py")
    assert not path_filter.allows(".venv/lib/a.py")
    assert not path_filter.allows("legacy/a.py")
    assert not path_filter.allows("pkg/readme.txt")
    assert not path_filter.allows("../elsewhere.py")


def test_symlink_loop_is_skipped_and_the_walk_ends(tmp_path: Path, caplog):
    _tree(tmp_path, {"pkg/a.py": ""})
    os.symlink(tmp_path / "pkg", tmp_path / "pkg" / "again")  # pkg/again -> pkg
    os.symlink("self.py", tmp_path / "pkg" / "self.py")  # self.py -> self.py
    with caplog.at_level(logging.INFO, logger="impact_ls.graph.workspace"):
        found = discover_files(tmp_path, DEFAULT)
    assert found.files == ("pkg/a.py",)
    assert [(s.path, s.kind) for s in found.skipped] == [
        ("pkg/again", SkipKind.SYMLINK_LOOP),
        ("pkg/self.py", SkipKind.SYMLINK_LOOP),
    ]
    assert "skipping pkg/again: symlink loop" in caplog.text


def test_symlinks_out_of_the_root_are_not_followed(tmp_path: Path):
    outside = _tree(tmp_path / "outside", {"lib/x.py": "", "y.py": ""})
    root = _tree(tmp_path / "root", {"a.py": "", "pkg/b.py": ""})
    os.symlink(outside / "lib", root / "lib")
    os.symlink(outside / "y.py", root / "y.py")
    os.symlink(root / "pkg" / "b.py", root / "alias.py")  # inside the root: indexed
    os.symlink(root / "pkg", root / "pkg_link")  # inside: indexed at its real path only
    found = discover_files(root, DEFAULT)
    assert found.files == ("a.py", "alias.py", "pkg/b.py")
    assert [(s.path, s.kind) for s in found.skipped] == [
        ("lib", SkipKind.OUTSIDE_ROOT),
        ("y.py", SkipKind.OUTSIDE_ROOT),
    ]


def test_an_empty_root_has_nothing_to_index(tmp_path: Path):
    assert discover_files(tmp_path, DEFAULT) == Discovery(files=(), skipped=())


def test_read_source_plain_and_empty(tmp_path: Path):
    _tree(tmp_path, {"a.py": "x = 'é'\n", "empty.py": ""})
    assert read_source(tmp_path, "a.py", DEFAULT) == "x = 'é'\n"
    assert read_source(tmp_path, "empty.py", DEFAULT) == ""


def test_read_source_honours_a_coding_cookie_and_a_bom(tmp_path: Path):
    latin = "# -*- coding: latin-1 -*-\nname = 'café'\n".encode("latin-1")
    bom = b"\xef\xbb\xbfx = 1\n"
    _tree(tmp_path, {"latin.py": latin, "bom.py": bom})
    expected = "# -*- coding: latin-1 -*-\nname = 'café'\n"
    assert read_source(tmp_path, "latin.py", DEFAULT) == expected
    assert read_source(tmp_path, "bom.py", DEFAULT) == "x = 1\n"


@pytest.mark.parametrize(
    ("content", "kind", "reason_start"),
    [
        (b"x = '\xff\xfe'\n", SkipKind.UNDECODABLE, "undecodable as utf-8"),
        (b"a = 1\nb = 2\nx = '\xff'\n", SkipKind.UNDECODABLE, "undecodable as utf-8: "),
        (b"# coding: nope\nx = 1\n", SkipKind.UNDECODABLE, "undecodable: unknown encoding"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00", SkipKind.BINARY, "binary (contains NUL bytes)"),
    ],
)
def test_bad_bytes_are_skipped_with_a_reason(
    tmp_path: Path, caplog, content: bytes, kind: SkipKind, reason_start: str
):
    _tree(tmp_path, {"bad.py": content})
    with caplog.at_level(logging.INFO, logger="impact_ls.graph.workspace"):
        result = read_source(tmp_path, "bad.py", DEFAULT)
    assert isinstance(result, Skipped)
    assert (result.path, result.kind) == ("bad.py", kind)
    assert result.reason.startswith(reason_start)
    assert f"skipping bad.py: {result.reason}" in caplog.text


def test_a_file_over_the_size_cap_is_skipped(tmp_path: Path):
    _tree(tmp_path, {"big.py": "x = 1\n" * 10, "small.py": "x = 1\n"})
    settings = Settings(max_file_bytes=50)
    big = read_source(tmp_path, "big.py", settings)
    assert big == Skipped(
        path="big.py", kind=SkipKind.TOO_LARGE, reason="larger than 50 bytes (60 bytes)"
    )
    assert read_source(tmp_path, "small.py", settings) == "x = 1\n"


def test_the_default_cap_is_one_mebibyte(tmp_path: Path):
    line = "x = 1\n"
    _tree(tmp_path, {"big.py": line * (1024 * 1024 // len(line) + 1)})
    result = read_source(tmp_path, "big.py", DEFAULT)
    assert isinstance(result, Skipped)
    assert result.kind is SkipKind.TOO_LARGE


def test_a_vanished_file_is_skipped(tmp_path: Path):
    _tree(tmp_path, {"gone.py": "x = 1\n"})
    found = discover_files(tmp_path, DEFAULT)
    (tmp_path / "gone.py").unlink()
    result = read_source(tmp_path, found.files[0], DEFAULT)
    assert result == Skipped(
        path="gone.py", kind=SkipKind.VANISHED, reason="vanished before it could be read"
    )


def test_a_directory_where_a_file_is_expected_is_unreadable(tmp_path: Path):
    # Tests run as root, so chmod 000 would not stop a read; a directory does.
    (tmp_path / "weird.py").mkdir()
    result = read_source(tmp_path, "weird.py", DEFAULT)
    assert isinstance(result, Skipped)
    assert result.kind is SkipKind.UNREADABLE
    assert result.reason.startswith("unreadable: ")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads anything")
def test_a_chmod_000_file_is_unreadable(tmp_path: Path):
    _tree(tmp_path, {"secret.py": "x = 1\n"})
    (tmp_path / "secret.py").chmod(0)
    result = read_source(tmp_path, "secret.py", DEFAULT)
    assert isinstance(result, Skipped)
    assert result.kind is SkipKind.UNREADABLE


def test_decode_source_leaves_syntax_errors_to_the_extractor():
    assert decode_source(b"def broken(:\n", path="x.py") == "def broken(:\n"


def test_a_root_inside_a_folder_its_repository_ignores_is_indexed_whole(tmp_path: Path):
    # An unpacked sdist under an ignored data folder: the outer repo's rules do not apply.
    _git_init(tmp_path)
    _tree(tmp_path, {".gitignore": "data/\n*.py\n", "data/proj/pkg/a.py": ""})
    assert discover_files(tmp_path / "data" / "proj", DEFAULT).files == ("pkg/a.py",)
