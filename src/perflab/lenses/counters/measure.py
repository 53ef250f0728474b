"""The counters lens: `perf stat` events of the measured region only, compared between variants
with the same paired, generation-level statistics as the time lens. Statements are counted in
workers under perf stat (statements.py), commands with perf stat around each run (commands.py);
AVX-512 use is read from the kernel beside the counts (avx512.py).

Availability. Before measuring, the events are tried on `true` (probe.py): an unknown name (perf
exits 129) is identified and dropped, `<not supported>` events (a VM without a PMU) are dropped,
and the run goes on with the rest. Each missing event is reported with a reason and a fix. Events
that are never counted (`<not counted>`) in any generation are reported too; multiplexed events
are kept, with the smallest running fraction seen.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict

from perflab.lenses.counters.analyse import analyse_counters
from perflab.lenses.counters.availability import PROBE, HostFacts, user_only_note
from perflab.lenses.counters.avx512 import read_arch_status
from perflab.lenses.counters.commands import CountersCommandSession
from perflab.lenses.counters.findings import UnavailableEvent
from perflab.lenses.counters.host import host_facts
from perflab.lenses.counters.metric import COUNTERS
from perflab.lenses.counters.options import requested_events
from perflab.lenses.counters.probe import probe_events
from perflab.lenses.counters.statements import CountersStatementSession
from perflab.machine.proc import ProcessRunner
from perflab.measure.lens import BenchmarkData, LensAnalysis, LensContext
from perflab.records.errors import ToolUnavailableError
from perflab.records.kinds import BenchmarkKind
from perflab.records.model import Artifact, Benchmark, Experiment, Note, Severity
from perflab.tool_drivers.perf import find_perf


class CountersLens:
    """The counters lens: hardware events counted with perf stat around each variant's measured
    region, in interleaved generations."""

    metric = COUNTERS

    def __init__(
        self,
        *,
        blocks_per_generation: int = 10,
        max_generations: int = 30,
        arch_status: Callable[[int], str | None] = read_arch_status,
        facts: HostFacts | None = None,
    ) -> None:
        self.blocks_per_generation = blocks_per_generation
        self.max_generations = max_generations
        self.arch_status = arch_status
        self.facts = facts
        self._probed: dict[tuple[str, ...], tuple[list[str], list[UnavailableEvent], bool]] = {}

    def _probe(
        self, runner: ProcessRunner, events: Sequence[str]
    ) -> tuple[list[str], list[UnavailableEvent], bool]:
        key = tuple(events)
        if key not in self._probed:
            self._probed[key] = probe_events(runner, events, facts=self.facts or host_facts())
        return self._probed[key]

    def preflight(self, experiment: Experiment, runner: ProcessRunner) -> list[Note]:
        find_perf(runner)
        events = requested_events(experiment.settings)
        usable, unavailable, user_only = self._probe(runner, events)
        if not usable:
            raise ToolUnavailableError(
                "none of the requested events can be counted here: "
                + ", ".join(f"{u.event} ({u.reason})" for u in unavailable),
                hint=unavailable[0].hint if unavailable else None,
            )
        notes = [
            Note(
                Severity.WARNING,
                f"event {u.event!r} is unavailable: {u.reason}",
                hint=u.hint,
                metric=COUNTERS,
            )
            for u in unavailable
        ]
        if user_only:
            notes.append(user_only_note(None))
        return notes

    def measure(self, benchmark: Benchmark, context: LensContext) -> None:
        events = requested_events(context.experiment.settings)
        usable, unavailable, _ = self._probe(context.runner, events)
        baseline = context.experiment.baseline.name
        facts = self.facts or host_facts()
        probe = {"unavailable": [u.to_json() for u in unavailable], "facts": asdict(facts)}
        context.sink.add_artifact(
            Artifact(benchmark.name, baseline, COUNTERS, PROBE, json.dumps(probe))
        )
        if not usable:
            return
        perf = find_perf(context.runner)
        session: CountersStatementSession | CountersCommandSession
        if benchmark.kind is BenchmarkKind.STATEMENT:
            session = CountersStatementSession(
                benchmark,
                context,
                events=usable,
                perf=perf,
                blocks_per_generation=self.blocks_per_generation,
                max_generations=self.max_generations,
                arch_status=self.arch_status,
            )
        else:
            session = CountersCommandSession(
                benchmark, context, events=usable, perf=perf, max_generations=self.max_generations
            )
        session.run()

    def analyse(
        self,
        benchmark: Benchmark,
        variants: Sequence[str],
        data: BenchmarkData,
        experiment: Experiment,
    ) -> LensAnalysis:
        return analyse_counters(benchmark, variants, data, experiment)
