"""Recorded coverage as one analysis reads it: which stored records still count, and ``tests_of``.

The rule, per recorded file (a record says "test T executed a line of entity E of file F as F
was when recorded"; entities are matched by qualified name):

- **exact**: F's sha256 at record time equals its hash now, or the hash of the baseline text of
  an edited F (the usual case: record, then edit; the walk starts from the baseline entity, which
  is exactly what was recorded). Its records count.
- **aged**: F changed otherwise since the record (commits on top of it). Its records still count
  while the recorded commit is in HEAD's history: the data is older, not of another line of work.
- **foreign**: after a rebase or a branch switch (HEAD's history no longer contains the recorded
  commit), or without git, only exact files count; the others' records are ignored (after a
  rebase the report says so in a note). ``impact-ls record --status`` shows the same.

Records only ever add tests to the static paths, so a record that is too old costs selection
size, never a missed static path.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

from impact_ls.model import QualName, TestId
from impact_ls.record.store import RecordStore, RunInfo


class RecordedCoverage:
    """The stored records of one run with the file rule above; ``testmap.RecordedTests``."""

    def __init__(
        self,
        store: RecordStore,
        *,
        run: RunInfo,
        current_sha: Callable[[str], str | None],
        baselines: Mapping[str, str],
        in_history: bool,
    ) -> None:
        self.run = run
        self._store = store
        self._current_sha = current_sha
        self._baselines = baselines
        self._in_history = in_history

    def accepts(self, path: str, sha: str) -> bool:
        """Whether the records of ``path`` recorded at ``sha`` count for this analysis."""
        if self._in_history:
            return True
        return sha in (self._current_sha(path), self._baselines.get(path))

    def tests_of(self, entities: Collection[QualName]) -> Mapping[QualName, frozenset[TestId]]:
        """The tests that executed a line of each entity, from the files that count."""
        return self._store.tests_of(entities, accept=self.accepts)

    @property
    def note(self) -> str | None:
        """The audit note after a rebase or branch switch (None when nothing is to be said)."""
        if self._in_history or not self.run.head:
            return None
        return (
            f"recorded coverage predates a rebase or branch switch (commit {self.run.head[:10]} "
            "is not in HEAD's history): only the records of files unchanged since are used; "
            "run 'impact-ls record' again"
        )
