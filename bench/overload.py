"""Is the time lens honest when other processes take most of its measuring CPU?

Two interpreters on one statement (default: Python 3.12 against 3.11 as the baseline, on
`sum(range(10000))`), measured with the time lens while `bench/machine_load.py` keeps two busy
loops on the measuring CPU (so other processes get about two thirds of it), one on every other
CPU and a memory-bound process. Every run's samples are stored, and `--analyse` re-analyses
them with the checked-out code: the ratio, its interval and verdict as perflab reports them,
and as the interval was before the overload rule (corrected samples, no widening), from the
very same samples.

The reference is CPU time per iteration (`time.thread_time_ns` around calibrated loops),
measured in alternating processes of both interpreters *without* the bench's load, before and
after the loaded runs: what the statement costs when nothing interrupts it.

Next to it: pyperf (`timeit`, the same statement, about the same time per comparison) under the
same load: its A/B ratio, and whether `compare_to` calls an A/A pair different.

Usage:
  .venv/bin/python bench/overload.py --runs 8 --budget 20 --store-dir /tmp/overload
  .venv/bin/python bench/overload.py --analyse --store-dir /tmp/overload --out FILE
The first measures (stored runs, pyperf results and references go to --store-dir); the second
re-analyses what is stored there and writes the summary JSON and a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine_facts import cpu_model
from machine_load import MachineLoad

PYTHON = sys.executable
# pyperf must be installed in both (python3.12 -m venv DIR && DIR/bin/pip install pyperf)
BASELINE = "/tmp/ov/py311/bin/python"
VARIANT = "/tmp/ov/py312/bin/python"
STATEMENT = "sum(range(10000))"

# one process: calibrate loops to ~2 ms, then 30 samples; prints the median CPU ns per iteration
_CPU_TIME = """
import sys, time
stmt = sys.argv[1]
code = compile("for _ in range(n):\\n    " + stmt, "<ref>", "exec")
def run(n):
    start = time.thread_time_ns()
    exec(code, {"n": n})
    return time.thread_time_ns() - start
n = 1
while run(n) < 2_000_000:
    n *= 2
values = sorted(run(n) / n for _ in range(30))
print(values[len(values) // 2])
"""


def cpu_reference(interpreters: list[str], processes: int) -> dict:
    """CPU time per iteration of each interpreter, in alternating fresh processes."""
    values: dict[str, list[float]] = {p: [] for p in interpreters}
    for _ in range(processes):
        for python in interpreters:
            done = subprocess.run(
                [python, "-c", _CPU_TIME, STATEMENT], capture_output=True, text=True, check=True
            )
            values[python].append(float(done.stdout))
    medians = {p: statistics.median(v) for p, v in values.items()}
    return {
        "load": os.getloadavg()[0],
        "ns_per_iteration": medians,
        "ratio": medians[interpreters[1]] / medians[interpreters[0]],
        "values": values,
    }


def perflab(baseline: str, variant: str, budget: float, cpu: int, store: Path) -> dict:
    out = store.with_suffix(".json")
    started = time.monotonic()
    done = subprocess.run(
        [
            PYTHON, "-m", "perflab.cli.main", "run", "--stmt", STATEMENT, "--metric", "time",
            "--variant", f"base python={baseline}", "--variant", f"other python={variant}",
            "--budget", str(budget), "--cpu", str(cpu), "--quiet",
            "--store", str(store), "--json", str(out),
        ],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return {
        "store": str(store),
        "returncode": done.returncode,
        "stderr": done.stderr[-2000:],
        "elapsed_s": time.monotonic() - started,
    }


def pyperf(baseline: str, variant: str, budget: float, cpu: int, workdir: Path) -> dict:
    """pyperf timeit of each interpreter (half the budget each), then compare_to."""
    processes = max(4, int(budget / 2 / 0.75))
    started = time.monotonic()
    files = []
    for label, python in (("a", baseline), ("b", variant)):
        path = workdir / f"pyperf-{label}.json"
        path.unlink(missing_ok=True)
        subprocess.run(
            [
                python, "-m", "pyperf", "timeit", "--quiet", "-p", str(processes),
                f"--affinity={cpu}", "-o", str(path), STATEMENT,
            ],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        files.append(path)
    elapsed = time.monotonic() - started
    compared = subprocess.run(
        [baseline, "-m", "pyperf", "compare_to", str(files[0]), str(files[1])],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    means = [_json_mean(p) for p in files]
    match = re.search(r"([\d.]+)x (slower|faster)", compared)
    return {
        "ratio": means[1] / means[0],
        "claims_difference": bool(match) and "Not significant" not in compared,
        "said": compared.strip().splitlines()[-1],
        "elapsed_s": elapsed,
    }


def _json_mean(path: Path) -> float:
    data = json.loads(path.read_text())
    values = [v for run in data["benchmarks"][0]["runs"] for v in run.get("values", [])]
    return statistics.fmean(values)


def measure(args: argparse.Namespace) -> None:
    store_dir: Path = args.store_dir
    store_dir.mkdir(parents=True, exist_ok=True)
    log: dict = {
        "cpu_model": cpu_model(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "statement": STATEMENT,
        "baseline": args.baseline,
        "variant": args.variant,
        "budget_s": args.budget,
        "cpu": args.cpu,
        "reference_before": cpu_reference([args.baseline, args.variant], args.reference),
        "runs": [],
    }
    plan = [("ab", args.variant), ("aa", args.baseline)] * args.runs
    cpus = sorted(os.sched_getaffinity(0))
    busy = [c for c in cpus if c != args.cpu] + [args.cpu] * args.busy_on_measuring_cpu
    with tempfile.TemporaryDirectory() as scratch, MachineLoad(seconds=7200, cpus=busy):
        for k, (kind, other) in enumerate(plan):
            entry: dict = {"kind": kind, "load_before": os.getloadavg()[0]}
            if "perflab" in args.tools:
                entry["perflab"] = perflab(
                    args.baseline, other, args.budget, args.cpu, store_dir / f"run{k}-{kind}.db"
                )
            if "pyperf" in args.tools:
                entry["pyperf"] = pyperf(args.baseline, other, args.budget, args.cpu, Path(scratch))
            entry["load_after"] = os.getloadavg()[0]
            log["runs"].append(entry)
            (store_dir / "log.json").write_text(json.dumps(log, indent=1))
            print(kind, json.dumps({t: entry[t].get("returncode", entry[t].get("said"))
                                    for t in args.tools.split(",")}), flush=True)  # fmt: skip
    log["reference_after"] = cpu_reference([args.baseline, args.variant], args.reference)
    log["finished"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    (store_dir / "log.json").write_text(json.dumps(log, indent=1))


def analysed(store: Path) -> dict:
    """The stored run as perflab reports it now, and as the corrected interval was before the
    overload rule (the same samples)."""
    from perflab.analyse.run import analyse_run
    from perflab.lenses.time.artifacts import WALL_NS
    from perflab.stats.paired import estimate_ratio, pair_samples
    from perflab.stats.preemption import Preemption, is_preempted
    from perflab.store import SqliteStore

    opened = SqliteStore.open(store, create=False)
    try:
        run = opened.load_run("latest")
    finally:
        opened.close()
    result = analyse_run(run)
    names = [v.name for v in run.experiment.variants]
    wall = [s for s in run.samples if s.name == WALL_NS and not s.warmup]
    base = [s for s in wall if s.variant == names[0]]
    other = [s for s in wall if s.variant == names[1]]
    before = estimate_ratio(pair_samples(base, other, preemption=Preemption.CORRECT))
    comparison = result.comparisons[0]
    details = comparison.details.to_json() if comparison.details is not None else {}
    return {
        "ratio": comparison.ratio,
        "ci_low": comparison.ci_low,
        "ci_high": comparison.ci_high,
        "verdict": str(comparison.verdict),
        "baseline_value": comparison.baseline_value,
        "variant_value": comparison.variant_value,
        "overload": details.get("overload"),
        "before": {"ratio": before.ratio, "ci_low": before.ci_low, "ci_high": before.ci_high},
        "preempted_share": {
            names[0]: sum(is_preempted(s) for s in base) / max(1, len(base)),
            names[1]: sum(is_preempted(s) for s in other) / max(1, len(other)),
        },
        "notes": [n.message for n in result.notes if n.metric is not None],
    }


def _contains(low: float, high: float, value: float) -> bool:
    return low <= value <= high


def analyse(args: argparse.Namespace) -> None:
    log = json.loads((args.store_dir / "log.json").read_text())
    references = [log["reference_before"]["ratio"]]
    if "reference_after" in log:
        references.append(log["reference_after"]["ratio"])
    reference = statistics.fmean(references)
    rows = []
    for entry in log["runs"]:
        row: dict = {"kind": entry["kind"], "load": [entry["load_before"], entry["load_after"]]}
        measured = entry.get("perflab")
        if measured and measured["returncode"] == 0:
            row["perflab"] = analysed(Path(measured["store"]))
        elif measured:
            row["perflab_failed"] = measured["stderr"]
        if "pyperf" in entry:
            row["pyperf"] = entry["pyperf"]
        rows.append(row)
    summary = _summary(rows, reference)
    out = {
        "cpu_model": log["cpu_model"],
        "started": log["started"],
        "finished": log.get("finished"),
        "command": "bench/overload.py " + " ".join(sys.argv[1:]),
        "reference_ratio": reference,
        "references": references,
        "summary": summary,
        "runs": rows,
    }
    args.out.write_text(json.dumps(out, indent=1, default=str))
    print(_markdown(summary, reference))


def _summary(rows: list[dict], reference: float) -> dict:
    """Per tool: A/B runs whose interval contains the reference, false verdicts, A/A verdicts."""
    out: dict = {}
    for label, pick in (("perflab", _now), ("perflab before the overload rule", _before)):
        ab = [pick(r) for r in rows if r["kind"] == "ab" and "perflab" in r]
        aa = [pick(r) for r in rows if r["kind"] == "aa" and "perflab" in r]
        out[label] = {
            "ab_runs": len(ab),
            "ab_contains_reference": sum(
                _contains(x["ci_low"], x["ci_high"], reference) for x in ab
            ),
            "ab_false": sum(x["verdict"] in ("faster", "equivalent") for x in ab),
            "ab_ratios": [round(x["ratio"], 3) for x in ab],
            "aa_runs": len(aa),
            "aa_equivalent": sum(x["verdict"] == "equivalent" for x in aa),
            "aa_false": sum(x["verdict"] in ("faster", "slower") for x in aa),
            "aa_ratios": [round(x["ratio"], 3) for x in aa],
        }
    ab = [r["pyperf"] for r in rows if r["kind"] == "ab" and "pyperf" in r]
    aa = [r["pyperf"] for r in rows if r["kind"] == "aa" and "pyperf" in r]
    out["pyperf"] = {
        "ab_runs": len(ab),
        "ab_ratios": [round(x["ratio"], 3) for x in ab],
        "ab_within_5pct_of_reference": sum(abs(x["ratio"] / reference - 1) <= 0.05 for x in ab),
        "aa_runs": len(aa),
        "aa_false": sum(x["claims_difference"] for x in aa),
        "aa_ratios": [round(x["ratio"], 3) for x in aa],
    }
    return out


def _now(row: dict) -> dict:
    return row["perflab"]


def _before(row: dict) -> dict:
    before = row["perflab"]["before"]
    return {**before, "verdict": _verdict(before)}


def _verdict(interval: dict, band: float = 0.01) -> str:
    low, high = interval["ci_low"], interval["ci_high"]
    if math.isnan(low) or math.isnan(high):
        return "inconclusive"
    if 1 - band <= low and high <= 1 + band:
        return "equivalent"
    return "slower" if low > 1 else "faster" if high < 1 else "inconclusive"


def _markdown(summary: dict, reference: float) -> str:
    lines = [
        f"reference (CPU time, unloaded): {reference:.3f}",
        "",
        "| tool | A/B: CI contains the reference | A/B false verdicts | A/B ratios "
        "| A/A equivalent | A/A false claims | A/A ratios |",
        "|---|---:|---:|---|---:|---:|---|",
    ]
    for tool, s in summary.items():
        if tool == "pyperf":
            lines.append(
                f"| pyperf | (no interval; {s['ab_within_5pct_of_reference']} of {s['ab_runs']} "
                f"within 5%) | - | {s['ab_ratios']} | - | {s['aa_false']} of {s['aa_runs']} "
                f"| {s['aa_ratios']} |"
            )
            continue
        lines.append(
            f"| {tool} | {s['ab_contains_reference']} of {s['ab_runs']} | {s['ab_false']} "
            f"| {s['ab_ratios']} | {s['aa_equivalent']} of {s['aa_runs']} "
            f"| {s['aa_false']} | {s['aa_ratios']} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=8, help="A/B and A/A runs each (8)")
    parser.add_argument("--budget", type=float, default=20.0)
    parser.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)))
    parser.add_argument("--busy-on-measuring-cpu", type=int, default=2)
    parser.add_argument("--reference", type=int, default=10, help="processes per interpreter")
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--variant", default=VARIANT)
    parser.add_argument("--tools", default="perflab,pyperf")
    parser.add_argument("--store-dir", type=Path, required=True)
    parser.add_argument("--analyse", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("bench/results/overload.json"))
    args = parser.parse_args()
    if args.analyse:
        analyse(args)
    else:
        measure(args)


if __name__ == "__main__":
    main()
