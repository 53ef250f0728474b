"""Instruction counting side by side: the CPUs the counter asks for, and the totals it reads."""

from __future__ import annotations

from typing import Any

from perflab.machine.fake_processes import FakeRunner
from perflab.measure.callgrind.count import CountOptions, InstructionCounter
from perflab.measure.callgrind.dumps import dump_totals
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.settings import Settings


def _context(cpu: int | None) -> LensContext:
    experiment = Experiment(
        (Benchmark("b", stmt="pass"),), (Variant("a"), Variant("b")), Settings()
    )
    return LensContext(experiment, FakeRunner(), MemorySink(), NullProgress(), cpu, "python3")


def test_the_lens_adds_back_the_measuring_cpu_the_engine_keeps_perflab_off() -> None:
    def counter(**options: Any) -> InstructionCounter:
        # no other perflab run holds a CPU unless the case says so (never the machine's locks)
        options.setdefault("other_runs_cpus", lambda cpus: [])
        return InstructionCounter(CountOptions(**options))

    lens = counter(allowed_cpus=lambda: {0})  # perflab itself runs on 0 only
    assert lens._cpus(_context(1)) == (0, 1)
    assert lens._cpus(_context(None)) == (None,)  # --no-pin: as many, unpinned
    assert counter(allowed_cpus=lambda: {0, 1})._cpus(_context(None)) == (None, None)
    assert counter(parallel=False, allowed_cpus=lambda: {0})._cpus(_context(1)) == (1,)
    # another perflab run holds CPU 0's lock (it may be measuring time there): not used
    other = counter(allowed_cpus=lambda: {0}, other_runs_cpus=lambda cpus: [0])
    assert other._cpus(_context(1)) == (1,)


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
