"""The workflow registry is the one place the CLI learns its workflows from: each declares its
command (help and options), handler and view in its own package, named after its command."""

from __future__ import annotations

import importlib

import pytest

from perflab.cli.options import build_parser, subcommand_names
from perflab.cli.workflows import WORKFLOWS, Workflow, workflow_named
from perflab.lenses.descriptor import load_hook


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda w: w.name)
def test_every_workflow_declares_parser_handler_and_view(workflow: Workflow) -> None:
    help, description, epilog = workflow.command.texts()
    assert help and description and "perflab " + workflow.name in epilog
    assert workflow.command.options, "its own options beside run's"
    own = f"perflab.cli.workflows.{workflow.name}."
    assert workflow.handler.startswith(own), "its handler lives in its own package"
    assert callable(load_hook(workflow.handler))
    assert callable(load_hook(workflow.view))
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
