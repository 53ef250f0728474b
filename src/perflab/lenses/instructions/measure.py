"""The instructions lens: deterministic instruction counts under valgrind's callgrind.

The counting is `measure/callgrind/count.py`'s `CallgrindCounter` (statements in a worker with
callgrind switched around the loop only and an empty loop subtracted; commands whole, or inside
`--region`), which the lens holds and calls; the lens checks valgrind up front and analyses what
was stored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from perflab.lenses.instructions.analyse import analyse_instructions
from perflab.lenses.instructions.metric import INSTRUCTIONS
from perflab.lenses.shared_options import analysis_cache_of, cache_sim_of, region_of
from perflab.machine.proc import ProcessRunner
from perflab.measure.callgrind.count import CallgrindCounter, CountOptions
from perflab.measure.callgrind.native_code import native_code
from perflab.measure.lens import LensAnalysis, LensContext
from perflab.records.errors import ToolUnavailableError
from perflab.records.kinds import BenchmarkKind
from perflab.records.model import Benchmark, BenchmarkData, Experiment, Note, Severity
from perflab.records.settings import Settings
from perflab.tool_drivers.valgrind import (
    VALGRIND_HINT,
    check_valgrind_runs,
    cpu_has_avx512,
    read_cpuinfo,
)


class InstructionsLens:
    """Instruction counts (callgrind), per function, with inlining changes called out.

    Reads its options (lenses/instructions/options.py; the two the memory lens shares in
    lenses/shared_options.py): `region` (commands: count only inside that function), `cache_sim`
    (simulated D1/LL misses and branch mispredictions, fixed geometry) and `layers` (regex rules
    grouping functions into layers)."""

    metric = INSTRUCTIONS

    def __init__(
        self,
        counting: CountOptions | None = None,
        *,
        equivalence_band: float | None = None,
        read_cpuinfo: Callable[[], str] = read_cpuinfo,
    ) -> None:
        self.counter = CallgrindCounter(counting or CountOptions(INSTRUCTIONS))
        self.equivalence_band = equivalence_band  # None: the experiment's, as every lens
        self.read_cpuinfo = read_cpuinfo

    def measure(self, benchmark: Benchmark, context: LensContext) -> None:
        options = counting_asked(self.counter.options, context.experiment.settings)
        self.counter.with_options(options).count(benchmark, context)

    def preflight(self, experiment: Experiment, runner: ProcessRunner) -> list[Note]:
        if runner.which("valgrind") is None:
            raise ToolUnavailableError("the instructions lens needs valgrind", hint=VALGRIND_HINT)
        check_valgrind_runs(runner)
        statements = any(b.kind is BenchmarkKind.STATEMENT for b in experiment.benchmarks)
        if statements and runner.which("vgdb") is None:
            raise ToolUnavailableError(
                "vgdb (part of valgrind) is missing: it switches callgrind on around the loop",
                hint=VALGRIND_HINT,
            )
        if not cpu_has_avx512(self.read_cpuinfo()):
            return []
        # said only of benchmarks that may run CPU-dispatched native code, each once
        return [
            Note(
                Severity.WARNING,
                "this CPU has AVX-512, which valgrind hides from CPUID and cannot execute: "
                f"{reason}, and libraries that dispatch on the CPU take their AVX2 (or older) "
                "path under callgrind, so instruction counts describe the non-AVX-512 code path",
                hint="compare AVX-512 effects with the time and counters lenses",
                benchmark=benchmark.name,
                metric=self.metric,
            )
            for benchmark in experiment.benchmarks
            if (reason := native_code(benchmark)) is not None
        ]

    def analyse(
        self,
        benchmark: Benchmark,
        variants: Sequence[str],
        data: BenchmarkData,
        experiment: Experiment,
    ) -> LensAnalysis:
        return analyse_instructions(
            benchmark, variants, data, experiment, equivalence_band=self.equivalence_band
        )


def counting_asked(options: CountOptions, settings: Settings) -> CountOptions:
    """`options` with what the experiment asks of the counter: the lens's `cache_sim` and
    `region`, and the analysis cache every symbolising lens shares (asm's option)."""
    return replace(
        options,
        cache_sim=cache_sim_of(settings),
        region=region_of(settings),
        analysis_cache=analysis_cache_of(settings),
    )
