"""The asm lens's loop (lenses/asm/measure.py) on a scripted source of hot code: what it stores
per variant (its profile, then its listings), what a variant whose hot code has no function
becomes, and what preflight says of each missing tool."""

from __future__ import annotations

import dataclasses
import json

import pytest

from perflab.lenses.asm.analyse import ARTIFACT_FUNCTIONS, ARTIFACT_PROFILE
from perflab.lenses.asm.measure import LISTING_FORMAT_VERSION, AsmLens
from perflab.lenses.asm.sources import CodeSample, PerfRecordSource, ProfiledRegion
from perflab.machine.fake_processes import FakeRunner
from perflab.measure.lens import LensContext
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Severity, Variant
from perflab.store.analysis_cache import AnalysisCache
from perflab.tool_drivers.demangling import IdentityDemangler
from tests.support.fast_settings import FAST
from tests.support.lens_contexts import BENCH, lens_context

SETTINGS = dataclasses.replace(FAST, metrics=(Metric.ASM,))
# samples perf could not place in a file: JIT code and the kernel
UNPLACED = ProfiledRegion(
    samples=(CodeSample("[unknown]", "", None, 30.0), CodeSample("[kernel.kallsyms]", "", 5, 2.0)),
    objects=(),
)


class ScriptedSource:
    """A `HotCodeSource` handing each variant its region, and noting whom it profiled."""

    def __init__(self, region: ProfiledRegion) -> None:
        self.region = region
        self.profiled: list[str] = []

    def profile(
        self, benchmark: Benchmark, variant: Variant, context: LensContext
    ) -> ProfiledRegion:
        self.profiled.append(variant.name)
        return self.region


def _lens(source: ScriptedSource) -> AsmLens:
    return AsmLens(
        source, demangler=IdentityDemangler(), cache=AnalysisCache.disabled(), parallel=False
    )


def test_each_variant_s_profile_is_stored_then_its_listings() -> None:
    source = ScriptedSource(UNPLACED)
    context, sink = lens_context(FakeRunner().on_run(r"llvm-mca", returncode=127), SETTINGS)
    _lens(source).measure(BENCH, context)
    assert source.profiled == ["A", "B"]
    stored = [(a.variant, a.kind) for a in sink.artifacts]
    assert stored == [
        ("A", ARTIFACT_PROFILE),
        ("B", ARTIFACT_PROFILE),
        ("A", ARTIFACT_FUNCTIONS),
        ("B", ARTIFACT_FUNCTIONS),
    ]
    profile = json.loads(sink.artifacts[0].content)
    assert profile["unit"] == "samples" and len(profile["samples"]) == 2
    listing = json.loads(sink.artifacts[2].content)
    assert listing["version"] == LISTING_FORMAT_VERSION
    assert (listing["total_cost"], listing["named"], listing["functions"]) == (32.0, False, [])


def test_a_variant_whose_hot_code_has_no_function_is_warned_of_by_name() -> None:
    context, sink = lens_context(FakeRunner().on_run(r"llvm-mca", returncode=127), SETTINGS)
    _lens(ScriptedSource(UNPLACED)).measure(BENCH, context)
    warned = [
        (n.variant, n.severity) for n in sink.notes if "no hot or named function" in n.message
    ]
    assert warned == [("A", Severity.WARNING), ("B", Severity.WARNING)]
    assert all(n.benchmark == BENCH.name and n.metric is Metric.ASM for n in sink.notes)


@pytest.mark.parametrize(
    ("missing", "said"),
    [
        ({"llvm-mca", "llvm-mca-14"}, "llvm-mca is missing: no predicted cycles"),
        ({"c++filt"}, "c++filt is missing: C++ names stay mangled"),
    ],
)
def test_preflight_says_what_each_missing_tool_costs(missing: set[str], said: str) -> None:
    tools = {"perf", "llvm-mca", "llvm-mca-14", "c++filt"} - missing
    context, _ = lens_context(FakeRunner(tools=tools), SETTINGS)
    (note,) = _lens(ScriptedSource(UNPLACED)).preflight(context.experiment, context.runner)
    assert note.message.startswith(said) and note.severity is Severity.INFO


def test_without_perf_named_functions_are_still_read() -> None:
    settings = SETTINGS.with_options(symbols=("^sum$",))
    context, _ = lens_context(FakeRunner(tools={"llvm-mca", "c++filt"}), settings)
    (note,) = AsmLens(PerfRecordSource()).preflight(context.experiment, context.runner)
    assert note.message == "perf is missing: functions are found by --symbol only, without costs"
