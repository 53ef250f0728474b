"""The asm lens's analysis, from stored artifacts only: each variant's listings paired with the
baseline's and explained (explain.py); the comparison's ratio is the code size of the paired
functions, its verdict never a speed claim. And the side-by-side views of `perflab show RUN
--asm FUNCTION`."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from perflab.lenses.asm.claims import plain_name
from perflab.lenses.asm.code_diff import FunctionChange, diff_text
from perflab.lenses.asm.explain import explain
from perflab.lenses.asm.machine_code import FunctionListing
from perflab.lenses.asm.metric import ASM
from perflab.lenses.asm.rows import MIN_RAN_SAMPLES, MIN_RAN_SHARE, Row, VariantCode
from perflab.measure.lens import BenchmarkData, LensAnalysis
from perflab.records.diagnosis import Diagnosis
from perflab.records.errors import ConfigError
from perflab.records.kinds import Verdict
from perflab.records.model import Benchmark, Comparison
from perflab.records.settings import Settings
from perflab.tool_output.symbol_names import readable, selector_changes

ARTIFACT_FUNCTIONS = "asm.functions"  # JSON: {"version", "functions": [FunctionListing...]}
ARTIFACT_PROFILE = "asm.profile"  # JSON: the aggregated samples the hot functions came from


def compile_patterns(symbols: Sequence[str]) -> list[re.Pattern[str]]:
    """The --symbol patterns compiled; ConfigError for one that is not a regular expression."""
    patterns = []
    for text in symbols:
        try:
            patterns.append(re.compile(text))
        except re.error as error:
            raise ConfigError(
                f"--symbol {text!r} is not a valid regular expression: {error}",
                hint="it is matched with re.search against demangled and mangled names",
            ) from error
    return patterns


def load_code(data: BenchmarkData, variant: str) -> VariantCode:
    """One variant's stored listings and the facts the claims need (older runs lack some)."""
    artifacts = data.artifacts_of(variant, ARTIFACT_FUNCTIONS)
    if not artifacts:
        return VariantCode((), 0.0)
    payload = json.loads(artifacts[-1].content)
    return VariantCode(
        listings=tuple(FunctionListing.from_json(item) for item in payload.get("functions", [])),
        total_cost=float(payload.get("total_cost", 0.0)),
        family_samples={str(k): float(v) for k, v in payload.get("family_samples", {}).items()},
        defined={str(k): tuple(v) for k, v in payload.get("defined", {}).items()},
        searched={str(k): tuple(v) for k, v in payload.get("searched", {}).items()},
        identities=dict(payload.get("identities", {})),
        call_sites={str(k): tuple(v) for k, v in payload.get("call_sites", {}).items()},
        named=bool(payload.get("named", False)),
    )


@dataclass(frozen=True)
class AsmDetails:
    """The asm lens's finding for one pair: a row per hot function with its claims, and notes."""

    rows: tuple[Row, ...]
    notes: tuple[str, ...] = ()  # about the comparison as a whole
    # rows whose function ran in both variants as the same symbol at the same address of a
    # byte-identical object (build-id, or SHA-256): the same machine code, not just alike
    byte_identical: tuple[str, ...] = ()

    @property
    def diagnoses(self) -> list[Diagnosis]:
        """Every row's claims, those touching the most samples first."""
        found = [d for row in self.rows for d in row.diagnoses]
        return sorted(found, key=lambda d: -touched_samples(d))

    @property
    def changed_not_run(self) -> list[Diagnosis]:
        """Changes in code no sample landed on in either variant: listed, not claimed."""
        return [d for row in self.rows for d in row.not_run]

    def to_json(self) -> dict[str, Any]:
        return {
            "functions": [_row_json(row) for row in self.rows],
            "diagnoses": [d.to_json() for d in self.diagnoses],
            "changed_not_run": [d.to_json() for d in self.changed_not_run],
            "explanation_notes": [
                *self.notes,
                *(note for row in self.rows for note in row.notes),
            ],
            "min_ran_share": MIN_RAN_SHARE,
            "min_ran_samples": MIN_RAN_SAMPLES,
            "ratio_kind": "code size of paired hot functions, variant/baseline",
            "byte_identical_functions": list(self.byte_identical),
        }


def _row_json(row: Row) -> dict[str, Any]:
    return {
        "name": row.name,
        "baseline": row.baseline.to_json(),
        "variant": row.variant.to_json(),
        "ran": {"baseline": row.baseline.ran, "variant": row.variant.ran},
        "paired_by": row.paired_by or "function identity",
        "sample_share": {"baseline": row.baseline.share, "variant": row.variant.share},
        "not_run": {
            side: text
            for side, text in (("baseline", row.baseline.why_not), ("variant", row.variant.why_not))
            if text
        },
        "calls_added": sorted(set(row.variant.calls) - set(row.baseline.calls)),
        "calls_removed": sorted(set(row.baseline.calls) - set(row.variant.calls)),
        "change": row.sentence,
        "diagnoses": [d.to_json() for d in row.diagnoses],
        "notes": list(row.notes),
        "changed_not_run": [d.to_json() for d in row.not_run],
        "diff": diff_text(row.change.rows),
    }


def touched_samples(diagnosis: Diagnosis) -> float:
    """The samples of both variants a claim's code carries: the call sites and inlined copies
    it is about where those were counted, else the samples the claim rests on."""
    ran = diagnosis.detail.get("ran_samples")
    if isinstance(ran, Mapping):
        return float(sum(float(v) for v in ran.values()))
    return float(diagnosis.samples or 0)


def asm_verdict(rows: Sequence[Row]) -> Verdict:
    """`equivalent` when every row ran in both variants with identical normalised code and no
    claim was made; otherwise `inconclusive`. Code size says nothing about speed (smaller code
    can run slower): the time and counters lenses decide faster or slower, never this one."""
    if rows and all(row.change.identical and not row.diagnoses for row in rows):
        return Verdict.EQUIVALENT
    return Verdict.INCONCLUSIVE


def analyse_asm(
    benchmark: Benchmark,
    variants: Sequence[str],
    data: BenchmarkData,
    settings: Settings,
    envs: Mapping[str, Mapping[str, str]] | None = None,
) -> LensAnalysis:
    """`envs`: each variant's environment, whose CPU-dispatch selectors are the evidence that
    two CPU copies of one function were one choice (`selector_changes`)."""
    envs = envs or {}
    baseline = load_code(data, variants[0])
    comparisons = []
    for name in variants[1:]:
        code = load_code(data, name)
        selectors = selector_changes(envs.get(variants[0], {}), envs.get(name, {}))
        rows, notes = _shown(explain(baseline, code, selectors), baseline.named or code.named)
        both = [r for r in rows if r.change.baseline is not None and r.change.variant is not None]
        base_bytes = sum(r.baseline.size_bytes for r in both)
        var_bytes = sum(r.variant.size_bytes for r in both)
        ratio = var_bytes / base_bytes if base_bytes else math.nan
        comparisons.append(
            Comparison(
                benchmark=benchmark.name,
                metric=ASM,
                baseline=variants[0],
                variant=name,
                ratio=ratio,
                ci_low=ratio,
                ci_high=ratio,
                verdict=asm_verdict(rows),
                baseline_value=float(base_bytes),
                variant_value=float(var_bytes),
                unit="bytes",
                details=AsmDetails(
                    tuple(rows),
                    notes,
                    tuple(r.name for r in rows if _byte_identical(r, baseline, code)),
                ),
            )
        )
    return LensAnalysis(comparisons=tuple(comparisons))


def _shown(every: Sequence[Row], named: bool) -> tuple[list[Row], tuple[str, ...]]:
    """The rows worth showing (code that ran, a claim, or functions named by --symbol) and a
    note naming the sampled functions left out."""
    rows = [r for r in every if r.baseline.ran or r.variant.ran or r.diagnoses or named]
    unrun = [r.name for r in every if r not in rows]
    if not unrun:
        return rows, ()
    note = (
        f"{len(unrun)} sampled functions ran below the minimum ({MIN_RAN_SHARE:.0%} and "
        f"{MIN_RAN_SAMPLES} samples) in both variants and are not shown: "
        + ", ".join(readable(name) for name in unrun[:5])
        + ("" if len(unrun) <= 5 else ", ...")
    )
    return rows, (note,)


def _byte_identical(row: Row, baseline: VariantCode, variant: VariantCode) -> bool:
    left, right = row.baseline.primary, row.variant.primary
    if left is None or right is None or not (row.baseline.ran and row.variant.ran):
        return False
    identity = baseline.identities.get(left.object_path)
    return (
        identity is not None
        and identity == variant.identities.get(right.object_path)
        and (left.symbol, left.address) == (right.symbol, right.address)
        and row.change.identical
    )


# perflab show RUN --asm FUNCTION


@dataclass(frozen=True)
class AsmView:
    """Everything a renderer needs for one side-by-side annotated diff."""

    benchmark: str
    baseline_variant: str
    variant: str
    change: FunctionChange
    baseline_share: float
    variant_share: float
    cost_unit: str


def asm_views(
    benchmark: str, variants: Sequence[str], data: BenchmarkData, function: str
) -> list[AsmView]:
    """Side-by-side data for the functions whose (demangled, mangled or canonical) name matches
    the regex `function`, for every non-baseline variant against the baseline; those the regex
    matches whole (`kernel` for inductor's `kernel`) before hotter ones that only contain it
    (ATen's `clamp_min_scalar_kernel_impl` callback), each group hottest first."""
    pattern = compile_patterns([function])[0]
    baseline = load_code(data, variants[0])
    views = []
    whole: list[bool] = []
    for name in variants[1:]:
        for row in explain(baseline, load_code(data, name)):
            change = row.change
            sides = [f for f in (row.baseline.primary, row.variant.primary) if f is not None]
            if sides and any(
                pattern.search(text) for f in sides for text in (f.name, f.symbol, row.name)
            ):
                whole.append(
                    any(
                        pattern.fullmatch(text)
                        for f in sides
                        for text in (plain_name(f.name), f.symbol, row.name)
                    )
                )
                views.append(
                    AsmView(
                        benchmark=benchmark,
                        baseline_variant=variants[0],
                        variant=name,
                        change=change,
                        baseline_share=row.baseline.share,
                        variant_share=row.variant.share,
                        cost_unit=sides[0].cost_unit,
                    )
                )
    order = sorted(range(len(views)), key=lambda i: not whole[i])  # stable: hottest first
    return [views[i] for i in order]
