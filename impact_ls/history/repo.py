"""Read-only git access through pygit2: revisions, file texts, dirty files and history.

This is the only module of the package that opens a git repository (``plant.py`` writes fixture
repositories for tests and the demo); a whole history it has ``gitlog.py`` read through the git
command when one is installed. Every method answers about the work tree of a non-bare
repository. A ``GitRepo`` wraps one ``pygit2.Repository``, which is not safe to share between
threads: give each worker its own ``GitRepo.discover``.

Degraded repositories have defined answers: a folder outside git → ``discover`` returns ``None``;
an empty repository → ``head_sha()`` is ``None`` and ``resolve`` raises ``RevisionError``; a
detached HEAD → ``branch_name()`` is ``None``; a shallow clone → ``is_shallow()`` and the
history walk ends at the shallow boundary (``CommitKind.BOUNDARY``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Container, Iterator
from itertools import islice
from pathlib import Path, PurePosixPath

import pygit2
from pygit2.enums import DeltaStatus, DiffOption, ReferenceType, SortMode

from impact_ls.errors import RevisionError
from impact_ls.history.commits import CommitFacts, CommitKind, commit_kind
from impact_ls.history.gitlog import read_history

logger = logging.getLogger(__name__)

# The statuses whose file exists only on the old side of a delta.
_GONE = frozenset({DeltaStatus.DELETED})
# libgit2 raises these for a revision that is malformed, absent or not a commit.
_REV_ERRORS = (KeyError, ValueError, TypeError, pygit2.GitError)
# One entry of a raw git tree object: "<octal mode> <name>\0<20-byte object id>".
_TREE_ENTRY = re.compile(rb"[0-7]+ [^\x00]+\x00[\x00-\xff]{20}")
_OID_BYTES = 20
_MODE_TYPE = 0o170000
_MODE_TREE = 0o040000
# The modes git writes, by their bytes in a tree object; anything else is parsed.
_MODE_TYPES = {
    b"40000": _MODE_TREE,
    b"100644": 0o100000,
    b"100755": 0o100000,
    b"120000": 0o120000,
    b"160000": 0o160000,
}


class GitRepo:
    """A non-bare git repository opened for reading, rooted at its work tree."""

    __slots__ = ("_repo", "root")

    def __init__(self, repo: pygit2.Repository, root: Path) -> None:
        self._repo = repo
        self.root = root

    @classmethod
    def discover(cls, path: Path) -> GitRepo | None:
        """The repository whose work tree contains ``path``, or ``None`` outside git (or bare)."""
        start = path if path.is_dir() else path.parent
        try:
            found = pygit2.discover_repository(str(start))
            if found is None:
                return None
            repo = pygit2.Repository(found)
        except pygit2.GitError as exc:
            logger.info("no usable git repository at %s: %s", start, exc)
            return None
        if repo.is_bare or repo.workdir is None:
            logger.info("git repository at %s is bare; no work tree to compare", found)
            return None
        workdir = Path(repo.workdir).resolve()
        if not start.resolve().is_relative_to(workdir):
            # A linked worktree copied or moved by hand: its ``.git`` file still names the
            # original's metadata, which names the original folder. Reading that folder's files
            # and HEAD as this one's would mix two checkouts.
            logger.warning(
                "%s: git says its work tree is %s (a worktree copied or moved by hand? "
                "`git worktree repair` fixes it); no git history meanwhile",
                start,
                workdir,
            )
            return None
        return cls(repo, workdir)

    def head_sha(self) -> str | None:
        """The commit sha HEAD points at, or ``None`` for a repository without commits."""
        if self._repo.head_is_unborn:
            return None
        return str(self._repo.head.target)

    def resolve(self, rev: str) -> str:
        """The full sha of the commit ``rev`` names; ``RevisionError`` when it names none."""
        return str(self._commit(rev).id)

    def commit_time(self, rev: str) -> int:
        """The committer time of ``rev`` in seconds since the epoch."""
        return int(self._commit(rev).commit_time)

    def branch_name(self) -> str | None:
        """The checked-out branch (also before its first commit), or ``None`` when detached."""
        try:
            head = self._repo.lookup_reference("HEAD")
        except (KeyError, pygit2.GitError):
            return None
        if head.type != ReferenceType.SYMBOLIC:
            return None
        target = str(head.target)
        return target.removeprefix("refs/heads/")

    def commits_since(self, old: str) -> int | None:
        """How many commits HEAD is ahead of commit ``old``; None when HEAD's history lacks it.

        None also when ``old`` is unknown here (rebased away and collected) or there is no HEAD.
        """
        if self._repo.head_is_unborn:
            return None
        try:
            ahead, behind = self._repo.ahead_behind(self._repo.head.target, pygit2.Oid(hex=old))
        except (ValueError, KeyError, pygit2.GitError):
            return None
        return int(ahead) if behind == 0 else None

    def is_shallow(self) -> bool:
        """Whether history was cut by a shallow clone."""
        return bool(self._repo.is_shallow)

    def is_ignored(self, path: str) -> bool:
        """Whether the root-relative ``path`` is excluded by .gitignore rules."""
        try:
            return bool(self._repo.path_is_ignored(path))
        except pygit2.GitError:
            return False

    def file_at(self, rev: str, path: str) -> str | None:
        """The UTF-8 text of the root-relative ``path`` at ``rev``; ``None`` if absent or binary."""
        commit = self._commit(rev)
        rel = _relative(path)
        if rel is None:
            return None
        try:
            entry = commit.tree[rel]
        except KeyError:
            return None
        blob = self._repo.get(entry.id)
        if not isinstance(blob, pygit2.Blob):
            return None
        try:
            return blob.data.decode("utf-8")
        except UnicodeDecodeError:
            logger.debug("%s at %s is not UTF-8", rel, rev)
            return None

    def changed_files(self, rev: str) -> list[str]:
        """Sorted ``.py`` paths whose work-tree state differs from ``rev``.

        Staged, unstaged, deleted and untracked-but-not-ignored files all count, as
        ``git diff <rev>`` plus ``git status`` would show them; a file staged and then reverted
        in the work tree does not.
        """
        tree = self._commit(rev).tree
        index = self._repo.index
        index.read()
        flags = (
            DiffOption.INCLUDE_UNTRACKED
            | DiffOption.RECURSE_UNTRACKED_DIRS
            | DiffOption.IGNORE_SUBMODULES
        )
        # Merging the two diffs is how libgit2 itself emulates `git diff <tree>` with the index;
        # the merge keeps untracked deltas only when the diff merged into asked for them too.
        staged = tree.diff_to_index(index, flags)
        unstaged = index.diff_to_workdir(flags)
        staged.merge(unstaged)
        paths: set[str] = set()
        for delta in staged.deltas:
            if delta.status in (DeltaStatus.UNMODIFIED, DeltaStatus.IGNORED):
                continue
            side = delta.old_file if delta.status in _GONE else delta.new_file
            if side.path.endswith(".py") and not self._same_as_tree(tree, side.path, delta):
                paths.add(side.path)
        return sorted(paths)

    def is_ancestor(self, old: str) -> bool:
        """Whether commit ``old`` is HEAD or one of its ancestors (False when unknown here)."""
        if self._repo.head_is_unborn:
            return False
        head = self._repo.head.target
        try:
            oid = pygit2.Oid(hex=old)
            return oid == head or bool(self._repo.descendant_of(head, oid))
        except (ValueError, KeyError, pygit2.GitError):
            return False

    def history(
        self, *, hide: str | None = None, known: Container[str] = frozenset()
    ) -> Iterator[CommitFacts]:
        """Every commit reachable from HEAD and not from ``hide``, newest first.

        The order is topological (no commit before one of its descendants), newer committer
        time first among the rest, so a commit's parent is read soon after it. A ``CHANGE``
        commit (one parent) carries the paths it changed against its parent (no rename
        detection, like ``git log --no-renames``); merges, roots and shallow-boundary commits
        carry none. A commit in ``known`` is yielded as ``SEEN`` with its sha and time only:
        the caller has read it before. An empty repository yields nothing.
        """
        if self._repo.head_is_unborn:
            return
        boundary = self._shallow_boundary()
        target = self._repo.head.target
        if not isinstance(target, pygit2.Oid):
            return
        if hide is None and not known:
            # a whole history: git compares trees several times faster (gitlog.py)
            logged = read_history(Path(self._repo.path), str(target), boundary)
            if logged is not None:
                yield from logged
                return
        walker = self._repo.walk(target, SortMode.TOPOLOGICAL | SortMode.TIME)
        if hide is not None:
            try:
                walker.hide(pygit2.Oid(hex=hide))
            except (ValueError, KeyError, pygit2.GitError):
                logger.debug("cannot hide %s from the history walk; walking all of it", hide)
        trees = _TreeDiffer(self._repo.odb)
        for commit in walker:
            sha = str(commit.id)
            when = int(commit.commit_time)
            if sha in known:
                yield CommitFacts(sha=sha, time=when, message="", kind=CommitKind.SEEN)
                continue
            parent_ids = [] if sha in boundary else commit.parent_ids
            files: tuple[str, ...] = ()
            kind = commit_kind(sha, len(parent_ids), boundary)
            if kind is CommitKind.CHANGE:
                parent = self._repo.get(parent_ids[0])
                if isinstance(parent, pygit2.Commit):
                    files = trees.changed_paths(parent.tree_id, commit.tree_id)
                else:  # a parent this clone lacks
                    kind = CommitKind.BOUNDARY
            yield CommitFacts(
                sha=sha,
                time=when,
                message=_message(commit),
                kind=kind,
                parent=str(parent_ids[0]) if parent_ids else None,
                files=files,
            )

    def _commit(self, rev: str) -> pygit2.Commit:
        if self._repo.head_is_unborn:
            raise RevisionError(
                f"{self.root} has no commits yet, so {rev!r} names nothing; "
                "commit once, or use the saved text as the baseline"
            )
        try:
            obj = self._repo.revparse_single(rev)
            commit = obj.peel(pygit2.Commit)
        except _REV_ERRORS as exc:
            raise RevisionError(
                f"{rev!r} names no commit in {self.root}; "
                "pass a branch, tag or commit sha (for example HEAD or HEAD~1)"
            ) from exc
        return commit

    def _shallow_boundary(self) -> frozenset[str]:
        """Shas whose parents a shallow clone cut off; libgit2 shows them as parentless."""
        if not self._repo.is_shallow:
            return frozenset()
        try:
            text = (Path(self._repo.path) / "shallow").read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError):
            return frozenset()
        return frozenset(text.split())

    def _same_as_tree(self, tree: pygit2.Tree, path: str, delta: pygit2.DiffDelta) -> bool:
        """Whether the work-tree file still has the content ``tree`` holds (a reverted stage)."""
        if delta.status != DeltaStatus.MODIFIED:
            return False
        try:
            old = tree[path].id
        except KeyError:
            return False
        try:
            # hashfile applies the repository's filters (eol, attributes) and writes nothing.
            return bool(self._repo.hashfile(path) == old)
        except (OSError, pygit2.GitError):
            return False


class _TreeDiffer:
    """The paths ``Tree.diff_to_tree`` reports, from raw tree objects, skipping equal subtrees.

    libgit2's tree diff expands both trees to every file they hold, so each commit cost time in
    proportion to the size of the whole project; like ``git log`` this compares entries level by
    level and descends only into subtrees whose ids differ. Walking history newest first, a
    commit's trees are mostly its child's parent trees, so parsed trees are kept (the most
    recently read ``MAX_TREES``; older ones are dropped in a batch) and read once per walk.

    The paths libgit2 reports without rename detection, each once, as ``git log --name-only``
    lists them: a changed blob, symlink or submodule (also a mode change within one type) is one
    path; an entry whose type changes is deleted and added (a file turned symlink is one path,
    a file turned folder the file and every file of the folder); sorted by path.
    """

    __slots__ = ("_cache", "_odb")

    MAX_TREES = 16384

    def __init__(self, odb: pygit2.Odb) -> None:
        self._odb = odb
        # Keyed by the raw 20-byte id, as tree entries name their children.
        self._cache: dict[bytes, frozenset[bytes]] = {}

    def changed_paths(self, old: pygit2.Oid, new: pygit2.Oid) -> tuple[str, ...]:
        """Paths that differ between the trees ``old`` and ``new``, sorted, each once."""
        paths: list[str] = []
        self._diff(old.raw, new.raw, "", paths)
        if len(self._cache) > self.MAX_TREES:
            # dicts keep insertion order: drop the oldest half at once
            for key in list(islice(self._cache, len(self._cache) // 2)):
                del self._cache[key]
        return tuple(sorted(set(paths)))

    def _entries(self, oid: bytes) -> frozenset[bytes]:
        entries = self._cache.get(oid)
        if entries is None:
            _, data = self._odb.read(pygit2.Oid(raw=oid))
            entries = self._cache[oid] = frozenset(_TREE_ENTRY.findall(data))
        return entries

    def _diff(self, old: bytes, new: bytes, prefix: str, paths: list[str]) -> None:
        if old == new:
            return
        before, after = self._entries(old), self._entries(new)
        gone, came = before - after, after - before
        if len(gone) == 1 and len(came) == 1:
            # The common case: one entry changed its id (a file edited, a folder below it).
            (was_mode, was_name, was_id), (now_mode, now_name, now_id) = map(
                _split_entry, (*gone, *came)
            )
            if was_name == now_name:
                self._pair(
                    prefix + _decode(now_name), (was_mode, was_id), (now_mode, now_id), paths
                )
                return
        # Entries present on both sides unchanged cancel out; what remains is keyed by name.
        sides: dict[bytes, list[tuple[int, bytes] | None]] = {}
        for side, entries in ((0, gone), (1, came)):
            for entry in entries:
                mode, name, oid = _split_entry(entry)
                sides.setdefault(name, [None, None])[side] = (mode, oid)
        for name, (was, now) in sides.items():
            path = prefix + _decode(name)
            if was is not None and now is not None:
                self._pair(path, was, now, paths)
            elif was is not None:
                self._one(path, *was, paths)
            elif now is not None:
                self._one(path, *now, paths)

    def _pair(
        self, path: str, was: tuple[int, bytes], now: tuple[int, bytes], paths: list[str]
    ) -> None:
        """An entry on both sides, as (mode type, raw id), with a different id or mode."""
        if was[0] == now[0]:
            if was[0] == _MODE_TREE:
                self._diff(was[1], now[1], path + "/", paths)
            else:
                paths.append(path)
            return
        # Its type changed: libgit2 reports a deletion and an addition.
        self._one(path, *was, paths)
        self._one(path, *now, paths)

    def _one(self, path: str, mode: int, oid: bytes, paths: list[str]) -> None:
        """An entry on one side only: a file, or every file of a folder."""
        if mode != _MODE_TREE:
            paths.append(path)
            return
        for entry in self._entries(oid):
            child_mode, name, child = _split_entry(entry)
            self._one(path + "/" + _decode(name), child_mode, child, paths)


def _split_entry(entry: bytes) -> tuple[int, bytes, bytes]:
    """(mode type, name, raw id) of one raw tree entry."""
    mode, _, name = entry[: -_OID_BYTES - 1].partition(b" ")
    kind = _MODE_TYPES.get(mode)
    if kind is None:
        kind = int(mode, 8) & _MODE_TYPE
    return kind, name, entry[-_OID_BYTES:]


def _decode(name: bytes) -> str:
    """A path component as ``os.fsdecode`` decodes it on POSIX (what pygit2 reports)."""
    return name.decode("utf-8", "surrogateescape")


def _message(commit: pygit2.Commit) -> str:
    try:
        return str(commit.message)
    except (UnicodeDecodeError, LookupError):
        # A commit declaring a bogus encoding still has bytes worth searching.
        return bytes(commit.raw_message).decode("utf-8", "replace")


def _relative(path: str) -> str | None:
    pure = PurePosixPath(path.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts or not pure.parts:
        return None
    return pure.as_posix()
