"""Commands, perflab next to hyperfine: A/A honesty and a 3% A/B, ~10 ms, ~100 ms, ~1 s programs.

    PYTHONPATH=src .venv/bin/python bench/command_precision.py --aa 20 --ab 5 \\
        --out bench/results/commands_DATE.json

The program is a small C loop (written and built here with gcc -O2): `w N` adds N numbers, about
1 ns each. Per case (N for ~10 ms, ~100 ms, ~1 s):

- a long reference for the A/B (perflab `--budget 60` that uses its whole budget);
- A/A tries (`w N` against itself) and A/B tries (`w N` against `w 1.03N`), taking turns;
- per try: perflab at the default budget (20 s; it may stop early); hyperfine
  at its defaults (`hyperfine --export-json F A B`: at least 10 runs and 3 s per command);
  hyperfine with `--runs` set so it takes about the wall time perflab took.
- `--follow-up`: a try that perflab ends `inconclusive` with "~N s more" (at most
  `--max-follow-up-s`) is run again with `--budget` raised by N; whether that run decides
  (`equivalent` for an A/A, `slower` for the A/B) is recorded.

A claim: perflab's verdict `slower`/`faster`; hyperfine's ratio more than 2 sigma from 1 (it has
no test; sigma from its two standard deviations). Prints a Markdown table per case; the JSON holds
every try with the load average beside it. `--summarise FILE` prints the tables of a saved run.
`--cpu N` measures on CPU N even while another perflab run holds it (on a shared machine a run
otherwise waits up to 30 s for the lock; measured figures here are of two runs sharing a CPU
when that happened, which perflab's note says).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from machine_facts import cpu_model, has_avx512

PYTHON = sys.executable
PROGRAM = r"""
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    volatile long sink = 0;
    for (long i = 0; i < n; i++) sink += i;
    return (int)(sink & 0);
}
"""
CASES = {"10ms": 10_000_000, "100ms": 100_000_000, "1s": 1_000_000_000}
SLOWER = 1.03
REFERENCE_PRECISION = 1e-5  # the reference uses its whole budget
# --cpu: measure on this CPU even while another perflab run holds it (shared machines: a run
# otherwise waits up to 30 s for the lock); None: perflab's choice
CPU: int | None = None


def build(workdir: Path) -> Path:
    source = workdir / "w.c"
    source.write_text(PROGRAM)
    binary = workdir / "w"
    subprocess.run(["gcc", "-O2", "-o", str(binary), str(source)], check=True)
    return binary


def perflab(
    command_a: str, command_b: str, budget_s: float, store: Path, *, until_budget: bool = False
) -> dict[str, Any]:
    out = store.with_suffix(".json")
    started = time.monotonic()
    subprocess.run(
        [PYTHON, "-m", "perflab.cli.main", "run", "--cmd", command_a, "--variant", "A",
         "--variant", f"B cmd='{command_b}'", "--budget", str(budget_s), "--quiet",
         "--store", str(store), "--json", str(out),
         *(["--cpu", str(CPU)] if CPU is not None else []),
         *(["--precision", str(REFERENCE_PRECISION)] if until_budget else [])],
        check=True,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    comparison = json.loads(out.read_text())["comparisons"][0]
    return {
        "tool": "perflab",
        "ratio": comparison["ratio"],
        "ci_low": comparison["ci_low"],
        "ci_high": comparison["ci_high"],
        "verdict": comparison["verdict"],
        "claims_difference": comparison["verdict"] in ("slower", "faster"),
        "elapsed_s": elapsed,
        "budget_s": budget_s,
        "n_groups": comparison.get("n_groups"),
        "extra_seconds_to_decide": comparison.get("extra_seconds_to_decide"),
        "sequence_ci": [comparison.get("sequence_ci_low"), comparison.get("sequence_ci_high")],
    }


def hyperfine(command_a: str, command_b: str, workdir: Path, runs: int | None) -> dict[str, Any]:
    path = workdir / "hf.json"
    started = time.monotonic()
    subprocess.run(
        ["hyperfine", *(["--runs", str(runs)] if runs else []), "--export-json", str(path),
         command_a, command_b],
        check=True,
        capture_output=True,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    a, b = json.loads(path.read_text())["results"]
    ratio = b["mean"] / a["mean"]
    sigma = ratio * math.sqrt((a["stddev"] / a["mean"]) ** 2 + (b["stddev"] / b["mean"]) ** 2)
    return {
        "tool": "hyperfine (same time)" if runs else "hyperfine (defaults)",
        "ratio": ratio,
        "sigma": sigma,
        "claims_difference": abs(ratio - 1) > 2 * sigma,
        "runs": len(a["times"]),
        "means_s": [a["mean"], b["mean"]],
        "elapsed_s": elapsed,
    }


def plan(aa: int, ab: int) -> list[str]:
    """A/A and A/B tries spread evenly, so a run stopped early has some of each."""
    tries = [(k / aa, "A/A") for k in range(aa)] + [((k + 0.5) / ab, "A/B") for k in range(ab)]
    return [kind for _, kind in sorted(tries)]


TOOLS = ("perflab", "hyperfine (defaults)", "hyperfine (same time)")


def summarise(document: dict[str, Any]) -> str:
    lines = []
    for case, data in document["cases"].items():
        reference = data.get("reference", {})
        reference = {**reference, **reference.get("reanalysed", {})}
        truth = wall = reference.get("ratio")
        said = (
            f"perflab reference ({reference['budget_s']:.0f} s) {truth:.4f} "
            f"[{reference['ci_low']:.4f}, {reference['ci_high']:.4f}]"
            if truth
            else "no reference"
        )
        if "cpu_reference" in data:
            truth = data["cpu_reference"]["ratio"]
            said += f"; CPU-time reference {truth:.4f} (A/B: CI contains CPU-time / wall-time)"
        lines.append(
            f"\n**{case}** (`w {data['n']}` against itself and against `w {data['n_slower']}`); "
            + said
        )
        lines.append(
            "\n| tool | kind | tries | claimed a difference | verdicts | ratios (min–max) "
            "| CI contains the reference | mean time (s) | load average |"
        )
        lines.append("|---|---|---:|---:|---|---|---:|---:|---|")
        for kind in ("A/A", "A/B"):
            for tool in TOOLS:
                rows = [
                    {**r, **r.get("reanalysed", {})}
                    for r in data["tries"]
                    if r["tool"] == tool and r["kind"] == kind
                ]
                if not rows:
                    continue
                claims = sum(r["claims_difference"] for r in rows)
                ratios = [r["ratio"] for r in rows]
                verdicts = "–"
                contains = "–"
                if "verdict" in rows[0]:
                    counts: dict[str, int] = {}
                    for r in rows:
                        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
                    verdicts = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
                    references = [1.0] if kind == "A/A" else [truth, wall]
                    contains = " / ".join(
                        f"{sum(r['ci_low'] <= ref <= (r['ci_high'] or math.inf) for r in rows)}"
                        f"/{len(rows)}"
                        for ref in references
                        if ref is not None
                    )
                loads = [r["load_average"] for r in rows]
                lines.append(
                    f"| {tool} | {kind} | {len(rows)} | {claims}/{len(rows)} | {verdicts} "
                    f"| {min(ratios):.4f}–{max(ratios):.4f} | {contains} "
                    f"| {sum(r['elapsed_s'] for r in rows) / len(rows):.1f} "
                    f"| {min(loads):.1f}–{max(loads):.1f} |"
                )
        for r in data["tries"]:
            if r["tool"] == "perflab" and r["kind"] == "A/B":
                r = {**r, **r.get("reanalysed", {})}
                lines.append(
                    f"\nperflab A/B: {r['ratio']:.4f} [{r['ci_low']:.4f}, {r['ci_high']:.4f}] "
                    f"{r['verdict']}"
                )
        for tool, which in (
            ("perflab (follow-up)", "as the run forecast it"),
            ("perflab (follow-up, reanalysed)", "as this checkout forecasts it"),
        ):
            for kind, answer in (("A/A", "equivalent"), ("A/B", "slower")):
                follow = [r for r in data["tries"] if r["tool"] == tool and r["kind"] == kind]
                if not follow:
                    continue
                decided = sum(r["verdict"] == answer for r in follow)
                lines.append(
                    f'\nInconclusive {kind}s run again with `--budget` raised by their "~N s '
                    f'more" ({which}): {decided}/{len(follow)} `{answer}` ('
                    + ", ".join(f"+{r['extra_asked_s']:.0f} s: {r['verdict']}" for r in follow)
                    + ")."
                )
    return "\n".join(lines)


def reanalyse(document: dict[str, Any], stores: Path) -> None:
    """Analyse every perflab try again from its kept store with this checkout's code (the
    forecast and units of a later commit), and add a CPU-time reference per case: the ratio of
    the median CPU time (user + system) of the variant's runs to the baseline's over every A/B
    store of the case (CPU time leaves out most of what other processes take)."""
    from perflab.analyse.run import analyse_run
    from perflab.store import SqliteStore

    def load(path: Path) -> Any:
        opened = SqliteStore.open(path, create=False)
        try:
            return opened.load_run("latest")
        finally:
            opened.close()

    def analysed(run: Any) -> dict[str, Any]:
        (comparison,) = analyse_run(run).comparisons
        details = comparison.details.to_json() if comparison.details else {}
        return {
            "ratio": comparison.ratio,
            "ci_low": comparison.ci_low,
            "ci_high": comparison.ci_high,
            "verdict": str(comparison.verdict),
            "claims_difference": str(comparison.verdict) in ("slower", "faster"),
            "extra_seconds_to_decide": details.get("extra_seconds_to_decide"),
            "n_groups": details.get("n_groups"),
        }

    for case, data in document["cases"].items():
        if "reference" in data and (stores / f"{case}-ref.db").exists():
            data["reference"]["reanalysed"] = analysed(load(stores / f"{case}-ref.db"))
        index = -1
        cpu: dict[str, list[float]] = {"A": [], "B": []}
        for row in data["tries"]:
            if row["tool"] not in ("perflab", "perflab (follow-up)"):
                continue
            if row["tool"] == "perflab":
                index += 1
            path = stores / (
                f"{case}-{index}.db" if row["tool"] == "perflab" else f"{case}-{index}-again.db"
            )
            if not path.exists():
                continue
            run = load(path)
            row["reanalysed"] = analysed(run)
            if row["kind"] == "A/B":
                for sample in run.samples:
                    if sample.name == "wall_ns" and not sample.warmup and sample.cpu_ns:
                        cpu[sample.variant].append(sample.cpu_ns)
        if cpu["A"] and cpu["B"]:
            data["cpu_reference"] = {
                "ratio": float(np.median(cpu["B"]) / np.median(cpu["A"])),
                "runs": [len(cpu["A"]), len(cpu["B"])],
            }


def follow_up_saved(document: dict[str, Any], budget_s: float, max_extra_s: float) -> None:
    """Every perflab A/A of a saved (and re-analysed) run that ended `inconclusive` whose "~N s
    more" (as this checkout forecasts it) is at most `max_extra_s`: run again with `--budget`
    raised by N, recorded as "perflab (follow-up, reanalysed)"."""
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        binary = build(workdir)
        for case, data in document["cases"].items():
            base = f"{binary} {data['n']}"
            for k, row in enumerate(list(data["tries"])):
                now = row.get("reanalysed", {})
                extra = now.get("extra_seconds_to_decide")
                if (
                    row["tool"] != "perflab"
                    or row["kind"] != "A/A"
                    or now.get("verdict") != "inconclusive"
                    or extra is None
                    or extra > max_extra_s
                ):
                    continue
                again = perflab(base, base, budget_s + extra, workdir / f"{case}-{k}-again.db")
                again.update(tool="perflab (follow-up, reanalysed)", extra_asked_s=extra,
                             kind="A/A", load_average=os.getloadavg()[0])  # fmt: skip
                data["tries"].append(again)
                print(f"{case} follow-up: {json.dumps(again)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aa", type=int, default=20, help="A/A tries per case (20)")
    parser.add_argument("--ab", type=int, default=5, help="A/B tries per case (5)")
    parser.add_argument("--budget", type=float, default=20.0, help="perflab's --budget (20)")
    parser.add_argument("--reference-budget", type=float, default=60.0)
    parser.add_argument("--cases", default=",".join(CASES), help="10ms,100ms,1s")
    parser.add_argument("--follow-up", action="store_true", help="rerun inconclusive tries")
    parser.add_argument("--max-follow-up-s", type=float, default=60.0)
    parser.add_argument("--max-minutes", type=float, default=0.0, help="per case (0: no limit)")
    parser.add_argument("--keep-stores", type=Path, metavar="DIR")
    parser.add_argument("--out", type=Path, default=Path("bench/results/commands.json"))
    parser.add_argument("--summarise", type=Path, metavar="FILE")
    parser.add_argument(
        "--reanalyse",
        type=Path,
        metavar="DIR",
        help="with --summarise: analyse the tries again from the stores kept in DIR "
        "(--keep-stores), with a CPU-time reference, and write FILE back",
    )
    parser.add_argument(
        "--follow-up-saved",
        action="store_true",
        help="with --summarise FILE (re-analysed): rerun its inconclusive A/As whose '~N s more' "
        "is at most --max-follow-up-s, with the budget raised by N; FILE is written back",
    )
    parser.add_argument("--no-hyperfine", action="store_true", help="perflab's tries only")
    parser.add_argument("--cpu", type=int, help="perflab's --cpu (default: its own choice)")
    args = parser.parse_args()
    global CPU  # noqa: PLW0603
    CPU = args.cpu
    if args.summarise is not None:
        saved = json.loads(args.summarise.read_text())
        if args.reanalyse is not None:
            reanalyse(saved, args.reanalyse)
            args.summarise.write_text(json.dumps(saved, indent=1))
        if args.follow_up_saved:
            follow_up_saved(saved, args.budget, args.max_follow_up_s)
            args.summarise.write_text(json.dumps(saved, indent=1))
        print(summarise(saved))
        return
    if shutil.which("hyperfine") is None or shutil.which("gcc") is None:
        sys.exit("hyperfine and gcc are needed: bash scripts/setup.sh --bench installs hyperfine")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    document: dict[str, Any] = {
        "machine": {"cpu": cpu_model(), "avx512": has_avx512(), "cores": os.cpu_count()},
        "budget_s": args.budget,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "load_average_at_start": os.getloadavg(),
        "cases": {},
    }

    def save() -> None:
        document["load_average_now"] = os.getloadavg()
        args.out.write_text(json.dumps(document, indent=1))

    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        stores = args.keep_stores or workdir
        stores.mkdir(parents=True, exist_ok=True)
        binary = build(workdir)
        for case in args.cases.split(","):
            n = CASES[case]
            n_slower = round(n * SLOWER)
            base, slower = f"{binary} {n}", f"{binary} {n_slower}"
            data: dict[str, Any] = {"n": n, "n_slower": n_slower, "tries": []}
            document["cases"][case] = data
            started = time.monotonic()
            reference = perflab(
                base, slower, args.reference_budget, stores / f"{case}-ref.db", until_budget=True
            )
            data["reference"] = reference
            print(f"{case} reference: {json.dumps(reference)}", flush=True)
            save()
            for i, kind in enumerate(plan(args.aa, args.ab)):
                if args.max_minutes and time.monotonic() - started > 60 * args.max_minutes:
                    data["stopped_after_tries"] = i
                    break
                other = base if kind == "A/A" else slower
                result = perflab(base, other, args.budget, stores / f"{case}-{i}.db")
                rows = [result]
                if not args.no_hyperfine:
                    rows.append(hyperfine(base, other, workdir, None))
                    per_pair = sum(rows[-1]["means_s"])
                    runs = max(2, round(result["elapsed_s"] / per_pair))
                    rows.append(hyperfine(base, other, workdir, runs))
                extra = result["extra_seconds_to_decide"]
                if (
                    args.follow_up
                    and result["verdict"] == "inconclusive"
                    and extra is not None
                    and extra <= args.max_follow_up_s
                ):
                    again = perflab(
                        base, other, args.budget + extra, stores / f"{case}-{i}-again.db"
                    )
                    again["tool"] = "perflab (follow-up)"
                    again["extra_asked_s"] = extra
                    rows.append(again)
                for row in rows:
                    row["kind"] = kind
                    row["load_average"] = os.getloadavg()[0]
                    data["tries"].append(row)
                    print(f"{case} {kind}: {json.dumps(row)}", flush=True)
                save()
    save()
    print(summarise(document))


if __name__ == "__main__":
    main()
