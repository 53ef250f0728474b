"""CPU seconds of analysing one stored run (store -> analyse), optionally with a profile.

    PYTHONPATH=src python bench/analysis_speed.py --store S.db --run 1 [--repeat 3]
                                                  [--profile N]

Loads the run once, then times `perflab.analyse.run.analyse_run` on it `--repeat` times (process
CPU time, which a loaded machine disturbs less than wall time; both are printed). `--profile N`
runs it once under cProfile instead and prints the N costliest functions, by cumulative and by
own time. To compare two versions, run this script under each version's `PYTHONPATH`,
alternating, on the same store.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

from perflab.analyse.run import analyse_run
from perflab.store import open_store, store_location


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", required=True, help="the store holding the run")
    parser.add_argument("--run", type=int, required=True, help="the run's id")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", type=int, metavar="N", help="profile; print N functions")
    args = parser.parse_args()
    run = open_store(store_location(args.store), create=False).load_run(args.run)
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(analyse_run, run)
        for order in ("cumulative", "tottime"):
            pstats.Stats(profile).sort_stats(order).print_stats(args.profile)
        return
    for _ in range(args.repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        analyse_run(run)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        print(f"analyse_run of run {args.run}: {cpu:.2f} s CPU, {wall:.2f} s wall")


if __name__ == "__main__":
    main()
