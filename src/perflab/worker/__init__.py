"""What perflab runs in processes of their own: in a variant's interpreter, the statement worker
(its `statement_*` parts, and the ops modules lenses register in it), the command launcher and
the suite readers (asv, pytest-benchmark); in perflab's own interpreter, the build reaper. The
standard library only (the pytest-benchmark plugin: and pytest), so that any variant's Python
runs them; `process_tree` is imported by perflab too."""

from pathlib import Path

STATEMENT_WORKER_PATH = Path(__file__).with_name("statement_worker.py")
COMMAND_LAUNCHER_PATH = Path(__file__).with_name("command_launcher.py")
BUILD_REAPER_PATH = Path(__file__).with_name("build_reaper.py")
