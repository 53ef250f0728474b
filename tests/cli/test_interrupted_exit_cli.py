"""An interrupted perflab exits with 130 under `python -m` too, where CPython would end it with
SIGINT once a KeyboardInterrupt had ended code run from a string, even a caught one."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

# the module run with -m: an interrupt caught after it ended code run by PyRun_String (what a C
# extension's import does), then perflab's entry with a main() that was interrupted
_MODULE = textwrap.dedent(
    """
    import ctypes
    import perflab.cli.main as cli

    run_string = ctypes.pythonapi.PyRun_String
    run_string.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.py_object, ctypes.py_object]
    run_string.restype = ctypes.py_object
    try:
        run_string(b"raise KeyboardInterrupt", 257, {}, {})  # 257: Py_file_input
    except KeyboardInterrupt:
        pass
    cli.main = lambda **options: cli.EXIT_INTERRUPTED
    cli.entry()
    """
)


def test_an_interrupted_run_exits_130_under_python_dash_m(tmp_path: Path) -> None:
    (tmp_path / "interrupted_entry.py").write_text(_MODULE)
    done = subprocess.run(
        [sys.executable, "-m", "interrupted_entry"], cwd=tmp_path, capture_output=True, timeout=120
    )
    assert done.returncode == 130, done.stderr
