"""The asm lens: the hot functions of each variant, disassembled, normalised, diffed, annotated.

measure: profile the measured region of every variant (or take the functions named by
``Settings.symbols``), locate each function in the object the variant's process really mapped,
disassemble and summarise it, and store the listings as JSON artifacts.
analyse: pair functions across variants (ISA namespaces and clone suffixes ignored), diff them and
summarise what changed. The comparison's ratio is the **code size** of the paired functions,
variant/baseline: a size ratio, not a speed ratio. So the verdict never claims speed: it is
`equivalent` when every function's normalised code is identical, `inconclusive` otherwise.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from perflab.errors import ConfigError
from perflab.lenses.asm.analyse import (
    FunctionChange,
    FunctionListing,
    build_listing,
    canonical_name,
    compare_functions,
    diff_text,
    pair_names,
)
from perflab.lenses.asm.elf_code import (
    CodeLookupError,
    Demangler,
    ElfObject,
    ElfSymbol,
    default_demangler,
    load_elf_object,
)
from perflab.lenses.asm.mca import McaPredictor
from perflab.lenses.asm.sources import (
    HotCodeSource,
    PerfRecordSource,
    ProfiledRegion,
    region_from_json,
    region_to_json,
)
from perflab.measure.lens import BenchmarkData, LensAnalysis, LensContext
from perflab.model import (
    Artifact,
    Benchmark,
    Comparison,
    Experiment,
    Metric,
    Note,
    Settings,
    Severity,
    Variant,
    Verdict,
)
from perflab.proc import ProcessRunner, which

ARTIFACT_FUNCTIONS = "asm.functions"  # JSON: {"version", "functions": [FunctionListing...]}
ARTIFACT_PROFILE = "asm.profile"  # JSON: the aggregated samples the hot functions came from
FORMAT_VERSION = 1
HOT_FUNCTIONS = 5
MIN_HOT_SHARE = 0.01  # below 1% of the samples a function is not worth a diff
MAX_MATCHES_PER_PATTERN = 8


@dataclass(frozen=True)
class FoundFunction:
    object: ElfObject
    symbol: ElfSymbol
    cost: float  # samples in the function; 0 when named by --symbol and not sampled


class AsmLens:
    metric = Metric.ASM

    def __init__(
        self,
        source: HotCodeSource | None = None,
        *,
        hot_functions: int = HOT_FUNCTIONS,
        mcpu: str | None = None,  # llvm-mca's CPU model; None: the host's
        demangler: Demangler | None = None,
    ) -> None:
        self.source: HotCodeSource = source or PerfRecordSource()
        self.hot_functions = hot_functions
        self.mcpu = mcpu
        self.demangler = demangler

    # -- preflight --------------------------------------------------------------------------

    def preflight(self, experiment: Experiment, runner: ProcessRunner) -> list[Note]:
        compile_patterns(experiment.settings.symbols)
        notes: list[Note] = []
        if isinstance(self.source, PerfRecordSource):
            if experiment.settings.symbols and which("perf") is None:
                notes.append(
                    _note("perf is missing: functions are found by --symbol only, without costs")
                )
            else:
                PerfRecordSource.check(runner)
        if which("llvm-mca") is None and which("llvm-mca-14") is None:
            notes.append(
                _note(
                    "llvm-mca is missing: no predicted cycles per loop iteration",
                    hint="install llvm (llvm-mca)",
                )
            )
        if which("c++filt") is None:
            notes.append(
                _note("c++filt is missing: C++ names stay mangled", hint="install binutils")
            )
        return notes

    # -- measure ----------------------------------------------------------------------------

    def measure(self, benchmark: Benchmark, context: LensContext) -> None:
        demangler = self.demangler or default_demangler(context.runner)
        predictor = McaPredictor(context.runner, cpu=self.mcpu)
        patterns = compile_patterns(context.experiment.settings.symbols)
        variants = context.experiment.variants
        regions: dict[str, ProfiledRegion] = {}
        chosen: dict[str, list[FoundFunction]] = {}
        for variant in variants:
            context.progress.update(
                benchmark=benchmark.name, metric=self.metric, detail=f"profiling {variant.name}"
            )
            region = self.source.profile(benchmark, variant, context)
            regions[variant.name] = region
            _store(context, benchmark, variant, ARTIFACT_PROFILE, region_to_json(region))
            chosen[variant.name] = self._choose(region, patterns, demangler)
        wanted = _union_in_order(chosen, [v.name for v in variants])
        for variant in variants:
            context.progress.update(
                benchmark=benchmark.name, metric=self.metric, detail=f"disassembling {variant.name}"
            )
            region = regions[variant.name]
            found = _complete(chosen[variant.name], wanted, region, demangler)
            listings = [_listing(f, region, predictor) for f in found]
            if not listings:
                context.sink.add_note(
                    Note(
                        Severity.WARNING,
                        "no hot or named function was found in the objects this variant mapped",
                        hint="name functions with --symbol REGEX; are the objects stripped?",
                        benchmark=benchmark.name,
                        variant=variant.name,
                        metric=self.metric,
                    )
                )
            payload = {
                "version": FORMAT_VERSION,
                "total_cost": region.total,
                "cost_unit": region.unit,
                "mcpu": predictor.cpu if predictor.available else None,
                "functions": [listing.to_json() for listing in listings],
            }
            _store(context, benchmark, variant, ARTIFACT_FUNCTIONS, payload)

    def _choose(
        self, region: ProfiledRegion, patterns: Sequence[re.Pattern[str]], demangler: Demangler
    ) -> list[FoundFunction]:
        if patterns:
            return find_named(region, patterns, demangler)
        return find_hot(region, demangler, self.hot_functions)

    # -- analyse ----------------------------------------------------------------------------

    def analyse(
        self,
        benchmark: Benchmark,
        variants: Sequence[str],
        data: BenchmarkData,
        experiment: Experiment,
    ) -> LensAnalysis:
        return analyse_asm(benchmark, variants, data, experiment.settings)


# ---------------------------------------------------------------------------------------------
# choosing and locating functions


def compile_patterns(symbols: Sequence[str]) -> list[re.Pattern[str]]:
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


def _objects(region: ProfiledRegion, demangler: Demangler, paths: Sequence[str]) -> list[ElfObject]:
    objects = []
    for path in paths:
        try:
            objects.append(load_elf_object(path, demangler))
        except CodeLookupError:
            continue  # a mapped file that is not an x86-64 ELF (a locale archive, a JIT map ...)
    return objects


def find_hot(region: ProfiledRegion, demangler: Demangler, limit: int) -> list[FoundFunction]:
    """The most sampled functions with at least MIN_HOT_SHARE of all samples, hottest first."""
    total = region.total or 1.0
    found: list[FoundFunction] = []
    for (path, symbol_name), weight in region.by_function().items():
        if len(found) >= limit or weight / total < MIN_HOT_SHARE:
            break
        for obj in _objects(region, demangler, [path]):
            matches = obj.find(symbol_name)
            if matches:
                found.append(FoundFunction(obj, matches[0], float(weight)))
    return found


def find_named(
    region: ProfiledRegion, patterns: Sequence[re.Pattern[str]], demangler: Demangler
) -> list[FoundFunction]:
    """Functions matching the user's regexes, searched in the objects that were sampled first,
    then in every other object the process mapped; sampled matches first."""
    weights = region.by_function()
    sampled_paths = list(dict.fromkeys(path for path, _ in weights))
    ordered_paths = list(dict.fromkeys([*sampled_paths, *region.objects]))
    found: list[FoundFunction] = []
    for pattern in patterns:
        matches: list[FoundFunction] = []
        for obj in _objects(region, demangler, ordered_paths):
            for symbol in obj.search(pattern):
                matches.append(
                    FoundFunction(obj, symbol, float(weights.get((obj.path, symbol.name), 0.0)))
                )
            if matches:
                break  # the first object in load order that defines it is the one that is used
        matches.sort(key=lambda f: (-f.cost, f.symbol.demangled))
        found += [m for m in matches[:MAX_MATCHES_PER_PATTERN] if m not in found]
    return found


def _union_in_order(
    chosen: Mapping[str, list[FoundFunction]], order: Sequence[str]
) -> list[tuple[str, str]]:
    """(canonical name, object basename) of every function chosen in any variant, hottest first."""
    seen: dict[tuple[str, str], float] = {}
    for name in order:
        for found in chosen[name]:
            key = (canonical_name(found.symbol.demangled), _basename(found.object.path))
            seen[key] = max(seen.get(key, 0.0), found.cost)
    return sorted(seen, key=lambda key: -seen[key])


def _complete(
    own: list[FoundFunction],
    wanted: Sequence[tuple[str, str]],
    region: ProfiledRegion,
    demangler: Demangler,
) -> list[FoundFunction]:
    """This variant's functions plus its versions of functions chosen in other variants, so a
    function hot in one variant is still shown (or shown missing) in the other."""
    have = {(canonical_name(f.symbol.demangled), _basename(f.object.path)) for f in own}
    result = list(own)
    weights = region.by_function()
    for canonical, basename in wanted:
        if (canonical, basename) in have:
            continue
        paths = [p for p in region.objects if _basename(p) == basename]
        for obj in _objects(region, demangler, paths):
            symbol = _canonical_index(obj).get(canonical)
            if symbol is not None:
                result.append(
                    FoundFunction(obj, symbol, float(weights.get((obj.path, symbol.name), 0.0)))
                )
                break
    return result


def _canonical_index(obj: ElfObject) -> dict[str, ElfSymbol]:
    index: dict[str, ElfSymbol] = {}
    for symbol in obj.functions():
        index.setdefault(canonical_name(symbol.demangled), symbol)
    return index


def _basename(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _listing(
    found: FoundFunction, region: ProfiledRegion, predictor: McaPredictor
) -> FunctionListing:
    obj, symbol = found.object, found.symbol
    offsets = region.offsets(obj.path, symbol.name)
    costs = {symbol.address + offset: weight for offset, weight in offsets.items()}
    return build_listing(
        name=symbol.demangled,
        symbol=symbol.name,
        object_path=obj.path,
        address=symbol.address,
        code=obj.read_code(symbol),
        resolve=lambda address: _resolve(obj, address),
        costs=costs,
        cost_unit=region.unit,
        throughput_of=predictor if predictor.available else None,
    )


def _resolve(obj: ElfObject, address: int) -> str | None:
    if address in obj.got:
        return f"{obj.got[address]}@got"
    return obj.name_for(address)


def _store(
    context: LensContext, benchmark: Benchmark, variant: Variant, kind: str, payload: Any
) -> None:
    context.sink.add_artifact(
        Artifact(
            benchmark.name, variant.name, Metric.ASM, kind, json.dumps(payload, sort_keys=True)
        )
    )


def _note(message: str, hint: str | None = None) -> Note:
    return Note(Severity.INFO, message, hint=hint, metric=Metric.ASM)


# ---------------------------------------------------------------------------------------------
# analysis (from stored artifacts only)


@dataclass(frozen=True)
class StoredFunctions:
    listings: tuple[FunctionListing, ...]
    total_cost: float

    def share(self, listing: FunctionListing | None) -> float:
        if listing is None or self.total_cost <= 0:
            return 0.0
        return listing.cost / self.total_cost


def load_functions(data: BenchmarkData, variant: str) -> StoredFunctions:
    artifacts = data.artifacts_of(variant, ARTIFACT_FUNCTIONS)
    if not artifacts:
        return StoredFunctions((), 0.0)
    payload = json.loads(artifacts[-1].content)
    return StoredFunctions(
        tuple(FunctionListing.from_json(item) for item in payload.get("functions", [])),
        float(payload.get("total_cost", 0.0)),
    )


def load_profile(data: BenchmarkData, variant: str) -> ProfiledRegion | None:
    artifacts = data.artifacts_of(variant, ARTIFACT_PROFILE)
    return region_from_json(json.loads(artifacts[-1].content)) if artifacts else None


def paired_changes(baseline: StoredFunctions, variant: StoredFunctions) -> list[FunctionChange]:
    """Functions paired across the two variants, hottest first (by the larger sample share)."""
    left = baseline.listings
    right = variant.listings
    pairs = pair_names([f.name for f in left], [f.name for f in right])
    changes = []
    for i, j in pairs:
        base = left[i] if i is not None else None
        var = right[j] if j is not None else None
        name = canonical_name((base or var).name)  # type: ignore[union-attr]
        changes.append(
            (max(baseline.share(base), variant.share(var)), compare_functions(name, base, var))
        )
    changes.sort(key=lambda item: -item[0])  # stable: unsampled functions keep the user's order
    return [change for _, change in changes]


@dataclass(frozen=True)
class AsmDetails:
    functions: tuple[FunctionChange, ...]
    baseline_share: tuple[float, ...]
    variant_share: tuple[float, ...]

    def to_json(self) -> dict[str, Any]:
        out = []
        for change, base_share, var_share in zip(
            self.functions, self.baseline_share, self.variant_share, strict=True
        ):
            out.append(
                {
                    "name": change.name,
                    "baseline": _side_json(change.baseline, base_share),
                    "variant": _side_json(change.variant, var_share),
                    "calls_added": change.calls_added,
                    "calls_removed": change.calls_removed,
                    "change": change.sentence,
                    "diff": diff_text(change.rows),
                }
            )
        return {
            "functions": out,
            "ratio_kind": "code size of paired hot functions, variant/baseline",
        }


def _side_json(listing: FunctionListing | None, share: float) -> dict[str, Any] | None:
    if listing is None:
        return None
    out = listing.summary_json()
    out["cost_share"] = share
    return out


def asm_verdict(changes: Sequence[FunctionChange]) -> Verdict:
    """`equivalent` when every function is paired and its normalised code is identical;
    otherwise `inconclusive`. Code size says nothing about speed (smaller code can run slower):
    the time and counters lenses decide faster or slower, never this one."""
    if changes and all(change.identical for change in changes):
        return Verdict.EQUIVALENT
    return Verdict.INCONCLUSIVE


def analyse_asm(
    benchmark: Benchmark, variants: Sequence[str], data: BenchmarkData, settings: Settings
) -> LensAnalysis:
    baseline = load_functions(data, variants[0])
    comparisons = []
    for name in variants[1:]:
        stored = load_functions(data, name)
        changes = paired_changes(baseline, stored)
        both = [c for c in changes if c.baseline is not None and c.variant is not None]
        base_bytes = sum(c.baseline.size_bytes for c in both if c.baseline is not None)
        var_bytes = sum(c.variant.size_bytes for c in both if c.variant is not None)
        ratio = var_bytes / base_bytes if base_bytes else math.nan
        details = AsmDetails(
            tuple(changes),
            tuple(baseline.share(c.baseline) for c in changes),
            tuple(stored.share(c.variant) for c in changes),
        )
        comparisons.append(
            Comparison(
                benchmark=benchmark.name,
                metric=Metric.ASM,
                baseline=variants[0],
                variant=name,
                ratio=ratio,
                ci_low=ratio,
                ci_high=ratio,
                verdict=asm_verdict(changes),
                baseline_value=float(base_bytes),
                variant_value=float(var_bytes),
                unit="bytes",
                details=details,
            )
        )
    return LensAnalysis(comparisons=tuple(comparisons))


# ---------------------------------------------------------------------------------------------
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
    the regex `function`, for every non-baseline variant against the baseline."""
    pattern = compile_patterns([function])[0]
    baseline = load_functions(data, variants[0])
    views = []
    for name in variants[1:]:
        stored = load_functions(data, name)
        for change in paired_changes(baseline, stored):
            sides = [f for f in (change.baseline, change.variant) if f is not None]
            if any(pattern.search(text) for f in sides for text in (f.name, f.symbol, change.name)):
                views.append(
                    AsmView(
                        benchmark=benchmark,
                        baseline_variant=variants[0],
                        variant=name,
                        change=change,
                        baseline_share=baseline.share(change.baseline),
                        variant_share=stored.share(change.variant),
                        cost_unit=sides[0].cost_unit,
                    )
                )
    return views
