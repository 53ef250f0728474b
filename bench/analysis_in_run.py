"""Seconds of a real `perflab run`'s analysis and report, the step after measuring.

    PYTHONPATH=src python bench/analysis_in_run.py [--imports] -- run ARGS...

Runs the `perflab` command in this process with ARGS, timing the stored run's analysis
(`engine.run.analyse_run`, first call: the modules it imports that measuring did not are in it)
and the analysis plus the report (until the CLI has written its outputs), in process CPU time
(which a loaded machine disturbs less) and wall time. `--imports` also lists the modules the
analysis imported. To compare two versions, run it under each version's `PYTHONPATH`,
alternating, with the same ARGS (the measured data differ between runs; the analysis's cost
depends on their size, not their values).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import perflab.cli.main as cli
import perflab.cli.run as cli_run
import perflab.engine.run as engine_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--imports", action="store_true", help="list the modules it imported")
    parser.add_argument("perflab_args", nargs=argparse.REMAINDER, help="-- run ARGS...")
    args = parser.parse_args()
    argv = args.perflab_args[1:] if args.perflab_args[:1] == ["--"] else args.perflab_args
    started: list[tuple[float, float]] = []
    figures: dict[str, tuple[float, float]] = {}
    analyse, emit = engine_run.analyse_run, cli_run.emit

    def timed_analyse(run: Any) -> Any:
        known = set(sys.modules)
        started.append((time.process_time(), time.perf_counter()))
        result = analyse(run)
        figures["analysis"] = _since(started[0])
        if args.imports:
            new = sorted(name for name in set(sys.modules) - known if name.count(".") <= 1)
            print(f"imported during the analysis: {' '.join(new)}", file=sys.stderr)
        return result

    def timed_emit(*emit_args: Any, **emit_kwargs: Any) -> Any:
        code = emit(*emit_args, **emit_kwargs)
        if started:
            figures["analysis and report"] = _since(started[0])
        return code

    engine_run.analyse_run = timed_analyse
    cli_run.emit = timed_emit  # `run` calls the name it imported from cli.reports
    code = cli.main(argv)
    for name, (cpu, wall) in figures.items():
        print(f"{name}: {cpu:.2f} s CPU, {wall:.2f} s wall", file=sys.stderr)
    sys.exit(code)


def _since(start: tuple[float, float]) -> tuple[float, float]:
    return time.process_time() - start[0], time.perf_counter() - start[1]


if __name__ == "__main__":
    main()
