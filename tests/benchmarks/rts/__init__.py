"""Helpers of ``bench_rts.py``: libraries, mutations, pytest runs, selectors and metrics."""
