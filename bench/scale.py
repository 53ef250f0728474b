"""A 16-cell matrix on a local Ray cluster against the same matrix on one machine, and the
store's write rate into PostgreSQL against SQLite.

The matrix: the example repository (examples/stack/make_repo.sh, a C checksum program), bases
`base` and `main`, one change (a patch adding a checksum pass), measured with the instructions lens
(deterministic: every verdict must agree between the runs) at 16 parameter points (16 cells,
each 4 variants: 2 bases, the change on each; 2 comparisons and 1 interaction per cell). A
warm-up run builds the 4 variants first, so the timed runs share a warm build cache. Timed:
sequential (no --ray), a one-node Ray cluster (cells one at a time: the overhead per cell of going
through Ray), a two-node cluster (ray.cluster_utils.Cluster, 2 CPUs per node: cells two at a
time). On a 2-vCPU machine the two nodes share the same two CPUs: the wall time shows the
overhead and the mechanics, not a cluster's speed-up.

Store: N samples written one by one (each its own commit, as the engine writes) by one writer,
then by 4 writers at once, into SQLite and into a PostgreSQL server started in a temporary
directory (tests/support/postgres_server.py).

Usage: .venv/bin/python bench/scale.py [--cells 16] [--budget 5] [--samples 5000]
       [--out bench/results/scale.json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from machine_facts import machine

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests/support/postgres_server.py
sys.path.insert(0, str(ROOT / "src"))
EXAMPLE = ROOT / "examples" / "stack" / "make_repo.sh"


def make_matrix_repo(folder: Path) -> tuple[Path, Path]:
    repo = folder / "repo"
    subprocess.run([str(EXAMPLE), str(repo)], check=True, capture_output=True)
    source = repo / "prog.c"
    text = source.read_text()
    # one more checksum pass at the end: its context is the same on both bases
    source.write_text(
        text.replace('printf("%u\\n", s);', 'printf("%u\\n", s + checksum(buffer, N));')
    )
    patch = folder / "extra-pass.patch"
    patch.write_text(
        subprocess.run(["git", "diff"], cwd=repo, check=True, capture_output=True, text=True).stdout
    )
    subprocess.run(["git", "checkout", "prog.c"], cwd=repo, check=True)
    return repo, patch


def matrix(
    repo: Path, patch: Path, cache: Path, cells: int, budget: float, out: Path, ray: str | None
) -> float:
    points = ",".join(str(k) for k in range(1, cells + 1))
    argv = [
        sys.executable, "-m", "perflab.cli.main", "matrix", "--base", "base", "--base", "main",
        "--change", str(patch), "--cmd", "./prog $k", "--param", f"k={points}", "--build",
        "make", "--metric", "instructions", "--budget", str(budget), "--json", str(out),
        "--quiet", "--store", str(cache / "perflab.db"), "--cache-dir", str(cache),
    ]  # fmt: skip
    if ray is not None:
        argv += ["--ray", ray]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    started = time.monotonic()
    done = subprocess.run(argv, cwd=repo, capture_output=True, text=True, env=env, check=False)
    took = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"perflab matrix failed ({done.returncode}):\n{done.stderr}")
    return took


def cpu_waits_s(store: Path) -> float:
    """The latest run's waits for a CPU other perflab runs held (its notes `waited N s for CPU`):
    on a shared machine each cell of a cluster run claims a CPU anew, a sequential run once."""
    from perflab.store import open_store

    opened = open_store(store, create=False)
    try:
        notes = opened.load_run("latest").notes
    finally:
        opened.close()
    found = (re.match(r"waited (\d+(?:\.\d+)?) s for CPU", n.message) for n in notes)
    return sum(float(m.group(1)) for m in found if m)


def verdicts(path: Path) -> dict[str, str]:
    document = json.loads(path.read_text())
    found = {
        f"{c['benchmark']} {c['variant']} vs {c['baseline']} {c['metric']}": c["verdict"]
        for c in document["comparisons"]
    }
    for i in document.get("interactions", []):
        found[f"{i['benchmark']} {i['change']} on {i['base']} {i['metric']}"] = i["verdict"]
    return found


def timed_matrix(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    from ray.cluster_utils import Cluster

    repo, patch = make_matrix_repo(scratch)
    cache = scratch / "cache"
    matrix(repo, patch, cache, 1, args.budget, scratch / "warm.json", None)  # builds
    figures: dict[str, Any] = {"cells": args.cells, "budget_s": args.budget}
    load = {"sequential": os.getloadavg()[0]}
    figures["sequential_s"] = matrix(
        repo, patch, cache, args.cells, args.budget, scratch / "seq.json", None
    )
    results = {"sequential": verdicts(scratch / "seq.json")}
    figures["sequential_cpu_waits_s"] = cpu_waits_s(cache / "perflab.db")
    for nodes in (1, 2):
        started = time.monotonic()
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 2})
        for _ in range(nodes - 1):
            cluster.add_node(num_cpus=2)
        cluster.wait_for_nodes()
        figures[f"cluster_start_{nodes}_nodes_s"] = time.monotonic() - started
        load[f"{nodes}_nodes"] = os.getloadavg()[0]
        try:
            out = scratch / f"ray{nodes}.json"
            figures[f"ray_{nodes}_nodes_s"] = matrix(
                repo, patch, cache, args.cells, args.budget, out, cluster.address
            )
            results[f"ray_{nodes}_nodes"] = verdicts(out)
            figures[f"ray_{nodes}_nodes_cpu_waits_s"] = cpu_waits_s(cache / "perflab.db")
        finally:
            cluster.shutdown()
    figures["load_before"] = load
    reference = results["sequential"]
    figures["verdicts"] = len(reference)
    figures["verdicts_agree"] = all(r == reference for r in results.values())
    figures["verdict_counts"] = {
        v: list(reference.values()).count(v) for v in set(reference.values())
    }
    overhead = figures["ray_1_nodes_s"] - figures["sequential_s"]
    figures["overhead_per_cell_s"] = overhead / args.cells
    waits = figures["ray_1_nodes_cpu_waits_s"] - figures["sequential_cpu_waits_s"]
    figures["overhead_per_cell_without_cpu_waits_s"] = (overhead - waits) / args.cells
    figures["speedup_2_nodes"] = figures["sequential_s"] / figures["ray_2_nodes_s"]
    return figures


def _write(location: str, n: int, start_at: float = 0.0) -> tuple[float, float]:
    """Write a run of n samples, from the wall-clock time start_at; (started, finished)."""
    from perflab.api import make_experiment
    from perflab.records.kinds import Metric, RunStatus
    from perflab.records.model import Sample
    from perflab.records.run_facts import MachineInfo
    from perflab.store import open_store

    store = open_store(location)
    writer = store.begin_run(
        make_experiment(stmt="pass", variants=["A", "B"]), MachineInfo.from_json({}), "bench"
    )
    time.sleep(max(0.0, start_at - time.time()))  # writers started together write together
    started = time.time()
    for i in range(n):
        writer.add_sample(
            Sample(
                benchmark="pass", variant="AB"[i % 2], metric=Metric.TIME, name="wall_ns",
                value=float(i), loops=1, generation=i // 100, block=i % 100, position=i % 2,
                cpu=0, at_ns=time.monotonic_ns(), warmup=False, run_queue_ns=0, cpu_ns=1,
                involuntary_switches=0,
            )
        )  # fmt: skip
    finished = time.time()
    writer.finish(RunStatus.COMPLETE)
    store.close()
    return started, finished


def write_rates(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    from tests.support import postgres_server

    figures: dict[str, Any] = {
        "samples_per_writer": args.samples,
        "load_before": os.getloadavg()[0],
    }
    with postgres_server.postgresql_server() as server:
        for label, location in (
            ("sqlite", str(scratch / "rate.db")),
            ("postgresql", postgres_server.new_database(server, "rate")),
        ):
            started, finished = _write(location, args.samples)
            figures[f"{label}_1_writer_samples_per_s"] = args.samples / (finished - started)
            context = multiprocessing.get_context("spawn")
            start_at = time.time() + 15  # after every writer has imported perflab
            with context.Pool(4) as pool:
                spans = pool.starmap(_write, [(location, args.samples, start_at)] * 4)
            took = max(f for _, f in spans) - min(s for s, _ in spans)
            figures[f"{label}_4_writers_samples_per_s"] = 4 * args.samples / took
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cells", type=int, default=16)
    parser.add_argument("--budget", type=float, default=5.0)
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--skip-matrix", action="store_true")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "scale.json")
    args = parser.parse_args()
    report: dict[str, Any] = {"machine": machine()}
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        report["store"] = write_rates(args, scratch)
        print(json.dumps(report["store"], indent=2), flush=True)
        if not args.skip_matrix:
            report["matrix"] = timed_matrix(args, scratch)
            print(json.dumps(report["matrix"], indent=2), flush=True)
    report["machine"]["load_after"] = os.getloadavg()
    args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
