"""Evidence-channel ablation (spec §7.4/§7.6): remove one channel, keep everything else fixed.

There are no product switches for this, so ``ablated`` — the only function here that patches
anything — swaps named module attributes for the duration of a ``with`` block and puts them
back afterwards. Each patch point is listed in ``PATCH_POINTS`` as (module, attribute). Before
patching, the attribute must exist and be the function it is expected to be; after the block, the
replacement must have been called at least once (when the analysis had a change to analyze).
Either failure raises ``AblationError`` naming the patch point, so a refactored pipeline makes
the benchmark stop instead of silently measuring the unablated product.

What each ablation does:

* ``walk`` — structural walk: ``impact_ls.analysis.pipeline.walk_dependents`` returns an empty
  ``WalkResult`` (the walk keeps only the seed; members never include the seed). Tests are still
  mapped from the seed, hidden channels are still searched, co-change is still looked up.
* ``cochange`` — git co-change: the co-change lookup ``impact_ls.engine.analyze`` hands to the
  pipeline (``cochange_of``) is replaced by one that returns ``()``, so no member gets a co-change
  score and the report's ``cochange`` list is empty.
* ``tests`` — test map: ``impact_ls.analysis.pipeline.map_tests`` returns an empty ``TestMap``:
  no test hits, so no member gets a test confidence and the report's ``tests`` list is empty.
* ``issue11-rules`` — every triage rule that needs history (``triage._knows_history`` answers
  False: triage as it was before them, the "before" row of the same run);
* ``history-gate`` — only the rule that a reached site nothing proves broken is MAY-IMPACT iff
  its file co-changes (``triage._gated`` answers False);
* ``cochange-rank`` — only the MAY-IMPACT conf by co-change share (``triage._may_conf`` as
  without history);
* ``cochanged-tests`` — only the ``TestedBy`` entries of selected test files that co-change
  (``triage._tested_entries`` returns none);
* ``override-rule`` — only the break of an override that no longer accepts a call of its
  changed base (``binding.override_break`` answers None: the MUST-INSPECT rule off);
* ``lexical`` — lexical soft-rank: ``impact_ls.analysis.pipeline.rank_members`` runs unchanged
  and then every ``Ranked.lex`` is set to ``0.0``: no member is admitted to MAY-IMPACT by
  ``lex ≥ lex_min``, conf comes from co-change and tests only, and the order within a distance
  falls back to the entity name.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

EVIDENCE = ("walk", "cochange", "tests", "lexical")
# triage rules of issue 11, each switched off alone the same way
RULES = ("issue11-rules", "history-gate", "cochange-rank", "cochanged-tests", "override-rule")
# rules that run only where a case has the sites they judge (no "never called" check)
_SOMETIMES = frozenset({"history-gate", "cochange-rank", "cochanged-tests", "override-rule"})
CHANNELS = (*EVIDENCE, *RULES)

# channel → (module, attribute, qualified name of the function expected there)
PATCH_POINTS: dict[str, tuple[str, str, str]] = {
    "walk": (
        "impact_ls.analysis.pipeline",
        "walk_dependents",
        "impact_ls.analysis.walk.walk_dependents",
    ),
    "cochange": ("impact_ls.engine", "analyze", "impact_ls.analysis.pipeline.analyze"),
    "tests": ("impact_ls.analysis.pipeline", "map_tests", "impact_ls.analysis.testmap.map_tests"),
    "lexical": (
        "impact_ls.analysis.pipeline",
        "rank_members",
        "impact_ls.analysis.rank.rank_members",
    ),
    "issue11-rules": (
        "impact_ls.analysis.triage",
        "_knows_history",
        "impact_ls.analysis.triage._knows_history",
    ),
    "history-gate": ("impact_ls.analysis.triage", "_gated", "impact_ls.analysis.triage._gated"),
    "cochange-rank": (
        "impact_ls.analysis.triage",
        "_may_conf",
        "impact_ls.analysis.triage._may_conf",
    ),
    "cochanged-tests": (
        "impact_ls.analysis.triage",
        "_tested_entries",
        "impact_ls.analysis.triage._tested_entries",
    ),
    "override-rule": (
        "impact_ls.analysis.binding",
        "override_break",
        "impact_ls.analysis.overrides.override_break",
    ),
}


class AblationError(RuntimeError):
    """A patch point is gone or was not used: the ablation would silently measure nothing."""


def _original(channel: str) -> tuple[Any, str, Callable[..., Any]]:
    module_name, attribute, expected = PATCH_POINTS[channel]
    module = importlib.import_module(module_name)
    original = getattr(module, attribute, None)
    if not callable(original):
        raise AblationError(
            f"ablation {channel!r}: {module_name}.{attribute} is gone; retarget PATCH_POINTS "
            "in tests/benchmarks/commits_ablation.py to where the pipeline now calls this stage"
        )
    found = f"{getattr(original, '__module__', '?')}.{getattr(original, '__qualname__', '?')}"
    if found != expected:
        raise AblationError(
            f"ablation {channel!r}: {module_name}.{attribute} is {found}, expected {expected}; "
            "retarget PATCH_POINTS in tests/benchmarks/commits_ablation.py"
        )
    return module, attribute, original


def _replacement(channel: str, original: Callable[..., Any], calls: list[int]) -> Any:
    def count() -> None:
        calls[0] += 1

    if channel == "walk":
        from impact_ls.analysis.walk import WalkResult

        def no_walk(*args: Any, **kwargs: Any) -> Any:
            count()
            return WalkResult()

        return no_walk
    if channel == "cochange":

        def no_cochange(*args: Any, **kwargs: Any) -> Any:
            count()
            kwargs["cochange_of"] = lambda files, task_text: ()
            return original(*args, **kwargs)

        return no_cochange
    if channel == "tests":
        from impact_ls.analysis.testmap import TestMap

        def no_tests(*args: Any, **kwargs: Any) -> Any:
            count()
            return TestMap()

        return no_tests
    if channel == "lexical":

        def flat_lex(*args: Any, **kwargs: Any) -> Any:
            count()
            return tuple(dataclasses.replace(r, lex=0.0) for r in original(*args, **kwargs))

        return flat_lex
    if channel in ("issue11-rules", "history-gate"):

        def no_history(*args: Any, **kwargs: Any) -> bool:
            count()
            return False

        return no_history
    if channel == "cochange-rank":

        def as_without_history(*args: Any, **kwargs: Any) -> Any:
            count()
            return original(*args, **{**kwargs, "history": False})

        return as_without_history
    if channel == "override-rule":

        def no_override_break(*args: Any, **kwargs: Any) -> None:
            count()

        return no_override_break
    if channel == "cochanged-tests":

        def no_tested(*args: Any, **kwargs: Any) -> list[Any]:
            count()
            return []

        return no_tested
    raise AblationError(f"unknown channel {channel!r}; known: {', '.join(CHANNELS)}")


@contextmanager
def ablated(channel: str | None, *, expect_call: bool = True) -> Iterator[None]:
    """THE ablation patch: inside the block, evidence ``channel`` is removed (None: nothing).

    ``expect_call`` says the analysis inside the block had a change to analyze, so the patched
    stage must have run; set it False for a case the classifier finds nothing in.
    """
    if channel is None:
        yield
        return
    module, attribute, original = _original(channel)
    calls = [0]
    setattr(module, attribute, _replacement(channel, original, calls))
    try:
        yield
    finally:
        setattr(module, attribute, original)
    if expect_call and calls[0] == 0 and channel not in _SOMETIMES:
        _, _, expected = PATCH_POINTS[channel]
        raise AblationError(
            f"ablation {channel!r}: the patched {module.__name__}.{attribute} was never called; "
            f"the pipeline no longer reaches {expected} through it"
        )
