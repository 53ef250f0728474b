"""The asm lens's analysis: code size as the ratio, hottest functions first, no speed claimed from
size."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from perflab.lenses.asm.analyse import ARTIFACT_FUNCTIONS, analyse_asm, asm_views
from perflab.lenses.asm.machine_code import FunctionCode, FunctionListing, build_listing
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Artifact, Benchmark, BenchmarkData, Comparison
from perflab.records.settings import Settings
from tests.support.asm_listings import LOOP_CODE, LOOP_NAMES, loop_lines


def test_analyse_uses_code_size_as_ratio_and_hottest_first() -> None:
    small = loop_lines({0x1002: 100.0})
    hot = build_listing(
        FunctionCode("g", "g", "/x", 0, code=bytes.fromhex("c3")), LOOP_NAMES.get, costs={0: 900.0}
    )
    bigger = build_listing(
        FunctionCode(
            "f.constprop.0",
            "f.constprop.0",
            "/y",
            0x1000,
            code=LOOP_CODE[:-1] + bytes.fromhex("90c3"),
        ),
        LOOP_NAMES.get,
        costs={0x1002: 100.0},
    )

    def artifact(variant: str, listings: Sequence[FunctionListing]) -> Artifact:
        payload = {"version": 1, "total_cost": 1e3, "functions": [f.to_json() for f in listings]}
        return Artifact("b", variant, Metric.ASM, ARTIFACT_FUNCTIONS, json.dumps(payload))

    data = BenchmarkData(artifacts=(artifact("base", [small, hot]), artifact("new", [bigger, hot])))
    analysis = analyse_asm(Benchmark("b", cmd="x"), ["base", "new"], data, Settings())
    [comparison] = analysis.comparisons
    out = comparison.to_json()
    assert out["ratio"] == pytest.approx((len(LOOP_CODE) + 2) / (len(LOOP_CODE) + 1))  # +1 nop, ret
    assert comparison.verdict is Verdict.INCONCLUSIVE  # larger code says nothing about speed
    names = [f["name"] for f in out["functions"]]
    assert names == ["g", "f"]
    f = out["functions"][1]
    for side in ("baseline", "variant"):
        assert {"symbol", "object", "size_bytes", "vector_width_bits", "calls"} <= set(f[side])
    assert f["variant"]["symbol"] == "f.constprop.0"
    assert "+" in f["diff"]
    views = asm_views("b", ["base", "new"], data, "^f")
    assert [view.change.name for view in views] == ["f"]


def asm_data(
    base: Sequence[FunctionListing], new: Sequence[FunctionListing], **extra: Any
) -> BenchmarkData:
    """Stored listings; without samples they stand for functions named by --symbol."""

    def artifact(variant: str, listings: Sequence[FunctionListing]) -> Artifact:
        payload = {
            "version": 1,
            "total_cost": 10.0,
            "named": True,
            "functions": [f.to_json() for f in listings],
        }
        payload.update(extra.get(variant, {}))
        return Artifact("b", variant, Metric.ASM, ARTIFACT_FUNCTIONS, json.dumps(payload))

    return BenchmarkData(artifacts=(artifact("base", base), artifact("new", new)))


def listing_of(code: bytes, name: str = "f") -> FunctionListing:
    return build_listing(FunctionCode(name, name, "/x", 0x1000, code=code), LOOP_NAMES.get)


def asm_comparison(base: Sequence[FunctionListing], new: Sequence[FunctionListing]) -> Comparison:
    analysis = analyse_asm(
        Benchmark("b", cmd="x"), ["base", "new"], asm_data(base, new), Settings()
    )
    [comparison] = analysis.comparisons
    return comparison


def test_smaller_code_is_not_called_faster() -> None:
    # the QA case: 70 -> 62 bytes while llvm-mca predicted more cycles per iteration
    bigger = listing_of(LOOP_CODE[:-1] + bytes.fromhex("90" * 8 + "c3"))
    comparison = asm_comparison([bigger], [listing_of(LOOP_CODE)])
    assert comparison.ratio < 1 and comparison.ci_low == comparison.ci_high == comparison.ratio
    assert comparison.verdict is Verdict.INCONCLUSIVE


def test_identical_code_is_equivalent_even_when_renamed() -> None:
    comparison = asm_comparison(
        [listing_of(LOOP_CODE)], [listing_of(LOOP_CODE, name="f.constprop.0")]
    )
    assert comparison.ratio == 1.0
    assert comparison.verdict is Verdict.EQUIVALENT


def test_a_function_on_one_side_only_is_not_equivalent() -> None:
    ret = bytes.fromhex("c3")
    comparison = asm_comparison(
        [listing_of(LOOP_CODE)], [listing_of(LOOP_CODE), listing_of(ret, "g")]
    )
    assert comparison.ratio == 1.0  # the size counts paired functions only
    assert comparison.verdict is Verdict.INCONCLUSIVE
    assert asm_comparison([], []).verdict is Verdict.INCONCLUSIVE


def test_a_function_the_regex_matches_whole_is_shown_before_hotter_ones_containing_it() -> None:
    # torch.compile: `--asm kernel` is inductor's `kernel`, not ATen's hotter clamp_min callback
    def ret(name: str, cost: float) -> FunctionListing:
        return build_listing(
            FunctionCode(name, name, "/x", 0, code=bytes.fromhex("c3")),
            LOOP_NAMES.get,
            costs={0: cost},
        )

    data = asm_data([ret("clamp_min_scalar_kernel_impl", 9.0)], [ret("kernel", 4.0)])
    views = asm_views("b", ["base", "new"], data, "kernel")
    assert [view.change.name for view in views] == ["kernel", "clamp_min_scalar_kernel_impl"]
