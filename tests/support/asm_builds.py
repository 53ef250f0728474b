"""What the asm lens's integration tests share: a function's listing read from an ELF object
gcc built, and the asm lens run on an experiment with real processes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from perflab.lenses.asm.elf_code import load_elf_object
from perflab.lenses.asm.machine_code import FunctionCode, FunctionListing, build_listing
from perflab.lenses.asm.measure import HOT_FUNCTIONS, AsmLens
from perflab.lenses.asm.sources import PerfRecordSource
from perflab.machine.proc import SubprocessRunner
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.records.kinds import Metric
from perflab.records.model import Experiment
from perflab.tool_drivers.demangling import CxxFiltDemangler
from perflab.tool_drivers.llvm_mca import McaPredictor


def listing_of(path: Path, symbol_prefix: str) -> FunctionListing:
    """The listing of the first function of `path` whose name starts with `symbol_prefix`."""
    runner = SubprocessRunner()
    obj = load_elf_object(str(path), CxxFiltDemangler(runner))
    symbol = next(s for s in obj.functions() if s.name.split(".")[0].startswith(symbol_prefix))
    return build_listing(
        FunctionCode(
            symbol.demangled, symbol.name, obj.path, symbol.address, code=obj.read_code(symbol)
        ),
        obj.name_for,
        throughput_of=McaPredictor(runner),
    )


def run_lens(experiment: Experiment, hot_functions: int = HOT_FUNCTIONS) -> dict[str, Any]:
    """The asm lens measured and analysed on the experiment's first benchmark: its one
    comparison's JSON."""
    sink = MemorySink()
    lens = AsmLens(PerfRecordSource(target_ms=150), hot_functions=hot_functions)
    runner = SubprocessRunner()
    lens.preflight(experiment, runner)
    benchmark = experiment.benchmarks[0]
    context = LensContext(experiment, runner, sink, NullProgress(), None, sys.executable)
    lens.measure(benchmark, context)
    names = [v.name for v in experiment.variants]
    analysis = lens.analyse(benchmark, names, sink.data_for(benchmark.name, Metric.ASM), experiment)
    [comparison] = analysis.comparisons
    out: dict[str, Any] = json.loads(json.dumps(comparison.to_json()))
    return out
