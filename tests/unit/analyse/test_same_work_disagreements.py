"""Lenses that disagree about one pair are said to, with why and how to settle it."""

from __future__ import annotations

from dataclasses import replace

from perflab.analyse.same_work import disagreement_notes, gate_disagreement
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Comparison, Severity
from perflab.records.run_facts import MachineInfo


def _c(metric: Metric, ratio: float, low: float, high: float, verdict: Verdict) -> Comparison:
    return Comparison(
        benchmark="torch.add",
        metric=metric,
        baseline="A",
        variant="B",
        ratio=ratio,
        ci_low=low,
        ci_high=high,
        verdict=verdict,
        baseline_value=1.0,
        variant_value=ratio,
        unit="ns",
    )


def test_a_torch_op_faster_while_the_statement_is_slower_is_said_with_both_figures() -> None:
    (note,) = disagreement_notes(
        [
            _c(Metric.TIME, 1.010, 1.004, 1.016, Verdict.SLOWER),
            _c(Metric.TORCH, 0.405, 0.39, 0.42, Verdict.FASTER),
        ]
    )
    assert note.severity is Severity.WARNING and note.variant == "B"
    assert "0.405" in note.message and "1.010" in note.message
    assert "self" in note.message and "profiler" in note.message
    assert note.hint and "--budget" in note.hint


def test_agreeing_or_unrelated_lenses_say_nothing() -> None:
    time = _c(Metric.TIME, 0.9, 0.88, 0.92, Verdict.FASTER)
    assert disagreement_notes([time, _c(Metric.INSTRUCTIONS, 0.8, 0.8, 0.8, Verdict.FASTER)]) == []
    # code size is not speed
    assert disagreement_notes([time, _c(Metric.ASM, 1.5, 1.5, 1.5, Verdict.INCONCLUSIVE)]) == []
    # an undecided lens does not contradict
    assert disagreement_notes([time, _c(Metric.TORCH, 1.2, 0.5, 2.0, Verdict.INCONCLUSIVE)]) == []


def test_a_large_change_beside_an_equivalent_time_is_said() -> None:
    notes = disagreement_notes(
        [
            _c(Metric.TIME, 1.001, 0.996, 1.006, Verdict.EQUIVALENT),
            _c(Metric.INSTRUCTIONS, 0.7, 0.7, 0.7, Verdict.FASTER),
        ]
    )
    assert len(notes) == 1 and "valgrind" in notes[0].message


def test_avx512_is_named_only_on_a_machine_that_has_it() -> None:
    """Valgrind's AVX2 path is a fact of AVX-512 machines: elsewhere no note mentions it."""
    pair = [
        _c(Metric.TIME, 1.001, 0.996, 1.006, Verdict.EQUIVALENT),
        _c(Metric.INSTRUCTIONS, 0.7, 0.7, 0.7, Verdict.FASTER),
    ]
    (without,) = disagreement_notes(pair, MachineInfo(avx512=False))
    assert "AVX" not in without.message
    (with_it,) = disagreement_notes(pair, MachineInfo(avx512=True))
    assert "this AVX-512 machine" in with_it.message and "AVX2 path" in with_it.message


def test_a_suites_benchmarks_are_each_set_against_their_own_lenses() -> None:
    """perflab's own history: one benchmark's time unmoved and another's instructions 72.7%
    more (its time 2.6x: they agree) read as "time 1.003, but 72.7% more instructions"."""

    def of(benchmark: str, comparison: Comparison) -> Comparison:
        return replace(comparison, benchmark=benchmark, baseline="base", variant="head")

    comparisons = [
        of("steady", _c(Metric.TIME, 1.003, 0.992, 1.015, Verdict.INCONCLUSIVE)),
        of("sorted", _c(Metric.TIME, 2.626, 2.185, 3.015, Verdict.SLOWER)),
        of("steady", _c(Metric.INSTRUCTIONS, 1.001, 1.001, 1.002, Verdict.EQUIVALENT)),
        of("sorted", _c(Metric.INSTRUCTIONS, 1.727, 1.726, 1.727, Verdict.SLOWER)),
    ]
    assert gate_disagreement(comparisons, Metric.TIME, ("base", "head"), 0.02) is None
    # where one benchmark's own lenses disagree, that one is said
    faster = of("sorted", _c(Metric.INSTRUCTIONS, 0.8, 0.79, 0.81, Verdict.FASTER))
    found = gate_disagreement([*comparisons[:3], faster], Metric.TIME, ("base", "head"), 0.02)
    assert found is not None and found.other_ratio == 0.8 and found.gate_ratio == 2.626
