"""How far apart are instruction counts of the same code? The data behind the "same code"
tolerance (perflab.lenses.instructions.same_code.COUNT_TOLERANCE).

    .venv/bin/python bench/same_code_tolerance.py [--out bench/results/same_code.json]

For a few statements, runs an A/A-like pair (the baseline, and a variant setting an environment
variable the statement never reads) through the instructions lens only (its default 2 repeats
per variant), and prints per statement: the largest relative spread between repeats of one
variant, the relative difference between the two variants' medians, and whether perflab's
"same code" note was given. The tolerance must sit well above both, and far below any real code
change.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from machine_facts import commit, cpu_model

import perflab
from perflab.lenses.instructions.details import InstructionsDetails
from perflab.lenses.instructions.same_code import instructions_finding
from perflab.records.kinds import Metric

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))


STATEMENTS = (
    ("sum(range(200))", ""),
    ("sorted(data)", "import random; data = list(range(1000)); random.Random(0).shuffle(data)"),
    ("'-'.join(map(str, items))", "items = list(range(100))"),
    ("{k: v for k, v in pairs}", "pairs = [(str(i), i) for i in range(200)]"),
)


def spread(values: tuple[float, ...]) -> float:
    return (max(values) - min(values)) / min(values) if values else float("nan")


def one(stmt: str, setup: str) -> dict[str, Any]:
    experiment = perflab.make_experiment(
        stmt=stmt,
        setup=setup,
        variants=["base", "toggled env.NEVER_READ=1"],
        metrics=["instructions"],
    )
    started = time.monotonic()
    result = perflab.run(experiment, store_path=None)
    main = next(
        c for c in result.comparisons if c.metric == Metric.INSTRUCTIONS and c.event is None
    )
    assert isinstance(main.details, InstructionsDetails)
    details = main.details
    base, other = details.baseline_repeats, details.variant_repeats
    return {
        "statement": stmt,
        "baseline_repeats": list(base),
        "variant_repeats": list(other),
        "spread_within_baseline": spread(base),
        "spread_within_variant": spread(other),
        "between_medians": abs(statistics.median(other) / statistics.median(base) - 1),
        "same_code_note": any("executed the same code" in n.message for n in result.notes),
        "finding": str(instructions_finding(details).seen),
        "reason": instructions_finding(details).reason,
        "seconds": time.monotonic() - started,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/same_code.json")
    args = parser.parse_args()
    rows = [one(stmt, setup) for stmt, setup in STATEMENTS]
    report = {
        "cpu_model": cpu_model(),
        "load_average": os.getloadavg(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": commit(),
        "python": platform.python_version(),
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(
        f"{report['cpu_model']}; load {report['load_average'][0]:.2f}; {report['date']}; "
        f"commit {report['commit']}"
    )
    print(f"{'statement':32} {'within (max)':>13} {'between':>10} {'note':>5}")
    for row in rows:
        within = max(row["spread_within_baseline"], row["spread_within_variant"])
        print(
            f"{row['statement'][:32]:32} {within:13.2e} {row['between_medians']:10.2e} "
            f"{'yes' if row['same_code_note'] else 'no':>5} {row['reason']}"
        )


if __name__ == "__main__":
    main()
