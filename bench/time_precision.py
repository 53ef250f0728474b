"""How honest and how precise is the time lens, next to pyperf and hyperfine, on this machine?

Measures, in one run:
  * A/A: the same statement as both variants, N times per tool. A tool that calls a difference
    "significant" here is wrong; an honest 95% method does so in about 5% of tries.
  * A/B: `sum(range(1000))` against `sum(range(1100))` (about 10% more work), M times per tool,
    against long interleaved reference measurements (perflab with a large budget, at the start
    and at the end of the run; in-process and whole-process ratios differ, so both are measured).
Each tool gets about the same wall-clock budget per comparison.

What counts as a "difference" claim per tool:
  perflab       verdict slower or faster (CI excludes 1 and is not inside the ±1% band)
  perflab-cmd   the same, measuring whole `python -c` processes (--cmd), as hyperfine does
  pyperf        `compare_to` says "Nx slower/faster" rather than "Not significant"
  hyperfine     it reports ratio ± σ with no test; we count a claim when |ratio - 1| > 2σ

With --load the script makes the machine busy itself for the whole run (bench/machine_load.py: a
busy loop pinned to every CPU and a memory-bound process, all stopped on every exit path), and
perflab's runs are re-analysed from their stored samples with each --preempted policy (keep,
exclude, correct), so the policies are compared on the very same samples.

Usage: .venv/bin/python bench/time_precision.py [--aa 20] [--ab 5] [--budget 20] [--out FILE]
                                                [--load] [--slower 1030] [--tools perflab,...]
Writes a JSON file with every result and prints a Markdown summary.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from machine_facts import cpu_model, has_avx512
from machine_load import MachineLoad

PYTHON = sys.executable
BASE_STMT = "sum(range(1000))"
SLOWER_STMT = "sum(range(1100))"
HYPERFINE_LOOPS = 2000  # iterations per process: ~20 ms of work, to keep start-up a minor part
REFERENCE_PRECISION = 1e-4  # references use their whole budget instead of stopping at ±0.5%


def perflab(
    stmt_a: str, stmt_b: str, budget_s: float, store: Path, *, until_budget: bool = False
) -> dict:
    """A/B of two statements through one variant key: the statement comes from the env."""
    setup = "import os; n = int(os.environ['N'])"
    n_a = re.search(r"\d+", stmt_a).group()  # type: ignore[union-attr]
    n_b = re.search(r"\d+", stmt_b).group()  # type: ignore[union-attr]
    out = store.with_suffix(".json")
    started = time.monotonic()
    subprocess.run(
        [
            PYTHON,
            "-m",
            "perflab.cli.main",
            "run",
            "--stmt",
            "sum(range(n))",
            "--setup",
            setup,
            "--variant",
            f"A env.N={n_a}",
            "--variant",
            f"B env.N={n_b}",
            "--budget",
            str(budget_s),
            "--quiet",
            "--store",
            str(store),
            "--json",
            str(out),
            *(["--precision", str(REFERENCE_PRECISION)] if until_budget else []),
        ],
        check=True,
    )
    result = perflab_result("perflab", out, time.monotonic() - started)
    result.update(preemption_policies(store))
    return result


def preemption_policies(store: Path) -> dict:
    """The same run analysed with each --preempted policy, and how much other processes took."""
    from perflab.analyse.run import analyse_run
    from perflab.stats.preemption import Preemption, summarise_preemption
    from perflab.store import SqliteStore

    opened = SqliteStore.open(store, create=False)
    try:
        run = opened.load_run("latest")
    finally:
        opened.close()
    policies = {}
    for policy in Preemption:
        settings = replace(run.experiment.settings, preempted=str(policy))
        analysed = analyse_run(replace(run, experiment=replace(run.experiment, settings=settings)))
        if not analysed.comparisons:
            policies[str(policy)] = {"ratio": math.nan, "ci_low": 0.0, "ci_high": math.inf,
                                     "verdict": "none"}  # fmt: skip
            continue
        comparison = analysed.comparisons[0]
        policies[str(policy)] = {
            "ratio": comparison.ratio,
            "ci_low": comparison.ci_low,
            "ci_high": comparison.ci_high,
            "verdict": str(comparison.verdict),
        }
    names = [v.name for v in run.experiment.variants]
    time_samples = [s for s in run.samples if s.name == "wall_ns"]
    summary = summarise_preemption(time_samples, names, Preemption.EXCLUDE)
    return {
        "policies": policies,
        "lost_share": summary.lost_share,
        "preempted_samples": summary.n_preempted,
        "samples": summary.n_samples,
    }


def perflab_result(tool: str, json_path: Path, elapsed_s: float) -> dict:
    comparison = json.loads(json_path.read_text())["comparisons"][0]
    return {
        "tool": tool,
        "ratio": comparison["ratio"],
        "ci_low": comparison["ci_low"],
        "ci_high": comparison["ci_high"],
        "verdict": comparison["verdict"],
        "claims_difference": comparison["verdict"] in ("slower", "faster"),
        "elapsed_s": elapsed_s,
    }


def perflab_commands(
    stmt_a: str, stmt_b: str, budget_s: float, store: Path, *, until_budget: bool = False
) -> dict:
    """The same comparison as whole processes (hyperfine's setting), through --cmd."""
    out = store.with_suffix(".json")
    commands = [f"{PYTHON} -c 'for _ in range({HYPERFINE_LOOPS}): {s}'" for s in (stmt_a, stmt_b)]
    started = time.monotonic()
    subprocess.run(
        [PYTHON, "-m", "perflab.cli.main", "run", "--cmd", commands[0],
         "--variant", "A", "--variant", f"B cmd={shlex.quote(commands[1])}",
         "--budget", str(budget_s), "--quiet", "--store", str(store), "--json", str(out),
         *(["--precision", str(REFERENCE_PRECISION)] if until_budget else [])],
        check=True,
    )  # fmt: skip
    return perflab_result("perflab-cmd", out, time.monotonic() - started)


def pyperf(stmt_a: str, stmt_b: str, budget_s: float, workdir: Path) -> dict:
    # pyperf's default is 20 processes x 3 values; scale processes to the budget (half each)
    processes = max(4, int(budget_s / 2 / 0.75))
    started = time.monotonic()
    files = []
    for label, stmt in (("a", stmt_a), ("b", stmt_b)):
        path = workdir / f"pyperf-{label}.json"
        path.unlink(missing_ok=True)
        subprocess.run(
            [
                PYTHON,
                "-m",
                "pyperf",
                "timeit",
                "--quiet",
                "-p",
                str(processes),
                "-o",
                str(path),
                stmt,
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        files.append(path)
    elapsed = time.monotonic() - started
    compared = subprocess.run(
        [PYTHON, "-m", "pyperf", "compare_to", str(files[0]), str(files[1])],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    means = [json_mean(p) for p in files]
    match = re.search(r"([\d.]+)x (slower|faster)", compared)
    return {
        "tool": "pyperf",
        "ratio": means[1] / means[0],
        "claims_difference": bool(match) and "Not significant" not in compared,
        "said": compared.strip().splitlines()[-1],
        "elapsed_s": elapsed,
    }


def json_mean(path: Path) -> float:
    data = json.loads(path.read_text())
    values = [v for run in data["benchmarks"][0]["runs"] for v in run.get("values", [])]
    return sum(values) / len(values)


def hyperfine(stmt_a: str, stmt_b: str, budget_s: float, workdir: Path) -> dict:
    commands = [
        f"{PYTHON} -c 'for _ in range({HYPERFINE_LOOPS}): {stmt}'" for stmt in (stmt_a, stmt_b)
    ]
    # calibrate runs to the budget from one run of each
    probe = subprocess.run(
        ["hyperfine", "-N", "--runs", "3", "--export-json", str(workdir / "probe.json"), *commands],
        check=True,
        capture_output=True,
    )
    del probe
    probe_means = [r["mean"] for r in json.loads((workdir / "probe.json").read_text())["results"]]
    runs = max(10, int(budget_s / sum(probe_means)))
    started = time.monotonic()
    subprocess.run(
        [
            "hyperfine",
            "-N",
            "--warmup",
            "3",
            "--runs",
            str(runs),
            "--export-json",
            str(workdir / "hf.json"),
            *commands,
        ],
        check=True,
        capture_output=True,
    )
    elapsed = time.monotonic() - started
    results = json.loads((workdir / "hf.json").read_text())["results"]
    a, b = results
    ratio = b["mean"] / a["mean"]
    # hyperfine's own uncertainty of the ratio: relative errors added in quadrature
    sigma = ratio * math.sqrt((a["stddev"] / a["mean"]) ** 2 + (b["stddev"] / b["mean"]) ** 2)
    return {
        "tool": "hyperfine",
        "ratio": ratio,
        "sigma": sigma,
        "claims_difference": abs(ratio - 1) > 2 * sigma,
        "runs": runs,
        "elapsed_s": elapsed,
    }


SUMMARY_HEADER = (
    "| tool | kind | tries | claimed a difference | verdicts | median error of the ratio "
    "| ratios (min–max) | CI contains the reference | mean time (s) |\n"
    "|---|---|---:|---:|---:|---:|---|---:|---:|"
)


# Whole processes (perflab-cmd, hyperfine) include interpreter start-up, so their true ratio is
# not the in-process one: each kind has its own long reference.
REFERENCE_KIND = {"perflab": "statement", "pyperf": "statement", "perflab-cmd": "command",
                  "hyperfine": "command"}  # fmt: skip


def measure_references(
    budget_s: float, workdir: Path, slower_stmt: str, kinds: set[str]
) -> dict[str, list[dict]]:
    """Long interleaved A/B measurements (perflab, a large budget), statement and command."""
    references = {}
    if "statement" in kinds:
        references["statement"] = perflab(
            BASE_STMT, slower_stmt, budget_s, workdir / "ref-stmt.db", until_budget=True
        )
    if "command" in kinds:
        references["command"] = perflab_commands(
            BASE_STMT, slower_stmt, budget_s, workdir / "ref-cmd.db", until_budget=True
        )
    for kind, reference in references.items():
        print(
            f"reference ({kind}) A/B ratio: {reference['ratio']:.4f} "
            f"[{reference['ci_low']:.4f}, {reference['ci_high']:.4f}] "
            f"in {reference['elapsed_s']:.0f} s",
            flush=True,
        )
    return {kind: [reference] for kind, reference in references.items()}


def truths(references: dict[str, list[dict]]) -> dict[str, float]:
    """The reference ratio per kind: the geometric mean of the start and end measurements."""
    return {
        kind: math.exp(sum(math.log(r["ratio"]) for r in runs) / len(runs))
        for kind, runs in references.items()
    }


def interleaved_plan(aa: int, ab: int, slower_stmt: str) -> list[tuple[str, str, str]]:
    """A/A and A/B tries spread evenly over the run, so a run stopped early (--max-minutes) has
    some of each, measured under the same conditions."""
    tries = [(k / aa if aa else 0.0, "A/A", BASE_STMT, BASE_STMT) for k in range(aa)]
    tries += [((k + 0.5) / ab, "A/B", BASE_STMT, slower_stmt) for k in range(ab)]
    return [(kind, a, b) for _, kind, a, b in sorted(tries, key=lambda t: t[0])]


def peer_tries(plan: list[tuple[str, str, str]], peer_aa: int) -> list[int]:
    """Indices of the tries the peers take part in: every A/B, and `peer_aa` of the A/A tries,
    spread evenly over the run."""
    aa = [i for i, (kind, _, _) in enumerate(plan) if kind == "A/A"]
    chosen = {aa[round(k * len(aa) / peer_aa)] for k in range(peer_aa)} if peer_aa and aa else set()
    return sorted(chosen | {i for i, (kind, _, _) in enumerate(plan) if kind != "A/A"})


def with_policies(results: list[dict]) -> list[dict]:
    """perflab's results plus one row per --preempted policy, re-analysed from the same samples
    (tool "perflab [keep]" ...)."""
    rows = list(results)
    for result in results:
        for policy, analysed in result.get("policies", {}).items():
            rows.append(
                dict(
                    result,
                    tool=f"perflab [{policy}]",
                    **analysed,
                    claims_difference=analysed["verdict"] in ("slower", "faster"),
                )
            )
    return rows


def summarise(results: list[dict], reference: dict[str, float]) -> str:
    """Error of the ratio: against 1 for A/A, against the long reference for A/B."""
    lines = [SUMMARY_HEADER]
    results = with_policies(results)
    tools = ["perflab", "perflab [keep]", "perflab [exclude]", "perflab [correct]", "pyperf",
             "perflab-cmd", "hyperfine"]  # fmt: skip
    for kind in ("A/A", "A/B"):
        for tool in tools:
            truth = 1.0 if kind == "A/A" else reference.get(REFERENCE_KIND[tool.split()[0]])
            rows = [r for r in results if r["tool"] == tool and r["kind"] == kind]
            if not rows or truth is None:
                continue
            claims = sum(r["claims_difference"] for r in rows)
            ratios = [r["ratio"] for r in rows if math.isfinite(r["ratio"])] or [math.nan]
            errors = sorted(abs(ratio / truth - 1) for ratio in ratios)
            contains = "–"
            if "ci_low" in rows[0]:
                hits = sum(r["ci_low"] <= truth <= r["ci_high"] for r in rows)
                contains = f"{hits}/{len(rows)}"
            decided = "–"
            if "verdict" in rows[0]:
                wanted = "equivalent" if kind == "A/A" else "slower"
                decided = f"{sum(r['verdict'] == wanted for r in rows)}/{len(rows)} {wanted}"
            mean_s = sum(r["elapsed_s"] for r in rows) / len(rows)
            lines.append(
                f"| {tool} | {kind} | {len(rows)} | {claims}/{len(rows)} "
                f"({claims / len(rows):.0%}) | {decided} | {errors[len(errors) // 2]:.1%} "
                f"| {min(ratios):.3f}–{max(ratios):.3f} | {contains} | {mean_s:.1f} |"
            )
    lost = [r["lost_share"] for r in results if r["tool"] == "perflab" and "lost_share" in r]
    if lost:
        lines.append("")
        lines.append(
            f"Other processes took {min(lost):.0%}–{max(lost):.0%} (median "
            f"{sorted(lost)[len(lost) // 2]:.0%}) of perflab's measuring CPU during its runs."
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aa", type=int, default=20, help="A/A tries per tool (20)")
    parser.add_argument("--ab", type=int, default=5, help="A/B tries per tool (5)")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds per comparison (20)")
    parser.add_argument(
        "--reference-budget", type=float, default=180.0, help="seconds per reference (180)"
    )
    parser.add_argument("--tools", default="perflab,pyperf,perflab-cmd,hyperfine")
    parser.add_argument(
        "--peer-aa",
        type=int,
        help="A/A tries for the tools other than perflab (default: --aa), spread over the run",
    )
    parser.add_argument(
        "--slower", type=int, default=1100, help="A/B: sum(range(N)) against 1000 (1100: +10%%)"
    )
    parser.add_argument(
        "--load", action="store_true", help="make the machine busy (bench/machine_load.py)"
    )
    parser.add_argument(
        "--load-seconds", type=float, default=4 * 3600, help="--load stops by itself after this"
    )
    parser.add_argument(
        "--no-end-reference", action="store_true", help="measure the references once, at the start"
    )
    parser.add_argument(
        "--max-minutes",
        type=float,
        default=0.0,
        help="start no further try after this many minutes (0: all of them)",
    )
    parser.add_argument("--out", type=Path, default=Path("bench/results/time_precision.json"))
    parser.add_argument(
        "--keep-stores",
        type=Path,
        metavar="DIR",
        help="keep perflab's stores (every sample of every try) in DIR, to re-analyse them later",
    )
    parser.add_argument(
        "--summarise", type=Path, metavar="FILE", help="only print the table of a saved run"
    )
    args = parser.parse_args()
    if args.summarise is not None:
        saved = json.loads(args.summarise.read_text())
        if "references" in saved:
            reference = truths(saved["references"])
        else:  # the first version measured one statement reference only
            reference = {"statement": saved["reference"]["ratio"]}
        print(summarise(saved["results"], reference))
        return
    tools = args.tools.split(",")
    if "hyperfine" in tools and shutil.which("hyperfine") is None:
        sys.exit("hyperfine is missing: bash scripts/setup.sh --bench installs it")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    slower_stmt = f"sum(range({args.slower}))"
    kinds = {REFERENCE_KIND[tool] for tool in tools}
    document: dict = {
        "machine": {"cpu": cpu_model(), "avx512": has_avx512(), "cores": os.cpu_count()},
        "budget_s": args.budget,
        "load": args.load,
        "slower": slower_stmt,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "load_average_at_start": os.getloadavg(),
        "references": {},
        "results": [],
    }

    def save() -> None:  # after every result: a run stopped early keeps what it measured
        document["load_average_now"] = os.getloadavg()
        args.out.write_text(json.dumps(document, indent=1))

    started = time.monotonic()
    load = MachineLoad(seconds=args.load_seconds) if args.load else contextlib.nullcontext()
    with load, tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if args.keep_stores is not None:
            args.keep_stores.mkdir(parents=True, exist_ok=True)
            workdir = args.keep_stores
        document["references"] = measure_references(
            args.reference_budget, workdir, slower_stmt, kinds
        )
        save()
        plan = interleaved_plan(args.aa, args.ab, slower_stmt)
        peer_aa = args.aa if args.peer_aa is None else args.peer_aa
        peer_kept = set(peer_tries(plan, peer_aa))
        for i, (kind, stmt_a, stmt_b) in enumerate(plan):
            if args.max_minutes and time.monotonic() - started > 60 * args.max_minutes:
                print(f"stopping after {i} of {len(plan)} tries: --max-minutes", flush=True)
                document["stopped_after_tries"] = i
                break
            for tool in tools:
                if not tool.startswith("perflab") and i not in peer_kept:
                    continue  # --peer-aa: the peers' A/A tries are fewer, spread over the run
                if tool == "perflab":
                    result = perflab(stmt_a, stmt_b, args.budget, workdir / f"p{i}.db")
                elif tool == "perflab-cmd":
                    result = perflab_commands(stmt_a, stmt_b, args.budget, workdir / f"c{i}.db")
                elif tool == "pyperf":
                    result = pyperf(stmt_a, stmt_b, args.budget, workdir)
                else:
                    result = hyperfine(stmt_a, stmt_b, args.budget, workdir)
                result["kind"] = kind
                result["load_average"] = os.getloadavg()[0]
                document["results"].append(result)
                save()
                print(json.dumps(result), flush=True)
        # the ratio itself can move with the machine's state: measure it again at the end
        if not args.no_end_reference:
            again = measure_references(args.reference_budget, workdir, slower_stmt, kinds)
            for kind, runs in again.items():
                document["references"][kind] += runs
    save()
    print()
    print(summarise(document["results"], truths(document["references"])))


if __name__ == "__main__":
    main()
