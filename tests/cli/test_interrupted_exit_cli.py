"""An interrupted perflab exits with 130 under `python -m` too, where CPython would end it with
SIGINT once a KeyboardInterrupt had ended code run from a string, even a caught one; Ctrl-C
anywhere, from its imports on, ends it with one line and no traceback, leaving nothing running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from tests.support.cli_commands import FAST

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


# `-X importtime` writes a line as each import ends: the moments to interrupt perflab at
WHILE_IMPORTING = "rich.console"  # the command's first import; the heaviest follow it
BEFORE_THE_RUN = "perflab.api"  # main() is running; the engine's imports come before its run


def _started(entry: list[str], args: list[str], cwd: Path, tag: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "PERFLAB_STORE"}
    return subprocess.Popen(
        [*entry, *args, "--store", str(cwd / "perflab.db")],
        cwd=cwd,
        env=env | {"PERFLAB_TEST_TAG": tag},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the test's SIGINT reaches perflab alone, as a terminal's would
    )


def _interrupted_after_import(process: subprocess.Popen[str], module: str) -> tuple[int, str]:
    """SIGINT as soon as `module`'s import ended; perflab's status and its own stderr lines."""
    assert process.stderr is not None
    for line in process.stderr:
        if line.split("|")[-1].strip() == module:
            break
    process.send_signal(signal.SIGINT)
    rest = process.stderr.read()
    code = process.wait(timeout=120)
    return code, "\n".join(x for x in rest.splitlines() if not x.startswith("import time:"))


def _entries() -> list[list[str]]:
    """Each way a user starts perflab: the script (when installed), and python -m."""
    python = [sys.executable, "-X", "importtime"]
    entries = [[*python, "-m", "perflab"], [*python, "-m", "perflab.cli.main"]]
    script = Path(sys.executable).with_name("perflab")
    if script.exists():
        entries.append([*python, str(script)])
    return entries


@pytest.mark.parametrize("entry", _entries(), ids=lambda entry: " ".join(entry[3:])[-20:])
def test_ctrl_c_while_importing_is_one_line(tmp_path: Path, entry: list[str]) -> None:
    args = ["run", "--stmt", "pass", "-v", "A", "-v", "B", *FAST]
    process = _started(entry, args, tmp_path, uuid.uuid4().hex)
    code, said = _interrupted_after_import(process, WHILE_IMPORTING)
    assert (code, said) == (130, "perflab: interrupted while starting; nothing was measured")


def test_ctrl_c_before_the_run_opens_says_nothing_was_measured(tmp_path: Path) -> None:
    args = ["run", "--stmt", "pass", "-v", "A", "-v", "B", *FAST]
    process = _started(_entries()[0], args, tmp_path, uuid.uuid4().hex)
    code, said = _interrupted_after_import(process, BEFORE_THE_RUN)
    assert code == 130 and len(said.splitlines()) == 1, said
    assert said.startswith("perflab: interrupted") and "nothing was measured" in said


def test_ctrl_c_during_a_build_stops_it(tmp_path: Path) -> None:
    """The build's own processes are stopped with perflab: nothing of it keeps running."""
    tag = uuid.uuid4().hex
    args = ["run", "--cmd", "true", "-v", "A", "-v", "B", "--build", "sleep 300", *FAST]
    process = _started([sys.executable, "-m", "perflab"], args, tmp_path, tag)
    deadline = time.monotonic() + 120
    while not _tagged_sleeps(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _tagged_sleeps(tag), "the build did not start"
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    time.sleep(0.5)  # the kernel's reaping of what was killed
    left = _tagged_sleeps(tag)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert process.returncode == 130 and len(err.splitlines()) == 1, err
    assert err.startswith("perflab: interrupted") and "Traceback" not in err
    assert left == []


def _tagged_sleeps(tag: str) -> list[int]:
    """The live `sleep` processes started under this test's tag."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or (entry / "comm").read_text().strip() != "sleep":
                continue
            stat = (entry / "stat").read_text()
            alive = not stat[stat.rfind(")") + 2 :].startswith("Z")
            if alive and f"PERFLAB_TEST_TAG={tag}".encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found
