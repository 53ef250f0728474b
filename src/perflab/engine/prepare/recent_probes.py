"""What the last minutes' probes on this machine measured, so that a plan rests on more than
one probe's second of a load that moves (budget/machine_speed.py, RECENT_PROBES).

One JSON line per probe in the CPU lock directory (perflab's own, private, per user; on a
tmpfs where there is one, so it starts empty after a reboot): when, which benchmark (a digest of
its statement or command, its variants and its settings that change its cost), and the probe's
figures. The file is kept short (its newest lines, `KEEP_BYTES`) and its lines are appended with
one write each, so runs beside each other do not corrupt it. It only ever informs a plan: a
file that cannot be read or written is ignored, never a reason to fail a run.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from perflab.budget.costs import CostProbe
from perflab.budget.machine_speed import RECENT_PROBES_S, MachineSpeed
from perflab.engine.prepare.caches import CACHE_VARIABLES
from perflab.machine import cpu_lock
from perflab.records.errors import PerflabError
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.model import Benchmark, Experiment

FILE_NAME = "recent-probes.jsonl"
KEEP_BYTES = 32 * 1024  # about 150 probes: far more than RECENT_PROBES_S holds on one machine


def benchmark_key(benchmark: Benchmark, experiment: Experiment) -> str:
    """Which benchmark a probe was of: the same statement or command, variants and cost
    settings give the same key."""
    settings = experiment.settings
    # not the cache directories each run makes for its variants (engine/prepare/caches.py)
    variants = tuple(
        replace(
            v, env={name: value for name, value in v.env.items() if name not in CACHE_VARIABLES}
        )
        for v in experiment.variants
    )
    identity = repr((benchmark, variants, settings.sample_target_ms, settings.pin))
    return hashlib.sha256(identity.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Recalled:
    """The recent probes: of this benchmark, and the machine's speed from any (oldest first)."""

    same_benchmark: tuple[CostProbe, ...] = ()
    speeds: tuple[MachineSpeed, ...] = ()
    startups_s: tuple[float, ...] = ()  # perflab's own start-up, where a run's first probe
    counting_cpus: tuple[int, ...] = ()  # the CPUs free of other perflab runs, any probe
    # this benchmark's fixed-cost lenses: what they took / what their model said, by lens
    lens_ratios: Mapping[Metric, tuple[float, ...]] = field(default_factory=dict)


class RecentProbes:
    """The probe memory in `directory` (the CPU lock directory when None)."""

    def __init__(
        self, directory: Path | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self._directory = directory
        self._clock = clock

    def _path(self) -> Path:
        directory = self._directory or cpu_lock.lock_directory()
        return cpu_lock.private_directory(directory) / FILE_NAME

    def recall(self, key: str, kind: BenchmarkKind, variants: int) -> Recalled:
        """The probes of the last RECENT_PROBES_S; nothing when the file cannot be read."""
        try:
            lines = _tail(self._path(), KEEP_BYTES).splitlines()
        except (OSError, PerflabError):
            return Recalled()
        since = self._clock() - RECENT_PROBES_S
        same: list[CostProbe] = []
        speeds: list[MachineSpeed] = []
        startups: list[float] = []
        cpus: list[int] = []
        ratios: dict[Metric, list[float]] = {}
        for line in lines:
            lens = _lens_record(line, key)
            if lens is not None:
                if since <= lens[0] <= self._clock():
                    ratios.setdefault(lens[1], []).append(lens[2])
                continue
            record = _record(line)
            if record is None or not since <= record["at"] <= self._clock():
                continue
            if record["reference_s"] is not None or record["valgrind_s"] is not None:
                speeds.append(MachineSpeed(record["reference_s"], None, record["valgrind_s"]))
            if record["counting_cpus"] is not None:
                cpus.append(int(record["counting_cpus"]))
            if record["before_s"] is not None:
                startups.append(record["before_s"])
            if record["key"] == key:
                same.append(
                    CostProbe(
                        kind,
                        variants,
                        startup_s=record["startup_s"],
                        import_s=record["import_s"],
                        fork_s=record["fork_s"],
                        sample_s=record["sample_s"],
                        probe_s=0.0,
                    )
                )
        return Recalled(
            tuple(same),
            tuple(speeds),
            tuple(startups),
            tuple(cpus),
            {metric: tuple(values) for metric, values in ratios.items()},
        )

    def remember_lens(self, key: str, metric: Metric, ratio: float) -> None:
        """Append what a fixed-cost lens took of this benchmark against its model's minimum
        (budget.learned_costs)."""
        record = {"at": round(self._clock(), 3), "key": key, "lens": metric.value, "ratio": ratio}
        try:
            _append(self._path(), json.dumps(record) + "\n")
        except (OSError, PerflabError):
            pass  # a plan aid only

    def remember(
        self, key: str, probe: CostProbe, *, speed_measured: bool, before_s: float | None = None
    ) -> None:
        """Append this probe (its own figures, not the medians); `speed_measured`: its machine
        speed was measured by it, not carried from an earlier benchmark of the run;
        `before_s`: perflab's own start-up before it, for a run's first probe."""
        if probe.failed:
            return
        speed = probe.speed
        record = {
            "at": round(self._clock(), 3),
            "key": key,
            "startup_s": probe.startup_s,
            "import_s": probe.import_s,
            "fork_s": probe.fork_s,
            "sample_s": probe.sample_s,
            "reference_s": speed.reference_s if speed_measured else None,
            "valgrind_s": speed.valgrind_s if speed_measured else None,
            "before_s": before_s,
            "counting_cpus": probe.counting_cpus,
        }
        try:
            _append(self._path(), json.dumps(record) + "\n")
        except (OSError, PerflabError):
            pass  # a plan aid only: the next run plans from its own probe


_FIELDS = ("startup_s", "import_s", "fork_s", "sample_s")


def _lens_record(line: str, key: str) -> tuple[float, Metric, float] | None:
    """A lens's line of this benchmark: (when, lens, ratio); None for any other line."""
    if '"lens"' not in line:
        return None
    try:
        record = json.loads(line)
        if record["key"] != key:
            return None
        ratio = float(record["ratio"])
        return float(record["at"]), Metric(record["lens"]), ratio
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def _record(line: str) -> dict[str, Any] | None:
    """One line, or None when it is not a whole record (a torn tail, another version's)."""
    try:
        record = json.loads(line)
        at = float(record["at"])
        figures = {name: float(record[name]) for name in _FIELDS}
        optional = {
            name: None if record.get(name) is None else float(record[name])
            for name in ("reference_s", "valgrind_s", "before_s", "counting_cpus")
        }
        key = str(record["key"])
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    return {"at": at, "key": key, **figures, **optional}


def _open(path: Path, flags: int) -> int:
    """The file, never through a link, and only a regular file of this user's."""
    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    found = os.fstat(fd)
    if not stat.S_ISREG(found.st_mode) or found.st_uid != os.geteuid():
        os.close(fd)
        raise OSError(f"{path} is not a file of yours")
    return fd


def _tail(path: Path, size: int) -> str:
    try:
        fd = _open(path, os.O_RDONLY)
    except FileNotFoundError:
        return ""
    with os.fdopen(fd, "rb") as file:
        length = os.fstat(file.fileno()).st_size
        file.seek(max(0, length - size))
        text = file.read().decode("utf-8", "replace")
    # a read that began mid-file starts inside a line: drop that part
    return text.split("\n", 1)[1] if length > size and "\n" in text else text


def _append(path: Path, line: str) -> None:
    """One write with O_APPEND (whole lines beside other runs' writes); once the file holds
    twice KEEP_BYTES, its newest KEEP_BYTES replace it (a line appended meanwhile may be lost:
    this is a plan aid)."""
    fd = _open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, line.encode())
        length = os.fstat(fd).st_size
    finally:
        os.close(fd)
    if length <= 2 * KEEP_BYTES:
        return
    kept = _tail(path, KEEP_BYTES)
    fresh = path.with_name(f".{FILE_NAME}.{os.getpid()}")
    fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            os.write(fd, kept.encode())
        finally:
            os.close(fd)
        os.replace(fresh, path)
    except OSError:
        fresh.unlink(missing_ok=True)
        raise
