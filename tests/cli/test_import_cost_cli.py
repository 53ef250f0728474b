"""A command loads what it uses: asking for help, or reading runs back, imports no statistics
libraries, engine, disassembler or template engine, because every perflab process pays for its
imports before it starts measuring. Checked by what a fresh interpreter has in sys.modules, never
by time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from perflab.cli.workflows import WORKFLOWS

SRC = Path(__file__).resolve().parents[2] / "src"

# what `perflab show --help` has no use for (`perflab list` neither, but for the API)
NOT_FOR_HELP = (
    "numpy",
    "scipy",
    "capstone",
    "elftools",
    "jinja2",
    "psycopg",
    "torch",
    "rich.progress",
    "perflab.api",
    "perflab.engine",
    "perflab.analyse",
    "perflab.stats",
    "perflab.report.html",
)
# reading a run back analyses it (numpy), but measures, disassembles and templates nothing
NOT_FOR_SHOW = ("capstone", "elftools", "jinja2", "torch", "rich.progress", "perflab.engine")

_PROBE = """
import contextlib, io, json, sys
from perflab.cli.main import main
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    try:
        status = main(sys.argv[1:])
    except SystemExit as done:
        status = done.code
seen = {"status": status, "out": out.getvalue(), "err": err.getvalue()}
print(json.dumps({**seen, "modules": sorted(sys.modules)}))
"""


def _loaded(*argv: str, cwd: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv],
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
    )
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


def _heavy(modules: object, names: tuple[str, ...]) -> list[str]:
    assert isinstance(modules, list)
    return [m for m in modules if m in names or m.startswith(tuple(n + "." for n in names))]


def test_help_and_list_load_no_heavy_module(tmp_path: Path) -> None:
    helped = _loaded("show", "--help", cwd=tmp_path)
    assert helped["status"] == 0
    assert "usage: perflab show" in str(helped["out"])
    assert not _heavy(helped["modules"], NOT_FOR_HELP)

    # a store that is not there is reported by the store itself, through the API
    listed = _loaded("list", "--store", str(tmp_path / "s.db"), cwd=tmp_path)
    assert listed["status"] == 2
    assert "there is no perflab store" in str(listed["err"])
    not_for_list = tuple(name for name in NOT_FOR_HELP if name != "perflab.api")
    assert not _heavy(listed["modules"], not_for_list)


def test_show_loads_no_measuring_or_rendering_library(tmp_path: Path) -> None:
    """`show` of a run that is not there still goes through the API and the store."""
    shown = _loaded("show", "1", "--store", str(tmp_path / "s.db"), cwd=tmp_path)
    assert shown["status"] == 2
    assert "there is no perflab store" in str(shown["err"])
    assert not _heavy(shown["modules"], NOT_FOR_SHOW)


def test_python_dash_m_perflab_is_the_perflab_command(tmp_path: Path) -> None:
    """`python -m perflab` (what a user types where the script is not on PATH) runs the CLI and
    exits with its status."""
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}
    shown = subprocess.run(
        [sys.executable, "-m", "perflab", "--help"], capture_output=True, text=True, env=env
    )
    assert shown.returncode == 0 and shown.stdout.startswith("usage: perflab")
    missing = subprocess.run(
        [sys.executable, "-m", "perflab", "show", "1", "--store", str(tmp_path / "none.db")],
        capture_output=True, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert missing.returncode == 2 and "no perflab store" in missing.stderr


def test_every_workflow_appears_in_perflab_help_and_none_is_loaded_to_parse(
    tmp_path: Path,
) -> None:
    """Building the parser imports no workflow (the registry names them): their handlers load
    when one runs."""
    code = (
        "import sys\n"
        "from perflab.cli.main import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('loaded:', *sorted(m for m in sys.modules if m.startswith('perflab.workflows')))\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    words = " ".join(shown.split())  # argparse wraps the help lines
    for workflow in WORKFLOWS:
        help = " ".join(workflow.command.texts()[0].split())
        assert f" {workflow.name} {help}" in words
    assert shown.splitlines()[-1] == "loaded:"
