"""Renderers: they only format an analysed run (`records.results.RunResult`) or a workflow's
answer (`records/workflow_results.py`, `records/bisect.py`); they never measure or decide."""
