"""The memory lens on PRODUCT.md's unfair benchmark, with real torch: a ReLU written into its
output (`out=`) against a ReLU into a temporary copied into the output, and an A/A.

    .venv/bin/python bench/memory_unfair_relu.py [--elements 1048576] [--json out.json]

The tensor (4 MiB of floats by default) is twice the last level the cache simulation models
(2 MiB), so every pass over it is a trip to memory. Prints, per variant, the bytes brought into
D1 and into LL per iteration, the ratio against `out`, the note perflab wrote, the time the run
took and the machine. Needs torch in the interpreter running this script (`bash
scripts/setup.sh --torch`); torch under callgrind takes minutes, which is why this is not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from machine_facts import commit, cpu_model

from perflab import api
from perflab.lenses.memory import MEMORY

SETUP = (
    "import os, torch\n"
    "x = torch.randn({n}); y = torch.empty({n})\n"
    "if os.environ.get('COPY'):\n"
    "    f = lambda: y.copy_(torch.relu(x))\n"
    "else:\n"
    "    f = lambda: torch.clamp_min(x, 0, out=y)"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=1 << 20)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    experiment = api.make_experiment(
        stmt="f()",
        setup=SETUP.format(n=args.elements),
        variants=["out", "copy env.COPY=1", "again"],
        metrics="memory",
        min_generations=2,
        seed=1,
    )
    code = commit()  # the code that runs: taken before, not after, the long run
    started = time.monotonic()
    result = api.run(experiment, store_path=None).raise_on_failure()
    seconds = time.monotonic() - started
    rows = {}
    for c in result.comparisons:
        if c.event in ("d1_fill_bytes", "ll_fill_bytes"):
            rows[(c.variant, c.event)] = {
                "baseline": c.baseline_value,
                "variant": c.variant_value,
                "ratio": c.ratio,
            }
    notes = [n.message for n in result.notes if n.metric is MEMORY]
    report = {
        "elements": args.elements,
        "seconds": round(seconds, 1),
        "bytes_per_iteration": {f"{v} {e}": r for (v, e), r in rows.items()},
        "notes": notes,
        "machine": platform.processor() or platform.machine(),
        "cpu": cpu_model(),
        "load_average_at_end": os.getloadavg(),
        "commit": code,
    }
    print(json.dumps(report, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
