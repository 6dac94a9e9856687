"""The co-change index: which files git history says change together (spec §3.4).

Mining. ``CoChangeIndex.build`` walks every commit reachable from HEAD — the commits of merged
pull-request branches included, not only the first-parent chain, where a project that merges
pull requests keeps little of a file's history — and keeps, per commit, its committer time, its
tokenized message, how many paths it changed against its parent (no rename detection) and which
of them are Python files: a partner of a Python file is a Python file (changelogs and docs change
with everything), so only those are paired. Merges are skipped (their changes belong to the
merged commits, which are walked themselves), so are root commits (a whole tree imported at once
says nothing about coupling), commits cut off by a shallow clone, commits touching more than
``max_commit_files`` paths (sweeping refactors, vendoring, formatting) and commits that change
no Python file (a third of pytest's: no Python file's history holds them).

Caching. The mined commits are stored under ``cache_dir`` as ``cochange-<head sha>.json``. A file
for the current HEAD is reused as is; ``refresh`` after HEAD moved forward mines only the commits
the old HEAD does not reach and stores them as a small delta file naming its base, so both the
refresh and its write cost O(new commits). Every commit read is kept by sha in a store that the
refreshed indexes share, so a HEAD moved anywhere else (a checkout of an older commit, another
branch) walks the commit graph again but reads only the commits never read before. A missing,
unreadable, corrupt or foreign cache file (other format version, commit-size cap or
shallowness) is a miss and is rebuilt.

Scoring (``partners``). For an edited file f, let C(f) be the indexed commits touching f whose
committer time is strictly before ``before`` (anti-leakage: later commits are never evidence).
Each commit c weighs

    w(c) = relevance(c) * churn(c)
    relevance(c) = FLOOR + (1 - FLOOR) * bm25(message(c), task_text) / max over C(f) of bm25
    churn(c)     = 1 / log2(1 + |paths(c)|)

and ``score(f, g) = Σ_{c ∈ C(f), g ∈ c} w(c) / Σ_{c ∈ C(f)} w(c)``: the relevance-weighted share
of f's history in which g changed too. It lies in [0, 1]; the spec's "churn weights it by how
often the pair recurs" is the sum itself, and the per-commit churn factor discounts broad
commits, whose pairs are weaker evidence than those of a two-file commit. ``FLOOR`` = 0.2 keeps
pure co-change alive: when no message matches the task text every relevance is the same floor,
which cancels out and leaves the plain co-change share; when some match, the best-matching commit
counts five times as much as an unrelated one. BM25's collection statistics are taken over the
indexed commits before ``before`` only. Only direct partners are returned (L = 1): a partner's
partner is never followed. Scores are rounded to 4 decimals, zero scores and the input files
dropped, at most ``limit`` partners kept per input file, and the union (maximum score per
partner) sorted by score descending, then path.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from cachetools import LRUCache

from impact_ls import config
from impact_ls.cachedir import prepare_cache_dir
from impact_ls.history.bm25 import Bm25Corpus, tokenize
from impact_ls.history.commits import CommitFacts, CommitKind
from impact_ls.history.repo import GitRepo
from impact_ls.model import CoChange

logger = logging.getLogger(__name__)

FORMAT_VERSION = 3
RELEVANCE_FLOOR = 0.2
PYTHON_SUFFIX = ".py"  # the files co-change pairs
CACHE_PREFIX = "cochange-"
CACHE_SUFFIX = ".json"
# A delta chain longer than this is written out in full, bounding the cost of a cold load.
MAX_DELTA_CHAIN = 32
# Cache files kept per folder (the newest); older HEADs are rebuilt if ever checked out again.
KEEP_CACHE_FILES = 24
_SHA_CHARS = 40

NOTE_NO_GIT = "no git repository: co-change unavailable"
NOTE_EMPTY = "git repository has no commits: co-change unavailable"
NOTE_NO_HISTORY = "git history has no commits to learn co-change from"


_PARTNERS_LOCK = threading.Lock()  # cachetools caches are not thread-safe


class _Commit(NamedTuple):
    sha: str
    time: int
    tokens: tuple[str, ...]
    files: tuple[int, ...]  # the Python files it changed
    width: int  # how many paths it changed in all
    churn: float


class _Store:
    """Append-only commit storage, shared by an index and every index ``refresh`` derives from it.

    ``seen`` maps each sha read from git (or the cache) to its commit number, or to -1 for a
    commit that teaches nothing (a merge, a root, one over the size cap): a later walk passes
    them as ``known`` and git reads only what is new. A view (one HEAD) is a set of numbers.
    """

    __slots__ = ("commits", "ids", "paths", "postings", "seen", "token_postings")

    def __init__(self) -> None:
        self.commits: list[_Commit] = []
        self.paths: list[str] = []
        self.ids: dict[str, int] = {}
        self.postings: dict[int, list[int]] = {}
        self.token_postings: dict[str, list[int]] = {}
        self.seen: dict[str, int] = {}

    def add(
        self, sha: str, when: int, tokens: tuple[str, ...], files: Iterable[str], width: int
    ) -> int:
        """Index commit ``sha``: its Python ``files`` of the ``width`` paths it changed."""
        found = self.seen.get(sha, -1)
        if found >= 0:
            return found
        number = len(self.commits)
        # once per commit of a cold build (8.5k on pytest): lookups spelled out, no list made
        # for a key that has one already
        ids: list[int] = []
        known = self.ids
        postings = self.postings
        for path in files:
            fid = known.get(path)
            if fid is None:
                fid = known[path] = len(self.paths)
                self.paths.append(path)
                postings[fid] = [number]
            else:
                postings[fid].append(number)
            ids.append(fid)
        token_postings = self.token_postings
        for token in set(tokens):
            numbers = token_postings.get(token)
            if numbers is None:
                token_postings[token] = [number]
            else:
                numbers.append(number)
        churn = 1.0 / math.log2(1 + width)
        self.commits.append(_Commit(sha, when, tokens, tuple(ids), width, churn))
        self.seen[sha] = number
        return number

    def skip(self, sha: str) -> None:
        self.seen.setdefault(sha, -1)


class CoChangeIndex:
    """Mined history of one HEAD, answering L = 1 co-change partner queries.

    ``head`` is the sha it covers (``None`` without history), ``notes`` say why co-change is
    degraded (empty when it is not), ``mined_commits`` counts the commits read from git to
    make this index (0 when it came from the cache or from commits read before),
    ``commit_count`` the commits it learned from. Treat it as immutable: ``refresh`` returns a
    new index and leaves this one valid.
    """

    __slots__ = (
        "_cache_dir",
        "_corpus",
        "_depth",
        "_max_files",
        "_members",
        "_partners",
        "_shallow",
        "_store",
        "head",
        "mined_commits",
        "notes",
    )

    def __init__(
        self,
        *,
        store: _Store,
        members: frozenset[int],
        head: str | None,
        notes: tuple[str, ...],
        cache_dir: Path | None,
        max_files: int,
        shallow: bool,
        mined_commits: int,
        depth: int = 0,
    ) -> None:
        self._store = store
        self._members = members
        self._cache_dir = cache_dir
        self._max_files = max_files
        self._shallow = shallow
        self._depth = depth
        self._corpus: tuple[int, int, int, dict[str, int]] | None = None
        # Keystrokes in one function ask the same question: a hot file's answer costs tens of
        # milliseconds (pytest's CHANGELOG: 13k commits).
        self._partners: LRUCache[tuple[Any, ...], tuple[CoChange, ...]] = LRUCache(maxsize=32)
        self.head = head
        self.notes = notes
        self.mined_commits = mined_commits

    @property
    def commit_count(self) -> int:
        """How many commits the index learned from."""
        return len(self._members)

    @classmethod
    def empty(cls, note: str) -> CoChangeIndex:
        """An index without history that answers every query with no partners, saying why."""
        return cls(
            store=_Store(),
            members=frozenset(),
            head=None,
            notes=(note,),
            cache_dir=None,
            max_files=config.MAX_COMMIT_FILES,
            shallow=False,
            mined_commits=0,
        )

    @classmethod
    def build(
        cls,
        repo: GitRepo,
        *,
        cache_dir: Path | None,
        max_commit_files: int = config.MAX_COMMIT_FILES,
        store: _Store | None = None,
    ) -> CoChangeIndex:
        """The index of every commit reachable from HEAD, read from ``cache_dir`` when cached.

        ``store`` (from an earlier index of the same repository) saves reading again the
        commits it holds.
        """
        head = repo.head_sha()
        if head is None:
            index = cls.empty(NOTE_EMPTY)
            # Kept so that `refresh` after the first commit caches with the same settings.
            index._cache_dir, index._max_files = cache_dir, max_commit_files
            return index
        store = store if store is not None else _Store()
        shallow = repo.is_shallow()
        cached = _load(cache_dir, head, max_commit_files, shallow, store)
        if cached is not None:
            members, depth = cached
            logger.debug("co-change index for %s cached: %d commits", head, len(members))
            return cls._make(
                store,
                members,
                head=head,
                cache_dir=cache_dir,
                max_files=max_commit_files,
                shallow=shallow,
                mined=0,
                depth=depth,
            )
        started = time.perf_counter()
        members, mined = _mine(store, repo.history(known=store.seen), max_commit_files)
        index = cls._make(
            store,
            members,
            head=head,
            cache_dir=cache_dir,
            max_files=max_commit_files,
            shallow=shallow,
            mined=mined,
            depth=0,
        )
        index._save(base=None, new=members)
        logger.debug(
            "co-change index for %s mined: %d commits read, %d kept, %.1f ms",
            head,
            mined,
            index.commit_count,
            (time.perf_counter() - started) * 1000,
        )
        return index

    def refresh(self, repo: GitRepo) -> CoChangeIndex:
        """The index of the repository's current HEAD, reading only commits new to this one.

        An unchanged HEAD (and shallowness) returns ``self``. A HEAD that moved forward (a
        commit, a merge, a pull) walks only the commits the old HEAD does not reach; any other
        move (reset, rebase, branch switch) is a cache lookup and, on a miss, a walk of the
        whole history in which the commits this index has read already are not read again.
        """
        head = repo.head_sha()
        shallow = repo.is_shallow()
        if head == self.head and shallow == self._shallow:
            return self
        if head is None or self.head is None or shallow != self._shallow:
            return self.build(repo, cache_dir=self._cache_dir, max_commit_files=self._max_files)
        store = self._store
        cached = _load(self._cache_dir, head, self._max_files, shallow, store)
        if cached is not None:
            members, depth = cached
            return self._make(
                store,
                members,
                head=head,
                cache_dir=self._cache_dir,
                max_files=self._max_files,
                shallow=shallow,
                mined=0,
                depth=depth,
            )
        if not repo.is_ancestor(self.head):
            return self.build(
                repo, cache_dir=self._cache_dir, max_commit_files=self._max_files, store=store
            )
        new, mined = _mine(store, repo.history(hide=self.head, known=store.seen), self._max_files)
        index = self._make(
            store,
            self._members | new,
            head=head,
            cache_dir=self._cache_dir,
            max_files=self._max_files,
            shallow=shallow,
            mined=mined,
            depth=self._depth + 1,
        )
        logger.debug("co-change index refreshed to %s: %d new commits", head, len(new))
        index._save(base=self.head, new=new - self._members)
        return index

    @classmethod
    def _make(
        cls,
        store: _Store,
        members: frozenset[int],
        *,
        head: str,
        cache_dir: Path | None,
        max_files: int,
        shallow: bool,
        mined: int,
        depth: int,
    ) -> CoChangeIndex:
        count = len(members)
        if shallow:
            plural = "" if count == 1 else "s"
            notes: tuple[str, ...] = (
                f"shallow clone: co-change limited to {count} commit{plural}",
            )
        elif count == 0:
            notes = (NOTE_NO_HISTORY,)
        else:
            notes = ()
        return cls(
            store=store,
            members=members,
            head=head,
            notes=notes,
            cache_dir=cache_dir,
            max_files=max_files,
            shallow=shallow,
            mined_commits=mined,
            depth=depth,
        )

    def partners(
        self,
        files: Sequence[str],
        *,
        task_text: str,
        before: int,
        limit: int = config.MAX_COCHANGE_PER_FILE,
    ) -> tuple[CoChange, ...]:
        """Direct co-change partners of ``files`` from commits strictly before ``before``.

        Paths are posix and relative to the repository root (``GitRepo.root``); ``before`` is
        a committer time in seconds since the epoch, normally the baseline commit's. See the
        module docstring for the score; at most ``limit`` partners per input file, sorted by
        score descending then path, never one of ``files`` themselves.
        """
        key = (tuple(sorted(files)), task_text, before, limit)
        with _PARTNERS_LOCK:
            found = self._partners.get(key)
        if found is None:
            found = self._scored_partners(files, task_text=task_text, before=before, limit=limit)
            with _PARTNERS_LOCK:
                self._partners[key] = found
        return found

    def _scored_partners(
        self, files: Sequence[str], *, task_text: str, before: int, limit: int
    ) -> tuple[CoChange, ...]:
        store = self._store
        members = self._members
        inputs = set(files)
        query = set(tokenize(task_text))
        corpus = self._corpus_before(before, query) if query else None
        best: dict[str, float] = {}
        for path in sorted(inputs):
            fid = store.ids.get(path)
            if fid is None or limit <= 0:
                continue
            history = [
                store.commits[n]
                for n in store.postings.get(fid, ())
                if n in members and store.commits[n].time < before
            ]
            if not history:
                continue
            raw = [corpus.score(query, c.tokens) if corpus else 0.0 for c in history]
            top = max(raw)
            total = 0.0
            shared: dict[int, float] = {}
            for commit, relevance in zip(history, raw, strict=True):
                share = relevance / top if top > 0 else 0.0
                weight = (RELEVANCE_FLOOR + (1.0 - RELEVANCE_FLOOR) * share) * commit.churn
                total += weight
                for other in commit.files:
                    if other != fid:
                        shared[other] = shared.get(other, 0.0) + weight
            scored = []
            for other, weight in shared.items():
                partner = store.paths[other]
                score = round(weight / total, config.COCHANGE_DECIMALS)
                if score > 0 and partner not in inputs:
                    scored.append((-score, partner))
            scored.sort()
            for negative, partner in scored[:limit]:
                if -negative > best.get(partner, 0.0):
                    best[partner] = -negative
        ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))
        return tuple(CoChange(file=partner, score=score) for partner, score in ranked)

    def _corpus_before(self, before: int, query: set[str]) -> Bm25Corpus:
        """BM25's statistics over the commits before ``before``, frequencies of ``query`` only.

        A score reads the document frequency of query terms alone, so counting every term of
        every message (what a full corpus costs, 0.2 s on pytest's 13k commits) is not needed.
        """
        # The pipeline asks with one `before` (the baseline commit's time) many times in a row.
        memo = self._corpus
        store = self._store
        commits = store.commits
        members = self._members
        if memo is None or memo[0] != before:
            count = total = 0
            for number in members:
                commit = commits[number]
                if commit.time < before:
                    count += 1
                    total += len(commit.tokens)
            memo = self._corpus = (before, count, total, {})
        _, count, total, freq = memo
        for term in query - freq.keys():
            freq[term] = sum(
                1
                for n in store.token_postings.get(term, ())
                if n in members and commits[n].time < before
            )
        return Bm25Corpus(
            doc_count=count,
            avg_len=total / count if count else 0.0,
            doc_freq={t: freq[t] for t in query if freq[t]},
        )

    def _save(self, *, base: str | None, new: Iterable[int]) -> None:
        """Write this HEAD's cache file: a delta on ``base`` if given and the chain is short."""
        if self._cache_dir is None or self.head is None:
            return
        store = self._store
        if base is None or self._depth > MAX_DELTA_CHAIN:
            base, new, self._depth = None, self._members, 0
        paths: list[str] = []
        local: dict[int, int] = {}
        rows: list[list[Any]] = []
        for number in sorted(new):
            commit = store.commits[number]
            ids = []
            for fid in commit.files:
                if fid not in local:
                    local[fid] = len(paths)
                    paths.append(store.paths[fid])
                ids.append(local[fid])
            rows.append([commit.sha, commit.time, " ".join(commit.tokens), ids, commit.width])
        payload = {
            "version": FORMAT_VERSION,
            "head": self.head,
            "base": base,
            "max_commit_files": self._max_files,
            "shallow": self._shallow,
            "paths": paths,
            "commits": rows,
        }
        _write(self._cache_dir, self.head, payload)


def _mine(
    store: _Store, facts: Iterable[CommitFacts], max_files: int
) -> tuple[frozenset[int], int]:
    """Add what ``facts`` teach to ``store``: the numbers of their usable commits, and how many
    commits were read from git (``SEEN`` ones were not)."""
    members: set[int] = set()
    read = 0
    for fact in facts:
        if fact.kind is CommitKind.SEEN:
            number = store.seen.get(fact.sha, -1)
        else:
            read += 1
            python = (
                [p for p in fact.files if p.endswith(PYTHON_SUFFIX)]
                if fact.kind is CommitKind.CHANGE and len(fact.files) <= max_files
                else None
            )
            if python:
                width = len(fact.files)
                number = store.add(fact.sha, fact.time, tokenize(fact.message), python, width)
            else:
                store.skip(fact.sha)
                number = -1
        if number >= 0:
            members.add(number)
    return frozenset(members), read


def _cache_path(cache_dir: Path, head: str) -> Path:
    return cache_dir / f"{CACHE_PREFIX}{head}{CACHE_SUFFIX}"


def _load(
    cache_dir: Path | None, head: str, max_files: int, shallow: bool, store: _Store
) -> tuple[frozenset[int], int] | None:
    """The cached commits of ``head`` (added to ``store``) and the delta depth, or ``None`` on
    any kind of miss; the whole chain is checked before anything is added."""
    if cache_dir is None:
        return None
    chain: list[dict[str, Any]] = []
    sha: str | None = head
    while sha is not None:
        if len(chain) > MAX_DELTA_CHAIN + 1:
            return None
        payload = _read(_cache_path(cache_dir, sha), sha, max_files, shallow)
        if payload is None:
            return None
        chain.append(payload)
        sha = payload["base"]
    members: set[int] = set()
    for payload in reversed(chain):
        paths = payload["paths"]
        for commit_sha, when, message, ids, width in payload["commits"]:
            files = (paths[i] for i in ids)
            members.add(store.add(commit_sha, when, tuple(message.split()), files, width))
    return frozenset(members), len(chain) - 1


def _read(path: Path, head: str, max_files: int, shallow: bool) -> dict[str, Any] | None:
    try:
        payload: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        logger.info("co-change cache %s unreadable (%s); rebuilding", path, exc)
        return None
    if not _valid(payload, head, max_files, shallow):
        logger.info("co-change cache %s is corrupt or stale; rebuilding", path)
        return None
    checked: dict[str, Any] = payload
    return checked


def _valid(payload: Any, head: str, max_files: int, shallow: bool) -> bool:
    if not isinstance(payload, dict):
        return False
    if (
        payload.get("version") != FORMAT_VERSION
        or payload.get("head") != head
        or payload.get("max_commit_files") != max_files
        or payload.get("shallow") is not shallow
    ):
        return False
    base, paths, commits = payload.get("base"), payload.get("paths"), payload.get("commits")
    if not (base is None or isinstance(base, str)) or base == head:
        return False
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        return False
    if not isinstance(commits, list):
        return False
    count = len(paths)
    for row in commits:
        if not (isinstance(row, list) and len(row) == 5):
            return False
        sha, when, message, ids, width = row
        if not isinstance(sha, str) or len(sha) != _SHA_CHARS:
            return False
        if not isinstance(when, int) or isinstance(when, bool) or not isinstance(message, str):
            return False
        if not isinstance(ids, list) or not ids:
            return False
        if not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < count for i in ids):
            return False
        if not isinstance(width, int) or isinstance(width, bool) or width < len(ids):
            return False
    return True


def _write(cache_dir: Path, head: str, payload: dict[str, Any]) -> None:
    target = _cache_path(cache_dir, head)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        prepare_cache_dir(cache_dir)
        temporary.write_text(json.dumps(payload, separators=(",", ":")), encoding="utf-8")
        os.replace(temporary, target)
    except OSError as exc:
        logger.warning("cannot write co-change cache %s (%s); continuing without it", target, exc)
        with contextlib.suppress(OSError):
            temporary.unlink()
        return
    _prune(cache_dir)


def _prune(cache_dir: Path) -> None:
    try:
        files = sorted(
            cache_dir.glob(f"{CACHE_PREFIX}*{CACHE_SUFFIX}"),
            key=lambda p: p.stat().st_mtime,
            reverse=True,
        )
    except OSError:
        return
    for old in files[KEEP_CACHE_FILES:]:
        with contextlib.suppress(OSError):
            old.unlink()
