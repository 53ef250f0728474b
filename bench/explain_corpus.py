"""The explanation lenses (instructions, asm, profile) on the known-answer corpus (tests/corpus).

    .venv/bin/python bench/explain_corpus.py [--reduced] [--case NAME ...] [--budget 2]
                                             [--out bench/results/explain_corpus.json.gz]

Builds every case on the spot (gcc, g++, clang, a ctypes library, glibc, ATen), checks its
ground truth with nm/objdump/readelf/perf report, runs perflab through its Python API, and
prints per lens the claims the corpus expects, those found and the false ones (claims the ground
truth does not expect; every claim in an A/A is false), then one row per case with the share of
the difference the summary's causes account for and the claims about code that did not run
(functions perf report sampled in neither variant). Raw perflab JSON
and the scores go to --out (gzip-compressed when its name ends in .gz: the raw JSON of a full run
is megabytes). `--summarise FILE` prints the tables of a saved run again, .json or .json.gz.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.corpus
sys.path.insert(0, str(ROOT / "src"))

import machine_facts  # noqa: E402  (this folder, as the script runs)
from tests.corpus.cases import CASES, REDUCED, has_avx512  # noqa: E402
from tests.corpus.harness import run_case  # noqa: E402
from tests.corpus.scoring import LENSES  # noqa: E402
from tests.corpus.truth import CaseInvalid  # noqa: E402


def machine() -> dict[str, Any]:
    gcc = subprocess.run(["gcc", "-dumpfullversion"], capture_output=True, text=True).stdout
    return machine_facts.machine(avx512=has_avx512(), gcc=gcc.strip())


def summarise(report: dict[str, Any]) -> str:
    lines = []
    m = report["machine"]
    lines.append(
        f"machine: {m['cpu']}, {m['vcpus']} vCPUs, AVX-512 {'yes' if m['avx512'] else 'no'}, "
        f"Linux {m['kernel']}, Python {m['python']}, gcc {m['gcc']}"
    )
    totals = {lens: {"expected": 0, "found": 0, "false": 0, "comparisons": 0} for lens in LENSES}
    hottest = {"ok": 0, "total": 0}
    for case in report["cases"]:
        for s in case.get("scores", []):
            row = totals[s["lens"]]
            row["expected"] += len(s["expected"])
            row["found"] += len(s["found"])
            row["false"] += len(s["false"])
            row["comparisons"] += 1
        for h in case.get("hottest", []):
            hottest["total"] += 1
            hottest["ok"] += bool(h["ok"])
    lines.append("")
    lines.append("| lens | comparisons | diagnoses expected | found | false |")
    lines.append("|---|---:|---:|---:|---:|")
    for lens, row in totals.items():
        lines.append(
            f"| {lens} | {row['comparisons']} | {row['expected']} | {row['found']} | "
            f"{row['false']} |"
        )
    lines.append(
        f"\nasm `functions[0]` is what each variant spent most time in (perf report): "
        f"{hottest['ok']}/{hottest['total']} comparisons"
    )
    lines.append("")
    lines += _accounted_lines(report)
    lines.append("")
    lines.append(
        "| case | kind | instructions: found/expected, false | asm: same | profile: same "
        "| asm functions[0] | share accounted for | claims about code not run "
        "| false claims |"
    )
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for case in report["cases"]:
        if case.get("skipped") or case.get("invalid") or case.get("error"):
            why = case.get("skipped") or case.get("invalid") or case.get("error")
            lines.append(f"| {case['case']} | – | {why} | | | | | | |")
            continue
        for kind in ("A/B", "A/A"):
            cells = []
            false_claims = []
            for lens in LENSES:
                s = next(
                    (s for s in case["scores"] if s["lens"] == lens and s["kind"] == kind), None
                )
                if s is None:
                    cells.append("–")
                    continue
                cells.append(f"{len(s['found'])}/{len(s['expected'])}, {len(s['false'])}")
                false_claims += [_short(claim, 72) for claim in s["false"]]
            h = next((h for h in case["hottest"] if h["kind"] == kind), None)
            hot = "–" if h is None else ("yes" if h["ok"] else "no: " + _sides(h))
            share = _share_cell(case, kind)
            unrun = (case.get("not_run") or {}).get(kind)
            unrun_cell = "–" if unrun is None else str(len(unrun))
            if unrun:
                unrun_cell += ": " + "; ".join(_short(c, 48) for c in unrun[:3])
            lines.append(
                f"| {case['case']} | {kind} | {' | '.join(cells)} | {hot} | {share} | "
                f"{unrun_cell} | {'; '.join(false_claims) or ''} |"
            )
    return "\n".join(lines)


ACCOUNTED_TARGET = 0.8  # the summary's named causes should account for this share ...
CASES_TARGET = 0.9  # ... in this share of the A/B cases


def _share_cell(case: dict[str, Any], kind: str) -> str:
    """The summary's causes' share of the difference; in an A/A the causes named (target 0)."""
    accounted = (case.get("accounted") or {}).get(kind)
    causes = (case.get("causes") or {}).get(kind)
    if kind == "A/A":
        return "–" if causes is None else f"{causes} causes"
    if accounted is None:
        return "–" if causes is None else "no difference"
    return f"{accounted:.0%}"


def _accounted_lines(report: dict[str, Any]) -> list[str]:
    """The targets: causes accounting for >= 80% of the difference in >= 90% of A/B cases,
    no cause in an A/A, no claim about code that did not run."""
    ab = [
        c
        for c in report["cases"]
        if not (c.get("skipped") or c.get("invalid") or c.get("error")) and "accounted" in c
    ]
    with_difference = [c for c in ab if (c["accounted"] or {}).get("A/B") is not None]
    reached = [c for c in with_difference if c["accounted"]["A/B"] >= ACCOUNTED_TARGET]
    aa_causes = sum((c.get("causes") or {}).get("A/A") or 0 for c in ab)
    unrun = sum(len(v) for c in ab for v in (c.get("not_run") or {}).values())
    shown = f"{len(reached)}/{len(with_difference)}" if with_difference else "0/0"
    return [
        "",
        f"summary: the named causes account for >= {ACCOUNTED_TARGET:.0%} of the difference in "
        f"{shown} A/B cases with a difference (target {CASES_TARGET:.0%}); "
        f"{len(ab) - len(with_difference)} A/B cases had nothing to account for; causes named "
        f"in A/A cases: {aa_causes} (target 0); claims about code perf report sampled in "
        f"neither variant: {unrun} (target 0)",
    ]


def _short(name: str | None, width: int = 48) -> str:
    if name is None:
        return "none"
    return name if len(name) <= width else name[: width - 1] + "…"


def _sides(check: dict[str, Any]) -> str:
    got = check["asm_functions0"]
    return f"`{_short(got.get('baseline'))}` / `{_short(got.get('variant'))}`"


def _read(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()


def _write(path: Path, text: str) -> None:
    # mtime=0: the same report compresses to the same bytes, so git sees no change when none is
    data = gzip.compress(text.encode(), mtime=0) if path.suffix == ".gz" else text.encode()
    path.write_bytes(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reduced", action="store_true", help="only the test suite's cases")
    parser.add_argument("--case", action="append", default=[], help="run only these cases")
    parser.add_argument("--budget", type=float, default=2.0, help="perflab budget_s per case")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "explain_corpus.json.gz"))
    parser.add_argument("--summarise", metavar="FILE", help="print a saved run's tables")
    args = parser.parse_args()
    if args.summarise:
        print(summarise(json.loads(_read(Path(args.summarise)))))
        return
    cases = REDUCED if args.reduced else CASES
    if args.case:
        cases = [c for c in CASES if c.name in args.case]
    report: dict[str, Any] = {
        "machine": machine(),
        "started": time.strftime("%Y-%m-%d %H:%M"),
        "cases": [],
    }
    for case in cases:
        skip = case.needs()
        if skip:
            report["cases"].append({"case": case.name, "covers": case.covers, "skipped": skip})
            print(f"{case.name}: skipped ({skip})", file=sys.stderr)
            continue
        print(f"{case.name}: running", file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory(prefix=f"corpus-{case.name}-") as tmp:
            try:
                result = run_case(case, Path(tmp), budget_s=args.budget)
            except CaseInvalid as error:
                report["cases"].append(
                    {"case": case.name, "covers": case.covers, "invalid": str(error)}
                )
                print(f"{case.name}: ground truth does not hold: {error}", file=sys.stderr)
                continue
        report["cases"].append(result.to_json())
        print(
            f"{case.name}: {result.seconds:.0f} s; false: {result.false_claims() or 'none'}; "
            f"missed: {result.missed_claims() or 'none'}",
            file=sys.stderr,
            flush=True,
        )
    report["load_average_end"] = os.getloadavg()[0]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    _write(Path(args.out), json.dumps(report, indent=1, default=str) + "\n")
    print(summarise(report))


if __name__ == "__main__":
    main()
