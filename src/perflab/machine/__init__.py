"""The machine and its processes: facts recorded with every run, the process seam, perflab's
own files."""
