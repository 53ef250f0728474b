"""An asv benchmark directory as perflab benchmarks: each `time_*` benchmark at each parameter
combination is a statement benchmark whose set-up imports its module, instantiates its class and
runs setup_cache and the setups (perflab/worker/perflab_asv.py), and whose statement calls it.

The listing runs in every variant that needs no checkout or build (the others have no
interpreter yet), in the variant's interpreter, cwd and environment, as for a pytest suite; a
suite whose variants all need one is listed in the current directory by the interpreter running
perflab. asv itself is never needed."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from perflab.machine.proc import LaunchSpec, ProcessRunner
from perflab.machine.scratch import private_folder
from perflab.plan.suite_listing import distinct_listings, helpers_env
from perflab.records.errors import ConfigError
from perflab.records.model import Benchmark, Variant
from perflab.worker import STATEMENT_WORKER_PATH

HELPER = "perflab_asv"  # next to the statement worker, so on its sys.path
LIST_TIMEOUT_S = 300.0  # listing imports the whole suite and runs its setups once
_OUTPUT_LINES = 15  # of the listing's output, shown when it could not list
MEASURED = ("time",)  # asv's kinds perflab measures; the others are named in a note


@dataclass(frozen=True)
class AsvBenchmark:
    """One asv benchmark at one parameter combination, or one module that failed to import."""

    name: str  # asv's name with the combination: bench_sort.TimeSort.time_sorted(100, 'random')
    module: str  # its module, dotted, relative to the benchmark directory
    directory: str  # the benchmark directory, relative to the variant's cwd
    key: str = ""  # asv's name without the combination
    index: tuple[int, ...] = ()  # the combination: an index into each parameter's values
    kind: str = "time"  # asv's kind: time, timeraw, peakmem, mem, track
    skipped: bool = False  # a setup raised NotImplementedError for this combination
    timeout: float | None = None  # asv's timeout attribute, in seconds
    error: str | None = None  # the module failed to import: its traceback

    def benchmark(self) -> Benchmark:
        """The statement benchmark that sets the benchmark up and calls it."""
        setup = (
            f"import {HELPER} as _perflab_asv\n"
            "_perflab_fn, _perflab_args = _perflab_asv.prepared("
            f"{self.directory!r}, {self.module!r}, {self.key!r}, {self.index!r})"
        )
        return Benchmark(name=self.name, stmt="_perflab_fn(*_perflab_args)", setup=setup)


@dataclass(frozen=True)
class AsvSuite:
    """The suite's measured benchmarks and what planning says about the rest."""

    benchmarks: tuple[Benchmark, ...]
    notes: tuple[str, ...]
    timeout_s: float | None  # the longest asv timeout a measured benchmark declares


def parse_listing(text: str) -> list[AsvBenchmark]:
    """The helper's listing: one JSON object per line."""
    found = []
    for line in text.splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        timeout = entry.get("timeout")
        found.append(
            AsvBenchmark(
                name=str(entry["name"]),
                module=str(entry["module"]),
                directory=str(entry["dir"]),
                key=str(entry.get("key", "")),
                index=tuple(int(i) for i in entry.get("index", ())),
                kind=str(entry.get("kind", "time")),
                skipped=bool(entry.get("skipped", False)),
                timeout=None if timeout is None else float(timeout),
                error=None if entry.get("error") is None else str(entry["error"]),
            )
        )
    return found


def select(found: Sequence[AsvBenchmark], directory: str, pattern: str | None = None) -> AsvSuite:
    """The listed benchmarks perflab measures (those whose name `pattern` matches, searched as
    a regular expression), with a note for the skipped combinations and the kinds not measured;
    a ConfigError when none is left."""
    regex = re.compile(pattern) if pattern else None
    chosen = [b for b in found if regex is None or regex.search(b.name)]
    measured = [b for b in chosen if b.error is not None or (b.kind in MEASURED and not b.skipped)]
    notes = []
    skipped = [b.name for b in chosen if b.kind in MEASURED and b.skipped and b.error is None]
    if skipped:
        notes.append(
            f"asv suite: {len(skipped)} skipped (a setup raised NotImplementedError): "
            + ", ".join(skipped)
        )
    unmeasured = sorted({b.key for b in chosen if b.kind not in MEASURED and b.error is None})
    if unmeasured:
        notes.append(
            "asv suite: not yet measured by perflab (only time_ benchmarks are): "
            + ", ".join(unmeasured)
        )
    if not measured:
        selected = f" matching --bench {pattern!r}" if pattern else ""
        raise ConfigError(
            f"no asv time_ benchmark in {directory!r}{selected}",
            hint="asv benchmarks are functions and methods named time_... in the modules of the "
            "benchmark directory (or of the benchmark_dir its asv.conf.json names)",
        )
    timeouts = [b.timeout for b in measured if b.timeout is not None]
    return AsvSuite(
        benchmarks=tuple(b.benchmark() for b in measured),
        notes=tuple(notes),
        timeout_s=max(timeouts) if timeouts else None,
    )


def asv_suite(
    directory: str | Path,
    variants: Sequence[Variant],
    runner: ProcessRunner,
    *,
    pattern: str | None = None,
    default_python: str = sys.executable,
) -> AsvSuite:
    """The suite's benchmarks as each variant that can list lists them, the first variant's
    order first."""
    if pattern:
        try:
            re.compile(pattern)
        except re.error as error:
            raise ConfigError(
                f"--bench {pattern!r} is not a regular expression: {error}",
                hint=r"escape what is meant literally: --bench 'time_sorted\(100'",
            ) from None
    found: dict[str, AsvBenchmark] = {}
    for variant in distinct_listings(variants, default_python):
        for benchmark in _listed(runner, variant, str(directory), pattern, default_python):
            found.setdefault(benchmark.name, benchmark)
    return select(list(found.values()), str(directory), pattern)


def _listed(
    runner: ProcessRunner,
    variant: Variant,
    directory: str,
    pattern: str | None,
    default_python: str,
) -> list[AsvBenchmark]:
    where = Path(variant.cwd or ".") / directory
    if not where.is_dir():
        raise ConfigError(
            f"no asv benchmark directory {directory!r}"
            + (f" in {variant.cwd!r}" if variant.cwd else ""),
            hint="give the suite's benchmark directory (benchmarks/) or the folder holding its "
            "asv.conf.json",
            variant=variant.name,
        )
    interpreter = variant.python or default_python
    selected = (pattern,) if pattern else ()
    with private_folder("asv") as folder:
        listing = Path(folder) / "listing.jsonl"
        env = helpers_env(variant)
        completed = runner.run(
            LaunchSpec(
                # the pattern goes along so that only the selected benchmarks' setups run there
                argv=(interpreter, "-m", HELPER, directory, str(listing), *selected),
                env=env,
                cwd=variant.cwd,
            ),
            timeout_s=LIST_TIMEOUT_S,
        )
        if completed.returncode != 0 or completed.timed_out:
            output = (completed.stderr + completed.stdout).strip().splitlines()
            raise ConfigError(
                f"could not list the asv benchmarks of {directory!r}: the listing "
                f"{completed.describe_failure()}",
                hint=f"run it yourself to see why: PYTHONPATH={STATEMENT_WORKER_PATH.parent} "
                f"{interpreter} -m {HELPER} {directory} listing.jsonl",
                variant=variant.name,
                detail="\n".join(output[-_OUTPUT_LINES:]) or None,
            )
        return parse_listing(listing.read_text()) if listing.exists() else []
