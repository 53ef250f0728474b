"""The memory lens's measuring: two existing measurements, stored under one metric.

- **Traffic**: each variant runs under callgrind with the cache simulation on, counted as the
  instructions lens counts (`CallgrindCounter`, measure/callgrind/count.py: statements in a
  worker with instrumentation switched on around the loop only and an empty loop of the same
  length subtracted; commands whole, or inside `--region`), with the simulated cache geometry
  fixed. The callgrind files it writes are kept: analysis reads the data accesses, misses, the
  line size and the calls to the C allocator from them (`analyse.py`).
- **Footprint**: the rss lens's measurement (`measure/peak_memory/sessions.py`): peak RSS and peak
  allocated per sample in fresh workers (statements), `wait4`'s peak RSS per run (commands).

Both are told to file their samples, artifacts, notes and variant facts under `memory`
(`CountOptions.metric`, `measure_peak_memory`'s `metric`), so the instructions and rss lenses can
also run beside this one without their data mixing.

Valgrind cannot execute every program (valgrind 3.19 decodes no AVX-512 instruction: a binary
that uses AVX-512 without asking the CPU first stops with SIGILL under it). Such a variant's
traffic is recorded as unavailable, with valgrind's own words, instead of failing the run; its
footprint is still measured natively.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Protocol

from perflab.lenses.memory.analyse import KIND_UNAVAILABLE, analyse_memory
from perflab.lenses.memory.metric import MEMORY
from perflab.lenses.shared_options import analysis_cache_of, region_of
from perflab.machine.proc import ProcessRunner
from perflab.measure.callgrind.count import CallgrindCounter, CountOptions
from perflab.measure.callgrind.native_code import native_code
from perflab.measure.lens import (
    BenchmarkData,
    LensAnalysis,
    LensContext,
)
from perflab.measure.peak_memory.sessions import measure_peak_memory
from perflab.records.errors import BenchmarkFailedError, ToolUnavailableError
from perflab.records.kinds import BenchmarkKind
from perflab.records.model import Artifact, Benchmark, Experiment, Note, Severity, Variant
from perflab.tool_drivers.valgrind import (
    cannot_execute,
    check_valgrind_runs,
    cpu_has_avx512,
    read_cpuinfo,
)

# callgrind repeats per variant: the spread between them is what the threshold is judged against
TRAFFIC_REPEATS = 2
TRAFFIC_PROCESSES = 2  # worker processes per variant, each under its own valgrind


class Footprint(Protocol):
    """How the memory lens measures peak memory (the rss lens's way, or a test's fake)."""

    def measure(self, benchmark: Benchmark, context: LensContext) -> None: ...


class PeakMemory:
    """The footprint: peak RSS and peak allocated, as the rss lens measures them."""

    def measure(self, benchmark: Benchmark, context: LensContext) -> None:
        measure_peak_memory(benchmark, context, metric=MEMORY, progress_label="peak RSS: memory")


class MemoryLens:
    """Memory traffic and allocator calls per iteration, peak RSS and peak allocated."""

    metric = MEMORY

    def __init__(
        self,
        *,
        traffic: CallgrindCounter | None = None,
        footprint: Footprint | None = None,
        read_cpuinfo: Callable[[], str] = read_cpuinfo,
    ) -> None:
        # two worker processes per variant, side by side, as the instructions lens: what a
        # cache simulation counts depends on the process too, and with one process the
        # interval holds none of that; the interval is widened by the processes' spread
        # (stats.summary.process_ratio_interval)
        self.traffic = traffic or CallgrindCounter(
            CountOptions(
                repeats=TRAFFIC_REPEATS,
                processes=TRAFFIC_PROCESSES,
                inline_frames=False,
                metric=MEMORY,
            )
        )
        self.footprint = footprint or PeakMemory()
        self.read_cpuinfo = read_cpuinfo

    def preflight(self, experiment: Experiment, runner: ProcessRunner) -> list[Note]:
        if runner.which("valgrind") is None or runner.which("vgdb") is None:
            raise ToolUnavailableError(
                "the memory lens needs valgrind (its cache simulation measures the traffic)",
                hint="install valgrind (Debian/Ubuntu: apt-get install valgrind); "
                "--metric rss measures peak memory without it",
            )
        check_valgrind_runs(runner)
        if not cpu_has_avx512(self.read_cpuinfo()):
            return []
        # said only of benchmarks that may run CPU-dispatched native code, each once
        return [
            Note(
                Severity.WARNING,
                f"this CPU has AVX-512, which valgrind hides from CPUID: {reason}, and "
                "libraries that dispatch on the CPU take their AVX2 (or older) path in the "
                "cache simulation, and code that uses AVX-512 unconditionally cannot run under "
                "valgrind at all (its traffic is then reported as unavailable)",
                hint="the bytes a kernel moves rarely depend on its vector width; "
                "compare AVX-512 effects with the time and counters lenses",
                benchmark=benchmark.name,
                metric=MEMORY,
            )
            for benchmark in experiment.benchmarks
            if (reason := native_code(benchmark)) is not None
        ]

    def measure(self, benchmark: Benchmark, context: LensContext) -> None:
        self.footprint.measure(benchmark, context)
        # measured one at a time (so one that valgrind cannot run does not stop the others), the
        # variants are still padded alike: the counter pads to the experiment's largest
        variants = context.experiment.variants
        counting = self._counting(benchmark, context, variants)
        for variant in variants:
            try:
                counting.count(benchmark, context, (variant,))
            except BenchmarkFailedError as error:
                reason = cannot_execute(error)
                if reason is None:
                    raise
                context.sink.add_artifact(
                    Artifact(
                        benchmark.name,
                        variant.name,
                        MEMORY,
                        KIND_UNAVAILABLE,
                        json.dumps({"valgrind": reason}),
                    )
                )

    def _counting(
        self, benchmark: Benchmark, context: LensContext, variants: Sequence[Variant]
    ) -> CallgrindCounter:
        """The traffic's counter (left as it was given) switched for counting one variant at a
        time with the cache simulation on, each as every other is (the same statement counts
        differently through client requests and through vgdb, forked and fresh): asked once,
        for all `variants`."""
        settings = context.experiment.settings
        options = replace(
            self.traffic.options,
            metric=MEMORY,  # the traffic is this lens's, whatever counter it was given
            progress_label="cache simulation: callgrind",
            cache_sim=True,  # the traffic is what the simulated caches see
            region=region_of(settings),  # the instructions lens's option, shared
            analysis_cache=analysis_cache_of(settings),
            note_unexecutable=False,  # caught by `measure`, per variant
            # instrumentation switched around each loop: the simulated caches start cold in
            # every loop (toggling collection would leave them warm from the loop before)
            toggle_collection=False,
        )
        if benchmark.kind is BenchmarkKind.STATEMENT and options.client_requests is True:
            requests = self.traffic.client_requests_possible(benchmark, context, variants)
            options = replace(options, client_requests=requests)
        return self.traffic.with_options(options).started_alike(context, len(variants))

    def analyse(
        self,
        benchmark: Benchmark,
        variants: Sequence[str],
        data: BenchmarkData,
        experiment: Experiment,
    ) -> LensAnalysis:
        return analyse_memory(benchmark, variants, data, experiment.settings)
