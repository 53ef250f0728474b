"""The time lens's notes (lenses.time.notes): which signs of a spoiled measurement are said,
how loudly, and once per benchmark."""

from __future__ import annotations

from perflab.lenses.time.notes import (
    LOADED_SHARE,
    finding_note,
    measured_once_notes,
    noise_notes,
    preemption_notes,
)
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, BenchmarkData, Measurement, Sample, Severity
from perflab.records.settings import Settings
from perflab.stats import noise
from perflab.stats.preemption import Preemption

BENCHMARK = Benchmark(name="b", stmt="pass")


def sample(
    variant: str,
    value: float,
    block: int,
    *,
    cpu: int | None = 3,
    at_ns: int = 0,
    warmup: bool = False,
    run_queue_ns: int | None = None,
) -> Sample:
    return Sample(
        "b",
        variant,
        Metric.TIME,
        "wall_ns",
        value,
        block=block,
        cpu=cpu,
        at_ns=at_ns,
        warmup=warmup,
        run_queue_ns=run_queue_ns,
        cpu_ns=None if run_queue_ns is None else int(value) - run_queue_ns,
    )


def test_steady_samples_on_the_pinned_cpu_say_nothing() -> None:
    samples = [sample("A", 100.0 + (i % 3), i, at_ns=i * 1000) for i in range(30)]
    assert noise_notes(BENCHMARK, "A", samples, Settings(cpu=3)) == []


def test_drift_is_a_warning_about_the_ratio() -> None:
    samples = [sample("A", 100.0 * (1 + i / 100), i, at_ns=i * 1000) for i in range(30)]
    (note,) = noise_notes(BENCHMARK, "A", samples, Settings(cpu=3))
    assert note.severity is Severity.WARNING
    assert "slower over the run" in note.message
    assert (note.benchmark, note.variant, note.metric) == ("b", "A", Metric.TIME)


def test_a_pinned_run_that_moved_warns_and_the_pin_is_the_cpu_most_samples_ran_on() -> None:
    cpus = [5] * 20 + [6]
    samples = [sample("A", 100.0, i, cpu=cpu) for i, cpu in enumerate(cpus)]
    (note,) = noise_notes(BENCHMARK, "A", samples, Settings())  # cpu chosen automatically
    assert note.severity is Severity.WARNING
    assert "pinned to CPU 5" in note.message


def test_an_unpinned_run_on_several_cpus_is_told_to_pin() -> None:
    samples = [sample("A", 100.0, i, cpu=i % 2) for i in range(20)]
    (note,) = noise_notes(BENCHMARK, "A", samples, Settings(pin=False))
    assert "2 different CPUs" in note.message


def test_warm_up_samples_are_not_judged() -> None:
    samples = [sample("A", 100.0 * (1 + i), i, at_ns=i, warmup=True) for i in range(30)]
    assert noise_notes(BENCHMARK, "A", samples, Settings()) == []


def test_outliers_are_information_about_the_variants_times() -> None:
    finding = noise.NoiseFinding(noise.NoiseKind.OUTLIERS, "3% outliers", hint="h")
    note = finding_note(BENCHMARK, "B", finding)
    assert note.severity is Severity.INFO
    assert (note.message, note.hint, note.variant) == ("3% outliers", "h", "B")


def preempted_data(share_of_b: float, n: int = 20) -> BenchmarkData:
    """A untouched; B's samples each lose `share_of_b` of their 100 ns to other processes."""
    lost = int(100 * share_of_b)
    return BenchmarkData(
        samples=tuple(
            [sample("A", 100.0, i, run_queue_ns=0) for i in range(n)]
            + [sample("B", 100.0, i, run_queue_ns=lost) for i in range(n)]
        )
    )


def test_samples_without_accounting_say_nothing_of_preemption() -> None:
    data = BenchmarkData(samples=(sample("A", 100.0, 0), sample("B", 100.0, 0)))
    assert preemption_notes(BENCHMARK, ["A", "B"], data, Preemption.KEEP) == []


def test_an_untouched_run_says_nothing_of_preemption() -> None:
    assert preemption_notes(BENCHMARK, ["A", "B"], preempted_data(0.0), Preemption.KEEP) == []


def test_a_loaded_run_warns_with_each_variants_share_in_the_experiments_order() -> None:
    data = preempted_data(4 * LOADED_SHARE)  # B lost 40%, so the whole run 20%
    (note,) = preemption_notes(BENCHMARK, ["A", "B"], data, Preemption.CORRECT, order=["B", "A"])
    assert note.severity is Severity.WARNING and note.hint is not None
    assert "other processes took 20%" in note.message
    assert note.message.endswith("(of each variant's samples: B 40%, A 0%)")
    assert note.variant is None  # one note for the benchmark, over every variant


def test_a_little_preemption_is_information_without_a_hint() -> None:
    (note,) = preemption_notes(BENCHMARK, ["A", "B"], preempted_data(0.04), Preemption.KEEP)
    assert note.severity is Severity.INFO and note.hint is None
    assert "kept as measured" in note.message


def test_a_group_of_a_design_says_the_note_in_the_words_of_the_whole() -> None:
    # analysed as the group (B, A), the note is the one the group (A, B) says
    data = preempted_data(0.3)
    as_group = preemption_notes(BENCHMARK, ["B", "A"], data, Preemption.KEEP, order=["A", "B"])
    assert as_group == preemption_notes(BENCHMARK, ["A", "B"], data, Preemption.KEEP)


def measurement(variant: str, n_groups: int) -> Measurement:
    return Measurement(
        "b", Metric.TIME, variant, 1.0, 0.9, 1.1, "ns", n_groups, "generation",
        1.0, 0.0, 1.0, 1.0, 1.0,
    )  # fmt: skip


def test_a_variant_measured_once_is_warned_of() -> None:
    notes = measured_once_notes(BENCHMARK, [measurement("A", 1), measurement("B", 2)])
    assert [(n.variant, n.severity) for n in notes] == [("A", Severity.WARNING)]
    assert "--runs 1" in notes[0].message
