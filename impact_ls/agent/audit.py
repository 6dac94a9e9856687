"""The audit texts of the MCP results: the evidence first, then what the reader may rely on.

A tool result is untrusted input to a model, so these texts never demand obedience; they say
what was checked and by what, which is why a cited ``file:line`` needs no re-reading, and they
are honest that a ranked selection is for the caller to judge (``seeds/graph-server-result-
audit.diff``). The stop-or-continue decision is left to each result's ``next``.
"""

from __future__ import annotations

BLAST_VERIFIED = (
    "Checked before returning: result.facts. Each change was classified by matching the parso "
    "trees of the baseline and the current text; each must_inspect site is a resolved graph "
    "edge at the cited file:line whose arguments were bound against the new signature and "
    "failed as its breaks say; each unanalyzable site is a string-keyed lookup or module hook "
    "the parser found there. For this working tree these facts hold; the cited location is the "
    "evidence, not a cue to open the file."
)
BLAST_HEURISTIC = (
    "Ranked, not proved: result.selections. may_impact and low_risk sites are name-matched "
    "candidates, sites beyond distance 1 or sites without a provable break; tests are chosen "
    "by graph path weight; co-change partners are scored from git history; batches and "
    "next_edits are an order. Whether they cover the question is yours to judge: reading a "
    "cited site or calling again with a larger limit is a sound next step."
)
TESTS_VERIFIED = (
    "Each test id is a pytest node collected from the parsed test files, and each reaches a "
    "changed entity over resolved graph edges (tests, fixture, call, instantiate, inherit, "
    "contains, import), or executed it under recorded coverage."
)
TESTS_HEURISTIC = (
    "The confidence is the weakest edge on the best path (direct test edge 1.0, call or "
    "inherit 0.56, contains 0.5, import 0.45); a selection at or above min_conf, not a proof "
    "that a test fails or that no other test does."
)
CALLERS_VERIFIED = (
    "result.resolved: each call site is a graph edge whose callee was resolved through scopes, "
    "imports, self/cls and the MRO, with the file:line it was found at."
)
CALLERS_HEURISTIC = (
    "result.name_matched: calls on a receiver of unknown type, linked by the method name alone; "
    "'confirmed' is jedi's verdict at the site when it reached one within its time budget. "
    "result.candidates are definitions the query may name, when it did not name exactly one."
)
EXPLAIN_VERIFIED = (
    "Each hop of a chain is a resolved graph edge of the reverse walk from the edit, with the "
    "relation it was admitted by and the file:line of its evidence; breaks were proved by "
    "binding the site's arguments to the new signature."
)
EXPLAIN_HEURISTIC = (
    "The bucket and confidence of the site are ranked (distance, co-change, lexical "
    "similarity); candidates, when the asked line is not a site, are the nearest sites by line."
)
