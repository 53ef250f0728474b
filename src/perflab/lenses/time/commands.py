"""The time lens on commands: every sample is one run of the command from a launcher pinned to
the measuring CPU, alternated between the variants, with units of consecutive blocks."""

from __future__ import annotations

import hashlib
import json
import math
import os
import shlex
import shutil
from collections import Counter
from collections.abc import Sequence
from typing import Any

from perflab.lenses.time.artifacts import KIND_COMMAND_UNITS, KIND_EXIT_CODES, WALL_NS
from perflab.lenses.time.bookkeeping import (
    COMMAND_UNIT_S,
    COMMAND_UNITS_IN_SHARE,
    STOP_CHECK_INTERVAL_S,
    TimeBookkeeping,
)
from perflab.lenses.time.metric import TIME
from perflab.machine.scratch import private_folder
from perflab.measure.commands import CommandLauncher, CommandRun, command_argv
from perflab.measure.layout import (
    layout_info,
    padded_environments,
)
from perflab.measure.reported_time import ReportFiles
from perflab.measure.sampler import InterleavedSampler, ProcessAccounting, Slot
from perflab.measure.worker_client import variant_environment
from perflab.records.errors import BenchmarkFailedError
from perflab.records.model import Artifact, Note, Sample, Severity
from perflab.records.run_facts import VariantInfo


class TimeCommandSession:
    """The time lens on a command benchmark: interleaved blocks of each variant's runs, batched
    into units, until the stopping rule or the budget ends them."""

    def __init__(self, book: TimeBookkeeping) -> None:
        self.book = book
        self.session = book.session
        self.sampler = InterleavedSampler(self.session, TIME)

    def run(self) -> None:
        envs = [variant_environment(v) for v in self.session.variants]
        commands = [self.session.benchmark.command_for(v) for v in self.session.variants]
        shell = self.session.settings.shell
        self._describe_commands([command_argv(c, shell=shell) for c in commands], envs)
        # a program that reports its own time writes its report where perflab reads it back
        self.reports: ReportFiles | None = None
        if self.session.benchmark.reports is None:
            self._run_commands(commands, envs)
            return
        with private_folder("report") as folder:
            self.reports = ReportFiles(self.session.benchmark.reports, folder, len(commands))
            reporting = [f"{c} {self.reports.arguments(i)}" for i, c in enumerate(commands)]
            self._run_commands(reporting, envs)

    def _run_commands(self, commands: Sequence[str], envs: Sequence[dict[str, str]]) -> None:
        argvs = [command_argv(c, shell=self.session.settings.shell) for c in commands]
        self.checked_s = -math.inf  # when the stopping rule was last evaluated
        self.warmed_s: float | None = None  # when the warm-up blocks were done
        self.unit_blocks: int | None = None  # blocks per unit of the interval
        padded: list[dict[str, str]] = []  # this block's environments
        # --ignore-failure: each variant's non-zero exit statuses by block, said once
        self.ignored: dict[int, dict[int, int]] = {}

        def before_block(block: int) -> None:
            # every block its own layout: one padding draw, the variants' strings equalised
            padded[:] = padded_environments(envs, argvs, self.session.rng)

        with CommandLauncher(
            self.session.context.runner,
            cpu=self.session.context.cpu,
            show_output=self.session.settings.show_output,
        ) as launcher:

            def measure(slot: Slot) -> None:
                if slot.variant in self.book.failed:
                    return
                try:
                    self._prepare(launcher, slot.variant, padded[slot.variant])
                    self._run_one(launcher, argvs[slot.variant], padded[slot.variant], slot)
                except BenchmarkFailedError as error:
                    self._go_on_without(slot.variant, error)

            self.sampler.blocks(measure, before_block=before_block, enough=self._enough_blocks)
        self._note_ignored_failures()

    def _go_on_without(self, index: int, error: BenchmarkFailedError) -> None:
        """A variant that fails is measured no more and the others on, while a planned
        comparison is left among them (a crash hides nothing else); else `error` ends the
        lens."""
        variants = self.session.variants
        failed = {variants[i].name for i in self.book.failed} | {variants[index].name}
        left = {v.name for v in variants} - failed
        pairs = self.session.context.experiment.comparison_pairs
        if not any(a in left and b in left for a, b in pairs):
            raise error
        self.book.failed[index] = error

    def _describe_commands(
        self, argvs: Sequence[tuple[str, ...]], envs: Sequence[dict[str, str]]
    ) -> None:
        for variant, argv, env in zip(self.session.variants, argvs, envs, strict=True):
            described = describe_executable(argv, env, variant.cwd)
            described["layout"] = layout_info(unit="block", aslr=aslr_enabled(), hash_seed=False)
            self.session.context.sink.add_variant_info(
                variant.name, VariantInfo(commands={self.session.benchmark.name: described})
            )

    def _enough_blocks(self, blocks: int) -> bool:
        """After `blocks` blocks: stop at the maximum, or (beyond the minimum) once precise
        enough or out of the share."""
        settings = self.session.settings
        if blocks == settings.warmup_blocks:
            self.warmed_s = self.session.elapsed_s()
        if blocks < settings.min_command_blocks:
            return False
        if settings.max_command_blocks is not None and blocks >= settings.max_command_blocks:
            return True
        if self.unit_blocks is None:
            self.unit_blocks = self._choose_units(blocks)
        out_of_budget = self.session.elapsed_s() >= self.book.budget_s
        # Estimating reads every sample so far: after every block, short commands would
        # spend more time here than running (quadratic), so at most this often.
        if not out_of_budget and self.session.elapsed_s() - self.checked_s < STOP_CHECK_INTERVAL_S:
            return False
        self.checked_s = self.session.elapsed_s()
        bases = self.book.interval_bases(self.unit_blocks)
        self.book.report(f"block {blocks}", bases)
        return out_of_budget or self.book.precision_reached(bases)

    def _choose_units(self, blocks: int) -> int:
        """Blocks per unit of the interval: about a second, or a tenth of the time the share
        leaves for measuring; stored for the analysis."""
        warmed_s = self.warmed_s or 0.0
        measured = blocks - self.session.settings.warmup_blocks
        block_s = (self.session.elapsed_s() - warmed_s) / max(1, measured)
        measuring_s = self.book.budget_s - warmed_s
        unit_blocks = command_unit_blocks(
            block_s,
            min(COMMAND_UNIT_S, measuring_s / COMMAND_UNITS_IN_SHARE),
            len(self.session.variants),
        )
        self._record_units(unit_blocks)
        return unit_blocks

    def _prepare(self, launcher: CommandLauncher, index: int, env: dict[str, str]) -> None:
        """--prepare: its command before each run, through the same launcher (in the variant's
        environment and directory), untimed; a failure stops the run as the command's would."""
        command = self.session.settings.prepare
        if command is None:
            return
        variant = self.session.variants[index]
        run = launcher.run(
            ("/bin/sh", "-c", command),
            env=env,
            cwd=variant.cwd,
            timeout_s=self.session.settings.sample_timeout_s,
            variant=variant.name,
            benchmark=self.session.benchmark.name,
        )
        if run.timed_out or run.returncode != 0:
            how = "timed out" if run.timed_out else describe_status(run.returncode)
            raise BenchmarkFailedError(
                f"the --prepare command {command!r} {how}",
                hint="run it by hand in the variant's directory to see why",
                variant=variant.name,
                benchmark=self.session.benchmark.name,
                detail=run.stderr_tail.rstrip() or None,
            )

    def _record_units(self, blocks_per_unit: int) -> None:
        self.session.context.sink.add_artifact(
            Artifact(
                benchmark=self.session.benchmark.name,
                variant=self.session.variants[0].name,
                metric=TIME,
                kind=KIND_COMMAND_UNITS,
                content=json.dumps({"blocks_per_unit": blocks_per_unit}),
            )
        )

    def _run_one(
        self, launcher: CommandLauncher, argv: tuple[str, ...], env: dict[str, str], slot: Slot
    ) -> None:
        variant = self.session.variants[slot.variant]
        run = launcher.run(
            argv,
            env=env,
            cwd=variant.cwd,
            timeout_s=self.session.settings.sample_timeout_s,
            variant=variant.name,
            benchmark=self.session.benchmark.name,
        )
        if failure_ignored(run, ignore_failure=self.session.settings.ignore_failure):
            self.ignored.setdefault(slot.variant, {})[slot.block] = run.returncode or 0
        else:
            self._fail_unless_ok(run, variant.name)
        if self.reports is not None:
            self.book.record(self._reported_sample(run, slot))
            return
        self.book.record(
            self.sampler.sample(
                slot,
                WALL_NS,
                run.wall_ns,
                cpu=run.cpu,
                accounting=ProcessAccounting(
                    run.run_queue_ns, run.user_ns + run.sys_ns, run.involuntary_switches
                ),
            )
        )

    def _reported_sample(self, run: CommandRun, slot: Slot) -> Sample:
        """The sample the program's own report gives: its iterations' time, and the share of
        the process's waits for the CPU that fell inside them (spread evenly over the run)."""
        assert self.reports is not None
        variant = self.session.variants[slot.variant]
        try:
            reported = self.reports.take(slot.variant, self.session.benchmark.name, run.stderr_tail)
        except BenchmarkFailedError as error:
            raise BenchmarkFailedError(
                error.message,
                hint=error.hint,
                variant=variant.name,
                benchmark=self.session.benchmark.name,
                detail=error.detail,
            ) from None
        if not reported.counted:  # a mean alone: how much of the run it covers is unknown
            return self.sampler.sample(slot, WALL_NS, reported.real_ns, cpu=run.cpu)
        share = min(1.0, reported.real_ns / run.wall_ns) if run.wall_ns > 0 else 1.0
        switches = run.involuntary_switches
        return self.sampler.sample(
            slot,
            WALL_NS,
            reported.real_ns,
            loops=max(1, reported.iterations),
            cpu=run.cpu,
            accounting=ProcessAccounting(
                run_queue_ns=None if run.run_queue_ns is None else round(run.run_queue_ns * share),
                cpu_ns=round(reported.cpu_ns),
                involuntary_switches=None if switches is None else round(switches * share),
            ),
        )

    def _note_ignored_failures(self) -> None:
        """Which commands exited non-zero and were measured anyway (--ignore-failure)."""
        for index, by_block in sorted(self.ignored.items()):
            variant = self.session.variants[index].name
            self.session.context.sink.add_artifact(
                Artifact(
                    benchmark=self.session.benchmark.name,
                    variant=variant,
                    metric=TIME,
                    kind=KIND_EXIT_CODES,
                    content=json.dumps({str(b): c for b, c in sorted(by_block.items())}),
                )
            )
            statuses = Counter(by_block.values())
            said = ", ".join(
                f"{count} run{'' if count == 1 else 's'} with status {status}"
                for status, count in sorted(statuses.items())
            )
            self.session.context.sink.add_note(
                Note(
                    severity=Severity.WARNING,
                    message=f"the command exited with a non-zero status and was measured anyway "
                    f"(--ignore-failure): {said}",
                    hint="its times are those of a failing run, which may stop early; without "
                    "-i a failure stops the run",
                    benchmark=self.session.benchmark.name,
                    variant=variant,
                    metric=TIME,
                )
            )

    def _fail_unless_ok(self, run: CommandRun, variant: str) -> None:
        if not run.timed_out and run.returncode == 0:
            return
        how = (
            f"timed out after {self.session.settings.sample_timeout_s:g} s and was killed"
            if run.timed_out
            else describe_status(run.returncode)
        )
        raise BenchmarkFailedError(
            f"the command {how}",
            hint="run it by hand in the variant's directory to see why"
            if not run.timed_out
            else "raise --sample-timeout if one run legitimately takes longer",
            variant=variant,
            benchmark=self.session.benchmark.name,
            detail=run.stderr_tail.rstrip() or None,
        )


def describe_executable(
    argv: tuple[str, ...], env: dict[str, str], cwd: str | None
) -> dict[str, Any]:
    """Which program a command really runs, and a digest of it: two variants that run the same
    binary by accident become visible."""
    program = argv[0]
    if os.sep not in program:
        program = shutil.which(program, path=env.get("PATH")) or program
    elif cwd is not None:
        program = os.path.join(cwd, program)
    info: dict[str, Any] = {"command": shlex.join(argv), "executable": program}
    try:
        with open(program, "rb") as binary:
            info["executable_sha256"] = hashlib.file_digest(binary, "sha256").hexdigest()
    except OSError:
        pass
    return info


def failure_ignored(run: CommandRun, *, ignore_failure: bool) -> bool:
    """--ignore-failure: a run that exited with a non-zero status is measured as any other
    (a signal or a timeout still fails: its time is not the command's)."""
    if not ignore_failure or run.timed_out or run.returncode is None:
        return False
    return run.returncode > 0


def describe_status(returncode: int | None) -> str:
    if returncode is not None and returncode < 0:
        return f"was killed by signal {-returncode}"
    if returncode is not None and 128 < returncode < 160:
        # a shell reports a child killed by signal N as status 128 + N
        return f"exited with status {returncode} (a child killed by signal {returncode - 128}?)"
    return f"exited with status {returncode}"


def aslr_enabled() -> bool:
    """Whether the kernel randomises address spaces (commands run with it as it is)."""
    try:
        with open("/proc/sys/kernel/randomize_va_space") as setting:
            return setting.read().strip() != "0"
    except OSError:
        return False


def command_unit_blocks(block_s: float, unit_s: float, variants: int) -> int:
    """Commands: how many consecutive blocks make one unit of the interval, so a unit lasts
    about `unit_s` (slow machine states are not counted as independent evidence); with two
    variants an even number, so every unit holds as many AB blocks as BA ones and an effect
    of the position in a block cancels inside it."""
    if block_s <= 0 or not math.isfinite(block_s):
        return 2 if variants == 2 else 1
    blocks = max(1, math.ceil(unit_s / block_s))
    if variants == 2 and blocks > 1 and blocks % 2:
        blocks += 1
    return blocks
