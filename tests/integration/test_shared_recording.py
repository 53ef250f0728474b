"""A run with the profile and asm lenses records each variant once under `perf record`, for both
(measure/perf/recordings.py), whichever lens measures first; with real perf (cpu-clock in a VM)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from dataclasses import replace

import pytest

from perflab.lenses.asm.analyse import ARTIFACT_FUNCTIONS, ARTIFACT_PROFILE
from perflab.lenses.asm.measure import AsmLens
from perflab.lenses.profile.analyse import ProfileFindings
from perflab.lenses.profile.measure import ProfileLens
from perflab.machine.proc import Completed, LaunchSpec, LiveProcess, SubprocessRunner
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Experiment, Variant
from tests.support.fast_settings import MINIMUM_DESIGN

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("perf") is None, reason="perf is not installed"),
]

SORT = Benchmark("sort", stmt="sorted(data)", setup="data = list(range(3000, 0, -1))")
VARIANTS = (Variant("a"), Variant("b"))


class PerfRecordCounter(SubprocessRunner):
    """Real processes, counting the `perf record` runs that record a worker or a command (the
    option probes record `true`)."""

    def __init__(self) -> None:
        super().__init__()
        self.recordings = 0

    def _count(self, argv: Sequence[str]) -> None:
        if len(argv) > 1 and argv[1] == "record" and list(argv[-1:]) != ["true"]:
            self.recordings += 1

    def run(
        self, spec: LaunchSpec, *, timeout_s: float | None = None, stdin_text: str | None = None
    ) -> Completed:
        self._count(spec.argv)
        return super().run(spec, timeout_s=timeout_s, stdin_text=stdin_text)

    def spawn(self, spec: LaunchSpec, *, pass_fds: Sequence[int] = ()) -> LiveProcess:
        self._count(spec.argv)
        return super().spawn(spec, pass_fds=pass_fds)


def _measure(metrics: tuple[Metric, ...]) -> tuple[MemorySink, LensContext, PerfRecordCounter]:
    """Measure SORT with the lenses of `metrics`, in that order."""
    experiment = Experiment((SORT,), VARIANTS, replace(MINIMUM_DESIGN, metrics=metrics))
    runner = PerfRecordCounter()
    sink = MemorySink()
    context = LensContext(
        experiment, runner, sink, NullProgress(), cpu=None, default_python=sys.executable
    )
    lenses = {Metric.PROFILE: ProfileLens(), Metric.ASM: AsmLens()}
    for metric in metrics:
        lenses[metric].preflight(experiment, runner)
        lenses[metric].measure(SORT, context)
    return sink, context, runner


@pytest.mark.parametrize(
    "metrics", [(Metric.ASM, Metric.PROFILE), (Metric.PROFILE, Metric.ASM)], ids=str
)
def test_profile_and_asm_share_one_recording_per_variant(metrics: tuple[Metric, ...]) -> None:
    sink, context, runner = _measure(metrics)
    # each variant in the profile's worker processes, and nothing recorded again for asm
    assert context.recordings.recorded == 1
    assert runner.recordings == len(VARIANTS) * 2
    # the profile lens's results: its stacks per process, its wall samples, the sort on top
    profile = ProfileLens().analyse(
        SORT, ["a", "b"], sink.data_for("sort", Metric.PROFILE), context.experiment
    )
    assert isinstance(profile.findings, ProfileFindings)
    summaries = {r.variant: r for r in profile.findings.recordings}
    top = [s.name for s in summaries["a"].hot.symbols[:5]]
    assert any("sort" in name or "compare" in name for name in top), top
    assert sink.data_for("sort", Metric.PROFILE).samples
    # the asm lens's: a profile and the hot functions' listings per variant
    kinds = [(a.variant, a.kind) for a in sink.artifacts if a.metric == Metric.ASM]
    for variant in ("a", "b"):
        assert (variant, ARTIFACT_PROFILE) in kinds
        assert (variant, ARTIFACT_FUNCTIONS) in kinds
    asm = AsmLens().analyse(SORT, ["a", "b"], sink.data_for("sort", Metric.ASM), context.experiment)
    assert asm.comparisons


def test_asm_alone_records_its_own() -> None:
    _, context, runner = _measure((Metric.ASM,))
    assert context.recordings.recorded == 0
    assert runner.recordings == len(VARIANTS)


def test_a_profile_of_no_region_records_nothing_and_says_so() -> None:
    experiment = Experiment((SORT,), VARIANTS, replace(MINIMUM_DESIGN, metrics=(Metric.PROFILE,)))
    sink = MemorySink()
    context = LensContext(
        experiment,
        SubprocessRunner(),
        sink,
        NullProgress(),
        cpu=None,
        default_python=sys.executable,
    )
    ProfileLens(region_s=0.0).measure(SORT, context)
    assert [n for n in sink.notes if "no samples" in n.message]


def test_a_command_is_recorded_by_each_lens() -> None:
    # the profile's runs until 1 s at 999 Hz give a short command too few samples for asm
    sort = f'{sys.executable} -c "sorted(range(400_000, 0, -1))"'
    command = Benchmark("sort-command", cmd=sort)
    experiment = Experiment(
        (command,), VARIANTS, replace(MINIMUM_DESIGN, metrics=(Metric.PROFILE, Metric.ASM))
    )
    runner = PerfRecordCounter()
    sink = MemorySink()
    context = LensContext(
        experiment, runner, sink, NullProgress(), cpu=None, default_python=sys.executable
    )
    for lens in (AsmLens(), ProfileLens()):
        lens.preflight(experiment, runner)
        lens.measure(command, context)
    assert context.recordings.recorded == 1  # the profile's
    profile_runs = len(sink.data_for("sort-command", Metric.PROFILE).samples)
    assert runner.recordings > profile_runs  # and the asm lens's own
    kinds = {(a.variant, a.kind) for a in sink.artifacts if a.metric == Metric.ASM}
    assert kinds >= {(v.name, ARTIFACT_PROFILE) for v in VARIANTS}
