"""Recorded coverage: which graph entities each test executed, from one run of the suite.

``impact-ls record`` (``command.py``) runs the project's pytest once in its own interpreter with
``plugin.py`` and a copy of coverage.py on the child's path (``runtime.py``), under a lock
(``lock.py``); ``run.py`` drives the child and maps each test's executed lines to the innermost
graph entity at the recorded file hash (``entities.py``); ``store.py`` keeps the result in
sqlite next to the fact cache and answers ``RecordedCoverage.tests_of`` for the test map.
"""
