"""What a budget buys the time lens on a torch statement: generations, units and the interval.

    PYTHONPATH=src .venv/bin/python bench/torch_time.py [--budget 20 --budget 40]
        [--case aa --case ab] [--repeat N] [--src PATH] [--anyway] [--out FILE]

`torch.add(x, y)` with `import torch` in the set-up, through `perflab run --metric time`:
`aa` two identical variants (1-element tensors); `ab` 1-element against 1000-element tensors
(the same statement, the size from the variant's environment). Each run is the real command
line in a fresh store. Per run it reports the exit status (2: refused before starting, with the
budget perflab says would fit), perflab's own measure of the benchmark (the "used ... s" note),
the generations measured, the units of the interval (generations, or server rounds when the
time lens forks its generations from rounds of fork servers), the ratio, its interval and the
verdict. `--src` runs another checkout's perflab (the "before": every generation's fresh
workers import torch); `--anyway` passes --min-measurements-anyway, so a budget that would be
refused is measured at its minimums and says what they cost. The raw figures go to --out.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
STMT = "torch.add(x, y)"
SETUP = "import os, torch; n = int(os.environ.get('N', '1')); x = torch.ones(n); y = torch.ones(n)"
CASES = {
    "aa": ("A", "B"),
    "ab": ("one", "thousand env.N=1000"),
}


def machine(src: Path) -> dict[str, Any]:
    model = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    commit = subprocess.run(
        ["git", "-C", str(src), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    return {"cpu": model, "vcpus": os.cpu_count(), "commit": commit, "src": str(src)}


def run_case(case: str, budget: float, src: Path, anyway: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="perflab-bench-torch-time-") as tmp:
        out = Path(tmp) / "out.json"
        argv = [sys.executable, "-m", "perflab.cli.main", "run", "--stmt", STMT, "--setup", SETUP]
        for variant in CASES[case]:
            argv += ["--variant", variant]
        argv += ["--metric", "time", "--budget", f"{budget:g}", "--json", str(out), "--samples"]
        argv += ["-q", "--store", str(Path(tmp) / "s.db")]
        if anyway:
            argv.append("--min-measurements-anyway")
        load_before = os.getloadavg()[0]
        started = time.monotonic()
        done = subprocess.run(
            argv, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(src))
        )
        result: dict[str, Any] = {
            "case": case,
            "budget_s": budget,
            "status": done.returncode,
            "whole_s": round(time.monotonic() - started, 1),
            "load_before": round(load_before, 2),
            "load_after": round(os.getloadavg()[0], 2),
        }
        if not out.exists():
            result["stderr"] = " ".join(done.stderr.split())[-1500:]
            return result
        document = json.loads(out.read_text())
        notes = [n["message"] for n in document.get("notes", [])]
        used = [n for n in notes if n.startswith("used ")]
        if used:
            result["inside_s"] = float(used[0].split()[1])
            result["plan"] = used[0]
        result["notes"] = [n for n in notes if "rounds of fork servers" in n or "took" in n]
        samples = [s for s in document.get("samples", []) if s.get("metric") == "time"]
        result["generations"] = len({s["generation"] for s in samples})
        for comparison in document["comparisons"]:
            if comparison["metric"] == "time":
                result.update(
                    ratio=comparison["ratio"],
                    ci_low=comparison["ci_low"],
                    ci_high=comparison["ci_high"],
                    verdict=comparison["verdict"],
                    units=comparison.get("n_groups"),
                    unit=comparison.get("group", "generation"),
                )
        return result


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| case | `--budget` | benchmark (perflab's own) | generations | units of the CI "
        "| ratio [95% CI] | verdict | load before → after |",
        "|---|---:|---:|---:|---|---|---|---|",
    ]
    for r in results:
        load = f"{r['load_before']:.1f} → {r['load_after']:.1f}"
        if "ratio" not in r:
            fit = ""
            if "would fit" in r.get("stderr", ""):
                words = r["stderr"].split("would fit")[0].split()
                fit = f" ({words[-1]} s would fit)"
            lines.append(
                f"| {r['case']} | {r['budget_s']:g} s | – | – | – | – | "
                f"refused before starting{fit} (status {r['status']}) | {load} |"
            )
            continue
        inside = f"{r['inside_s']:.1f} s" if "inside_s" in r else "–"
        lines.append(
            f"| {r['case']} | {r['budget_s']:g} s | {inside} | {r['generations']} | "
            f"{r['units']} {r['unit']}s | {r['ratio']:.3f} [{r['ci_low']:.3f}, "
            f"{r['ci_high']:.3f}] | {r['verdict']} | {load} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, action="append")
    parser.add_argument("--case", action="append", choices=sorted(CASES))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--src", type=Path, default=ROOT / "src")
    parser.add_argument("--anyway", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    report: dict[str, Any] = {
        "machine": machine(args.src),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "runs": [],
    }
    for case in args.case or ["aa", "ab"]:
        for budget in args.budget or [20.0, 40.0]:
            for _ in range(args.repeat):
                result = run_case(case, budget, args.src, args.anyway)
                print(json.dumps(result), file=sys.stderr, flush=True)
                report["runs"].append(result)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
    m = report["machine"]
    print(f"{m['cpu']}, {m['vcpus']} vCPUs, {m['src']} at {m['commit']}, {report['date']}\n")
    print(table(report["runs"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
