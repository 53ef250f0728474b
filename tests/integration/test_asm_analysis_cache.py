"""The asm lens's analysis gives the same answer with and without its cache, from a cold, warm
or damaged cache, and with and without parallel workers: real gcc builds, real tools (capstone,
c++filt, llvm-symbolizer, llvm-mca); the profile is a fixed one, so only the analysis varies."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from perflab.lenses.asm import elf_code
from perflab.lenses.asm.elf_code import load_elf_object
from perflab.lenses.asm.measure import AsmLens
from perflab.lenses.asm.sources import CodeSample, ProfiledRegion
from perflab.machine.proc import SubprocessRunner
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.settings import Settings
from perflab.store.analysis_cache import AnalysisCache
from perflab.tool_drivers import debuginfo
from perflab.tool_drivers.demangling import CxxFiltDemangler

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc"),
]

SOURCE = """
#include <stddef.h>
float in_buf[1024], out_buf[1024];
static inline float clamp(float x) { return x > 0.f ? x : 0.f; }
__attribute__((noinline)) void relu(float *restrict out, const float *restrict in, size_t n) {
  for (size_t i = 0; i < n; i++) out[i] = clamp(in[i]);
}
__attribute__((noinline)) void run(int reps) {
  for (int r = 0; r < reps; r++) relu(out_buf, in_buf, 1024);
}
int main(void) { run(1000); return (int)out_buf[1]; }
"""


class FixedSource:
    """A profile decided in advance: the asm lens's analysis is what these tests vary."""

    def __init__(self, regions: dict[str, ProfiledRegion]) -> None:
        self.regions = regions

    def profile(
        self, benchmark: Benchmark, variant: Variant, context: LensContext
    ) -> ProfiledRegion:
        return self.regions[variant.name]


@pytest.fixture(scope="module")
def regions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ProfiledRegion]:
    tmp = tmp_path_factory.mktemp("relu-builds")
    (tmp / "relu.c").write_text(SOURCE)
    out: dict[str, ProfiledRegion] = {}
    for flags in ("-O1", "-O3"):
        binary = tmp / f"relu{flags}"
        subprocess.run(["gcc", "-g", flags, "-o", str(binary), str(tmp / "relu.c")], check=True)
        obj = load_elf_object(str(binary), CxxFiltDemangler(SubprocessRunner()))
        samples = []
        for name, weight in (("relu", 300.0), ("run", 40.0), ("main", 12.0)):
            [symbol] = obj.find(name)
            # samples spread over the function, so a hot loop and its costs are found
            for offset in range(0, symbol.size, 4):
                samples.append(CodeSample(str(binary), name, offset, weight / symbol.size))
        out[flags.strip("-")] = ProfiledRegion(tuple(samples), (str(binary),))
    return out


def analyse(
    regions: dict[str, ProfiledRegion], cache: AnalysisCache, *, parallel: bool
) -> tuple[list[str], dict[str, Any]]:
    """The stored artifacts and the comparison's JSON of one asm measurement."""
    elf_code._CACHE.clear()  # what one perflab process keeps: a new process starts without it
    debuginfo._IDENTITIES.clear()
    experiment = Experiment(
        benchmarks=(Benchmark("relu", cmd="true"),),
        variants=(Variant("O1"), Variant("O3")),
        settings=Settings(metrics=(Metric.ASM,)),
    )
    lens = AsmLens(FixedSource(regions), cache=cache, parallel=parallel)
    sink = MemorySink()
    runner = SubprocessRunner()
    context = LensContext(experiment, runner, sink, NullProgress(), None, sys.executable)
    lens.measure(experiment.benchmarks[0], context)
    data = sink.data_for("relu", Metric.ASM)
    [comparison] = lens.analyse(
        experiment.benchmarks[0], ["O1", "O3"], data, experiment
    ).comparisons
    artifacts = [f"{a.variant} {a.kind} {a.content}" for a in data.artifacts]
    return artifacts, json.loads(json.dumps(comparison.to_json()))


def test_the_same_analysis_with_and_without_cache_and_parallel_workers(
    regions: dict[str, ProfiledRegion], tmp_path: Path
) -> None:
    reference = analyse(regions, AnalysisCache.disabled(), parallel=False)
    artifacts, comparison = reference
    assert comparison["functions"], "the fixed profile names functions the lens must list"
    assert any('"inline_frames": {' in a for a in artifacts), "llvm-symbolizer ran"

    cache = AnalysisCache(tmp_path / "cache")
    assert analyse(regions, cache, parallel=False) == reference  # cold: fills the cache
    assert cache.stats.writes > 0
    kinds = {p.parent.parent.name for p in (tmp_path / "cache").rglob("*") if p.is_file()}
    assert {"elf-symbols-2", "callees", "normalised-code", "inline-frames"} <= kinds

    warm = AnalysisCache(tmp_path / "cache")
    assert analyse(regions, warm, parallel=False) == reference
    assert warm.stats.hits > 0 and warm.stats.writes == 0 and warm.stats.ignored == 0

    # forked workers: from the warm cache and without any cache
    assert analyse(regions, AnalysisCache(tmp_path / "cache"), parallel=True) == reference
    assert analyse(regions, AnalysisCache.disabled(), parallel=True) == reference


def test_a_damaged_cache_gives_the_same_analysis_and_is_repaired(
    regions: dict[str, ProfiledRegion], tmp_path: Path
) -> None:
    reference = analyse(regions, AnalysisCache(tmp_path), parallel=False)
    entries = [p for p in tmp_path.rglob("*") if p.is_file()]
    for n, entry in enumerate(entries):
        content = entry.read_bytes()
        # truncated, emptied, or garbage: every entry is unusable in one way or another
        entry.write_bytes([content[: len(content) // 2], b"", b"\x00garbage"][n % 3])
    damaged = AnalysisCache(tmp_path)
    assert analyse(regions, damaged, parallel=False) == reference
    assert damaged.stats.ignored == len(entries)  # each read once, then rewritten
    repaired = AnalysisCache(tmp_path)
    assert analyse(regions, repaired, parallel=False) == reference
    assert repaired.stats.ignored == 0 and repaired.stats.writes == 0


def test_a_stored_symbol_table_is_the_object_read_from_its_file(
    regions: dict[str, ProfiledRegion], tmp_path: Path
) -> None:
    runner = SubprocessRunner()
    for region in regions.values():
        path = region.objects[0]
        elf_code._CACHE.clear()
        read = load_elf_object(path, CxxFiltDemangler(runner), AnalysisCache(tmp_path))
        elf_code._CACHE.clear()
        stored = load_elf_object(path, CxxFiltDemangler(runner), AnalysisCache(tmp_path))
        assert stored == read and stored is not read
        assert stored.analysis_key == read.analysis_key
        assert read.analysis_key is not None and read.analysis_key.startswith("build-id:")
    # a copy of the file elsewhere is the same object: its entry is found under another path
    copy = tmp_path / "copy"
    shutil.copy(regions["O3"].objects[0], copy)
    cache = AnalysisCache(tmp_path)
    elf_code._CACHE.clear()
    assert load_elf_object(str(copy), CxxFiltDemangler(runner), cache).path == str(copy)
    assert cache.stats.hits == 1
