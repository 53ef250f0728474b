"""Bisect's arithmetic, pure: the binary search for the first bad commit over a `measure`
callable (search.py), and the threshold each step is judged by (threshold.py). The bisect
workflow (perflab.workflows.bisect) measures the steps; records.bisect holds what they found."""
