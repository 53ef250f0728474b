"""Where the asm lens spends its time after perf stops, and what the analysis cache saves.

    .venv/bin/python bench/asm_analysis_time.py [--case c|torch|both] [--runs 2]
                                                [--no-analysis-cache] [--serial]
                                                [--cache-dir DIR] [--out FILE]

Runs the asm lens's `measure` (profiling and analysis) on an A/B of a small C program
(`-O1` vs `-O3` builds of a relu loop, two commands) and on `torch.relu` of a 1M-element tensor
under `ATEN_CPU_CAPABILITY=default` vs `avx2`, `--runs` times in a row in one process, and prints
the inclusive wall time of each phase per run: profiling (perf record and perf script), reading
symbol tables (pyelftools + struct), demangling (c++filt), listings (capstone, normalising,
llvm-mca, llvm-symbolizer), call sites, presence lookups and object identities. The first run
starts from an empty analysis cache (a fresh `--cache-dir`, default a temporary directory) and
with perflab's in-process caches cleared before every run, so the second run shows what the
on-disk cache saves across perflab processes. The per-phase times of the work done in forked
workers (listings, call sites, presence) are only seen with `--serial`; the totals always are.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from inspect import signature
from pathlib import Path
from typing import Any

from machine_facts import commit, cpu_model

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from perflab.lenses.asm import elf_code, function_code, locate  # noqa: E402
from perflab.lenses.asm import measure as asm_measure  # noqa: E402
from perflab.lenses.asm.measure import AsmLens  # noqa: E402
from perflab.lenses.asm.sources import PerfRecordSource  # noqa: E402
from perflab.machine.proc import SubprocessRunner  # noqa: E402
from perflab.measure.lens import LensContext, MemorySink, NullProgress  # noqa: E402
from perflab.records.kinds import Metric  # noqa: E402
from perflab.records.model import Benchmark, Experiment, Variant  # noqa: E402
from perflab.records.settings import Settings  # noqa: E402
from perflab.tool_drivers import debuginfo, demangling, llvm_mca  # noqa: E402

RELU_C = """
#include <stddef.h>
float in_buf[4096], out_buf[4096];
__attribute__((noinline)) void relu(float *restrict out, const float *restrict in, size_t n) {
  for (size_t i = 0; i < n; i++) out[i] = in[i] > 0.f ? in[i] : 0.f;
}
int atoi(const char *);
int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 1;
  for (int r = 0; r < reps; r++) relu(out_buf, in_buf, 4096);
  return (int)out_buf[1];
}
"""

TIMES: dict[str, float] = defaultdict(float)
CALLS: dict[str, int] = defaultdict(int)


def timed(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            TIMES[name] += time.perf_counter() - start
            CALLS[name] += 1

    return wrapper


def instrument() -> None:
    """Inclusive timers around the phases (nested phases are counted in their callers too)."""
    profile = timed("profile (perf record + perf script)", PerfRecordSource.profile)
    PerfRecordSource.profile = profile  # type: ignore[method-assign]
    elf_code.read_elf_file = timed("read symbol tables (incl. demangling)", elf_code.read_elf_file)
    demangle = timed("  demangle (c++filt)", demangling.CxxFiltDemangler.demangle)
    demangling.CxxFiltDemangler.demangle = demangle  # type: ignore[method-assign]
    # each phase is replaced where its caller looks it up
    for module, name, label in (
        (asm_measure, "list_function", "listings (disassembly, mca, symbolizer)"),
        (asm_measure, "call_sites", "call sites"),
        (asm_measure, "family_samples", "family samples"),
        (asm_measure, "presence", "presence in other variants"),
        (asm_measure, "object_identity", "object identities"),  # older trees' name
        (asm_measure, "file_identity", "object identities"),
        (function_code, "symbolise", "  llvm-symbolizer"),
        (locate, "find_hot", "choose hot functions"),
    ):
        if hasattr(module, name):
            setattr(module, name, timed(label, getattr(module, name)))
    llvm_mca.McaPredictor.__call__ = timed("  llvm-mca", llvm_mca.McaPredictor.__call__)  # type: ignore[method-assign]


def clear_process_caches() -> None:
    """What one perflab process keeps in memory: gone in the next process."""
    elf_code._CACHE.clear()
    locate._FAMILY_INDEX.clear()
    getattr(debuginfo, "_IDENTITIES", {}).clear()


def c_experiment(tmp: Path, settings: Settings) -> Experiment:
    source = tmp / "relu.c"
    source.write_text(RELU_C)
    for flags in ("-O1", "-O3"):
        out = tmp / f"relu{flags}"
        subprocess.run(["gcc", "-g", flags, "-o", str(out), str(source)], check=True)
    benchmark = Benchmark(name="relu", cmd=f"{tmp}/relu-O1 20000")
    return Experiment(
        benchmarks=(benchmark,),
        variants=(
            Variant("O1"),
            Variant("O3", cmd=f"{tmp}/relu-O3 20000"),
        ),
        settings=settings,
    )


def torch_experiment(settings: Settings) -> Experiment:
    benchmark = Benchmark(
        name="torch.relu",
        stmt="torch.relu(x)",
        setup="import torch; torch.set_num_threads(1); x = torch.randn(1 << 20)",
    )
    return Experiment(
        benchmarks=(benchmark,),
        variants=(
            Variant("default", env={"ATEN_CPU_CAPABILITY": "default"}),
            Variant("avx2", env={"ATEN_CPU_CAPABILITY": "avx2"}),
        ),
        settings=settings,
    )


PARALLEL: bool | None = None


def run_once(experiment: Experiment) -> tuple[float, dict[str, float], str]:
    TIMES.clear()
    CALLS.clear()
    clear_process_caches()
    sink = MemorySink()
    parallel: dict[str, Any] = {}
    if "parallel" in signature(AsmLens).parameters:
        parallel["parallel"] = PARALLEL
    lens = AsmLens(PerfRecordSource(), **parallel)
    runner = SubprocessRunner()
    lens.preflight(experiment, runner)
    benchmark = experiment.benchmarks[0]
    context = LensContext(experiment, runner, sink, NullProgress(), None, sys.executable)
    start = time.perf_counter()
    lens.measure(benchmark, context)
    total = time.perf_counter() - start
    names = [v.name for v in experiment.variants]
    analysis = lens.analyse(benchmark, names, sink.data_for(benchmark.name, Metric.ASM), experiment)
    digest = json.dumps([c.to_json() for c in analysis.comparisons], sort_keys=True, default=str)
    return total, dict(TIMES), digest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--case", choices=("c", "torch", "both"), default="both")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--no-analysis-cache", action="store_true")
    parser.add_argument("--serial", action="store_true", help="no parallel analysis")
    parser.add_argument("--cache-dir", help="the analysis cache (default: a fresh temporary one)")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args()
    instrument()
    # older perflab (before the cache, or before lens options): the same script measures it,
    # copied into its tree
    cached: dict[str, Any] = {"analysis_cache": not args.no_analysis_cache}
    if hasattr(Settings, "with_options"):
        settings = Settings().with_options(**cached)
    else:
        settings = Settings(**(cached if "analysis_cache" in Settings.__dataclass_fields__ else {}))
    global PARALLEL
    PARALLEL = False if args.serial else None
    with tempfile.TemporaryDirectory(prefix="perflab-bench-") as tmp:
        os.environ["PERFLAB_ANALYSIS_CACHE_DIR"] = args.cache_dir or str(Path(tmp) / "cache")
        cases: list[tuple[str, Experiment]] = []
        if args.case in ("c", "both"):
            cases.append(("C relu -O1 vs -O3 (commands)", c_experiment(Path(tmp), settings)))
        if args.case in ("torch", "both"):
            cases.append(("torch.relu(1M) default vs avx2", torch_experiment(settings)))
        report = []
        for title, experiment in cases:
            for run in range(1, args.runs + 1):
                total, times, digest = run_once(experiment)
                profiling = times.get("profile (perf record + perf script)", 0.0)
                print(
                    f"{title}, run {run}: {total:.1f} s in measure(), {total - profiling:.1f} s "
                    "of it after perf stopped"
                )
                for name, seconds in sorted(times.items(), key=lambda item: -item[1]):
                    print(f"    {name:45s} {seconds:7.2f} s  ({CALLS[name]} calls)")
                report.append(
                    {
                        "case": title,
                        "run": run,
                        "total_s": total,
                        "after_perf_s": total - profiling,
                        "phases_s": times,
                    }
                )
        print(
            "commit:",
            commit() or "(not a git checkout)",
            "machine:",
            cpu_model(),
            f"load {os.getloadavg()}",
        )
        if args.out:
            Path(args.out).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
