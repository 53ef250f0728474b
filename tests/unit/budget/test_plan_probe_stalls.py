"""A start-up or probe that stalled (waiting on a busy machine, not working): a "would fit"
counts them as they usually take here, says so, and an overrun warning names them rather than
the lenses (issue 21: "would fit" stable when asked twice, a warning that blames the right part).
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import cast

import pytest

from perflab.budget.costs import CostProbe, lens_costs
from perflab.budget.machine_speed import REFERENCE_RUNS, MachineSpeed
from perflab.budget.plan import PERFLAB_STARTUP_S, BudgetError, BudgetPlan, plan_budget
from perflab.engine.ledger import BudgetLedger
from perflab.engine.prepare.probe import reference_cpu
from perflab.lenses.registry import descriptor_for
from perflab.machine import cpu_lock
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.model import Note, Severity
from perflab.records.settings import Settings
from perflab.store import RunSink

SPEED = MachineSpeed(reference_s=0.2, reference_cpu_s=0.08)
PROBE = CostProbe(
    BenchmarkKind.STATEMENT,
    variants=2,
    startup_s=0.15,
    import_s=0.01,
    fork_s=0.01,
    sample_s=0.01,
    probe_s=0.7,
    speed=SPEED,
)
# its parts as measured: the benchmark's start-up and sample, the reference runs
PARTS_S = 0.15 + 0.01 + REFERENCE_RUNS * 0.2
STALLED = dataclasses.replace(PROBE, probe_s=40.2)


def _plan(
    probe: CostProbe, *, budget_s: float = 1.0, before_s: float = 1.0, strict: bool = False
) -> BudgetPlan:
    settings = Settings(budget_s=budget_s)
    costs = lens_costs(probe, settings, {Metric.TIME: descriptor_for(Metric.TIME).planning.cost})
    return plan_budget(budget_s, probe, costs, strict=strict, before_s=before_s)


class _Notes:
    def __init__(self) -> None:
        self.notes: list[Note] = []

    def add_note(self, note: Note) -> None:
        self.notes.append(note)


def test_a_probe_is_counted_as_its_parts_took_it_never_more_than_it_took() -> None:
    assert STALLED.usual_s == pytest.approx(PARTS_S)
    quick = dataclasses.replace(PROBE, probe_s=0.5)
    assert quick.usual_s == pytest.approx(0.5)


def test_would_fit_is_the_same_whether_or_not_the_probe_stalled() -> None:
    usual, stalled = _plan(PROBE), _plan(STALLED)
    # this run needed what it took
    assert stalled.needed_s - usual.needed_s == pytest.approx(40.2 - PROBE.probe_s)
    assert stalled.fitting_budget_s == usual.fitting_budget_s
    with pytest.raises(BudgetError) as refused:
        _plan(STALLED, strict=True)
    said = str(refused.value)
    assert f"--budget {usual.fitting_budget_s:g} would fit (counting the probe as" in said
    assert "this run's took 40.2 s" in said


def test_would_fit_counts_a_stalled_start_up_as_the_usual_one_here() -> None:
    usual_s = PERFLAB_STARTUP_S * SPEED.factor
    quick, stalled = _plan(PROBE, before_s=usual_s / 2), _plan(PROBE, before_s=13.1)
    assert quick.usual_before_s == pytest.approx(usual_s / 2)  # this run's, when shorter
    assert stalled.usual_before_s == pytest.approx(usual_s)
    assert stalled.fitting_budget_s == _plan(PROBE, before_s=usual_s).fitting_budget_s
    assert "counting perflab's start-up as" in stalled.counted_for_fit()
    assert quick.counted_for_fit() == ""


def _ledger_warning(plan: BudgetPlan, lens_took_s: float) -> str:
    """The ledger's warning for a benchmark whose time lens took `lens_took_s` of its share,
    ending now, begun with the plan's start-up and probe (stand-in timings)."""
    spent_s = plan.before_s + plan.probe.probe_s + lens_took_s
    ledger = BudgetLedger(plan, (Metric.TIME,), begun_s=time.monotonic() - spent_s)
    ledger.given_s[Metric.TIME] = plan.share_of(Metric.TIME).share_s
    ledger.took_s[Metric.TIME] = lens_took_s
    notes = _Notes()
    ledger.note_used(cast(RunSink, notes), "b")
    [warning] = [n for n in notes.notes if n.severity is Severity.WARNING]
    return warning.message + " | " + (warning.hint or "")


def test_an_overrun_from_a_stalled_probe_names_the_probe_not_the_lens() -> None:
    plan = _plan(STALLED, budget_s=5.0, before_s=0.0)
    said = _ledger_warning(plan, lens_took_s=0.0)
    assert "of --budget 5: the probe took 40 s where its parts" in said
    assert "lens needs about" not in said
    # the budget said to hold it leaves out the stall
    assert f"--budget {plan.fitting_budget_s:g} would hold it" in said


def test_an_overrun_from_a_stalled_start_up_names_the_start_up() -> None:
    plan = _plan(PROBE, budget_s=5.0, before_s=38.0)
    said = _ledger_warning(plan, lens_took_s=0.5)
    assert "perflab's start-up took 38 s where about" in said


def test_an_overrun_from_the_minimums_still_names_the_lenses() -> None:
    plan = _plan(PROBE, budget_s=1.0, before_s=0.5)
    minimum_s = plan.share_of(Metric.TIME).cost.minimum_s
    said = _ledger_warning(plan, lens_took_s=minimum_s)
    assert "the time lens needs about" in said and "each lens measured its minimum" in said


def test_the_reference_never_runs_on_a_cpu_another_perflab_run_measures_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(cpu_lock.LOCK_DIR_VARIABLE, str(tmp_path))
    other = cpu_lock.try_lock(1)
    assert other is not None and other.fd is not None
    os.pwrite(other.fd, f"{os.getpid() + 1:<{cpu_lock.PID_WIDTH}}\n".encode(), 0)  # not ours
    try:
        assert reference_cpu(0, {0, 1}) is False  # after the probe, on its own CPU
        assert reference_cpu(0, {0, 1, 2}) == 2
    finally:
        other.close()


def test_the_used_note_says_a_stall_not_the_minimums_left_the_lenses_no_more() -> None:
    plan = _plan(STALLED, budget_s=5.0, before_s=0.0)
    ledger = BudgetLedger(plan, (Metric.TIME,), begun_s=time.monotonic() - 40.2)
    ledger.took_s[Metric.TIME] = 0.0
    notes = _Notes()
    ledger.note_used(cast(RunSink, notes), "b")
    [used] = [n.message for n in notes.notes if n.severity is Severity.INFO]
    assert "the lenses measured their minimums: perflab's start-up and the probe took 39 s" in used
