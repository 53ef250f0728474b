"""The bisect command says once why BAD could not be measured."""

from __future__ import annotations

from types import SimpleNamespace

import pytest


@pytest.mark.parametrize("quiet", [False, True], ids=["steps shown", "-q"])
def test_a_bad_commit_that_failed_is_said_once(
    quiet: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    """bisect: the step's line already said why BAD was not measured; the closing error names
    it without repeating the reason (with -q, which shows no steps, it says the reason)."""
    import io

    from rich.console import Console

    from perflab.cli.options import build_parser, run_options
    from perflab.cli.workflows import workflow_named
    from perflab.cli.workflows.bisect import handler as command
    from perflab.records.bisect import StepOutcome, StepState
    from perflab.workflows import WorkflowServices

    reason = "the build 'make' of 4440f465ae exited with status 2"
    step = SimpleNamespace(outcome=StepOutcome(StepState.SKIPPED, reason=reason))
    result = SimpleNamespace(
        steps=(step,), culprit=None, candidates=(), evidence=None, more_evidence=(),
        answer=lambda: "no commit found: BAD itself could not be measured",
    )  # fmt: skip

    def bisect_with(*args: object, services: WorkflowServices, **kwargs: object) -> object:
        assert services.on_step is not None
        services.on_step(step, 1)
        return result

    monkeypatch.setattr(command, "bisect_with", bisect_with)
    monkeypatch.setattr(command, "describe_step", lambda s, total: f"[1/1] skipped: {reason}")
    monkeypatch.setattr(command, "render_bisect", lambda result, out: None)
    words = ["bisect", "HEAD~1", "HEAD", "--cmd", "true", "--store", f"{tmp_path}/s.db"]
    args = build_parser().parse_args(words + (["-q"] if quiet else []))
    err = Console(file=io.StringIO(), width=300, record=True)
    workflow = workflow_named("bisect")
    assert workflow is not None
    code = workflow.run(run_options(args), args, Console(file=io.StringIO()), err)
    said = err.export_text()
    assert code != 0 and said.count(reason) == 1
    assert "BAD (HEAD) could not be measured" in said
