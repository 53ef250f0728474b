"""How much the memory lens's bytes per iteration move between callgrind repeats of one variant
and between identical variants: the measurements behind its 10% threshold.

    .venv/bin/python bench/memory_spread.py --measure --store /tmp/memory-spread.db
    .venv/bin/python bench/memory_spread.py --store /tmp/memory-spread.db   # read runs again

`--measure` runs the cases below into the store (A/A pairs, and the bytearray out-vs-copy pair
with an A/A beside it); then, for every memory comparison in the store, the table gives the
spread of each variant's repeats (max/min - 1) and the pair's ratio interval, at D1 and LL.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from perflab import api
from perflab.lenses.memory import MEMORY

CASES: tuple[dict[str, Any], ...] = (
    {
        "stmt": "sorted(data)",
        "setup": "import random; data = list(range(2000)); random.Random(0).shuffle(data)",
        "variants": ["A", "B"],
    },
    {"stmt": "bytes(x)", "setup": "x = bytearray(1 << 20)", "variants": ["A", "B"]},
    {"stmt": "sum(range(1000))", "variants": ["A", "B env.UNUSED=1"]},
    {
        "stmt": "f()",
        "setup": "import os; x = bytearray(3 << 20); y = bytearray(3 << 20)\n"
        "f = (lambda: y.__setitem__(slice(None), x)) if os.environ.get('OUT') else "
        "(lambda: y.__setitem__(slice(None), bytes(x)))",
        "variants": ["out env.OUT=1", "copy", "out2 env.OUT=1"],
    },
)


def spread(values: list[float]) -> float:
    return max(values) / min(values) - 1 if values and min(values) > 0 else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--measure", action="store_true")
    args = parser.parse_args()
    if args.measure:
        for case in CASES:
            experiment = api.make_experiment(**case, metrics="memory", seed=1)
            api.run(experiment, store_path=args.store)
    print(
        "| run | benchmark | pair | level | baseline repeats spread | variant repeats spread "
        "| ratio [interval] | note |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for summary in reversed(api.list_runs(args.store)):
        result = api.show(summary.run_id, args.store)
        for c in result.comparisons:
            if c.metric is not MEMORY or c.event not in ("d1_fill_bytes", "ll_fill_bytes"):
                continue
            data = c.to_json()
            note = "different work" if data.get("different_memory_work") else "-"
            print(
                f"| {summary.run_id} | `{c.benchmark}` | {c.variant} vs {c.baseline} "
                f"| {c.event.split('_')[0].upper()} "
                f"| {spread(data['baseline_repeats']):.4%} | {spread(data['variant_repeats']):.4%} "
                f"| {c.ratio:.4f} [{c.ci_low:.4f}, {c.ci_high:.4f}] | {note} |"
            )


if __name__ == "__main__":
    main()
