"""``python -m impact_ls`` runs the CLI."""

from impact_ls.cli import main

raise SystemExit(main())
