"""Set and rank metrics of predicted files against the gold files of mined cases.

Per case: hits = |predicted ∩ gold|. Over a set of cases:

* ``recall`` = Σ hits / Σ |gold| and ``precision`` = Σ hits / Σ |predicted| (micro averages: every
  file counts once, so a case with many gold files weighs more); ``f1`` from those two;
* ``macro_recall`` = mean of per-case recall; ``macro_precision`` = mean of per-case precision
  over the cases with a non-empty prediction (``empty`` counts the others);
* ``mrr`` = mean over all cases of 1 / rank of the first gold file in the ranked prediction
  (0 when none is predicted);
* ``size`` = mean number of predicted files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Scores:
    """Aggregate scores of one method over some cases."""

    cases: int
    recall: float
    precision: float
    f1: float
    macro_recall: float
    macro_precision: float
    mrr: float
    size: float
    empty: int


def _first_hit(ranked: Sequence[str], gold: frozenset[str]) -> float:
    for rank, path in enumerate(ranked, start=1):
        if path in gold:
            return 1.0 / rank
    return 0.0


def score(rows: Sequence[tuple[Sequence[str], Sequence[str]]]) -> Scores:
    """Scores of ``(ranked prediction, gold)`` pairs, one per case."""
    hits = gold_total = predicted_total = 0
    recalls: list[float] = []
    precisions: list[float] = []
    reciprocal = 0.0
    empty = 0
    for ranked, gold in rows:
        gold_set = frozenset(gold)
        predicted = frozenset(ranked)
        hit = len(predicted & gold_set)
        hits += hit
        gold_total += len(gold_set)
        predicted_total += len(predicted)
        recalls.append(hit / len(gold_set) if gold_set else 0.0)
        if predicted:
            precisions.append(hit / len(predicted))
        else:
            empty += 1
        reciprocal += _first_hit(ranked, gold_set)
    count = len(rows)
    recall = hits / gold_total if gold_total else 0.0
    precision = hits / predicted_total if predicted_total else 0.0
    f1 = 2 * recall * precision / (recall + precision) if recall + precision else 0.0
    return Scores(
        cases=count,
        recall=recall,
        precision=precision,
        f1=f1,
        macro_recall=sum(recalls) / count if count else 0.0,
        macro_precision=sum(precisions) / len(precisions) if precisions else 0.0,
        mrr=reciprocal / count if count else 0.0,
        size=predicted_total / count if count else 0.0,
        empty=empty,
    )
