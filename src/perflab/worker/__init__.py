"""The script that runs inside a variant's interpreter. It must use only the standard library."""

from pathlib import Path

STATEMENT_WORKER_PATH = Path(__file__).with_name("statement_worker.py")
COMMAND_LAUNCHER_PATH = Path(__file__).with_name("command_launcher.py")
BUILD_REAPER_PATH = Path(__file__).with_name("build_reaper.py")
