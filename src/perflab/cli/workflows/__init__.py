"""The workflows' commands, one package each (`bisect`, `check`, `history`), each declaring its
`Workflow`: help and options, handler, view. The parser adds them beside `run` and `main`
dispatches to them from this registry alone; a new workflow is a package here and a line
below."""

from __future__ import annotations

from perflab.cli.workflows import bisect, check, history
from perflab.cli.workflows.workflow import Workflow

WORKFLOWS: tuple[Workflow, ...] = (bisect.WORKFLOW, check.WORKFLOW, history.WORKFLOW)


def workflow_named(command: str) -> Workflow | None:
    """The workflow whose command this is; None for `run` and the other commands."""
    return next((w for w in WORKFLOWS if w.name == command), None)


__all__ = ["WORKFLOWS", "Workflow", "workflow_named"]
