"""Keep a ``CodeGraph`` in step with per-file facts, re-resolving only what a change can reach.

``GraphBuilder`` owns the project-wide indexes (module → file, namespace packages, callables by
name, conftest files) and, for every file, the set of keys its resolution read. Changing one file
invalidates its own keys — its module, its path, the names it defines — and re-resolves exactly
the files that read one of them, plus the file itself; there is never a global pass.

Invariant (property-tested): any sequence of ``update``/``remove`` leaves the same graph as a
fresh ``load`` of the final texts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
import marshal
import os
from collections import defaultdict
from collections.abc import Iterable, Iterator

from impact_ls.graph.codegraph import CodeGraph, Confirmer
from impact_ls.graph.extract import extract_facts
from impact_ls.graph.facts import DefFact, FileFacts, gc_paused
from impact_ls.graph.modules import module_for, source_roots
from impact_ls.graph.resolve import (
    FileInfo,
    file_dynamic,
    file_nodes,
    index_file,
    interface_of,
    resolve_file,
)
from impact_ls.graph.resolved import (
    CachedResolution,
    decode_edges,
    decode_reads,
    encode_resolution,
)
from impact_ls.model import Edge, NodeKind, QualName

logger = logging.getLogger(__name__)

_Key = tuple[str, str]
# past this many readers a key's readers are a set (a list's ``remove`` scans them all)
_LIST_READERS = 16
_CALLABLE = frozenset({NodeKind.FUNCTION, NodeKind.METHOD, NodeKind.FIXTURE})


def _is_method(d: DefFact) -> bool:
    """Whether ``d`` is among the "methods named m" answers (``callables_named``): only methods,
    as ``obj.m()`` on an unknown ``obj`` never reaches a module function (a module receiver is
    known), and special methods are methods."""
    return d.in_class and d.kind in _CALLABLE


class _Recorder:
    """The ``Project`` view handed to the resolver: answers from the builder, logs every read."""

    __slots__ = ("_builder", "reads")

    def __init__(self, builder: GraphBuilder) -> None:
        self._builder = builder
        self.reads: set[_Key] = set()

    def info_of_module(self, module: str) -> FileInfo | None:
        self.reads.add(("m", module))
        file = self._builder._module_file.get(module)
        return self._builder._infos.get(file) if file is not None else None

    def is_namespace(self, module: str) -> bool:
        self.reads.add(("ns", module))
        return self._builder._prefixes.get(module, 0) > 0

    def conftest(self, folder: str) -> FileInfo | None:
        path = f"{folder}/conftest.py" if folder else "conftest.py"
        self.reads.add(("f", path))
        return self._builder._infos.get(path)

    def callables_named(self, name: str) -> list[QualName]:
        self.reads.add(("n", name))
        return sorted(self._builder._callables.get(name, ()))

    def defines_callable(self, name: str) -> bool:
        self.reads.add(("n", name))  # the same read as the list: answers change together
        return bool(self._builder._callables.get(name))

    def classes_based_on(self, name: str) -> list[tuple[FileInfo, str]]:
        self.reads.add(("b", name))
        builder = self._builder
        return [
            (builder._infos[file], local) for file, local in sorted(builder._based.get(name, ()))
        ]


class GraphBuilder:
    """Builds and incrementally patches the code graph from per-file facts (pure, in memory)."""

    def __init__(self, *, confirmer: Confirmer | None = None) -> None:
        self._reset(confirmer)

    def _reset(self, confirmer: Confirmer | None) -> None:
        """Forget every file: an empty graph and empty indexes, as a cold ``load`` starts."""
        self._graph = CodeGraph(confirmer=confirmer)
        self._facts: dict[str, FileFacts] = {}
        self._infos: dict[str, FileInfo] = {}
        self._module_files: dict[str, set[str]] = defaultdict(set)
        self._module_file: dict[str, str] = {}
        self._prefixes: dict[str, int] = defaultdict(int)
        self._callables: dict[str, set[QualName]] = defaultdict(set)
        # classes by the last name of each of their bases: the candidates for "subclasses of X"
        self._based: dict[str, set[tuple[str, str]]] = defaultdict(set)
        # what each file's resolution read and who read each key: tuples, and a list
        # until a key has many readers — most of django's 25k keys have one, and 25k small sets
        # weighed 10 MB
        self._reads: dict[str, tuple[_Key, ...]] = {}
        self._readers: dict[_Key, list[str] | set[str]] = {}
        self._keys: dict[_Key, _Key] = {}  # the shared key objects (``_remember_reads``)
        self._roots: tuple[str, ...] = ("",)
        self._last_resolved: tuple[str, ...] = ()
        self._roots_stale = False
        self._reused = 0
        # what ``take_resolutions`` encodes: the last load's fingerprints and fresh files
        self._fresh: tuple[_Fingerprints, list[tuple[str, list[Edge]]]] | None = None
        # while ``visit`` runs: each re-resolved file's edges and reads before its first one
        self._journal: dict[str, tuple[list[Edge], tuple[_Key, ...]]] | None = None

    @property
    def graph(self) -> CodeGraph:
        """The graph kept current by this builder."""
        return self._graph

    def facts(self, file: str) -> FileFacts | None:
        """The facts last set for ``file``."""
        return self._facts.get(file)

    def files(self) -> list[str]:
        """Every file with facts, sorted."""
        return sorted(self._facts)

    @property
    def last_resolved(self) -> tuple[str, ...]:
        """The files whose edges the last change re-resolved, sorted (for stats and tests)."""
        return self._last_resolved

    @property
    def reused(self) -> int:
        """How many files the last ``load`` took from cached resolutions instead of resolving."""
        return self._reused

    def take_resolutions(self) -> Iterator[tuple[str, bytes]]:
        """The encoded resolutions of the files the last ``load`` resolved, once (for a cache).

        Encoded as they are iterated (a whole project's would weigh tens of MB at once), from
        fingerprints of the state ``load`` left: consume them before the next change.
        """
        fresh, self._fresh = self._fresh, None
        if fresh is None:
            return
        prints, files = fresh
        for file, edges in files:
            facts = self._facts[file]
            read_keys = tuple(sorted(self._reads[file]))
            yield (
                file,
                encode_resolution(
                    module=facts.module,
                    is_package=facts.is_package,
                    reads=read_keys,
                    fingerprint=prints.of(read_keys),
                    edges=edges,
                ),
            )

    @property
    def roots(self) -> tuple[str, ...]:
        """The source roots the builder's ``update`` computes module names under."""
        return self._roots

    def load(
        self,
        facts: Iterable[FileFacts],
        *,
        cached: Iterable[tuple[str, CachedResolution]] | None = None,
    ) -> None:
        """Replace everything with ``facts`` and resolve every file once (a cold build).

        With ``cached`` (``(file, resolution)`` from an earlier build, sorted by file and read
        as the load walks the files, so a project's worth is never held at once), a file whose
        module and read fingerprint still match takes its cached edges instead of being
        resolved, and the files that were resolved leave their encoded resolution for
        ``take_resolutions``.
        """
        with gc_paused():
            self._load(facts, cached)

    def _load(
        self,
        facts: Iterable[FileFacts],
        cached: Iterable[tuple[str, CachedResolution]] | None = None,
    ) -> None:
        self._reset(self._graph.confirmer)  # a new, empty graph keeps the old one's confirmer
        for f in facts:
            self._facts[f.file] = f
        self._roots = source_roots(self._facts)
        for file in sorted(self._facts):
            self._index(self._facts[file])
        for file in sorted(self._facts):
            info = self._infos[file]
            self._graph.replace_file(file, file_nodes(info), [], file_dynamic(info))
        if cached is None:
            for file in sorted(self._facts):
                self._resolve(file)
        else:
            self._load_resolutions(cached)
        self._last_resolved = tuple(sorted(self._facts))
        logger.debug("graph loaded: %s", self._graph.stats())

    def _load_resolutions(self, cached: Iterable[tuple[str, CachedResolution]]) -> None:
        """Resolve each file, or reuse its cached edges when nothing it read has changed."""
        prints = _Fingerprints(self)
        fresh: list[tuple[str, list[Edge]]] = []
        rows = iter(cached)
        row = next(rows, None)
        for file in sorted(self._facts):
            # a merge of two sorted sequences: rows of vanished files are skipped
            while row is not None and row[0] < file:
                row = next(rows, None)
            hit = row[1] if row is not None and row[0] == file else None
            if hit is not None and self._reuse(file, hit, prints):
                self._reused += 1
            else:
                fresh.append((file, self._resolve(file)))
        self._fresh = (prints, fresh)

    def _reuse(self, file: str, hit: CachedResolution, prints: _Fingerprints) -> bool:
        """Take ``file``'s cached edges if its module and every answer it read are unchanged."""
        facts = self._facts[file]
        if hit.module != facts.module or hit.is_package != facts.is_package:
            return False
        reads = decode_reads(hit.reads)
        if reads is None or hit.fingerprint != prints.of(reads):
            return False
        edges = decode_edges(hit.edges)
        if edges is None:
            return False
        self._graph.replace_edges(file, edges)
        self._remember_reads(file, reads)
        return True

    def update(self, file: str, text: str) -> None:
        """Extract ``file`` from ``text`` and patch the graph (module named from known files)."""
        roots = self._roots
        if file not in self._facts or self._roots_stale:
            # only a new file (or facts set from outside) can move the source roots
            roots = source_roots([*self._facts, file])
            self._roots_stale = False
            if roots != self._roots:
                self._reroot(roots, changed={file: text})
                return
        module, is_package = module_for(file, roots)
        self.set_facts(extract_facts(text, file=file, module=module, is_package=is_package))

    @contextlib.contextmanager
    def visit(self, file: str, text: str) -> Iterator[FileFacts | None]:
        """``file`` at ``text`` for the block (its facts are yielded), then back as it was.

        Going back resolves nothing: the edges and reads of every file the visit re-resolved
        are put back as they were before it — what re-resolving them would give, by the
        invariant above. Resolving them again was half the cost of reading a baseline on real
        commits (0.25 s of an analysis on rich). A file without facts, or a visit that moves the
        source roots, goes there and back by ``update``.
        """
        current = self._facts.get(file)
        if current is not None and self._roots_stale and source_roots(self._facts) == self._roots:
            self._roots_stale = False  # as ``update`` finds: a file came (a refresh) in a root
        if current is None or self._roots_stale:
            self.update(file, text)
            try:
                yield self._facts.get(file)
            finally:
                if current is None:
                    self.remove(file)
                else:
                    self.set_facts(current)
            return
        module, is_package = module_for(file, self._roots)
        visited = extract_facts(text, file=file, module=module, is_package=is_package)
        # the file's own edges go with its nodes, before its re-resolution would journal them
        journal = {file: (self._graph.edges_in_file(file), self._reads.get(file, ()))}
        self._journal = journal
        try:
            self.set_facts(visited)
        except BaseException:
            self._journal = None
            self.set_facts(current)
            raise
        self._journal = None
        try:
            yield visited
        finally:
            with gc_paused():
                self._restore(current, journal)

    def _restore(
        self, facts: FileFacts, journal: dict[str, tuple[list[Edge], tuple[_Key, ...]]]
    ) -> None:
        """Put ``facts`` back and each journaled file's edges and reads (``visit``)."""
        file = facts.file
        self._unindex(self._facts[file])
        self._facts[file] = facts
        self._index(facts)
        info = self._infos[file]
        self._graph.replace_file(file, file_nodes(info), [], file_dynamic(info))
        for name in sorted(journal):
            self._remember_reads(name, journal[name][1])
        self._graph.replace_edges_of({name: journal[name][0] for name in sorted(journal)})
        self._last_resolved = tuple(sorted(journal))

    def set_facts(self, facts: FileFacts) -> None:
        """Add or replace one file's facts; re-resolve it and the files that read what changed."""
        with gc_paused():
            self._set_facts(facts)

    def _set_facts(self, facts: FileFacts) -> None:
        file = facts.file
        old = self._facts.get(file)
        if old is None:
            self._roots_stale = True
        old_info = self._infos.get(file)
        named = self._methods_named(old_info) if old_info is not None else {}
        keys = self._unindex(old) if old is not None else set()
        self._facts[file] = facts
        keys |= self._index(facts)
        info = self._infos[file]
        if old_info is not None and interface_of(old_info) == interface_of(info):
            keys = set()  # nothing another file can read has changed: re-resolve this one only
        else:
            # A "methods named m" answer holds qualnames only: unless a method of that name came
            # or went, its readers (every file with an ``x.get()`` of unknown ``x``, every file
            # asking whether a class defines ``__iter__``) read the same answer as before. They
            # were most of django: adding a method to QuerySet re-resolved 1,680 files.
            keys = {k for k in keys if k[0] != "n" or named.get(k[1]) != self._methods(k[1])}
        self._graph.replace_file(file, file_nodes(info), [], file_dynamic(info))
        self._reresolve(keys, also=(file,))

    def remove(self, file: str) -> None:
        """Forget ``file`` and re-resolve the files that read it."""
        old = self._facts.get(file)
        if old is None:
            return
        remaining = [f for f in self._facts if f != file]
        roots = source_roots(remaining)
        if roots != self._roots:
            del self._facts[file]
            self._reroot(roots, changed={})
            return
        with gc_paused():
            keys = self._unindex(old)
            del self._facts[file]
            self._graph.remove_file(file)
            self._forget_reads(file)
            self._reresolve(keys, also=())

    def _reroot(self, roots: tuple[str, ...], *, changed: dict[str, str]) -> None:
        """Source roots moved (a first ``src/`` file): every module name may change — reload."""
        logger.debug("source roots changed to %s; reloading", roots)
        facts: list[FileFacts] = []
        for file, old in self._facts.items():
            if file in changed:
                continue
            module, is_package = module_for(file, roots)
            if (module, is_package) != (old.module, old.is_package):
                old = dataclasses.replace(old, module=module, is_package=is_package)  # noqa: PLW2901 - re-rooted copy
            facts.append(old)
        for file, text in changed.items():
            module, is_package = module_for(file, roots)
            facts.append(extract_facts(text, file=file, module=module, is_package=is_package))
        self.load(facts)

    def _index(self, facts: FileFacts) -> set[_Key]:
        """Add one file to the project indexes; return the keys whose answers changed."""
        file = facts.file
        info = index_file(facts)
        self._infos[file] = info
        keys = self._own_keys(info)
        module = facts.module
        self._module_files[module].add(file)
        self._module_file[module] = min(self._module_files[module])
        for prefix in _prefixes(module):
            self._prefixes[prefix] += 1
            if self._prefixes[prefix] == 1:
                keys.add(("ns", prefix))
        for local, d in info.defs.items():
            if _is_method(d):
                self._callables[d.name].add(info.qual(local))
            for base in d.bases:
                self._based[base[-1]].add((file, local))
        return keys

    def _unindex(self, facts: FileFacts) -> set[_Key]:
        """Remove one file from the project indexes; return the keys whose answers changed."""
        file = facts.file
        info = self._infos.pop(file)
        keys = self._own_keys(info)
        module = facts.module
        owners = self._module_files.get(module)
        if owners is not None:
            owners.discard(file)
            if owners:
                self._module_file[module] = min(owners)
            else:
                del self._module_files[module]
                self._module_file.pop(module, None)
        for prefix in _prefixes(module):
            self._prefixes[prefix] -= 1
            if self._prefixes[prefix] <= 0:
                del self._prefixes[prefix]
                keys.add(("ns", prefix))
        for local, d in info.defs.items():
            if _is_method(d):
                names = self._callables.get(d.name)
                if names is not None:
                    names.discard(info.qual(local))
                    if not names:
                        del self._callables[d.name]
            for base in d.bases:
                based = self._based.get(base[-1])
                if based is not None:
                    based.discard((file, local))
                    if not based:
                        del self._based[base[-1]]
        return keys

    def _methods(self, name: str) -> frozenset[QualName]:
        """The answer ``callables_named(name)`` reads, as a set."""
        return frozenset(self._callables.get(name, ()))

    def _methods_named(self, info: FileInfo) -> dict[str, frozenset[QualName]]:
        """``_methods`` of each method name ``info`` defines, as they are now."""
        return {d.name: self._methods(d.name) for d in info.defs.values() if _is_method(d)}

    @staticmethod
    def _own_keys(info: FileInfo) -> set[_Key]:
        keys: set[_Key] = {("m", info.module), ("f", info.facts.file)}
        for d in info.defs.values():
            if _is_method(d):
                keys.add(("n", d.name))
            keys.update(("b", base[-1]) for base in d.bases)
        return keys

    def _reresolve(self, keys: set[_Key], *, also: tuple[str, ...]) -> None:
        affected: set[str] = set(also)
        for key in keys:
            affected.update(self._readers.get(key, ()))
        affected &= set(self._facts)
        # resolution reads the indexes, never the graph: the edges go in at once
        self._graph.replace_edges_of({file: self._resolution(file) for file in sorted(affected)})
        self._last_resolved = tuple(sorted(affected))
        logger.debug("re-resolved %d file(s)", len(affected))

    def _resolve(self, file: str) -> list[Edge]:
        edges = self._resolution(file)
        self._graph.replace_edges(file, edges)
        return edges

    def _resolution(self, file: str) -> list[Edge]:
        """``file``'s edges resolved now, its reads recorded; the graph is left to the caller."""
        journal = self._journal
        if journal is not None and file not in journal:
            journal[file] = (self._graph.edges_in_file(file), self._reads.get(file, ()))
        recorder = _Recorder(self)
        edges = resolve_file(self._infos[file], recorder)
        self._remember_reads(file, recorder.reads)
        return edges

    def _remember_reads(self, file: str, reads: Iterable[_Key]) -> None:
        self._forget_reads(file)
        # one key object per distinct read, recorded or decoded: most files ask the same
        # ("n", "__iter__")-like questions (98k reads of few distinct keys on django)
        pool = self._keys
        keys = tuple({pool.setdefault(key, key): None for key in reads})
        self._reads[file] = keys
        readers = self._readers
        for key in keys:
            found = readers.get(key)
            if found is None:
                readers[key] = [file]
            elif isinstance(found, set):
                found.add(file)
            else:
                found.append(file)  # never there yet: its old reads were forgotten above
                if len(found) > _LIST_READERS:
                    readers[key] = set(found)

    def _forget_reads(self, file: str) -> None:
        readers = self._readers
        for key in self._reads.pop(file, ()):
            found = readers.get(key)
            if found is None:
                continue
            try:
                found.remove(file)
            except (ValueError, KeyError):  # never recorded: nothing to forget
                continue
            if not found:
                del readers[key]


class _Fingerprints:
    """Digests of the answers the builder gives to recorded reads, memoized for one load.

    A module or conftest read is answered by a whole ``FileInfo``; what another file's
    resolution can use of it is its ``interface_of`` (the same contract ``set_facts`` relies on
    to re-resolve only the edited file), so the answer is fingerprinted as the path plus a hash
    of that interface's ``marshal`` encoding (plain tuples, strings, ints and bools: stable
    across processes).
    """

    __slots__ = ("_builder", "_files", "_values")

    def __init__(self, builder: GraphBuilder) -> None:
        self._builder = builder
        self._files: dict[str, str] = {}
        self._values: dict[_Key, bytes] = {}

    def of(self, reads: Iterable[_Key]) -> bytes:
        """The fingerprint of the answers to ``reads`` (sorted keys, as they are stored)."""
        values = self._values
        parts: list[bytes] = []
        for key in reads:
            value = values.get(key)
            if value is None:
                # a digest per answer: "methods named __init__" is thousands of qualnames, read
                # by most files, and joined whole into each one's fingerprint it was hashed again
                # for every reader
                answer = self._answer(key).encode()
                value = values[key] = hashlib.blake2b(answer, digest_size=16).digest()
            parts.append(value)
        return hashlib.blake2b(b"".join(parts), digest_size=16).digest()

    def _answer(self, key: _Key) -> str:
        kind, name = key
        builder = self._builder
        if kind == "m":
            file = builder._module_file.get(name)
            return f"m {name} {file} {self._file(file) if file is not None else ''}"
        if kind == "ns":
            return f"ns {name} {builder._prefixes.get(name, 0) > 0}"
        if kind == "f":
            return f"f {name} {self._file(name) if name in builder._infos else ''}"
        if kind == "n":
            # joined, not ``repr``-ed: qualnames hold no newline, and 25k of these are read
            return f"n {name}\n" + "\n".join(sorted(builder._callables.get(name, ())))
        if kind == "b":
            based = sorted(builder._based.get(name, ()))
            return f"b {name} " + " ".join(f"{f}:{local}:{self._file(f)}" for f, local in based)
        return f"? {kind} {name} {os.urandom(8).hex()}"  # an unknown kind of read: never a hit

    def _file(self, file: str) -> str:
        found = self._files.get(file)
        if found is None:
            interface = interface_of(self._builder._infos[file])
            # marshal version 2 writes no back-references and no interning marks, so equal
            # values give equal bytes in every process; it is several times quicker than the
            # ``repr`` it replaced (one per file per build)
            found = hashlib.blake2b(marshal.dumps(interface, 2), digest_size=16).hexdigest()
            self._files[file] = found
        return found


def _prefixes(module: str) -> list[str]:
    """The strict dotted prefixes of ``module`` (``a.b.c`` → ``a``, ``a.b``)."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]
