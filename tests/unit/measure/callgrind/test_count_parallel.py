"""Instruction counting side by side: the CPUs the counter asks for, the totals it reads, and the
native checks that client requests reach callgrind, asked side by side once per interpreter and
environment."""

from __future__ import annotations

from typing import Any

from perflab.machine.fake_processes import FakeRunner
from perflab.machine.proc import Completed, LaunchSpec
from perflab.measure.callgrind.count import CallgrindCounter, CountOptions, cpus_for_counting
from perflab.measure.callgrind.dumps import dump_totals
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.settings import Settings


def test_the_counter_adds_back_the_measuring_cpu_the_engine_keeps_perflab_off() -> None:
    def options(**chosen: Any) -> CountOptions:
        # no other perflab run holds a CPU unless the case says so (never the machine's locks)
        chosen.setdefault("other_runs_cpus", lambda cpus: [])
        return CountOptions(Metric.INSTRUCTIONS, **chosen)

    only_0 = options(allowed_cpus=lambda: {0})  # perflab itself runs on 0 only
    assert cpus_for_counting(only_0, 1) == (0, 1)
    assert cpus_for_counting(only_0, None) == (None,)  # --no-pin: as many, unpinned
    assert cpus_for_counting(options(allowed_cpus=lambda: {0, 1}), None) == (None, None)
    assert cpus_for_counting(options(parallel=False, allowed_cpus=lambda: {0}), 1) == (1,)
    # another perflab run holds CPU 0's lock (it may be measuring time there): not used
    other = options(allowed_cpus=lambda: {0}, other_runs_cpus=lambda cpus: [0])
    assert cpus_for_counting(other, 1) == (1,)


def test_totals_are_read_from_the_totals_line_not_the_summary() -> None:
    text = (
        "version: 1\ncreator: callgrind-3.19.0\npart: 1\ndesc: Trigger: perflab-stmt-0\n"
        "positions: instr line\nevents: Ir Dr Dw\nsummary: 1002 20 3\n\n"
        "ob=/bin/x\nfn=main\n0x10 1 1000 20 3\n\ntotals: 1000 20\n"
    )
    assert dump_totals(text) == {"Ir": 1000.0, "Dr": 20.0, "Dw": 0.0}
    assert dump_totals(text.replace("totals: 1000 20\n", "")) is None  # then: a full parse
    two_parts = text + text.replace("part: 1", "part: 2")
    assert dump_totals(two_parts) is None


def test_client_requests_are_checked_once_per_interpreter_and_environment() -> None:
    def check(spec: LaunchSpec, stdin: str | None) -> Completed:
        why = "no ctypes" if (spec.env or {}).get("NO_CTYPES") else ""
        return Completed(spec.argv, 0, why, "", 1)

    runner = FakeRunner().on_run(r"callgrind_ops\.py$", check)
    benchmark = Benchmark("b", stmt="x")
    variants = (Variant("A"), Variant("B", env={"NO_CTYPES": "1"}))
    context = LensContext(
        Experiment((benchmark,), variants, Settings()), runner, MemorySink(), NullProgress(),
        None, "python3",
    )  # fmt: skip
    counter = CallgrindCounter(CountOptions(Metric.INSTRUCTIONS))
    # one variant cannot: every variant is switched through vgdb, and says why
    assert counter.client_requests_possible(benchmark, context) == "B: no ctypes"
    assert len(runner.calls) == 2  # one check per environment
    assert counter.client_requests_possible(benchmark, context, variants[:1]) is True
    assert len(runner.calls) == 2  # answered before: not asked again
