"""A Google Benchmark binary as perflab benchmarks. Every benchmark it lists
(`--benchmark_list_tests`), named as Google Benchmark names it (`BM_Add/64/512`, `BM_Copy<int>`,
`Fixture/Test`), is one command benchmark that runs the binary with `--benchmark_filter=^NAME$`; its
time samples are Google Benchmark's own time per iteration (`TimeReport.GBENCH`, read by the time
lens), not the process's wall time.

A variant names its own binary with cmd= (its words may carry Google Benchmark flags:
`cmd="./old/bench --benchmark_min_time=0.1"`); the others run the suite's binary, in their
cwd (a git= variant's checkout). Each distinct binary among the variants that need no
checkout or build is listed; a benchmark some of them lack is said and left out, since it
cannot be compared. A suite whose variants all need a build is listed in the current
directory. The commands run without a shell (as --shell none) unless --shell says otherwise:
the filter's ^ and $ would otherwise put /bin/sh between perflab and the binary."""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from perflab.machine.proc import Completed, LaunchSpec, ProcessRunner
from perflab.plan.suite_listing import listing_variants
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric, TimeReport
from perflab.records.model import Benchmark, Variant

LIST_TIMEOUT_S = 60.0  # listing registers the benchmarks and prints their names: nothing runs
_OUTPUT_LINES = 15  # of the binary's output, shown when it could not list
# Google Benchmark's words when --benchmark_filter selects nothing (it exits 0, listing or
# reporting nothing): the one home of them, read by its listing here and its reports
# (measure/reported_time.py)
GBENCH_NO_MATCH = "Failed to match any benchmarks"
_BAD_PATTERN = "Could not compile benchmark re"  # ... and when it is no regular expression
# the characters special in a POSIX extended expression outside brackets; a lone ] or } is
# itself there, and libstdc++'s std::regex (Google Benchmark's matcher) refuses them escaped
_ERE_SPECIAL = frozenset("\\.[()*+?{|^$")


@dataclass(frozen=True)
class GbenchSuite:
    """The suite's benchmarks and what its listing says about the rest."""

    benchmarks: tuple[Benchmark, ...]
    notes: tuple[str, ...]


def gbench_filter(name: str) -> str:
    """The --benchmark_filter that selects benchmark `name` alone: the name anchored, with the
    metacharacters of the POSIX extended expressions Google Benchmark matches escaped."""
    return "^" + "".join("\\" + c if c in _ERE_SPECIAL else c for c in name) + "$"


def gbench_benchmark(name: str, program: str) -> Benchmark:
    """Benchmark `name` of `program`, run alone, its time read from Google Benchmark's report."""
    return Benchmark(
        name=name,
        cmd=program,
        cmd_args=shlex.quote(f"--benchmark_filter={gbench_filter(name)}"),
        reports=TimeReport.GBENCH,
    )


def gbench_lens_notes(metrics: Sequence[Metric], *, region: Sequence[Metric]) -> tuple[str, ...]:
    """What the lenses that do not see the benchmark's region alone (those not in `region`,
    `perflab.lenses.registry.region_metrics()`) see of a Google Benchmark binary, said before
    measuring."""
    others = [str(m) for m in metrics if m not in region]
    if not others:
        return ()
    seeing = [str(m) for m in region]
    return (
        f"gbench suite: the {', '.join(others)} lens(es) see the whole process that runs one "
        "benchmark: its start-up, Google Benchmark's trial runs and as many iterations as it "
        "chooses by time, which differ between runs and variants, so their verdicts compare "
        "different amounts of work unless the iterations are fixed (->Iterations(N) in the "
        f"benchmark's code); the {', '.join(seeing[:-1])} and {seeing[-1]} lenses see its "
        "iterations alone",
    )


def parse_listing(text: str) -> list[str]:
    """`--benchmark_list_tests`'s output: one benchmark name a line."""
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def select(listings: Sequence[tuple[str, Sequence[str]]], program: str) -> GbenchSuite:
    """The benchmarks every listing has (`listings`: what each distinct binary listed, by the
    variants running it), in the first listing's order; the others are named in a note."""
    names: dict[str, list[str]] = {}  # each name, the variants whose binary lists it
    for who, listed in listings:
        for name in listed:
            names.setdefault(name, []).append(who)
    everywhere = [name for name, where in names.items() if len(where) == len(listings)]
    partial = [
        f"{name} (only {', '.join(where)})"
        for name, where in names.items()
        if len(where) < len(listings)
    ]
    notes = []
    if partial:
        notes.append(
            f"gbench suite: {len(partial)} benchmark(s) some variants' binaries lack, not "
            "measured (there is nothing to compare them with): " + ", ".join(partial)
        )
    if not everywhere:
        raise ConfigError(
            f"no benchmark is in every variant's binary ({program!r} and the variants' cmd=)",
            hint="list each with --benchmark_list_tests: a comparison needs the benchmark in both",
        )
    return GbenchSuite(
        benchmarks=tuple(gbench_benchmark(name, program) for name in everywhere),
        notes=tuple(notes),
    )


def gbench_suite(
    program: str,
    variants: Sequence[Variant],
    runner: ProcessRunner,
    *,
    pattern: str | None = None,
    shell: str = "none",
) -> GbenchSuite:
    """The benchmarks of Google Benchmark binary `program` (selected by Google Benchmark's own
    --benchmark_filter=`pattern`) as each distinct binary among the variants lists them."""
    listings: dict[tuple[str, str | None, tuple[tuple[str, str], ...]], list[str]] = {}
    listed: dict[tuple[str, str | None, tuple[tuple[str, str], ...]], list[str]] = {}
    ready = listing_variants(variants)
    standing_in = not any(v in variants for v in ready)  # every variant is built first
    for variant in ready:
        command = variant.cmd or program
        key = (command, variant.cwd, tuple(sorted(variant.env.items())))
        if key not in listings:
            listings[key] = _listed(runner, variant, command, pattern, shell, standing_in)
            listed[key] = []
        listed[key].append(variant.name)
    return select([(", ".join(listed[key]), names) for key, names in listings.items()], program)


def _listed(
    runner: ProcessRunner,
    variant: Variant,
    command: str,
    pattern: str | None,
    shell: str,
    standing_in: bool,
) -> list[str]:
    selection = f" {shlex.quote('--benchmark_filter=' + pattern)}" if pattern else ""
    listing = f"{command} --benchmark_list_tests{selection}"
    env = dict(os.environ)
    env.update(variant.env)
    # split as the benchmarks' commands are: words as a shell splits them, or a shell itself
    try:
        argv = tuple(shlex.split(listing)) if shell == "none" else ("/bin/sh", "-c", listing)
    except ValueError as error:
        raise ConfigError(
            f"cannot split command {command!r}: {error}",
            hint="cmd= is the binary and its flags, quoted as a shell quotes them",
            variant=variant.name,
        ) from None
    spec = LaunchSpec(argv=argv, env=env, cwd=variant.cwd)
    completed = runner.run(spec, timeout_s=LIST_TIMEOUT_S)
    where = f" in {variant.cwd!r}" if variant.cwd else ""
    if not completed.ok:
        _refuse(completed, variant, command, where, listing, standing_in)
    names = parse_listing(completed.stdout)
    if names:
        return names
    raise _listed_none(completed, variant, command, pattern, where=where, listing=listing)


def _listed_none(
    completed: Completed,
    variant: Variant,
    command: str,
    pattern: str | None,
    *,
    where: str,
    listing: str,
) -> ConfigError:
    """Why a listing that ran listed no benchmark: a filter Google Benchmark refused, a filter
    that matched none, or a program that is not a Google Benchmark binary."""
    if pattern and _BAD_PATTERN in completed.stderr:
        return ConfigError(
            f"--filter {pattern!r} is not a regular expression Google Benchmark accepts",
            hint="it is a POSIX extended regular expression: a literal ( ) [ { . * + ? | ^ $ "
            "or \\ takes a \\ before it (] and } do not)",
            variant=variant.name,
            detail=_tail(completed),
        )
    if pattern and GBENCH_NO_MATCH in completed.stderr:
        return ConfigError(
            f"no benchmark of {command!r}{where} matches --filter {pattern!r}",
            hint="--filter is Google Benchmark's --benchmark_filter (a POSIX extended regular "
            f"expression); see the names with: {command} --benchmark_list_tests",
            variant=variant.name,
        )
    return ConfigError(
        f"{command!r}{where} listed no benchmarks: is it a Google Benchmark binary?",
        hint="--gbench takes a program built with Google Benchmark (BENCHMARK_MAIN()); "
        f"try: {listing}",
        variant=variant.name,
        detail=_tail(completed),
    )


def _refuse(
    completed: Completed,
    variant: Variant,
    command: str,
    where: str,
    listing: str,
    standing_in: bool,
) -> None:
    """A ConfigError that says why the binary could not list its benchmarks."""
    if completed.returncode in (126, 127) and not completed.stdout:
        hint = (
            "--gbench and cmd= name a built Google Benchmark binary (a path such as "
            "./build/bench, relative to the variant's cwd)"
        )
        if standing_in:
            hint = (
                "every variant is checked out or built before it runs, so perflab lists the "
                f"benchmarks with {command} where it runs: build it here once"
            )
        raise ConfigError(
            f"cannot run {command!r}{where}: "
            + ("not found" if completed.returncode == 127 else "not executable"),
            hint=hint,
            variant=None if standing_in else variant.name,
            detail=_tail(completed),
        )
    raise ConfigError(
        f"{command!r}{where} could not list its benchmarks: it {completed.describe_failure()}",
        hint=f"run it yourself to see why: {listing}",
        variant=variant.name,
        detail=_tail(completed),
    )


def _tail(completed: Completed) -> str | None:
    lines = (completed.stderr + completed.stdout).strip().splitlines()
    return "\n".join(lines[-_OUTPUT_LINES:]) or None
