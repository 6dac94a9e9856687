"""Hard gate and soft rank (spec §3.6): membership by hard edges, order by lexical coupling.

Contract:
    input    one change's walk members, the seed ``Change``, the current ``CodeGraph``, the
             co-change scores by file and the test confidences by entity.
    output   ``Ranked`` values sorted by distance, then ``lex`` descending, then entity.
    gate     a member needs a hard edge: at least one admitting relation and one evidence site
             (call, instantiate, import, inherit, override, class-member, type-ref). Co-change
             alone is never membership — a file known only from history never appears here.
    lex      0.5·jaccard(ids) + 0.3·jaccard(string tokens) + 0.2·jaccard(imports) against the
             seed, 4 decimals; jaccard of two empty sets is 0. ``ids`` are the identifier tokens
             of the qualname and one-line signature (split on ``.``, ``_`` and camel-case
             boundaries, lowercased, Python keywords and ``self``/``cls`` dropped); string
             tokens come from ``Node.strings`` the same way; imports are the modules the
             entity's file imports (its ``import`` edges, each target reduced to its module).
             The seed uses its baseline entity name and both signatures, since it may no
             longer be a node. No embeddings, no model.
    support  ``imports_seed``: the member's file imports the seed's module or a name from it —
             what makes a name-matched site plausible (``triage``).
"""

from __future__ import annotations

import keyword
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from impact_ls import config
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.model import Change, EdgeKind, Member, Node, NodeKind, QualName

logger = logging.getLogger(__name__)

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_STOP = frozenset(k.lower() for k in keyword.kwlist) | {"self", "cls"}
_DECIMALS = 4


@dataclass(frozen=True, slots=True, kw_only=True)
class Ranked:
    """A member that passed the hard gate, with the soft scores triage weighs."""

    member: Member
    lex: float
    cochange: float
    test_conf: float
    hard: bool
    imports_seed: bool = False  # the member's file imports the changed module (or from it)


def rank_members(
    members: Sequence[Member],
    seed: Change,
    graph: CodeGraph,
    *,
    cochange: Mapping[str, float],
    test_conf: Mapping[QualName, float],
) -> tuple[Ranked, ...]:
    """Gate ``members`` on hard edges and rank them by lexical coupling to ``seed``."""
    # Per graph version, not per analysis: every edit ranks members of the same files.
    imports_cache, modules_cache = graph.memo("rank.imports", _import_caches, kinds=_IMPORTS)
    words = graph.memo("rank.words", _word_cache, kinds=frozenset())
    seed_node = graph.node(seed.entity)
    seed_ids = _tokens([seed.entity, seed.before_sig, seed.after_sig])
    seed_strs = _tokens(seed_node.strings if seed_node is not None else ())
    seed_imports = _imports(seed.file, graph, imports_cache, modules_cache)
    seed_module = next(
        (n.id for n in graph.nodes_in_file(seed.file) if n.kind is NodeKind.MODULE), None
    )
    out: list[Ranked] = []
    for member in members:
        if not (member.relations and member.sites):
            continue
        node = graph.node(member.entity)
        ids, strs = _words_of(member.entity, node, words)
        imports = _imports(
            node.file if node is not None else member.file, graph, imports_cache, modules_cache
        )
        lex = (
            config.LEX_W_ID * _jaccard(ids, seed_ids)
            + config.LEX_W_STR * _jaccard(strs, seed_strs)
            + config.LEX_W_IMP * _jaccard(imports, seed_imports)
        )
        out.append(
            Ranked(
                member=member,
                lex=round(lex, _DECIMALS),
                cochange=cochange.get(member.file, 0.0),
                test_conf=test_conf.get(member.entity, 0.0),
                hard=True,
                imports_seed=seed_module is not None and seed_module in imports,
            )
        )
    out.sort(key=lambda r: (r.member.distance, -r.lex, r.member.entity, r.member.file))
    logger.debug("ranked %d of %d members of %s", len(out), len(members), seed.entity)
    return tuple(out)


_IMPORTS = frozenset({EdgeKind.IMPORT})
_Words = tuple[frozenset[str], frozenset[str]]


def _import_caches(_: CodeGraph) -> tuple[dict[str, frozenset[str]], dict[str, str | None]]:
    return {}, {}


def _word_cache(_: CodeGraph) -> dict[QualName, _Words]:
    return {}


def _words_of(entity: QualName, node: Node | None, cache: dict[QualName, _Words]) -> _Words:
    """The words of a member's name and signature, and of its string literals."""
    found = cache.get(entity)
    if found is None:
        found = cache[entity] = (
            _tokens([entity, node.signature if node is not None else ""]),
            _tokens(node.strings if node is not None else ()),
        )
    return found


def _tokens(texts: Iterable[str]) -> frozenset[str]:
    words: set[str] = set()
    for text in texts:
        for ident in _IDENT.findall(text):
            words.update(w.lower() for w in _WORD.findall(ident))
    return frozenset(words - _STOP)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def _imports(
    file: str,
    graph: CodeGraph,
    cache: dict[str, frozenset[str]],
    modules: dict[str, str | None],
) -> frozenset[str]:
    if file not in cache:
        cache[file] = frozenset(
            _module_of(edge.target, graph, modules)
            for edge in graph.edges_in_file(file)
            if edge.kind is EdgeKind.IMPORT
        )
    return cache[file]


def _module_of(target: QualName, graph: CodeGraph, modules: dict[str, str | None]) -> str:
    node = graph.node(target)
    if node is None:
        return target  # external or unresolved: compare the imported name as written
    if node.kind is NodeKind.MODULE:
        return node.id
    # One lookup per file, not per import: django's members import ~20k names per analysis.
    if node.file not in modules:
        modules[node.file] = next(
            (other.id for other in graph.nodes_in_file(node.file) if other.kind is NodeKind.MODULE),
            None,
        )
    module = modules[node.file]
    if module is not None:
        return module
    return target.rpartition(".")[0] or target
