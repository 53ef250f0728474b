"""numpy's CPU dispatch, which goes through its own pointer tables rather than IFUNC: `np.add`
with and without NPY_DISABLE_CPU_FEATURES=X86_V3 runs DOUBLE_add_X86_V3 in one variant and
DOUBLE_add in the other. The profile lens claims the dispatch with the variable as evidence, and
the asm lens shows the two copies as one row with their vector widths."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from perflab.lenses.asm.measure import AsmLens
from perflab.lenses.asm.sources import PerfRecordSource
from perflab.lenses.profile.measure import ProfileLens
from perflab.machine.proc import SubprocessRunner
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.settings import Settings

np = pytest.importorskip("numpy")

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("perf") is None, reason="needs perf"),
    pytest.mark.skipif(shutil.which("objdump") is None, reason="needs objdump"),
    pytest.mark.skipif(
        " avx2" not in Path("/proc/cpuinfo").read_text(), reason="the CPU lacks AVX2"
    ),
]

BENCHMARK = Benchmark(
    "add",
    stmt="np.add(a, b, out=c)",
    setup="import numpy as np; a = np.ones(1 << 16); b = np.ones(1 << 16); c = np.empty(1 << 16)",
)
VARIANTS = (Variant("v3"), Variant("no_v3", env={"NPY_DISABLE_CPU_FEATURES": "X86_V3"}))
SELECTOR = "NPY_DISABLE_CPU_FEATURES=X86_V3 in the variant"


def _context(experiment: Experiment, sink: MemorySink) -> LensContext:
    return LensContext(experiment, SubprocessRunner(), sink, NullProgress(), None, sys.executable)


def _comparison(
    lens: Any,
    metric: Metric,
    benchmark: Benchmark = BENCHMARK,
    variants: tuple[Variant, ...] = VARIANTS,
) -> dict[str, Any]:
    experiment = Experiment((benchmark,), variants, Settings(metrics=(metric,), seed=1))
    lens.preflight(experiment, SubprocessRunner())
    sink = MemorySink()
    lens.measure(benchmark, _context(experiment, sink))
    names = [v.name for v in variants]
    analysis = lens.analyse(benchmark, names, sink.data_for(benchmark.name, metric), experiment)
    [comparison] = analysis.comparisons
    out: dict[str, Any] = comparison.to_json()
    return out


def _skip_unless_numpy_dispatches_so(names: set[str]) -> None:
    if not {"DOUBLE_add_X86_V3", "DOUBLE_add"} <= names:
        pytest.skip(f"numpy {np.__version__} dispatched np.add otherwise here: {sorted(names)}")


def test_numpy_dispatch_is_claimed_with_its_selector_and_is_one_asm_row() -> None:
    profile = _comparison(ProfileLens(region_s=1.0), Metric.PROFILE)
    ran = {s["name"] for s in profile["symbols"]}
    _skip_unless_numpy_dispatches_so(ran)
    [dispatch] = [
        d
        for d in profile["dispatch_changed"]
        if (d["from"], d["to"]) == ("DOUBLE_add_X86_V3", "DOUBLE_add")
    ]
    assert dispatch["claim"] == "dispatch_changed"
    assert any(SELECTOR in e for e in dispatch["evidence"])
    assert any("_multiarray_umath" in e for e in dispatch["evidence"])

    asm = _comparison(AsmLens(PerfRecordSource(target_ms=300)), Metric.ASM)
    rows = [r for r in asm["functions"] if "DOUBLE_add" in r["name"]]
    [row] = [r for r in rows if r["ran"] == {"baseline": True, "variant": True}]
    assert row["name"] == "DOUBLE_add_X86_V3 -> DOUBLE_add"
    assert len([r for r in rows if r["name"] in ("DOUBLE_add", "DOUBLE_add_X86_V3")]) == 0
    claims = {d["claim"]: d for d in row["diagnoses"]}
    assert any(SELECTOR in e for e in claims["dispatch_changed"]["evidence"])
    assert claims["vector_width_changed"]["detail"] == {"from": 256, "to": 128}
    assert not any("inlined" in note for note in asm["explanation_notes"] if "DOUBLE_add" in note)


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_numpy_dispatch_is_one_instructions_row() -> None:
    from perflab.lenses.instructions.measure import InstructionsLens
    from perflab.measure.callgrind.count import CountOptions

    out = _comparison(
        InstructionsLens(CountOptions(Metric.INSTRUCTIONS, repeats=1)), Metric.INSTRUCTIONS
    )
    names = {f["name"] for f in out["functions"]} | {
        f["spelled_in_variant"]["name"] for f in out["functions"] if "spelled_in_variant" in f
    }
    _skip_unless_numpy_dispatches_so(names)
    [row] = [f for f in out["functions"] if f["name"] == "DOUBLE_add_X86_V3"]
    assert row["spelled_in_variant"]["name"] == "DOUBLE_add"
    assert SELECTOR in row["spelled_in_variant"]["why"]
    assert row["presence"] == "both"
    assert "DOUBLE_add" not in {f["name"] for f in out["functions"]}


EXP = Benchmark(
    "exp",
    stmt="np.exp(a, out=c)",
    setup="import numpy as np; a = np.ones(1 << 16, dtype=np.float32); c = np.empty_like(a)",
)
NO_AVX512 = Variant("no_avx512", env={"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"})


@pytest.mark.skipif(
    " avx512f" not in Path("/proc/cpuinfo").read_text(), reason="the CPU lacks AVX-512"
)
def test_one_objects_two_copies_of_a_name_are_a_dispatch_with_their_widths() -> None:
    """numpy 2.x's float32 exp runs `simd_exp_FLOAT`, a static function its X86_V4 and X86_V3
    objects both define: the asm lens disassembles the copy each variant ran (the first of the
    name made an A/B of AVX-512 against AVX2 code 'identical after normalisation')."""
    asm = _comparison(
        AsmLens(PerfRecordSource(target_ms=300)), Metric.ASM, EXP, (Variant("v4"), NO_AVX512)
    )
    rows = [r for r in asm["functions"] if r["name"] == "simd_exp_FLOAT"]
    if not rows:
        pytest.skip(f"numpy {np.__version__} ran float32 exp otherwise here")
    [row] = rows
    claims = {d["claim"]: d for d in row["diagnoses"]}
    assert claims["vector_width_changed"]["detail"] == {"from": 512, "to": 256}
    assert any("defines simd_exp_FLOAT at" in e for e in claims["dispatch_changed"]["evidence"])
    assert "identical" not in row["change"]
