"""The language server: pygls adapters over the analysis API."""
