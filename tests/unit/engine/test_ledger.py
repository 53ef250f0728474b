"""A benchmark's budget as it is spent (engine/ledger.py), on a fake clock: fixed-cost lenses
first, a sampling lens's share re-planned from what is really left, and the notes that compare
what each lens took with its share."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from perflab.budget.costs import LensCost
from perflab.budget.plan import plan_budget
from perflab.engine.ledger import BudgetLedger, run_order
from perflab.measure.lens import Lens, MemorySink
from perflab.records.kinds import Metric
from perflab.records.model import Severity
from tests.support.clocks import SetClockS
from tests.support.cost_probes import QUICK

SUBJECT = "perflab.engine.ledger"

PROBE = dataclasses.replace(QUICK, probe_s=1.0)
COSTS = [
    LensCost(Metric.TIME, minimum_s=2.0, needs="samples", elastic=True),
    LensCost(Metric.COUNTERS, minimum_s=4.0, needs="two generations"),
]


@dataclass(frozen=True)
class Named:
    """Stands for a lens: the ledger reads its metric only."""

    metric: Metric


def lenses(*metrics: Metric) -> list[Lens]:
    return [Named(m) for m in metrics]  # type: ignore[misc]


def test_fixed_cost_lenses_measure_first() -> None:
    plan = plan_budget(30, PROBE, COSTS)
    ordered = run_order(lenses(Metric.TIME, Metric.COUNTERS), plan)
    assert [lens.metric for lens in ordered] == [Metric.COUNTERS, Metric.TIME]


def test_the_budget_began_with_the_probe_and_a_sampling_lens_gets_what_is_left() -> None:
    plan = plan_budget(30, PROBE, COSTS)
    clock = SetClockS(100.0)
    ledger = BudgetLedger.begun(plan, run_order(lenses(Metric.TIME, Metric.COUNTERS), plan), clock)
    assert ledger.begun_s == pytest.approx(100.0 - PROBE.probe_s)
    assert ledger.deadline_s == pytest.approx(ledger.begun_s + plan.measuring_s)
    assert ledger.give(Metric.COUNTERS) == plan.share_of(Metric.COUNTERS).share_s
    clock.now_s += 10.0  # the counters lens took 10 s, more than its 4 s
    ledger.spent(Metric.COUNTERS, 100.0)
    assert ledger.took_s[Metric.COUNTERS] == pytest.approx(10.0)
    time_s = ledger.give(Metric.TIME)
    assert time_s < plan.share_of(Metric.TIME).share_s  # re-planned from what is left
    assert time_s == pytest.approx(ledger.deadline_s - clock.now_s, abs=0.5)


def test_a_lens_far_over_its_share_is_said_unless_it_explains_itself() -> None:
    plan = plan_budget(30, PROBE, COSTS)
    clock = SetClockS(100.0)
    ledger = BudgetLedger.begun(plan, lenses(Metric.COUNTERS, Metric.TIME), clock)
    ledger.give(Metric.COUNTERS)
    ledger.give(Metric.TIME)
    clock.now_s += 60.0
    sink = MemorySink()
    counters, time_lens = lenses(Metric.COUNTERS, Metric.TIME)
    ledger.note_slow_lens(sink, counters, "b", 100.0)
    ledger.note_slow_lens(sink, time_lens, "b", 100.0)  # the time lens reports its own overruns
    (note,) = sink.notes
    assert note.message.startswith("the counters lens took 60 s, more than its share")
    assert "longer than the plan estimated" in note.message and note.metric == Metric.COUNTERS


def test_the_benchmark_says_what_it_used_and_warns_when_it_ran_over() -> None:
    plan = plan_budget(30, PROBE, COSTS)
    clock = SetClockS(100.0)
    ledger = BudgetLedger.begun(plan, lenses(Metric.COUNTERS, Metric.TIME), clock)
    for metric in (Metric.COUNTERS, Metric.TIME):
        ledger.give(metric)
        ledger.spent(metric, clock.now_s)
    clock.now_s += 5.0
    within = MemorySink()
    ledger.note_used(within, "b")
    (used,) = within.notes
    assert used.severity is Severity.INFO and used.message.startswith("used 6.0 s of the ")
    ledger.took_s[Metric.COUNTERS] = 80.0
    clock.now_s += 80.0
    over = MemorySink()
    ledger.note_used(over, "b")
    _, warning = over.notes
    assert warning.severity is Severity.WARNING and "--budget" in (warning.hint or "")
