"""A run's notes, said once: a note repeated per benchmark, a stack's load warning from each of
its groups."""

from __future__ import annotations

import random

from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Note, Severity


def test_a_stack_says_its_load_warning_once() -> None:
    """A stack is analysed in groups (one per baseline); the note on how much other
    processes took covers every variant, and is worded alike from each group, so it is said
    once (it was twice, its variants listed in two orders)."""
    import math

    from perflab.analyse.run import dedupe_notes
    from perflab.lenses.time.analyse import analyse_time
    from perflab.records.kinds import Metric
    from perflab.records.model import BenchmarkData, Sample
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


def test_notes_said_again_per_benchmark_are_shown_once() -> None:
    from perflab.analyse.run import dedupe_notes

    run_level = Note(Severity.WARNING, "event x is unavailable", hint="h", metric=Metric.COUNTERS)
    per_benchmark = Note(
        Severity.WARNING,
        "event x was not measured",
        hint="h",
        benchmark="b",
        metric=Metric.COUNTERS,
    )
    other = Note(Severity.INFO, "something else", metric=Metric.TIME)
    notes = [run_level, per_benchmark, per_benchmark, other]
    assert dedupe_notes(notes) == [per_benchmark, other]
