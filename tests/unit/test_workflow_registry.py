"""The workflow registry is the one place the CLI learns its workflows from: each declares its
command (help and options), handler and view in its own package, named after its command."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from perflab.cli.options import build_parser, subcommand_names
from perflab.cli.workflows import WORKFLOWS, Workflow, workflow_named
from perflab.cli.workflows.workflow import load


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda w: w.name)
def test_every_workflow_declares_parser_handler_and_view(workflow: Workflow) -> None:
    help, description, epilog = workflow.command.texts()
    assert help and description and "perflab " + workflow.name in epilog
    assert workflow.command.options, "its own options beside run's"
    own = f"perflab.cli.workflows.{workflow.name}."
    assert workflow.handler.startswith(own), "its handler lives in its own package"
    assert callable(load(workflow.handler))
    assert callable(load(workflow.view))
    assert workflow_named(workflow.name) is workflow


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda w: w.name)
def test_a_workflow_is_named_after_its_command(workflow: Workflow) -> None:
    """bisect, check and history: the command, its CLI package and its library module."""
    declared = importlib.import_module(f"perflab.cli.workflows.{workflow.name}")
    assert declared.WORKFLOW is workflow
    library = importlib.import_module(f"perflab.workflows.{workflow.name}")
    assert callable(getattr(library, workflow.name))


def test_the_parser_has_a_subcommand_for_each_workflow() -> None:
    commands = subcommand_names(build_parser())
    assert {w.name for w in WORKFLOWS} <= set(commands)
    assert workflow_named("run") is None


def test_every_workflow_appears_in_perflab_help_and_none_is_loaded_to_parse(
    tmp_path: Path,
) -> None:
    """Building the parser imports no workflow: their handlers load when one runs."""
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
