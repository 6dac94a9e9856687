"""The cached code graph: per-file facts, resolution, typed queries, sqlite store."""
