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
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from perflab.lenses.asm.analyse import (
    ARTIFACT_FUNCTIONS,
    ARTIFACT_PROFILE,
    analyse_asm,
    compile_patterns,
)
from perflab.lenses.asm.code_notes import symbol_notes
from perflab.lenses.asm.function_code import CodeReaders, call_sites, list_function
from perflab.lenses.asm.identity import family
from perflab.lenses.asm.locate import (
    FoundFunction,
    choose_functions,
    family_samples,
    find_families,
    presence,
    union_in_order,
    with_fragments,
)
from perflab.lenses.asm.metric import ASM
from perflab.lenses.asm.options import symbols_of
from perflab.lenses.asm.rows import MIN_RAN_SAMPLES, MIN_RAN_SHARE
from perflab.lenses.asm.sources import (
    HotCodeSource,
    PerfRecordSource,
    ProfiledRegion,
    region_to_json,
)
from perflab.lenses.shared_options import analysis_cache_of
from perflab.machine.parallel import (
    all_cpus,
    analysis_workers,
    run_jobs,
    runs_real_processes,
)
from perflab.machine.proc import ProcessRunner
from perflab.measure.lens import BenchmarkData, LensAnalysis, LensContext
from perflab.records.model import Artifact, Benchmark, Experiment, Note, Severity, Variant
from perflab.store.analysis_cache import AnalysisCache
from perflab.tool_drivers.debuginfo import file_identity
from perflab.tool_drivers.demangling import Demangler, default_demangler
from perflab.tool_drivers.llvm_mca import McaPredictor

# the version of the `asm.functions` artifact's layout (its "version" field), not of the JSON
# report: bump it when a field changes meaning, since stored runs keep listings of older layouts
LISTING_FORMAT_VERSION = 1
# functions diffed per variant, hottest first: each is read, disassembled and annotated, so the
# analysis grows with each; others are asked for by name (--symbol)
HOT_FUNCTIONS = 5


class AsmLens:
    """The asm lens: profiles each variant's hot code, then disassembles and diffs its hottest
    functions."""

    metric = ASM

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
            if symbols_of(experiment.settings) and runner.which("perf") is None:
                notes.append(
                    _note("perf is missing: functions are found by --symbol only, without costs")
                )
            else:
                PerfRecordSource.check(runner)
        if runner.which("llvm-mca") is None and runner.which("llvm-mca-14") is None:
            notes.append(
                _note(
                    "llvm-mca is missing: no predicted cycles per loop iteration",
                    hint="install llvm (llvm-mca)",
                )
            )
        if runner.which("c++filt") is None:
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
        with all_cpus(context.cpu):
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
            v.name: choose_functions(
                regions[v.name], patterns, demangler, self.hot_functions, cache
            )
            for v in variants
        }
        wanted = union_in_order(chosen, [v.name for v in variants])
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
    families = {family(f.symbol.demangled) for f in chosen}
    others = {name for name, _ in wanted if name not in families}
    hot_elsewhere = [] if named else find_families(region, others, readers.demangler, readers.cache)
    found = with_fragments([*chosen, *hot_elsewhere], region)
    listings = [list_function(f, region, readers) for f in found]
    notes = symbol_notes(region)
    if not listings:
        notes.append(
            Note(
                Severity.WARNING,
                "no hot or named function was found in the objects this variant mapped",
                hint="name functions with --symbol REGEX; are the objects stripped?",
                metric=ASM,
            )
        )
    have = {family(f.symbol.demangled) for f in found}
    missing = [w for w in wanted if w[0] not in have]
    defined, searched = presence(missing, region, readers.demangler, readers.cache)
    objects = sorted({f.object.path for f in found})
    payload = {
        "version": LISTING_FORMAT_VERSION,
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


def _store(
    context: LensContext, benchmark: Benchmark, variant: Variant, kind: str, payload: object
) -> None:
    context.sink.add_artifact(
        Artifact(benchmark.name, variant.name, ASM, kind, json.dumps(payload, sort_keys=True))
    )


def _note(message: str, hint: str | None = None) -> Note:
    return Note(Severity.INFO, message, hint=hint, metric=ASM)
