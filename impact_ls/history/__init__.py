"""Git history: the co-change index."""
