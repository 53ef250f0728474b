"""Requested vs actual wall time of `perflab run --budget B` for docs/cli.md's tour's lenses.

    .venv/bin/python bench/budget.py [--budget 10 --budget 20] [--case NAME ...] [--repeat N]
                                     [--at-fit] [--src PATH] [--anyway] [--strict]
                                     [--default-budget] [--would-fit N]
                                     [--out bench/results/budget.json]

Each case runs the real command line (`perflab run ... --budget B -q`, two identical variants:
an A/A) in a fresh store. Two times are given: the whole command's, timed from outside (what the
user waits for: perflab's own start-up, the probe, every lens, the analysis and the report), and
the benchmark's as perflab measures it (the run's note "used ... s of the budget ...": from
perflab's start-up to the end of its last lens, the workers' interpreters, imports and valgrind
included). The target: the whole command within 10% of the budget. A run refused before starting
(the budget cannot hold a lens's minimum) is reported as such, with the budget perflab says would
fit; `--at-fit` then runs the case again at that budget, so that every combination has a
measured row. The note's machine-speed factor (the tool costs' scaling) is shown too. Prints a
Markdown table (docs/benchmarks.md, "The budget"); the raw figures go to --out.

The budget is a target, not a wall: perflab refuses only with `--strict` (`--strict-budget`).
A second table gives each lens's planned time (its share in the plan) beside what it took, from
the run's note, and whether they agree within 25% (and, for a sampling lens re-planned when it
started from what the lenses before it left, against that share), and whether a sampling lens
stopped early because every comparison was precise enough (its note says so; its plan is then
the most it takes, not what it takes); `--default-budget` adds a
run of each case without `--budget` (the default, 20 s) and counts the runs refused (the
target: 0);
`--would-fit N` asks each case N times with `--strict-budget --budget 1` for the budget that
would fit, and gives their spread (the target: within 20% of each other).

`--src` runs another checkout's perflab (e.g. one before the budget was a budget, whose workers
import torch in every generation); `--repeat N` runs each case N times, and the table then also
gives the time lens's A/A verdicts and CI half-widths (fresh vs forked workers on torch.add).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from machine_facts import machine

ROOT = Path(__file__).resolve().parent.parent
SUM = ("--stmt", "sum(range(1000))")
TORCH = (
    "--stmt",
    "torch.add(x, y)",
    "--setup",
    "import torch; x = torch.ones(1); y = torch.ones(1)",
)
CASES: dict[str, tuple[str, ...]] = {
    "time": (*SUM, "--metric", "time"),
    "time,instructions": (*SUM, "--metric", "time,instructions"),
    "time,counters,profile": (*SUM, "--metric", "time,counters,profile"),
    "five lenses": (*SUM, "--metric", "time,instructions,counters,profile,asm"),
    "time,rss": (*SUM, "--metric", "time,rss"),
    "time,memory": (*SUM, "--metric", "time,memory"),
    "torch.add: time,torch": (*TORCH, "--metric", "time,torch"),
    "torch.add: time": (*TORCH, "--metric", "time"),
    "asm": (*SUM, "--metric", "asm"),
    "torch.add: instructions": (*TORCH, "--metric", "instructions"),
}
# a lens's part of the run's "used ..." note: "time 9.0 s of its 8.8 s (planned 8.9 s)"
LENS_PART = re.compile(r"(\w+) ([0-9.]+) s of its ([0-9.]+) s(?: \(planned ([0-9.]+) s\))?")


def run_case(
    name: str, budget: float | None, python: str, src: Path, extra: tuple[str, ...] = ()
) -> dict[str, Any]:
    """One run; `budget` None: perflab's default (20 s)."""
    given = () if budget is None else ("--budget", f"{budget:g}")
    with tempfile.TemporaryDirectory(prefix="perflab-bench-budget-") as tmp:
        argv = [
            python, "-m", "perflab.cli.main", "run", *CASES[name],
            "--variant", "A", "--variant", "B", *given, *extra,
            "--json", str(Path(tmp) / "out.json"), "-q", "--store", str(Path(tmp) / "s.db"),
        ]  # fmt: skip
        env = dict(os.environ, PYTHONPATH=str(src))
        load_before = os.getloadavg()[0]
        started = time.monotonic()
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=3600)
        actual = time.monotonic() - started
        result: dict[str, Any] = {
            "case": name,
            "budget_s": 20.0 if budget is None else budget,
            "default_budget": budget is None,
            "actual_s": round(actual, 2),
            "status": done.returncode,
            "load_before": load_before,
            "load_after": os.getloadavg()[0],
        }
        if done.returncode == 2 and "would fit" in done.stderr:
            message = " ".join(done.stderr.split())
            result["refused"] = message
            found = re.search(r"--budget (\d+) would fit", message)
            if found:
                result["fits_s"] = float(found.group(1))
            return result
        if done.returncode != 0:
            result["error"] = done.stderr[-2000:]
            return result
        document = json.loads((Path(tmp) / "out.json").read_text())
        result["notes"] = [
            n["message"]
            for n in document.get("notes", [])
            if n["message"].startswith(
                (
                    "used ",
                    "took ",
                    "the time lens forked",
                    "the torch lens forked",
                    "the time lens stopped",
                )
            )
        ]
        result["overrun_warning"] = any(
            n["message"].startswith("took ") and n["severity"] == "warning"
            for n in document.get("notes", [])
        )
        used = [n["message"] for n in document.get("notes", []) if n["message"].startswith("used ")]
        if used:  # perflab's own measure of the benchmark, to the end of its last lens
            result["inside_s"] = float(used[0].split()[1])
            factor = re.search(r"tool costs x([\d.]+)", used[0])
            result["factor"] = float(factor.group(1)) if factor else None
            result["lenses"] = [
                {
                    "lens": m.group(1),
                    "took_s": float(m.group(2)),
                    "given_s": float(m.group(3)),
                    "planned_s": float(m.group(4) or m.group(3)),
                }
                for m in LENS_PART.finditer(used[0])
            ]
            for lens in result["lenses"]:  # a sampling lens that stopped once precise enough
                lens["stopped_precise"] = any(
                    n.startswith(f"the {lens['lens']} lens stopped after") for n in result["notes"]
                )
        result["verdicts"] = [c["verdict"] for c in document["comparisons"]]
        result["time"] = [
            {"ratio": c["ratio"], "ci_low": c["ci_low"], "ci_high": c["ci_high"]}
            for c in document["comparisons"]
            if c["metric"] == "time"
        ]
        return result


WITHIN = 0.10  # the target: the whole command at most 10% over the budget


def within(result: dict[str, Any]) -> bool | None:
    """Whether a measured run's whole command ended within 10% of its budget (None: refused or
    failed). The budget bounds the run: ending earlier (a lens precise enough stops early) is
    within it."""
    if "refused" in result or "error" in result:
        return None
    return result["actual_s"] <= (1 + WITHIN) * result["budget_s"]


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| lenses | `--budget` | whole command | / budget | within 10% "
        "| benchmark (perflab's note) | tool costs | outcome | load (before → after) |",
        "|---|---:|---:|---:|---|---:|---:|---|---|",
    ]
    for r in results:
        if "refused" in r:
            fit = f"{r['fits_s']:g}" if "fits_s" in r else "?"
            outcome = f"refused before starting ({fit} s would fit)"
        elif "error" in r:
            outcome = f"failed (status {r['status']})"
        else:
            outcome = "measured: " + ", ".join(r["verdicts"])
            if r.get("overrun_warning"):
                outcome += "; warned of the overrun"
        inside = r.get("inside_s")
        ok = within(r)
        factor = r.get("factor")
        lines.append(
            f"| {r['case']} | {r['budget_s']:g} s | {r['actual_s']:.1f} s | "
            + (f"{r['actual_s'] / r['budget_s']:.2f} | " if ok is not None else "– | ")
            + ("–" if ok is None else "yes" if ok else "**no**")
            + " | "
            + (f"{inside:.1f} s | " if inside else "– | ")
            + (f"x{factor:.1f} | " if factor else "– | ")
            + f"{outcome} | {r['load_before']:.1f} → {r['load_after']:.1f} |"
        )
    measured = [ok for ok in map(within, results) if ok is not None]
    lines.append("")
    lines.append(
        f"{sum(measured)} of {len(measured)} measured runs ended within 10% of their budget; "
        f"{sum(1 for r in results if 'refused' in r)} refused before starting."
    )
    return "\n".join(lines)


def aa_table(results: list[dict[str, Any]]) -> str:
    """The time lens's A/A outcomes per case and budget: verdicts and CI half-widths."""
    lines = [
        "| lenses | `--budget` | runs | mean actual | equivalent / inconclusive / false "
        "| median CI half-width |",
        "|---|---:|---:|---:|---|---:|",
    ]
    groups: dict[tuple[str, float], list[dict[str, Any]]] = {}
    for r in results:
        if r.get("time"):
            groups.setdefault((r["case"], r["budget_s"]), []).append(r)
    for (case, budget), runs in groups.items():
        comparisons = [c for r in runs for c in r["time"]]
        verdicts = [v for r in runs for v in r["verdicts"][: len(r["time"])]]
        false = sum(1 for c in comparisons if c["ci_low"] > 1 or c["ci_high"] < 1)
        widths = sorted((c["ci_high"] - c["ci_low"]) / 2 for c in comparisons)
        lines.append(
            f"| {case} | {budget:g} s | {len(runs)} | "
            f"{sum(r['actual_s'] for r in runs) / len(runs):.1f} s | "
            f"{verdicts.count('equivalent')} / {verdicts.count('inconclusive')} / {false} | "
            f"±{widths[len(widths) // 2]:.1%} |"
        )
    return "\n".join(lines)


PLAN_WITHIN = 0.25  # the target: each lens's planned time within 25% of what it took


def lens_table(results: list[dict[str, Any]]) -> str:
    """Each lens's planned time (its share in the plan) beside what it took; and, for a
    sampling lens whose share was re-planned when it started from what the lenses before it
    left, that share too: its own plan, apart from the errors of the lenses before it."""
    lines = [
        "| lenses | `--budget` | lens | planned | given | took | took / planned "
        "| took / given | within 25% (planned / given) | stopped once precise |",
        "|---|---:|---|---:|---:|---:|---:|---:|---|---|",
    ]
    agree = agree_given = total = early_under = 0
    for r in results:
        for lens in r.get("lenses", []):
            ratio = _ratio(lens["took_s"], lens["planned_s"])
            given = _ratio(lens["took_s"], lens["given_s"])
            ok, ok_given = abs(ratio - 1) <= PLAN_WITHIN, abs(given - 1) <= PLAN_WITHIN
            stopped = lens.get("stopped_precise", False)
            agree += ok
            agree_given += ok_given
            total += 1
            early_under += stopped and not ok and ratio < 1
            lines.append(
                f"| {r['case']} | {r['budget_s']:g} s | {lens['lens']} | "
                f"{lens['planned_s']:.1f} s | {lens['given_s']:.1f} s | {lens['took_s']:.1f} s | "
                f"{ratio:.2f} | {given:.2f} | "
                + ("yes" if ok else "**no**")
                + " / "
                + ("yes" if ok_given else "**no**")
                + f" | {'yes' if stopped else ''} |"
            )
    lines.append("")
    lines.append(
        f"{agree} of {total} lenses took within 25% of their planned time, "
        f"{agree_given} of {total} of the share given when they started; of the others, "
        f"{early_under} took less because they stopped once every comparison was precise "
        f"enough (a sampling lens's plan is the most it takes): {agree + early_under} of "
        f"{total} within 25% of their plan or stopped early, decided."
    )
    return "\n".join(lines)


def _ratio(took_s: float, planned_s: float) -> float:
    return took_s / planned_s if planned_s > 0 else float("inf")


def ask_would_fit(name: str, python: str, src: Path) -> dict[str, Any]:
    """The budget `--strict-budget` says would fit, asked with a budget no case fits."""
    result = run_case(name, 1.0, python, src, ("--strict-budget",))
    result["asked"] = "would fit"
    return result


# the refusal's detail: "perflab's start-up 1.8 s (and 30.0 s waiting for a CPU, not counted);
# probe 41.2 s;"
OVERHEADS = re.compile(
    r"perflab's start-up ([0-9.]+) s(?: \(and ([0-9.]+) s waiting[^)]*\))?; probe ([0-9.]+) s"
)


def overheads(result: dict[str, Any]) -> str:
    """An ask's start-up, wait and probe as its refusal gives them: "1.8 / 30.0 / 41.2"."""
    found = OVERHEADS.search(result.get("refused", ""))
    if found is None:
        return "?"
    start_up, waited, probe = found.groups()
    return f"{start_up} / {waited or '0'} / {probe}"


def would_fit_table(results: list[dict[str, Any]]) -> str:
    """Each case's answers, their spread, and each ask's start-up / wait / probe (this run's:
    the answer counts a stalled start-up or probe as the usual one, and says so)."""
    lines = [
        '| lenses | asked | "would fit" (s) | max / min | within 20% '
        "| start-up / wait / probe (s) |",
        "|---|---:|---|---:|---|---|",
    ]
    by_case: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        if "fits_s" in r:
            by_case.setdefault(r["case"], []).append(r)
    for case, asks in by_case.items():
        fits = [r["fits_s"] for r in asks]
        spread = max(fits) / min(fits)
        lines.append(
            f"| {case} | {len(fits)} | {', '.join(f'{f:g}' for f in fits)} | {spread:.2f} | "
            + ("yes" if spread <= 1.2 else "**no**")
            + f" | {'; '.join(overheads(r) for r in asks)} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, action="append")
    parser.add_argument("--case", action="append", choices=sorted(CASES))
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--src", type=Path, default=ROOT / "src")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--anyway", action="store_true", help="pass --min-measurements-anyway to perflab"
    )
    parser.add_argument(
        "--strict", action="store_true", help="pass --strict-budget to perflab (refuse)"
    )
    parser.add_argument(
        "--default-budget",
        action="store_true",
        help="also run each case at the default budget (no --budget), counting refusals",
    )
    parser.add_argument(
        "--would-fit",
        type=int,
        default=0,
        metavar="N",
        help="ask each case N times with --strict-budget --budget 1 for the budget that fits",
    )
    parser.add_argument(
        "--at-fit",
        action="store_true",
        help="run a refused case again at the budget perflab said would fit",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/budget.json")
    args = parser.parse_args()
    budgets: list[float | None] = list(args.budget or [10.0, 20.0])
    if args.default_budget:
        budgets.append(None)
    results = []
    asked = []
    for name in args.case or [c for c in CASES if c != "torch.add: time"]:
        for _ in range(args.would_fit):
            fit = ask_would_fit(name, args.python, args.src)
            print(json.dumps(fit), file=sys.stderr, flush=True)
            asked.append(fit)
        for budget in budgets:
            for _ in range(args.repeat):
                extra: tuple[str, ...] = ("--min-measurements-anyway",) if args.anyway else ()
                extra += ("--strict-budget",) if args.strict else ()
                result = run_case(name, budget, args.python, args.src, extra)
                result["anyway"] = args.anyway
                print(json.dumps(result), file=sys.stderr, flush=True)
                results.append(result)
                if args.at_fit and "fits_s" in result:  # and at the budget said to fit
                    again = run_case(name, result["fits_s"], args.python, args.src, extra)
                    again["anyway"], again["at_fit"] = args.anyway, True
                    print(json.dumps(again), file=sys.stderr, flush=True)
                    results.append(again)
    report: dict[str, Any] = {
        "machine": machine(),
        "src": str(args.src),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "runs": results,
        "would_fit": asked,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    m = report["machine"]
    load = os.getloadavg()
    print(
        f"{m['cpu']}, {m['vcpus']} vCPUs, commit {m['commit']}, {report['date']}, "
        f"load average at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}"
        + (" (loaded: these are a loaded machine's figures)" if load[1] >= 2 else "")
        + "\n"
    )
    print(table(results))
    print()
    print(lens_table(results))
    defaults = [r for r in results if r.get("default_budget")]
    if defaults:
        refused = sum(1 for r in defaults if "refused" in r)
        print()
        print(f"At the default budget: {refused} of {len(defaults)} runs refused.")
    if asked:
        print()
        print(would_fit_table(asked))
    if args.repeat > 1:
        print()
        print(aa_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
