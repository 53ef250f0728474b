"""Where the asm lens learns which code is hot, and which files the variant's process mapped.

`HotCodeSource` is the small seam to the profile lens: anything that can profile the measured
region of one variant and return per-sample (object, symbol, offset) plus the mapped objects.
`PerfRecordSource` is the built-in one: ``perf record -e cpu-clock`` attached to the variant's
live statement worker around the timed loop only (or wrapping a command), with the worker's
``/proc/PID/maps`` read while it is alive.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from perflab.analysis.elf_code import mapped_objects, read_process_maps
from perflab.collectors.base import LensContext
from perflab.collectors.worker_client import StatementWorker, interpreter_for, variant_environment
from perflab.errors import BenchmarkFailedError, ToolUnavailableError
from perflab.model import Benchmark, BenchmarkKind, Variant
from perflab.proc import LaunchSpec, ProcessRunner, which

PROFILE_TARGET_MS = 400.0  # enough cpu-clock samples to rank functions; short on a shared machine
SAMPLE_HZ = 4000
PERF_ATTACH_S = 0.15  # perf record -p needs a moment before its first sample
PERF_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class CodeSample:
    """Samples (or instruction counts) at one place in one object, aggregated."""

    object_path: str
    symbol: str  # as in the symbol table (mangled); "" when the profiler could not name it
    offset: int | None  # from the symbol's start
    weight: float = 1.0


@dataclass(frozen=True)
class ProfiledRegion:
    samples: tuple[CodeSample, ...]
    objects: tuple[str, ...]  # files with executable mappings in the variant's process
    unit: str = "samples"

    @property
    def total(self) -> float:
        return sum(sample.weight for sample in self.samples)

    def by_function(self) -> dict[tuple[str, str], float]:
        """(object, symbol) -> weight, heaviest first; unnamed code and non-files are left out."""
        weights: dict[tuple[str, str], float] = {}
        for sample in self.samples:
            if sample.symbol and sample.object_path.startswith("/"):
                key = (sample.object_path, sample.symbol)
                weights[key] = weights.get(key, 0.0) + sample.weight
        return dict(sorted(weights.items(), key=lambda item: -item[1]))

    def offsets(self, object_path: str, symbol: str) -> dict[int, float]:
        costs: dict[int, float] = {}
        for sample in self.samples:
            if (
                sample.object_path == object_path
                and sample.symbol == symbol
                and sample.offset is not None
            ):
                costs[sample.offset] = costs.get(sample.offset, 0.0) + sample.weight
        return costs


class HotCodeSource(Protocol):
    def profile(
        self, benchmark: Benchmark, variant: Variant, context: LensContext
    ) -> ProfiledRegion:
        """Profile the measured region of `benchmark` under `variant`."""
        ...


# ---------------------------------------------------------------------------------------------
# perf script output (pure)

_SAMPLE_LINE = re.compile(r"^\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")
_MMAP_LINE = re.compile(
    r"^\S+\s+\S+\s+\S+\s+PERF_RECORD_MMAP2?\s.*\]:\s+(\S+)\s+(.+)$|^PERF_RECORD_MMAP2?\s.*\]:\s+(\S+)\s+(.+)$"
)


def parse_perf_script(text: str) -> ProfiledRegion:
    """`perf script --no-demangle -F ip,sym,symoff,dso --show-mmap-events` -> aggregated samples
    and the executable objects from the mmap events."""
    counts: Counter[tuple[str, str, int | None]] = Counter()
    objects: dict[str, None] = {}
    for line in text.splitlines():
        if "PERF_RECORD_MMAP" in line:
            match = _MMAP_LINE.match(line.strip())
            if match:
                perms, path = (
                    (match.group(1), match.group(2))
                    if match.group(1)
                    else (match.group(3), match.group(4))
                )
                if "x" in perms and path.startswith("/"):
                    objects.setdefault(path.strip(), None)
            continue
        match = _SAMPLE_LINE.match(line)
        if not match:
            continue
        _, where, dso = match.groups()
        symbol, offset = _split_symoff(where)
        counts[(dso, symbol, offset)] += 1
    samples = tuple(
        CodeSample(dso, symbol, offset, float(n)) for (dso, symbol, offset), n in counts.items()
    )
    return ProfiledRegion(samples=samples, objects=tuple(objects))


def _split_symoff(where: str) -> tuple[str, int | None]:
    if where in ("[unknown]", ""):
        return "", None
    symbol, plus, offset = where.rpartition("+0x")
    if not plus:
        return where, None
    try:
        return symbol, int(offset, 16)
    except ValueError:
        return where, None


# ---------------------------------------------------------------------------------------------
# perf record, through the process seam


class PerfRecordSource:
    """cpu-clock sampling of the measured region; hardware events are not needed (nor available
    on most VMs)."""

    def __init__(self, target_ms: float = PROFILE_TARGET_MS, frequency_hz: int = SAMPLE_HZ) -> None:
        self.target_ms = target_ms
        self.frequency_hz = frequency_hz

    @staticmethod
    def check(runner: ProcessRunner) -> None:
        if which("perf") is None:
            raise ToolUnavailableError(
                "perf is not installed, so the asm lens cannot find hot functions",
                hint="install perf (linux-perf), or name the functions with --symbol REGEX",
            )
        done = runner.run(
            LaunchSpec(
                argv=("perf", "record", "-q", "-e", "cpu-clock", "-o", "/dev/null", "--", "true")
            ),
            timeout_s=30,
        )
        if not done.ok:
            raise ToolUnavailableError(
                "perf record does not work here: " + done.stderr.strip()[-300:],
                hint="lower /proc/sys/kernel/perf_event_paranoid to 2 or less, "
                "or name the functions with --symbol REGEX",
            )

    def profile(
        self, benchmark: Benchmark, variant: Variant, context: LensContext
    ) -> ProfiledRegion:
        with tempfile.TemporaryDirectory(prefix="perflab-asm-") as scratch:
            data_path = os.path.join(scratch, "perf.data")
            if benchmark.kind is BenchmarkKind.STATEMENT:
                maps = self._record_statement(benchmark, variant, context, data_path)
            else:
                maps = self._record_command(benchmark, variant, context, data_path)
            script = context.runner.run(
                LaunchSpec(
                    argv=(
                        "perf",
                        "script",
                        "-i",
                        data_path,
                        "--no-demangle",
                        "--show-mmap-events",
                        "-F",
                        "ip,sym,symoff,dso",
                    )
                ),
                timeout_s=PERF_TIMEOUT_S,
            )
        if not script.ok:
            raise BenchmarkFailedError(
                "perf script failed: " + script.stderr.strip()[-300:],
                variant=variant.name,
                benchmark=benchmark.name,
            )
        region = parse_perf_script(script.stdout)
        objects = tuple(dict.fromkeys((*maps, *region.objects)))
        return ProfiledRegion(samples=region.samples, objects=objects)

    def _record_argv(self, data_path: str, *tail: str) -> tuple[str, ...]:
        rate = ("-F", str(self.frequency_hz))
        return ("perf", "record", "-q", "-e", "cpu-clock", *rate, "-o", data_path, *tail)

    def _record_statement(
        self, benchmark: Benchmark, variant: Variant, context: LensContext, data_path: str
    ) -> tuple[str, ...]:
        settings = context.experiment.settings
        with StatementWorker(
            context.runner,
            benchmark,
            variant,
            interpreter=interpreter_for(variant, context.default_python),
            cpu=context.cpu,
            timeout_s=settings.sample_timeout_s,
        ) as worker:
            loops = worker.calibrate(int(self.target_ms * 1e6))
            objects = mapped_objects(read_process_maps(worker.pid))
            argv = self._record_argv(data_path, "-p", str(worker.pid))
            recorder: list[subprocess.Popen[str]] = []

            def start() -> None:
                recorder.append(context.runner.spawn(LaunchSpec(argv=argv)))
                time.sleep(PERF_ATTACH_S)

            def stop() -> None:
                _stop_recorder(recorder[0])

            try:
                worker.sample(loops, on_region_start=start, on_region_end=stop)
            finally:
                for process in recorder:
                    if process.poll() is None:
                        _stop_recorder(process)
            # libraries loaded lazily during the statement (dlopen) appear only now
            objects = tuple(
                dict.fromkeys((*objects, *mapped_objects(read_process_maps(worker.pid))))
            )
        return objects

    def _record_command(
        self, benchmark: Benchmark, variant: Variant, context: LensContext, data_path: str
    ) -> tuple[str, ...]:
        from perflab.collectors.commands import command_argv

        argv = self._record_argv(data_path, "--", *command_argv(benchmark.command_for(variant)))
        done = context.runner.run(
            LaunchSpec(
                argv=argv, env=variant_environment(variant), cwd=variant.cwd, cpu=context.cpu
            ),
            timeout_s=context.experiment.settings.sample_timeout_s,
        )
        if not done.ok:
            raise BenchmarkFailedError(
                f"the command under perf record {done.describe_failure()}",
                detail=done.stderr[-2000:],
                variant=variant.name,
                benchmark=benchmark.name,
            )
        return ()


def _stop_recorder(process: subprocess.Popen[str]) -> None:
    """perf record writes its data file on SIGINT; a kill would lose it."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    try:
        process.communicate(timeout=PERF_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()


def region_to_json(region: ProfiledRegion) -> dict[str, object]:
    return {
        "unit": region.unit,
        "objects": list(region.objects),
        "samples": [[s.object_path, s.symbol, s.offset, s.weight] for s in region.samples],
    }


def region_from_json(data: Mapping[str, Any]) -> ProfiledRegion:
    raw = data.get("samples", [])
    assert isinstance(raw, list)
    return ProfiledRegion(
        samples=tuple(
            CodeSample(str(o), str(s), None if off is None else int(off), float(w))
            for o, s, off, w in raw
        ),
        objects=tuple(str(o) for o in data.get("objects", [])),
        unit=str(data.get("unit", "samples")),
    )
