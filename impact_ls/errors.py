"""The exceptions impact_ls raises on purpose; each message says what to do next.

ImpactError
 └── UsageError            bad CLI arguments or settings (exit 2)
      ├── RootNotFoundError   --root does not exist or is not a folder
      └── RevisionError       --base names no commit, or the root is not a git repo
 └── RecordError           impact-ls record cannot start or store its data (exit 1)
      └── RecordBusyError     another record of the same project is running
"""

from __future__ import annotations


class ImpactError(Exception):
    """Base of every deliberate impact_ls error."""


class UsageError(ImpactError):
    """The user asked for something impossible; the CLI exits with status 2."""


class RootNotFoundError(UsageError):
    """The project root does not exist or is not a directory."""


class RevisionError(UsageError):
    """A git revision cannot be resolved."""


class RecordError(ImpactError):
    """A coverage record cannot start, or its data cannot be stored."""


class RecordBusyError(RecordError):
    """Another ``impact-ls record`` holds the project's record lock."""
