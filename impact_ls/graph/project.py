"""One project's code graph, built from disk through the fact cache and patched one file at a time.

``ProjectIndex(root, settings)`` is cheap; ``build`` runs discover → read and hash → cache lookup →
extract the misses (in worker processes when there are many) → store → ``GraphBuilder.load``.
A restart re-extracts only files whose bytes changed. Afterwards ``update``/``remove`` patch one
file (only its edges and those of files that depend on it are re-resolved, by the builder) and
``refresh`` rescans the disk after a checkout.

Threading: ``lock`` (an ``RLock``) is held while the graph is mutated; readers hold it while they
query. ``build`` does its slow work on a private builder and swaps it in under the lock, so
queries keep being answered from the previous (possibly empty) graph meanwhile; editor updates
that arrive during a build are replayed on the new graph.

Memory: only compact ``FileFacts`` are kept (no syntax trees), one per indexed file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import itertools
import logging
import multiprocessing
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from impact_ls.config import Settings
from impact_ls.graph.baseline import Snapshot, snapshot
from impact_ls.graph.builder import GraphBuilder
from impact_ls.graph.codegraph import CodeGraph, Confirmer
from impact_ls.graph.extract import extract_encoded, extract_facts
from impact_ls.graph.facts import (
    EXTRACTOR_VERSION,
    FileFacts,
    facts_from_bytes,
    facts_to_bytes,
    gc_paused,
)
from impact_ls.graph.modules import module_for, source_roots
from impact_ls.graph.store import FactStore, sha256_of
from impact_ls.graph.workspace import (
    Discovery,
    PathFilter,
    Skipped,
    decode_source,
    discover_files,
    read_bytes,
)

logger = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
# (path, sha, text, module, is_package) → (path, sha, facts, encoded facts)
_Item = tuple[str, str, str, str, bool]
_Row = tuple[str, str, FileFacts, bytes]
_ChunkResult = tuple[list[bytes], int, float]

# Below this many files to extract, worker start-up costs more than it saves.
PARALLEL_MIN_FILES = 200
# Files handed to a worker at a time: large enough to amortise pickling, small for balance.
_CHUNK = 16
# Chunks queued per worker: enough to keep workers busy, few enough to bound memory.
_INFLIGHT_PER_WORKER = 4
# A worker's chunk is this many of this process's: fewer trips through the executor's threads.
_WORKER_CHUNKS = 4
# The GIL switch interval while this process extracts beside its workers (see ``_extract``).
_EXTRACT_SWITCH_S = 0.0005
# Extracted rows written to the cache per transaction.
_STORE_BATCH = 256
# A refresh that touches more files than this (and a fifth of the project) rebuilds instead.
_REBUILD_MIN = 64


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexStats:
    """What one build or refresh did and what it cost."""

    files: int = 0
    extracted: int = 0
    from_cache: int = 0
    skipped: int = 0
    jobs: int = 1
    # CPU of this process and of the extraction workers (reported by them, start-up included).
    cpu_s: float = 0.0
    wall_s: float = 0.0
    phases: tuple[tuple[str, float], ...] = ()

    def phase(self, name: str) -> float:
        """Wall seconds spent in phase ``name`` (0.0 when it did not run)."""
        return dict(self.phases).get(name, 0.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Source:
    """One file read from disk: its path, content hash and bytes."""

    path: str
    sha: str
    data: bytes


class ProjectIndex:
    """The cached code graph of one project root."""

    def __init__(
        self,
        root: Path,
        settings: Settings,
        *,
        confirmer: Confirmer | None = None,
        on_discovered: Callable[[Discovery], None] | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        self.settings = settings
        self.lock = threading.RLock()
        # Serialises build and refresh (slow, mostly outside ``lock`` so readers go on).
        self._build_lock = threading.RLock()
        self.ready = False
        self._confirmer = confirmer
        # A test hook (and a place for progress UIs): runs between discovery and reading.
        self._on_discovered = on_discovered
        self._builder = GraphBuilder(confirmer=confirmer)
        self._store: FactStore | None = None
        self._filter: PathFilter | None = None
        self._roots: tuple[str, ...] = ()
        self._shas: dict[str, str] = {}
        self._skipped: tuple[Skipped, ...] = ()
        self._stats = IndexStats()
        self._building = False
        self._pending: list[tuple[str, str | None]] = []
        self._worker_cpu_s = 0.0

    @classmethod
    def open(
        cls,
        root: Path,
        settings: Settings,
        *,
        progress: Progress | None = None,
        jobs: int = 0,
        confirmer: Confirmer | None = None,
    ) -> ProjectIndex:
        """Construct and build the index of ``root``."""
        index = cls(root, settings, confirmer=confirmer)
        index.build(progress=progress, jobs=jobs)
        return index

    @property
    def graph(self) -> CodeGraph:
        """The current graph (empty until the first build finishes)."""
        return self._builder.graph

    def content_hash(self, path: str) -> str | None:
        """The sha256 of ``path``'s bytes on disk when it was last read, or None."""
        return self._shas.get(path)

    @property
    def stats(self) -> IndexStats:
        """Counts and timings of the last build or refresh."""
        return self._stats

    @property
    def skipped(self) -> tuple[Skipped, ...]:
        """Files left out of the graph, each with its reason."""
        return self._skipped

    @property
    def notes(self) -> tuple[str, ...]:
        """Human-readable degradations: skipped files and a cache that is not where it should be."""
        notes = [f"skipped {s.path}: {s.reason}" for s in self._skipped]
        if self._store is not None and self._store.note:
            notes.append(self._store.note)
        return tuple(notes)

    @property
    def cache_location(self) -> str:
        """Where the fact cache lives (a path, or ``:memory:``); empty before the first build."""
        return self._store.location if self._store is not None else ""

    def files(self) -> tuple[str, ...]:
        """Every indexed file, sorted."""
        with self.lock:
            return tuple(sorted(self._builder.files()))

    def facts(self, path: str | Path) -> FileFacts | None:
        """The facts the graph currently holds for ``path``."""
        rel = self.relpath(path)
        if rel is None:
            return None
        with self.lock:
            return self._builder.facts(rel)

    def relpath(self, path: str | Path) -> str | None:
        """``path`` relative to the root with ``/`` separators; ``None`` outside the root."""
        candidate = Path(path)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        candidate = Path(os.path.normpath(candidate))
        try:
            rel = candidate.relative_to(self.root)
        except ValueError:
            # The editor may hand us a path through a symlink to the root.
            try:
                rel = candidate.resolve().relative_to(self.root)
            except (ValueError, OSError):
                return None
        text = rel.as_posix()
        return None if text in ("", ".") or text.startswith("../") else text

    def module_for(self, file: str | Path) -> str:
        """The dotted module name of a file of this project."""
        rel = self.relpath(file) or Path(file).as_posix()
        return module_for(rel, self._roots)[0]

    def build(self, *, progress: Progress | None = None, jobs: int = 0) -> IndexStats:
        """(Re)build the graph from disk through the cache; return what it cost.

        Updates made before or during this build are replayed on the new graph; a later build
        reads the disk again, so a caller with open editor buffers re-applies them afterwards.
        """
        with self._build_lock:  # two builds at once would race to swap in their graphs
            clock = _Clock()
            self._worker_cpu_s = 0.0
            with self.lock:
                self._building = True
            try:
                stats = self._build(clock, progress=progress, jobs=jobs)
            finally:
                with self.lock:
                    self._building = False
        logger.info(
            "indexed %d files (%d extracted with %d job(s), %d from cache, %d skipped) in %.2fs",
            stats.files,
            stats.extracted,
            stats.jobs,
            stats.from_cache,
            stats.skipped,
            stats.wall_s,
        )
        return stats

    def _build(self, clock: _Clock, *, progress: Progress | None, jobs: int) -> IndexStats:
        # Millions of small acyclic objects are made below; a running cyclic collector would
        # rescan the growing heap again and again (see facts.gc_paused).
        with gc_paused():
            with clock.phase("discover"):
                store = self._store or FactStore.open(self.root)
                path_filter = PathFilter(self.root, self.settings)
                discovery = discover_files(self.root, self.settings)
            if self._on_discovered is not None:
                self._on_discovered(discovery)
            with clock.phase("read"):
                sources, skipped = self._read_all(discovery.files)
            roots = source_roots(tuple(s.path for s in sources))
            with clock.phase("cache"):
                facts = store.get_many({s.path: s.sha for s in sources})
                for path, cached in facts.items():
                    facts[path] = _named(cached, roots)
            from_cache = len(facts)
            shas = {s.path: s.sha for s in sources}
            with clock.phase("extract"):
                extracted, bad, workers = self._extract(
                    [s for s in sources if s.path not in facts],
                    roots,
                    store=store,
                    done=from_cache,
                    total=len(sources),
                    progress=progress,
                    jobs=jobs,
                )
            del sources  # the bytes are no longer needed
            for skip in bad:
                shas.pop(skip.path, None)
            with clock.phase("store"):
                store.prune(shas)
            facts.update(extracted)
            with clock.phase("resolve"):
                # each file's edges from the last build, reused when nothing it read has changed
                resolutions = store.iter_resolutions({path: shas[path] for path in facts})
                builder = GraphBuilder(confirmer=self._confirmer)
                try:
                    builder.load((facts[path] for path in sorted(facts)), cached=resolutions)
                finally:
                    resolutions.close()  # it holds the store until it ends
                store.put_resolutions(
                    (path, shas[path], data) for path, data in builder.take_resolutions()
                )
            # The graph lives as long as the process: move it out of the collector's sight, or
            # the first collection after this block (and every full one later) rescans millions
            # of acyclic objects — about a second per pass on django. Refcounting still frees
            # them when a rebuild drops them.
            gc.freeze()
        all_skipped = tuple(sorted((*discovery.skipped, *skipped, *bad), key=lambda s: s.path))
        stats = IndexStats(
            files=len(facts),
            extracted=len(extracted),
            from_cache=from_cache,
            skipped=len(all_skipped),
            jobs=workers,
            cpu_s=clock.cpu_s() + self._worker_cpu_s,
            wall_s=clock.wall_s(),
            phases=clock.phases(),
        )
        with self.lock:
            self._store, self._filter, self._roots = store, path_filter, roots
            self._shas, self._skipped, self._stats = shas, all_skipped, stats
            self._builder = builder
            self.ready = True
            self._replay_pending()
        return stats

    def _replay_pending(self) -> None:
        """Apply editor updates that arrived while a build ran (the lock is held)."""
        pending, self._pending = self._pending, []
        self._building = False
        for path, text in pending:
            if text is None:
                self._remove_locked(path)
            else:
                self._update_locked(path, text)

    def _read_all(self, files: Iterable[str]) -> tuple[list[_Source], list[Skipped]]:
        sources: list[_Source] = []
        skipped: list[Skipped] = []
        for rel in files:
            data = read_bytes(self.root, rel, self.settings)
            if isinstance(data, Skipped):
                skipped.append(data)
            else:
                sources.append(_Source(path=rel, sha=sha256_of(data), data=data))
        return sources, skipped

    def _extract(
        self,
        misses: list[_Source],
        roots: tuple[str, ...],
        *,
        store: FactStore,
        done: int,
        total: int,
        progress: Progress | None,
        jobs: int,
    ) -> tuple[dict[str, FileFacts], list[Skipped], int]:
        """Extract every miss, streaming facts into the store; return facts, skips, processes.

        Texts are decoded lazily and at most a few chunks are in flight, so the bytes, texts
        and encoded facts of a cold build never all sit in memory at once.
        """
        sink = _Sink(store, done=done, total=total, progress=progress)
        items = _work_items(misses, roots, sink.bad)
        jobs_wanted = jobs if jobs > 0 else (os.cpu_count() or 1)
        if jobs_wanted <= 1 or len(misses) < PARALLEL_MIN_FILES:
            for item in items:
                sink.accept([_extract_one(item)])
            sink.finish()
            return sink.facts, sink.bad, 1
        # This process is one of the jobs: it extracts a chunk whenever the workers have enough
        # queued. What it extracts needs no trip through a worker's encoding and its decoding
        # here, and one worker fewer starts.
        workers = min(jobs_wanted - 1, max(1, len(misses) // _CHUNK))
        worker_cpu: dict[int, float] = {}
        inflight: deque[tuple[list[_Item], Future[_ChunkResult]]] = deque()

        def collect() -> None:
            chunk, future = inflight.popleft()
            encoded, pid, cpu = future.result()
            worker_cpu[pid] = max(cpu, worker_cpu.get(pid, 0.0))
            pairs = zip(chunk, encoded, strict=True)
            sink.accept([_decode_row(item, text) for item, text in pairs])

        # The executor's threads move chunks and results for the workers; while this thread
        # extracts they wait for the GIL a whole switch interval (5 ms), which starved the
        # worker of a third of its share. A shorter interval, for this block only, keeps it fed.
        switch = sys.getswitchinterval()
        sys.setswitchinterval(_EXTRACT_SWITCH_S)
        try:
            with ProcessPoolExecutor(max_workers=workers, mp_context=_mp_context()) as pool:
                chunks = _chunks(items, _CHUNK)
                for chunk in chunks:
                    if len(inflight) < workers * _INFLIGHT_PER_WORKER:
                        batch = chunk + [
                            i for more in itertools.islice(chunks, _WORKER_CHUNKS - 1) for i in more
                        ]
                        inflight.append((batch, pool.submit(_extract_chunk, batch)))
                    else:
                        sink.accept([_extract_one(item) for item in chunk])
                    while inflight and inflight[0][1].done():
                        collect()
                while inflight:
                    collect()
        finally:
            sys.setswitchinterval(switch)
        sink.finish()
        self._worker_cpu_s += sum(worker_cpu.values())
        return sink.facts, sink.bad, workers + 1

    def update(self, path: str | Path, text: str) -> None:
        """Re-extract one file from ``text`` (an editor buffer); re-resolve what depends on it."""
        rel = self._indexable(path)
        if rel is None:
            return
        with self.lock:
            if self._building or not self.ready:
                # A build in progress (or yet to come) replaces the builder: replay this on it.
                self._pending.append((rel, text))
            self._update_locked(rel, text)

    def remove(self, path: str | Path) -> None:
        """Forget a file that was deleted (or closed without a copy on disk)."""
        rel = self.relpath(path)
        if rel is None:
            logger.debug("remove of %s ignored: outside %s", path, self.root)
            return
        with self.lock:
            if self._building or not self.ready:
                self._pending.append((rel, None))
            self._remove_locked(rel)

    def baseline_snapshot(self, path: str | Path, text: str) -> Snapshot | None:
        """What the project used of ``text`` — ``path``'s baseline (``graph/baseline.py``).

        The file is put at ``text`` (re-extracted; it and the files that read it re-resolved),
        the edges are read and its current facts are put back, so the graph ends as it began.
        None while a build runs or for a file the index leaves out.
        """
        rel = self._indexable(path)
        if rel is None:
            return None
        with self.lock:
            if self._building or not self.ready:
                return None
            builder = self._builder
            with builder.visit(rel, text) as baseline:
                return snapshot(builder.graph, baseline) if baseline is not None else None

    def refresh(self) -> tuple[str, ...]:
        """Rescan the disk and patch changed, new and removed files; return them, sorted."""
        with self._build_lock:
            return self._refresh()

    def _refresh(self) -> tuple[str, ...]:
        if not self.ready:
            self.build()
            return self.files()
        cpu0, wall0 = _cpu_now(), time.perf_counter()
        self._worker_cpu_s = 0.0
        discovery = discover_files(self.root, self.settings)
        sources, skipped = self._read_all(discovery.files)
        with self.lock:
            known = dict(self._shas)
        current = {s.path: s for s in sources}
        changed = [s for s in sources if known.get(s.path) != s.sha]
        removed = sorted(set(known) - set(current))
        touched = tuple(sorted({*removed, *(s.path for s in changed)}))
        roots = source_roots(tuple(current))
        if len(touched) > max(_REBUILD_MIN, len(current) // 5) or roots != self._roots:
            # A branch switch touching much of the project, or source roots that moved (every
            # module name may change): one bulk load beats many patches.
            logger.info("refresh: %d file(s) changed; rebuilding the graph", len(touched))
            self.build()
            return touched
        store = self._store or FactStore.in_memory()
        if len(changed) > _REBUILD_MIN:
            cached = store.get_many({s.path: s.sha for s in changed})
        else:
            cached = {
                s.path: facts for s in changed if (facts := store.get(s.path, s.sha)) is not None
            }
        cached = {path: _named(facts, roots) for path, facts in cached.items()}
        misses = [s for s in changed if s.path not in cached]
        extracted, bad, _ = self._extract(
            misses, roots, store=store, done=0, total=len(misses), progress=None, jobs=0
        )
        bad_paths = {b.path for b in bad}
        new_facts = dict(cached)
        new_facts.update(extracted)
        with self.lock:
            self._roots = roots
            for path in removed:
                self._remove_locked(path)
            for path in sorted(bad_paths & set(known)):
                self._remove_locked(path)
            for path in sorted(new_facts):
                self._builder.set_facts(new_facts[path])
                self._shas[path] = current[path].sha
            self._skipped = tuple(
                sorted((*discovery.skipped, *skipped, *bad), key=lambda s: s.path)
            )
            self._stats = IndexStats(
                files=len(self._shas),
                extracted=len(extracted),
                from_cache=len(cached),
                skipped=len(self._skipped),
                cpu_s=_cpu_now() - cpu0 + self._worker_cpu_s,
                wall_s=time.perf_counter() - wall0,
            )
        store.prune(self._shas)
        if touched:
            logger.info("refresh patched %d file(s)", len(touched))
        return touched

    def _indexable(self, path: str | Path) -> str | None:
        rel = self.relpath(path)
        if rel is None:
            logger.debug("update of %s ignored: outside %s", path, self.root)
            return None
        path_filter = self._filter or PathFilter(self.root, self.settings)
        self._filter = path_filter
        if not path_filter.allows(rel):
            logger.debug("update of %s ignored: not an indexed file", rel)
            return None
        return rel

    def _update_locked(self, rel: str, text: str) -> None:
        self._builder.update(rel, text)

    def _remove_locked(self, rel: str) -> None:
        self._builder.remove(rel)
        self._shas.pop(rel, None)


class _Sink:
    """Collects extracted facts, writes their encoding to the store in batches, reports progress."""

    def __init__(self, store: FactStore, *, done: int, total: int, progress: Progress | None):
        self.store = store
        self.facts: dict[str, FileFacts] = {}
        self.bad: list[Skipped] = []
        self._rows: list[tuple[str, str, str, str | bytes]] = []
        self._done = done
        self._total = total
        self._progress = progress
        self._reported = (done, total)
        if progress is not None:
            progress(done, total)

    def accept(self, rows: list[_Row]) -> None:
        for path, sha, facts, text in rows:
            self.facts[path] = facts
            self._rows.append((path, sha, EXTRACTOR_VERSION, text))
        if len(self._rows) >= _STORE_BATCH:
            self.flush()
        self._done += len(rows)
        if self._progress is not None:
            self._reported = (self._done, self._total - len(self.bad))
            self._progress(*self._reported)

    def flush(self) -> None:
        self.store.put_encoded(self._rows)
        self._rows = []

    def finish(self) -> None:
        """Write what is left and report completion (undecodable files shrink the total)."""
        self.flush()
        total = self._total - len(self.bad)
        if self._progress is not None and self._reported != (self._done, total):
            self._progress(self._done, total)


def _named(facts: FileFacts, roots: tuple[str, ...]) -> FileFacts:
    """Cached facts with the module name the current source roots give their file.

    The cache is keyed by content, and facts hold module-relative qualnames, so a file whose
    source root changed (a ``src/__init__.py`` appeared) is renamed, not re-extracted.
    """
    module, is_package = module_for(facts.file, roots)
    if (module, is_package) == (facts.module, facts.is_package):
        return facts
    return dataclasses.replace(facts, module=module, is_package=is_package)


def _work_items(
    misses: list[_Source], roots: tuple[str, ...], bad: list[Skipped]
) -> Iterator[_Item]:
    """Decode each miss as it is needed; undecodable ones go to ``bad``."""
    for source in misses:
        text = decode_source(source.data, path=source.path)
        if isinstance(text, Skipped):
            bad.append(text)
            continue
        module, is_package = module_for(source.path, roots)
        yield (source.path, source.sha, text, module, is_package)


def _chunks(items: Iterator[_Item], size: int) -> Iterator[list[_Item]]:
    chunk: list[_Item] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _extract_one(item: _Item) -> _Row:
    path, sha, text, module, is_package = item
    facts = extract_facts(text, file=path, module=module, is_package=is_package)
    return path, sha, facts, facts_to_bytes(facts)


def _extract_chunk(items: list[_Item]) -> _ChunkResult:
    """Extract a batch in a worker: the encoded facts, the worker's pid and its CPU so far.

    Only the cache's encoding crosses the process boundary: the cache needs it anyway, and
    decoding it in the parent is much cheaper than unpickling the dataclasses. The worker
    encodes straight from its walk (``extract_encoded``), never making the facts it sends.
    """
    with gc_paused():
        encoded = [
            extract_encoded(text, file=path, module=module, is_package=is_package)
            for path, _, text, module, is_package in items
        ]
    return encoded, os.getpid(), time.process_time()


def _decode_row(item: _Item, data: bytes) -> _Row:
    path, sha = item[0], item[1]
    try:
        return path, sha, facts_from_bytes(data), data
    except ValueError:  # cannot happen unless the codec is broken; never lose the file
        logger.exception("facts of %s did not survive the trip from a worker", path)
        return _extract_one(item)


def _mp_context() -> multiprocessing.context.BaseContext:
    # fork() in a process with threads (the language server) can deadlock; forkserver forks
    # from a clean single-threaded helper instead.
    if sys.platform != "win32" and "forkserver" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("spawn")


class _Clock:
    """Wall time per phase, and CPU (with finished children) and wall time overall."""

    def __init__(self) -> None:
        self._cpu0 = _cpu_now()
        self._wall0 = time.perf_counter()
        self._phases: list[tuple[str, float]] = []

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self._phases.append((name, time.perf_counter() - start))

    def phases(self) -> tuple[tuple[str, float], ...]:
        return tuple(self._phases)

    def cpu_s(self) -> float:
        return _cpu_now() - self._cpu0

    def wall_s(self) -> float:
        return time.perf_counter() - self._wall0


def _cpu_now() -> float:
    """CPU seconds of this process; workers report their own (they are not always our children)."""
    return time.process_time()
