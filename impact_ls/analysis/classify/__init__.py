"""Classify the edit between a baseline and a current text into atomic changes (spec §3.1).

Contract: ``classify_changes(file=, module=, before=, after=)`` → ``tuple[Change, ...]``.

- Both texts are parsed with parso, which tolerates broken code. Definitions are matched by
  (kind, enclosing path, name, occurrence); every changed node yields one atomic change by the
  precedence ladder delete → add → class-decl → constructor → method-signature → method-body →
  import → field → method-body (default). Parameters and body statements are read from ``ast``;
  the method-body escape gate lives in ``_escape.py``.
- Text that does not parse yet: the diff hunks the parse errors point at are put back to their
  baseline text until the file parses; each such region becomes one ``incomplete`` change for its
  enclosing definition (or the module) and the rest of the file is classified normally.
- ``line_range`` is 1-based and inclusive, in the current text (in the baseline text for
  ``delete`` and for a removed field). ``entity`` is ``module`` plus the dotted path, at most
  ``MAX_ENTITY_CHARS`` characters.
- At most ``max_changes`` changes: the first change of each kind (its type, whether it removes
  or changes, a deletion's scope) and then the earliest are kept; the rest are folded into the
  line range of the nearest kept change of their kind (else of their type, else any). A removal
  folded into one of its kind adds its name to that change's ``removed_names``, so its users are
  still walked and bound. Sorted by (file, line_range, entity, change_type).
- Pure: no file, network, clock or LLM access (spec §8.7: classification is deterministic).

Inside the package (all private): ``_ladder.py`` matches definitions and applies the ladder;
``_settle.py`` puts diff hunks back until the text parses; ``_reparse.py`` builds the edited
text's ``ast`` from the baseline's by parsing only the edited definition; ``_outline.py``
collects a text's definitions, fields, imports and statements, keyed for matching;
``_signatures.py`` reads signatures and words how they changed; ``_escape.py`` is the
method-body escape gate; ``_statements.py`` says which ``ast`` nodes are definitions and blocks.
"""

from impact_ls.analysis.classify._ladder import classify_changes
from impact_ls.model import Change, ChangeType

__all__ = ["Change", "ChangeType", "classify_changes"]
