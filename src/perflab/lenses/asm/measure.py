"""The asm lens: the hot functions of each variant, disassembled, normalised, diffed, annotated.

measure: profile the measured region of every variant (or take the functions named by the
option ``symbols``), locate each function in the object the variant's process really mapped,
disassemble and summarise it, and store the listings as JSON artifacts.
analyse (analyse.py): pair functions across variants (ISA namespaces and clone suffixes
ignored), diff them and summarise what changed. The comparison's ratio is the **code size** of
the paired functions, variant/baseline: a size ratio, not a speed ratio. So the verdict never
claims speed: it is `equivalent` when every function's normalised code is identical,
`inconclusive` otherwise.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from perflab.lenses.asm.analyse import (
    ARTIFACT_FUNCTIONS,
    ARTIFACT_PROFILE,
    analyse_asm,
    compile_patterns,
)
from perflab.lenses.asm.disassembly import AsmLine, disassemble, normalise
from perflab.lenses.asm.elf_code import (
    CodeLookupError,
    Demangler,
    ElfObject,
    ElfSymbol,
    default_demangler,
    load_elf_object,
)
from perflab.lenses.asm.identity import Role, family, fragment_role, identity
from perflab.lenses.asm.machine_code import (
    FunctionCode,
    FunctionListing,
    build_listing,
    line_from_json,
    line_to_json,
)
from perflab.lenses.asm.mca import McaPredictor
from perflab.lenses.asm.options import analysis_cache_of, symbols_of
from perflab.lenses.asm.rows import MIN_RAN_SAMPLES, MIN_RAN_SHARE
from perflab.lenses.asm.sources import (
    HotCodeSource,
    PerfRecordSource,
    ProfiledRegion,
    region_to_json,
)
from perflab.lenses.asm.summaries import call_targets
from perflab.machine.proc import ProcessRunner, which
from perflab.measure.lens import BenchmarkData, LensAnalysis, LensContext
from perflab.records.kinds import Metric
from perflab.records.model import Artifact, Benchmark, Experiment, Note, Severity, Variant
from perflab.tools.analysis_cache import AnalysisCache
from perflab.tools.analysis_parallel import (
    all_cpus,
    analysis_workers,
    run_jobs,
    runs_real_processes,
)
from perflab.tools.debuginfo import file_identity, symbolise
from perflab.tools.object_names import library_name

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
        cache: AnalysisCache | None = None,  # None: the user's, unless settings bypass it
        parallel: bool | None = None,  # None: when the runner starts real processes
    ) -> None:
        self.source: HotCodeSource = source or PerfRecordSource()
        self.hot_functions = hot_functions
        self.mcpu = mcpu
        self.demangler = demangler
        self.cache = cache
        self.parallel = parallel

    # -- preflight --------------------------------------------------------------------------

    def preflight(self, experiment: Experiment, runner: ProcessRunner) -> list[Note]:
        compile_patterns(symbols_of(experiment.settings))
        notes: list[Note] = []
        if isinstance(self.source, PerfRecordSource):
            if symbols_of(experiment.settings) and which("perf") is None:
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
        patterns = compile_patterns(symbols_of(context.experiment.settings))
        variants = context.experiment.variants
        regions: dict[str, ProfiledRegion] = {}
        for variant in variants:
            context.progress.update(
                benchmark=benchmark.name, metric=self.metric, detail=f"profiling {variant.name}"
            )
            region = self.source.profile(benchmark, variant, context)
            regions[variant.name] = region
            _store(context, benchmark, variant, ARTIFACT_PROFILE, region_to_json(region))
        # every profile is recorded: from here on only files are read, on every CPU
        with all_cpus():
            self._analyse_regions(benchmark, context, regions, patterns)

    def _analyse_regions(
        self,
        benchmark: Benchmark,
        context: LensContext,
        regions: Mapping[str, ProfiledRegion],
        patterns: Sequence[re.Pattern[str]],
    ) -> None:
        workers = self._workers(context)
        cache = self.cache or AnalysisCache.default(
            enabled=analysis_cache_of(context.experiment.settings)
        )
        demangler = self.demangler or default_demangler(context.runner, jobs=workers)
        predictor = McaPredictor(context.runner, cpu=self.mcpu, cache=cache)
        variants = context.experiment.variants
        context.progress.update(
            benchmark=benchmark.name, metric=self.metric, detail="reading symbol tables"
        )
        chosen = {
            v.name: _choose(regions[v.name], patterns, demangler, self.hot_functions, cache)
            for v in variants
        }
        wanted = _union_in_order(chosen, [v.name for v in variants])
        context.progress.update(
            benchmark=benchmark.name, metric=self.metric, detail="disassembling"
        )
        readers = CodeReaders(demangler, predictor, context.runner, cache)
        jobs = [
            functools.partial(
                _variant_code,
                region=regions[v.name],
                chosen=chosen[v.name],
                wanted=wanted,
                named=bool(patterns),
                readers=readers,
            )
            for v in variants
        ]
        for variant, (payload, notes) in zip(
            variants, run_jobs(jobs, workers=workers), strict=True
        ):
            for note in notes:
                context.sink.add_note(replace(note, benchmark=benchmark.name, variant=variant.name))
            _store(context, benchmark, variant, ARTIFACT_FUNCTIONS, payload)
        cache.trim()

    def _workers(self, context: LensContext) -> int:
        """Processes for the analysis: every CPU, unless told otherwise or when processes are
        fakes (forked workers would not report what they asked of the fake)."""
        parallel = self.parallel
        if parallel is None:
            parallel = runs_real_processes(context.runner)
        return analysis_workers() if parallel else 1

    # -- analyse ----------------------------------------------------------------------------

    def analyse(
        self,
        benchmark: Benchmark,
        variants: Sequence[str],
        data: BenchmarkData,
        experiment: Experiment,
    ) -> LensAnalysis:
        envs = {v.name: v.env for v in experiment.variants}
        return analyse_asm(benchmark, variants, data, experiment.settings, envs)


@dataclass(frozen=True)
class CodeReaders:
    """What reads and explains the variants' code, shared by every variant's job."""

    demangler: Demangler
    predictor: McaPredictor
    runner: ProcessRunner
    cache: AnalysisCache


def _variant_code(
    *,
    region: ProfiledRegion,
    chosen: Sequence[FoundFunction],
    wanted: Sequence[tuple[str, str]],
    named: bool,
    readers: CodeReaders,
) -> tuple[dict[str, Any], list[Note]]:
    """One variant's listings and the facts its claims need (the `asm.functions` artifact),
    and the notes about its objects. Reads files and runs tools only: one job per variant."""
    found = with_fragments(chosen, region)
    listings = [_listing(f, region, readers) for f in found]
    notes = _symbol_notes(region)
    if not listings:
        notes.append(
            Note(
                Severity.WARNING,
                "no hot or named function was found in the objects this variant mapped",
                hint="name functions with --symbol REGEX; are the objects stripped?",
                metric=Metric.ASM,
            )
        )
    have = {family(f.symbol.demangled) for f in found}
    missing = [w for w in wanted if w[0] not in have]
    defined, searched = _presence(missing, region, readers.demangler, readers.cache)
    objects = sorted({f.object.path for f in found})
    payload = {
        "version": FORMAT_VERSION,
        "total_cost": region.total,
        "cost_unit": region.unit,
        "mcpu": readers.predictor.cpu if readers.predictor.available else None,
        "named": named,
        "min_ran_share": MIN_RAN_SHARE,
        "min_ran_samples": MIN_RAN_SAMPLES,
        "family_samples": family_samples(region, readers.demangler),
        "defined": defined,
        "searched": searched,
        "identities": {path: file_identity(path) for path in objects},
        "call_sites": call_sites(region, readers.demangler, found, readers.cache),
        "symbols_from": {f.object.path: f.object.symbols_from for f in found},
        "functions": [listing.to_json() for listing in listings],
    }
    return payload, notes


# ---------------------------------------------------------------------------------------------
# choosing and locating functions


def _choose(
    region: ProfiledRegion,
    patterns: Sequence[re.Pattern[str]],
    demangler: Demangler,
    hot_functions: int,
    cache: AnalysisCache | None = None,
) -> list[FoundFunction]:
    if patterns:
        return find_named(region, patterns, demangler, cache)
    return find_hot(region, demangler, hot_functions, cache)


def _objects(
    region: ProfiledRegion,
    demangler: Demangler,
    paths: Sequence[str],
    cache: AnalysisCache | None = None,
) -> list[ElfObject]:
    objects = []
    for path in paths:
        try:
            objects.append(load_elf_object(path, demangler, cache))
        except CodeLookupError:
            continue  # a mapped file that is not an x86-64 ELF (a locale archive, a JIT map ...)
    return objects


def find_hot(
    region: ProfiledRegion,
    demangler: Demangler,
    limit: int,
    cache: AnalysisCache | None = None,
) -> list[FoundFunction]:
    """The most sampled functions with at least MIN_HOT_SHARE of all samples, hottest first.

    Samples are summed per function family first (fragments, clones and dispatch members of
    one function, see `identity`), so a kernel split into `.cold` and `.part` pieces, or run
    as two ISA versions, is one function; every sampled member is returned."""
    total = region.total or 1.0
    weights = region.by_function()
    names = demangler.demangle(sorted({symbol for _, symbol in weights}))
    by_family: dict[str, list[tuple[str, str, float]]] = {}
    for (path, symbol), weight in weights.items():
        name = names.get(symbol, symbol)
        by_family.setdefault(family(name), []).append((path, symbol, weight))
    ranked = sorted(by_family.items(), key=lambda item: -sum(w for _, _, w in item[1]))
    found: list[FoundFunction] = []
    for _, members in ranked[:limit]:
        if sum(w for _, _, w in members) / total < MIN_HOT_SHARE:
            break
        for path, symbol_name, weight in members:
            for obj in _objects(region, demangler, [path], cache):
                matches = obj.find(symbol_name)
                if matches:
                    found.append(FoundFunction(obj, matches[0], float(weight)))
    return found


MAX_CALLERS = 40


SMALL_OBJECT_FUNCTIONS = 5000  # whose every function is disassembled to find static callers


def call_sites(
    region: ProfiledRegion,
    demangler: Demangler,
    found: Sequence[FoundFunction],
    cache: AnalysisCache | None = None,
) -> dict[str, list[str]]:
    """Where listed functions are called from, without call graphs: the callees of the most
    sampled functions of the objects holding listed code (also those too cold to be listed),
    and in small objects (executables, small libraries) of every function that calls a listed
    one, sampled or not. Caller family -> all its callees."""
    out: dict[str, set[str]] = {}
    listed = {f.symbol.demangled for f in found}
    by_object: dict[str, ElfObject] = {f.object.path: f.object for f in found}
    sampled = 0
    for (path, symbol_name), _ in region.by_function().items():
        if sampled >= MAX_CALLERS or path not in by_object:
            continue
        sampled += 1
        for symbol in by_object[path].find(symbol_name)[:1]:
            out.setdefault(family(symbol.demangled), set()).update(
                _callees(by_object[path], symbol, cache)
            )
    for obj in by_object.values():
        functions = obj.functions()
        if len(functions) > SMALL_OBJECT_FUNCTIONS:
            continue
        for symbol in functions:
            callees = _callees(obj, symbol, cache)
            if any(callee.split("@", 1)[0] in listed for callee in callees):
                out.setdefault(family(symbol.demangled), set()).update(callees)
    return {caller: sorted(callees) for caller, callees in out.items()}


CALLEES_KIND = "callees"  # the analysis cache's entries: the callees of one function
CODE_KIND = "normalised-code"  # ... and a function's normalised instructions


def _callees(obj: ElfObject, symbol: ElfSymbol, cache: AnalysisCache | None = None) -> list[str]:
    key = _function_key(obj, symbol)
    if cache is not None and key is not None:
        stored = cache.get(CALLEES_KIND, key)
        if isinstance(stored, list) and all(isinstance(name, str) for name in stored):
            return stored
    try:
        code = obj.read_code(symbol)
    except CodeLookupError:
        return []
    lines = normalise(disassemble(code, symbol.address), lambda address: _resolve(obj, address))
    callees = list(call_targets(lines))
    if cache is not None and key is not None:
        cache.put(CALLEES_KIND, key, callees)
    return callees


def _function_key(obj: ElfObject, symbol: ElfSymbol) -> list[object] | None:
    """What a function's code depends on: its object (and the names that object gives
    addresses: the symbol table, its debug file, the demangler) and where the symbol is."""
    if obj.analysis_key is None:
        return None
    return [obj.analysis_key, symbol.name, symbol.address, symbol.size]


def _normalised_code(
    obj: ElfObject, symbol: ElfSymbol, cache: AnalysisCache | None
) -> tuple[AsmLine, ...]:
    key = _function_key(obj, symbol)
    if cache is not None and key is not None:
        stored = cache.get(CODE_KIND, key)
        if isinstance(stored, list):
            try:
                return tuple(line_from_json(line) for line in stored)
            except (KeyError, TypeError, ValueError):
                cache.stats.ignored += 1
    code = obj.read_code(symbol)
    lines = normalise(disassemble(code, symbol.address), lambda address: _resolve(obj, address))
    if cache is not None and key is not None:
        cache.put(CODE_KIND, key, [line_to_json(line) for line in lines])
    return lines


def family_samples(region: ProfiledRegion, demangler: Demangler) -> dict[str, float]:
    """Samples per function family, for every sampled function (also those not listed)."""
    weights = region.by_function()
    names = demangler.demangle(sorted({symbol for _, symbol in weights}))
    out: dict[str, float] = {}
    for (_, symbol), weight in weights.items():
        key = family(names.get(symbol, symbol))
        out[key] = out.get(key, 0.0) + weight
    return out


def with_fragments(found: Sequence[FoundFunction], region: ProfiledRegion) -> list[FoundFunction]:
    """`found` plus the split-off fragments (`.cold`, `.part.N`) of each function in it, sampled
    or not: a function's code size counts its parts."""
    result = list(found)
    have = {(f.object.path, f.symbol.name) for f in found}
    weights = region.by_function()
    for item in found:
        base = identity(item.symbol.name)
        for symbol in item.object.with_prefix(base + "."):
            key = (item.object.path, symbol.name)
            if key in have or fragment_role(symbol.name) is not Role.FRAGMENT:
                continue
            if identity(symbol.name) != base:
                continue
            have.add(key)
            result.append(FoundFunction(item.object, symbol, float(weights.get(key, 0.0))))
    return result


def _presence(
    wanted: Sequence[tuple[str, str]],
    region: ProfiledRegion,
    demangler: Demangler,
    cache: AnalysisCache | None = None,
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """For functions listed in another variant but not here: where this variant's objects
    define them, per the symbol table, and what was searched. First the objects of the same
    library (`measure.object_names`: `libpython3.12.so.1.0` for `libpython3.11.so.1.0`) and the
    executables (each variant's command may run its own, under another name); for a function
    none of them defines, every other object the variant loaded, so "not defined" is said only
    of all of them."""
    defined: dict[str, list[str]] = {}
    searched: dict[str, list[str]] = {}
    for name, basename in wanted:
        library = library_name(basename)
        first = [
            p
            for p in region.objects
            if _basename(p) == basename or library_name(p) == library or ".so" not in p
        ]
        rest = [p for p in region.objects if p not in first]
        for paths in (first, rest):
            if name in defined:
                break
            for obj in _objects(region, demangler, paths, cache):
                searched.setdefault(name, []).append(obj.path)
                for symbol in _family_index(obj).get(name, []):
                    defined.setdefault(name, []).append(f"{symbol.name} in {_basename(obj.path)}")
    return defined, searched


_FAMILY_INDEX: dict[str, tuple[ElfObject, dict[str, list[ElfSymbol]]]] = {}


def _family_index(obj: ElfObject) -> dict[str, list[ElfSymbol]]:
    cached = _FAMILY_INDEX.get(obj.path)
    if cached is not None and cached[0] is obj:
        return cached[1]
    index: dict[str, list[ElfSymbol]] = {}
    for symbol in obj.functions():
        index.setdefault(family(symbol.demangled), []).append(symbol)
    _FAMILY_INDEX[obj.path] = (obj, index)
    while len(_FAMILY_INDEX) > 4:
        del _FAMILY_INDEX[next(iter(_FAMILY_INDEX))]
    return index


def _symbol_notes(region: ProfiledRegion) -> list[Note]:
    """Hot code that cannot be named or shown: say so, with how to get the names."""
    total = region.total or 1.0
    return [
        *_unnamed_notes(region, total),
        *_fileless_notes(region, total),
        *_deleted_notes(region, total),
    ]


def _unnamed_notes(region: ProfiledRegion, total: float) -> list[Note]:
    """Objects whose samples perf could not name (no symbols)."""
    unnamed: dict[str, float] = {}
    for sample in region.samples:
        if not sample.symbol and sample.object_path.startswith("/"):
            unnamed[sample.object_path] = unnamed.get(sample.object_path, 0.0) + sample.weight
    return [
        Note(
            Severity.WARNING,
            f"no symbols for {_basename(path)} ({weight / total:.0%} of the samples): its hot "
            "code cannot be named or shown",
            hint="install its debug package (e.g. the -dbg or -dbgsym package) or build with -g",
            metric=Metric.ASM,
        )
        for path, weight in unnamed.items()
        if weight / total >= MIN_HOT_SHARE
    ]


def _fileless_notes(region: ProfiledRegion, total: float) -> list[Note]:
    """Samples in code without a file behind it (JIT code, anonymous memory)."""
    fileless = sum(
        sample.weight
        for sample in region.samples
        if (not sample.object_path.startswith("/") or sample.object_path.startswith("//"))
        and "kernel" not in sample.object_path
    )
    if fileless / total < MIN_HOT_SHARE:
        return []
    return [
        Note(
            Severity.WARNING,
            f"{fileless / total:.0%} of the samples ran in code without a file (JIT code "
            "without a perf map, or anonymous memory): it cannot be named or shown",
            hint="let the JIT write /tmp/perf-PID.map (python -X perf, "
            "PYTHONPERFSUPPORT=1; node --perf-basic-prof)",
            metric=Metric.ASM,
        )
    ]


def _deleted_notes(region: ProfiledRegion, total: float) -> list[Note]:
    """Objects deleted or replaced on disk after the variant ran."""
    notes: list[Note] = []
    sampled: dict[str, float] = {}
    for (path, _), weight in region.by_function().items():
        if not path.startswith("//"):  # "//anon": no file was ever behind it
            sampled[path] = sampled.get(path, 0.0) + weight
    for path, weight in sampled.items():
        clean = path.removesuffix(" (deleted)")
        if weight / total >= MIN_HOT_SHARE and (clean != path or not os.path.isfile(clean)):
            notes.append(
                Note(
                    Severity.WARNING,
                    f"{clean} was deleted or replaced after the variant ran "
                    f"({weight / total:.0%} of the samples): its functions are not shown",
                    hint="do not rebuild the code under test while perflab measures it",
                    metric=Metric.ASM,
                )
            )
    return notes


def find_named(
    region: ProfiledRegion,
    patterns: Sequence[re.Pattern[str]],
    demangler: Demangler,
    cache: AnalysisCache | None = None,
) -> list[FoundFunction]:
    """Functions matching the user's regexes, searched in the objects that were sampled first,
    then in every other object the process mapped; sampled matches first."""
    weights = region.by_function()
    sampled_paths = list(dict.fromkeys(path for path, _ in weights))
    ordered_paths = list(dict.fromkeys([*sampled_paths, *region.objects]))
    found: list[FoundFunction] = []
    for pattern in patterns:
        matches: list[FoundFunction] = []
        for obj in _objects(region, demangler, ordered_paths, cache):
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
    """(family, object basename) of every function chosen in any variant, hottest first."""
    seen: dict[tuple[str, str], float] = {}
    for name in order:
        for found in chosen[name]:
            key = (family(found.symbol.demangled), _basename(found.object.path))
            seen[key] = max(seen.get(key, 0.0), found.cost)
    return sorted(seen, key=lambda key: -seen[key])


def _basename(path: str) -> str:
    return path.rsplit("/", 1)[-1]


MAX_SYMBOLISED_ADDRESSES = 20000


def _listing(found: FoundFunction, region: ProfiledRegion, readers: CodeReaders) -> FunctionListing:
    obj, symbol = found.object, found.symbol
    offsets = region.offsets(obj.path, symbol.name)
    costs = {symbol.address + offset: weight for offset, weight in offsets.items()}
    listing = build_listing(
        FunctionCode(
            symbol.demangled,
            symbol.name,
            obj.path,
            symbol.address,
            normalised=_normalised_code(obj, symbol, readers.cache),
        ),
        lambda address: _resolve(obj, address),
        costs=costs,
        cost_unit=region.unit,
        throughput_of=readers.predictor if readers.predictor.available else None,
    )
    addresses = [line.instruction.address for line in listing.lines][:MAX_SYMBOLISED_ADDRESSES]
    frames = symbolise(readers.runner, obj.path, addresses, cache=readers.cache)
    if frames is None:
        return listing
    inlined = {address: chain for address, chain in frames.items() if len(chain) > 1}
    return replace(listing, inline_frames=inlined)


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
