"""`perflab publish` at scale: a synthetic store shaped like a team's CI history (history runs
of consecutive commits, each benchmark's value per commit with noise, a few planted steps),
published three times: first into an empty folder, again with nothing new, and again after one
more commit's run (as `perflab history` on the next push stores it). Prints the seconds, the
pages written and the pages' sizes.

Usage: python bench/publish_scale.py [--benchmarks 20] [--commits 100] [--per-run 25]
                                     [--quick-first] [--profile FILE] [--profile-new FILE]
                                     [--json FILE] [--workers N]
The store is written through perflab's own store API (as tests/support/published_runs.py
does), the samples of one run in one transaction. `--quick-first`: the first publish analyses
each run with a stand-in (ratios of medians, no statistics) so that a large site is published
in minutes; the later publishes use perflab's analysis (the one new run's is then real, and the
kept runs are not analysed at all), so their figures are the real ones.
"""

from __future__ import annotations

import argparse
import cProfile
import inspect
import json
import random
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from machine_facts import machine

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from perflab.analyse.run import analyse_run, with_sections  # noqa: E402
from perflab.publish import publish  # noqa: E402
from perflab.records.kinds import Metric, RunStatus, Verdict  # noqa: E402
from perflab.records.model import Benchmark, Comparison, Experiment, Sample, Variant  # noqa: E402
from perflab.records.results import RunResult  # noqa: E402
from perflab.records.run_facts import MachineInfo, VariantInfo  # noqa: E402
from perflab.records.settings import Settings  # noqa: E402
from perflab.store import SqliteStore, StoredRun  # noqa: E402

GENERATIONS, BLOCKS = 4, 2  # 8 samples per benchmark and commit, as a short time budget gives


def commits(count: int) -> list[tuple[str, str]]:
    return [(f"{i:08x}".ljust(40, "0"), f"change {i}: touch module {i % 17}") for i in range(count)]


def level(benchmark: int, index: int, count: int) -> float:
    """Each benchmark's own level; every seventh steps 10% slower two thirds along."""
    base = 1.0e5 * (1 + benchmark % 13)
    return base * (1.10 if benchmark % 7 == 0 and index >= (2 * count) // 3 else 1.0)


def write_run(
    store: SqliteStore,
    benchmarks: int,
    line: list[tuple[str, str]],
    first: int,
    count: int,
    seed: int,
) -> int:
    """A history's run of `line[first:first + count]` (one commit: itself twice, as history
    measures one new commit): the first against each, and each against the next."""
    chosen = list(range(first, first + count)) if count > 1 else [first, first]
    names = [f"c{line[i][0][:10]}" for i in chosen]
    if count == 1:
        names[1] += "-again"
    pairs = [(names[0], n) for n in names[1:]] + list(zip(names[1:], names[2:], strict=False))
    experiment = Experiment(
        benchmarks=tuple(Benchmark(f"bench_{b:03d}", stmt="pass") for b in range(benchmarks)),
        variants=tuple(Variant(n, git=line[i][0]) for n, i in zip(names, chosen, strict=True)),
        settings=Settings(metrics=(Metric.TIME,)),
        pairs=tuple(dict.fromkeys(pairs)),
    )
    writer = store.begin_run(experiment, MachineInfo.from_json({"cpu_model": "bench"}), "0")
    rng = random.Random(seed)
    store.connection.execute("BEGIN")
    for name, i in zip(names, chosen, strict=True):
        commit, subject = line[i]
        provenance = {"commit": commit, "subject": subject, "tree": "t" + commit[1:]}
        writer.add_variant_info(
            name, VariantInfo.from_json({"provenance": {**provenance, "changes": []}})
        )
    for b in range(benchmarks):
        for generation in range(GENERATIONS):
            for block in range(BLOCKS):
                for position, i in enumerate(chosen):
                    value = level(b, i, len(line)) * rng.uniform(0.995, 1.005) * 100
                    writer.add_sample(
                        Sample(f"bench_{b:03d}", names[position], Metric.TIME, "wall_ns", value,
                               loops=100, generation=generation, block=block, position=position,
                               at_ns=(generation * BLOCKS + block) * 10**7)
                    )  # fmt: skip
    store.connection.execute("COMMIT")
    writer.finish(RunStatus.COMPLETE)
    return writer.run_id


def quick_analysis(run: StoredRun) -> RunResult:
    """Each planned pair's ratio of medians with a ±1% interval: a stand-in for perflab's
    statistics (--quick-first), not a measurement of them."""
    values: dict[tuple[str, Metric, str], list[float]] = {}
    for s in run.samples:
        values.setdefault((s.benchmark, s.metric, s.variant), []).append(s.value / s.loops)
    median = {key: statistics.median(found) for key, found in values.items()}
    comparisons = []
    for metric in run.experiment.settings.metrics:
        for benchmark in run.experiment.benchmarks:
            for base, variant in run.experiment.comparison_pairs:
                before = median[(benchmark.name, metric, base)]
                after = median[(benchmark.name, metric, variant)]
                ratio = after / before
                verdict = (
                    Verdict.SLOWER if ratio * 0.99 > 1
                    else Verdict.FASTER if ratio * 1.01 < 1
                    else Verdict.INCONCLUSIVE
                )  # fmt: skip
                comparisons.append(
                    Comparison(
                        benchmark=benchmark.name,
                        metric=metric,
                        baseline=base,
                        variant=variant,
                        ratio=ratio,
                        ci_low=ratio * 0.99,
                        ci_high=ratio * 1.01,
                        verdict=verdict,
                        baseline_value=before,
                        variant_value=after,
                        unit="ns",
                    )
                )
    return with_sections(
        RunResult(
            run_id=run.run_id,
            status=run.status,
            created_at=run.created_at,
            experiment=run.experiment,
            machine=run.machine,
            comparisons=tuple(comparisons),
            notes=(),
            variant_info={},
            differences=(),
        )
    )


def quick_figures(run: StoredRun) -> tuple[Comparison, ...]:
    """The stand-in's figures (--quick-first)."""
    return quick_analysis(run).comparisons


def loadavg() -> str:
    """The 1, 5 and 15-minute load averages (the machine may be shared)."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "-"


def pages(folder: Path) -> dict[str, Any]:
    sizes = {p.name: p.stat().st_size for p in folder.glob("*.html")}
    runs = [v for k, v in sizes.items() if k.startswith("run-")]
    trends = [v for k, v in sizes.items() if k.startswith("trend-")]
    return {
        "pages": len(sizes),
        "bytes": sum(sizes.values()),
        "front_bytes": sizes.get("index.html", 0),
        "largest_run_page_bytes": max(runs, default=0),
        "largest_trend_page_bytes": max(trends, default=0),
    }


def timed(
    label: str,
    out: Path,
    store: Path,
    profile: cProfile.Profile | None,
    analyse: Callable[[StoredRun], RunResult] = analyse_run,
    workers: int | None = None,
) -> dict[str, Any]:
    load_before = loadavg()
    started, cpu = time.perf_counter(), time.process_time()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    if profile is not None:
        profile.enable()
    # an older perflab's publish (measured with this script beside its src/) has no seams
    seams: dict[str, Any] = {} if analyse is analyse_run else {"analyse": analyse}
    if analyse is quick_analysis and "figures" in inspect.signature(publish).parameters:
        seams["figures"] = quick_figures  # the trends' figures, not only the pages'
    if "workers" in inspect.signature(publish).parameters:
        seams["workers"] = workers  # None: a process per CPU, as the perflab command asks
    done = publish(out, store, **seams)
    if profile is not None:
        profile.disable()
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    apart = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    row = {
        "publish": label,
        "seconds": round(seconds, 2),
        "cpu_seconds": round(time.process_time() - cpu, 2),  # the machine is shared
        # the runs analysed in processes of their own (a first publish's, on several CPUs)
        "children_cpu_seconds": round(apart, 2),
        "written": len(done.written),
        "analysed": getattr(done, "analysed", "-"),
        "pages_analysed": getattr(done, "pages_analysed", "-"),
        "loadavg_before": load_before,
        "loadavg_after": loadavg(),
    }
    row.update(pages(out))
    print(f"  {label}: {seconds:.1f} s, {len(done.written)} written", file=sys.stderr)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmarks", type=int, default=20)
    parser.add_argument("--commits", type=int, default=100)
    parser.add_argument("--per-run", type=int, default=25, help="commits per history run")
    parser.add_argument("--profile", type=Path, help="cProfile the first publish into FILE")
    parser.add_argument("--profile-new", type=Path, help="cProfile the one after one new run")
    parser.add_argument("--json", type=Path, help="write the figures as JSON")
    parser.add_argument(
        "--workers", type=int, help="processes analysing runs side by side (default: a CPU each)"
    )
    parser.add_argument(
        "--quick-first", action="store_true", help="the first publish without statistics"
    )
    args = parser.parse_args()
    line = commits(args.commits + 1)  # the last: the next push's
    rows = []
    with tempfile.TemporaryDirectory(prefix="perflab-publish-") as folder:
        store_path, out = Path(folder) / "p.db", Path(folder) / "site"
        started = time.perf_counter()
        store = SqliteStore.open(store_path)
        try:
            for seed, first_commit in enumerate(range(0, args.commits, args.per_run)):
                write_run(store, args.benchmarks, line[: args.commits], first_commit,
                          min(args.per_run, args.commits - first_commit), seed)  # fmt: skip
        finally:
            store.close()
        print(f"  store: {time.perf_counter() - started:.1f} s", file=sys.stderr)
        profile = cProfile.Profile() if args.profile else None
        first = "first (a stand-in analysis)" if args.quick_first else "first"
        analyse = quick_analysis if args.quick_first else analyse_run
        rows.append(timed(first, out, store_path, profile, analyse, args.workers))
        if profile is not None and args.profile:
            profile.dump_stats(args.profile)
        rows.append(timed("again, nothing new", out, store_path, None, workers=args.workers))
        store = SqliteStore.open(store_path)
        try:
            write_run(store, args.benchmarks, line, args.commits, 1, seed=99)
        finally:
            store.close()
        profile = cProfile.Profile() if args.profile_new else None
        rows.append(timed("after one new run", out, store_path, profile, workers=args.workers))
        if profile is not None and args.profile_new:
            profile.dump_stats(args.profile_new)
    chosen = ("benchmarks", "commits", "per_run", "quick_first", "workers")
    facts = {**machine(), **{k: getattr(args, k) for k in chosen}}
    if args.json:
        args.json.write_text(json.dumps({"machine": facts, "rows": rows}, indent=2) + "\n")
    print(f"{args.benchmarks} benchmarks x {args.commits} commits, {args.per_run} per run; {facts}")
    print("| publish | s | CPU s | CPU s apart | runs analysed | pages analysed | written | pages "
          "| bytes | front | largest run | largest trend | load before | load after |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for r in rows:
        print(f"| {r['publish']} | {r['seconds']} | {r['cpu_seconds']} "
              f"| {r['children_cpu_seconds']} | {r['analysed']} | {r['pages_analysed']} "
              f"| {r['written']} | {r['pages']} | {r['bytes']} "
              f"| {r['front_bytes']} | {r['largest_run_page_bytes']} "
              f"| {r['largest_trend_page_bytes']} | {r['loadavg_before']} "
              f"| {r['loadavg_after']} |")  # fmt: skip


if __name__ == "__main__":
    main()
