"""A synthetic run with every lens's details, raw time samples over three generations and folded
stacks, as the HTML, terminal, Markdown and snapshot tests render it; and its parts."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from perflab.analyse.run import with_sections
from perflab.lenses.profile.flame import differential_tree
from perflab.lenses.rss import RSS
from perflab.lenses.rss.analyse import analyse_rss
from perflab.lenses.time.artifacts import time_series
from perflab.records.document import FlameNode, TimePoint, TimeSeries
from perflab.records.kinds import Metric, RunStatus, Verdict
from perflab.records.model import (
    Artifact,
    Benchmark,
    BenchmarkData,
    Comparison,
    Experiment,
    Note,
    Sample,
    Severity,
    Variant,
)
from perflab.records.results import RunResult
from perflab.records.run_facts import MachineInfo, VariantInfo
from perflab.records.settings import Settings
from perflab.store.sqlite import StoredRun
from perflab.tool_output.peak_memory import MAXRSS_KB, NET_BLOCKS, PEAK_ALLOC_BYTES
from perflab.tool_output.profile_stacks import parse_folded


def series_of(label: str, values: list[float], *, warmup: int = 0) -> TimeSeries:
    """`values` as a time series: 0.1 s apart, four samples a generation, the first `warmup`
    of them warm-ups."""
    return TimeSeries(
        label,
        0,
        tuple(
            TimePoint(at_s=k * 0.1, value=v, generation=k // 4, warmup=k < warmup)
            for k, v in enumerate(values)
        ),
    )


BASELINE_FOLDED = """\
python`main;libpy.so`eval;libpy.so`sort;libpy.so`compare 60
python`main;libpy.so`eval;libpy.so`helper 40
"""
VARIANT_FOLDED = """\
python`main;libpy2.so`eval;libpy2.so`sort;libpy2.so`compare 30
python`main;libpy2.so`eval;libpy2.so`sort 20
python`main;libpy2.so`eval;libpy2.so`helper 40
python`main;libpy2.so`eval;libpy2.so`new_thing 10
"""


@dataclass(frozen=True)
class JsonDetails:
    """Details as the JSON contract has them, plus the plot data lenses' details carry."""

    fields: dict[str, Any]
    series: tuple[TimeSeries, ...] = ()
    group_ratios: tuple[tuple[int, float], ...] = ()
    flame: FlameNode | None = None

    def to_json(self) -> dict[str, Any]:
        return self.fields


def _comparison(metric: Metric, ratio: float, verdict: Verdict, **details: Any) -> Comparison:
    return Comparison(
        benchmark="sorted(data)",
        metric=metric,
        baseline="presorted",
        variant="shuffled",
        ratio=ratio,
        ci_low=ratio * 0.98,
        ci_high=ratio * 1.02,
        verdict=verdict,
        baseline_value=100.0,
        variant_value=100.0 * ratio,
        unit="ns" if metric is Metric.TIME else "",
        event="task-clock" if metric is Metric.COUNTERS else None,
        details=JsonDetails(details) if details else None,
    )


ASM_DIFF = "    push rbp\n-   vmaxps ymm0, ymm1, ymm2\n+   vmaxps zmm0, zmm1, zmm2\n@@\n>   ret\n"


RSS_LOOPS = 1000  # iterations per rss sample


def rss_samples() -> list[Sample]:
    """The rss lens's samples as its statement sessions store them: per sample, the peak
    allocated (B) and the process's peak RSS (kB), each of one loop, and the blocks the loop
    left allocated over RSS_LOOPS iterations; shuffled holds 30% more and leaves 2 blocks an
    iteration, three generations of two blocks."""
    samples = []
    for generation in range(3):
        for block in range(2):
            for position, (variant, scale) in enumerate((("presorted", 1.0), ("shuffled", 1.3))):
                wobble = 1.0 + 0.01 * ((generation + block + position) % 3)
                for name, value, loops in (
                    (PEAK_ALLOC_BYTES, 800_000 * scale * wobble, 1),
                    (NET_BLOCKS, 2.0 * position * RSS_LOOPS, RSS_LOOPS),
                    (MAXRSS_KB, 20_480 * scale * wobble, 1),
                ):
                    samples.append(
                        Sample(
                            benchmark="sorted(data)",
                            variant=variant,
                            metric=RSS,
                            name=name,
                            value=value,
                            loops=loops,
                            generation=generation,
                            block=block,
                            position=position,
                            cpu=1,
                            at_ns=(generation * 4 + block * 2 + position) * 10_000_000,
                        )
                    )
    return samples


def synthetic_run(*, rss: bool = False) -> tuple[RunResult, StoredRun]:
    """A run with every lens's details, raw time samples over 3 generations and folded stacks;
    with `rss`, the rss lens's too (its samples, analysed by the lens: rss_samples)."""
    experiment = Experiment(
        benchmarks=(Benchmark("sorted(data)", stmt="sorted(data)"),),
        variants=(Variant("presorted"), Variant("shuffled", env={"SHUFFLE": "1"})),
        settings=Settings(
            metrics=(
                Metric.TIME,
                Metric.INSTRUCTIONS,
                Metric.COUNTERS,
                Metric.PROFILE,
                Metric.ASM,
                Metric.TORCH,
                *((RSS,) if rss else ()),
            )
        ),
    )
    samples = []
    for generation in range(3):
        for block in range(8):
            for position, (variant, base) in enumerate((("presorted", 20e3), ("shuffled", 3e5))):
                value = base * (1.1 if block % 3 == 0 else 1.0) * 100
                samples.append(
                    Sample(
                        benchmark="sorted(data)",
                        variant=variant,
                        metric=Metric.TIME,
                        name="wall_ns",
                        value=value,
                        loops=100,
                        generation=generation,
                        block=block,
                        position=position,
                        cpu=1,
                        at_ns=(generation * 16 + block * 2 + position) * 10_000_000,
                        warmup=block == 0,
                    )
                )
    artifacts = (
        Artifact("sorted(data)", "presorted", Metric.PROFILE, "folded", BASELINE_FOLDED),
        Artifact("sorted(data)", "shuffled", Metric.PROFILE, "folded", VARIANT_FOLDED),
    )
    comparisons = (
        _comparison(Metric.TIME, 15.0, Verdict.SLOWER, baseline_spread=0.02, variant_spread=0.03),
        _comparison(
            Metric.INSTRUCTIONS,
            1.5,
            Verdict.SLOWER,
            attribution="inline-aware",
            functions=[
                {
                    "name": "merge_at",
                    "object": "libpy.so",
                    "baseline": 10.0,
                    "variant": 900.0,
                    "delta": 890.0,
                    "variant_inclusive": 1200.0,
                    "presence": "both",
                },
                {
                    "name": "gone",
                    "object": "libpy.so",
                    "baseline": 50.0,
                    "variant": 0.0,
                    "delta": -50.0,
                    "variant_inclusive": 0.0,
                    "presence": "baseline_only",
                },
            ],
            inlining_changes=[{"sentence": "`helper` is outlined now: +12 self"}],
        ),  # fmt: skip
        _comparison(Metric.COUNTERS, 1.0, Verdict.EQUIVALENT),
        _comparison(
            Metric.PROFILE,
            2.0,
            Verdict.INCONCLUSIVE,
            symbols=[
                {
                    "name": "merge_at",
                    "object": "libpy.so",
                    "baseline_share": 0.0,
                    "variant_share": 0.3,
                    "delta": 0.3,
                    "variant_children_share": 0.4,
                }
            ],
            appeared=["merge_at"],
            sampled_event="cpu-clock",
            extra_seconds_to_decide=120.0,
        ),  # fmt: skip
        _comparison(
            Metric.ASM,
            1.1,
            Verdict.SLOWER,
            functions=[
                {
                    "name": "relu_kernel",
                    "baseline": {
                        "size_bytes": 64,
                        "instructions": 12,
                        "vector_width_bits": 256,
                        "cost_share": 0.4,
                    },
                    "variant": {"size_bytes": 70, "instructions": 12, "vector_width_bits": 512},
                    "calls_added": ["memcpy"],
                    "calls_removed": [],
                    "change": "now 512-bit",
                    "diff": ASM_DIFF,
                },
            ],
            ratio_kind="code size",
        ),  # fmt: skip
        _comparison(
            Metric.TORCH,
            0.8,
            Verdict.FASTER,
            ops=[
                {
                    "name": "aten::add",
                    "baseline_calls_per_iteration": 1.0,
                    "variant_calls_per_iteration": 1.0,
                    "baseline_self_us_per_iteration": 5.0,
                    "variant_self_us_per_iteration": 4.0,
                }
            ],
            disappeared=["aten::empty"],
            baseline_torch_version="2.13.0",
            variant_torch_version="2.13.0",
            baseline_cpu_capability="AVX512",
            variant_cpu_capability="AVX2",
        ),
    )
    machine = {
        "cpu_model": "AMD EPYC 9R14",
        "cores": 2,
        "pinned_cpu": 1,
        "kernel": "6.1.0",
        "hypervisor": True,
        "hypervisor_vendor": "Amazon EC2",
        "boost": "unknown",
        "load_average": [0.5, 0.4, 0.3],
    }
    notes = (
        Note(Severity.INFO, "sample times look bimodal", benchmark="sorted(data)"),
        Note(
            Severity.WARNING,
            "samples became 26% slower over the run",
            hint="check for background jobs",
            benchmark="sorted(data)",
            variant="shuffled",
            metric=Metric.TIME,
        ),
    )
    time_details = JsonDetails(
        {"baseline_spread": 0.02, "variant_spread": 0.03},
        series=time_series(samples, ["presorted", "shuffled"]),
        group_ratios=((0, 14.8), (1, 15.0), (2, 15.2)),
    )
    profile = comparisons[3]
    assert isinstance(profile.details, JsonDetails)
    comparisons = (
        dataclasses.replace(comparisons[0], details=time_details),
        *comparisons[1:3],
        dataclasses.replace(
            profile,
            details=dataclasses.replace(
                profile.details,
                flame=differential_tree(
                    parse_folded(BASELINE_FOLDED), parse_folded(VARIANT_FOLDED)
                ),
            ),
        ),
        *comparisons[4:],
    )
    if rss:
        analysis = analyse_rss(
            experiment.benchmarks[0],
            ["presorted", "shuffled"],
            BenchmarkData(tuple(rss_samples())),
            experiment.settings,
        )
        comparisons = (*comparisons, *analysis.comparisons)
        notes = (*notes, *analysis.notes)
        samples.extend(rss_samples())
    result = RunResult(
        run_id=7,
        status=RunStatus.COMPLETE,
        created_at="2026-01-01T00:00:00+00:00",
        experiment=experiment,
        machine=MachineInfo.from_json(machine),
        comparisons=comparisons,
        notes=notes,
        variant_info={"presorted": VariantInfo(python_version="3.11.7")},
        differences=("env SHUFFLE: presorted=None, shuffled=1",),
    )
    result = with_sections(result)
    run = StoredRun(
        run_id=7,
        created_at=result.created_at,
        finished_at=None,
        status=RunStatus.COMPLETE,
        perflab_version="0",
        experiment=experiment,
        machine=machine,
        error=None,
        samples=tuple(samples),
        artifacts=artifacts,
        notes=notes,
        variant_info={"presorted": {"python_version": "3.11.7"}},
    )
    return result, run
