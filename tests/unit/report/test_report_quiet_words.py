"""Notes and captions say only what applies, in correct words (issue 38, item 6)."""

from __future__ import annotations

import random
from dataclasses import replace
from types import SimpleNamespace

import pytest

from perflab.lenses.time.analyse import TimeDetails
from perflab.records.model import Benchmark, Experiment, Variant
from tests.time_comparisons import time_comparison, time_samples

# what this file tests, though most names it imports are other packages' (cross/test_layout.py)
SUBJECT = "perflab.report"


def test_the_caption_names_batches_in_the_plural() -> None:
    from perflab.lenses.time.render import caption

    comparison, _ = time_comparison(time_samples(random.Random(6), preempted=(0.0, 0.0)))
    assert isinstance(comparison.details, TimeDetails)
    batched = replace(comparison, details=replace(comparison.details, group_name="batch"))
    text = caption([batched], 0.95)
    assert "the batches' medians" in text and "batchs" not in text


def test_one_comparison_is_said_in_the_singular() -> None:
    from perflab.plan.designs import budget_plan

    experiment = Experiment(
        benchmarks=(Benchmark("b", stmt="x"),), variants=(Variant("A"), Variant("B"))
    )
    text = budget_plan(experiment)
    assert "(1 comparison)" in text and "(1 comparisons)" not in text


def test_the_plots_hint_names_the_report_when_one_was_written() -> None:
    import io

    from rich.console import Console

    from perflab.records.document import RatiosFigure, Section
    from perflab.report.terminal import render_section

    section = Section("time", (), (Section("b", (RatiosFigure("ratios", (), 0.01),)),))

    def said(html_path: str | None) -> str:
        console = Console(file=io.StringIO(), width=200, record=True)
        render_section(section, console, html_path=html_path)
        return console.export_text()

    assert "(--html FILE)" in said(None)
    written = said("report.html")
    assert "(--html FILE)" not in written and "report.html" in written


class _Notes:
    """A run writer that keeps only the notes."""

    def __init__(self) -> None:
        self.notes: list[object] = []

    def add_note(self, note: object) -> None:
        self.notes.append(note)


def test_cpu_sharing_is_not_said_on_lenses_that_do_not_depend_on_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another run that measured on this run's CPU changes no instruction count: no warning
    that they 'took turns' there; a time run is told."""
    from perflab.engine import cpu as engine_cpu
    from perflab.machine import cpu_lock

    monkeypatch.setattr(cpu_lock, "joined", lambda cpu, since_s: (4242,))
    claim = cpu_lock.CpuClaim(cpu=1, lock=SimpleNamespace(since_s=0.0))  # type: ignore[arg-type]
    deterministic, timed = _Notes(), _Notes()
    engine_cpu.note_joiners(deterministic, claim, quiet=False)  # type: ignore[arg-type]
    engine_cpu.note_joiners(timed, claim, quiet=True)  # type: ignore[arg-type]
    assert deterministic.notes == []
    assert len(timed.notes) == 1 and "took turns" in str(timed.notes[0])


def test_the_used_line_lists_only_parts_of_what_was_used() -> None:
    """ "used 4.5 s of the budget: probe 2.4 s, instructions 2.0 s, analysis and report 5.4 s"
    added up to more than it used: analysis and report run after the figure, so they are said
    apart from its parts."""
    from perflab.budget.costs import lens_costs
    from perflab.budget.plan import plan_budget
    from perflab.lenses.registry import cost_model
    from perflab.records.kinds import Metric
    from perflab.records.settings import Settings
    from tests.unit.budget.test_plan import QUICK

    costs = lens_costs(QUICK, Settings(budget_s=10), {Metric.TIME: cost_model(Metric.TIME)})
    plan = plan_budget(10, QUICK, costs)
    used = plan.describe({Metric.TIME: 2.0})
    parts = used.split(";")[0]
    assert "analysis and report" not in parts
    assert "; analysis and report follow (0.2 s kept for them)" in used
    assert ", analysis and report 0.2 s" in plan.describe()  # the plan before measuring


def test_a_check_that_measured_nothing_names_its_failures_once() -> None:
    """The run's notes above the verdict hold each failure in full (a build's output, a
    checkout's error): the verdict line names the variants instead of repeating them."""
    from perflab.cli.workflows.check.handler import check_verdict
    from perflab.records.bisect import StepOutcome, StepState
    from perflab.records.errors import BenchmarkFailedError

    failure = BenchmarkFailedError("the build 'make' of abc exited with status 2", variant="base")
    checked = SimpleNamespace(
        outcome=StepOutcome(StepState.SKIPPED, reason=f"base: {failure.message}"),
        result=SimpleNamespace(failures=(failure,)),
        disagreement=None,
        overruled=False,
        metric="instructions",
    )
    above = check_verdict(checked, 0.01, failures_above=True)  # type: ignore[arg-type]
    assert above == "not measured: base failed (the reasons are in the notes above)"
    alone = check_verdict(checked, 0.01)  # type: ignore[arg-type]
    assert "exited with status 2" in alone  # -q or a report on stdout: said here in full


def test_a_stack_says_its_load_warning_once() -> None:
    """A stack is analysed in groups (one per baseline); the note on how much other
    processes took covers every variant, and is worded alike from each group, so it is said
    once (it was twice, its variants listed in two orders)."""
    import math

    from perflab.analyse.run import dedupe_notes
    from perflab.lenses.time.analyse import analyse_time
    from perflab.records.kinds import Metric
    from perflab.records.model import BenchmarkData, Note, Sample
    from perflab.records.settings import Settings

    rng = random.Random(4)
    samples = []
    for g in range(6):
        for b in range(10):
            # the samples come in an order of their own (step2 first), as interleaving draws
            for name in ("step2", "base", "step1"):
                cpu = 1e6 * math.exp(rng.gauss(0, 0.01))
                wait = 0.5 * cpu if rng.random() < 0.4 else 0.0
                samples.append(
                    Sample("b", name, Metric.TIME, "wall_ns", cpu + wait, loops=10,
                           generation=g, block=b, run_queue_ns=int(wait), cpu_ns=int(cpu))
                )  # fmt: skip
    data = BenchmarkData(tuple(samples))
    order = ["base", "step1", "step2"]
    notes: list[Note] = []
    for group in (["base", "step1", "step2"], ["step1", "step2"]):
        analysis = analyse_time(Benchmark("b", cmd="x"), group, data, Settings(), order=order)
        notes += analysis.notes
    load = [n for n in dedupe_notes(notes) if "other processes took" in n.message]
    assert len(load) == 1 and "base " in load[0].message
    assert load[0].message.index("base ") < load[0].message.index("step2 ")


def test_rays_setup_notices_are_kept_out_and_its_errors_kept() -> None:
    """--ray: Ray's token-authentication notice is Ray's, not a finding of the run."""
    import io
    import logging

    from perflab.engine.cluster_ray import quiet_ray_notices

    ray_logger = logging.getLogger("perflab-test-ray")
    written = io.StringIO()
    handler = logging.StreamHandler(written)
    ray_logger.addHandler(handler)
    try:
        quiet_ray_notices(ray_logger)
        quiet_ray_notices(ray_logger)  # once is enough: no second filter
        assert len(handler.filters) == 1
        notice = logging.LogRecord(
            "ray._private.authentication.authentication_token_setup", logging.WARNING, "", 0,
            "Token authentication is enabled for this Ray cluster.", None, None,
        )  # fmt: skip
        failure = logging.LogRecord(
            "ray._private.authentication.x", logging.ERROR, "", 0, "bad token", None, None
        )
        other = logging.LogRecord("ray.worker", logging.WARNING, "", 0, "a task died", None, None)
        for record in (notice, failure, other):
            ray_logger.handle(record)
    finally:
        ray_logger.removeHandler(handler)
    said = written.getvalue()
    assert "Token authentication" not in said
    assert "bad token" in said and "a task died" in said


def test_the_header_says_not_pinned_only_for_what_was_asked() -> None:
    from perflab.report.terminal import pinning_words

    assert pinning_words({"pinned_cpu": 3}, pin=True) == "pinned to CPU 3"
    assert pinning_words({}, pin=False) == "not pinned (--no-pin)"
    cluster = {"cluster": {"address": "local", "nodes": 1, "cpus": 2}}
    assert pinning_words(cluster, pin=True) == "on a Ray cluster of 1 node"


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

    reason = "the build 'make' of 4440f465ae exited with status 2"
    step = SimpleNamespace(outcome=StepOutcome(StepState.SKIPPED, reason=reason))
    result = SimpleNamespace(
        steps=(step,), culprit=None, candidates=(), evidence=None, more_evidence=(),
        answer=lambda: "no commit found: BAD itself could not be measured",
    )  # fmt: skip

    def bisect(*args: object, on_step: object, **kwargs: object) -> object:
        assert callable(on_step)
        on_step(step, 1)
        return result

    monkeypatch.setattr(command, "bisect", bisect)
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


def test_bisect_counts_in_the_plural_only_past_one() -> None:
    from perflab.report.workflow_views import number_of

    assert (number_of(1, "step"), number_of(2, "commit")) == ("1 step", "2 commits")
