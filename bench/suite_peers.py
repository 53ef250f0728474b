"""A project's own suite through perflab and through the suite's own tool, A/A and A/B.

For each suite kind in examples/ (pytest_suite, asv_suite, gbench_suite), two cases:
- A/A: identical variants; every benchmark called different is a false claim;
- A/B: one benchmark does ~3% more work (the others are unchanged); is it found, and is
  anything else called different?
each measured by `perflab run --pytest/--asv/--gbench` and by the suite's own comparison:
- pytest-benchmark: `pytest --benchmark-save` twice, the second with `--benchmark-compare
  --benchmark-compare-fail=mean:3%` (the gate users put in CI; it flags regressions only);
- asv: `asv run --python=same --set-commit-hash` on each of two commits of a scratch repository,
  then `asv compare` (what `asv continuous` runs, without building an environment per commit,
  which needs the network); its default factor 1.1, and 1.02 from the same results;
- Google Benchmark: its `compare.py benchmarks OLD NEW` with 9 repetitions (its U test's
  "optimal" count), a benchmark called different when the test's p-value on real time < 0.05.

The plant: pytest, `test_sorted[10000]` sorts 3% more numbers; asv, `time_sum` sums 3% more; a
number read from the environment (PEERS_PLANT) so that the benchmark's source, and asv's version
hash of it, stay the same. Google Benchmark: two builds of bench.cc, -DSUM_LENGTH=4219 against
4096 (3% more in BM_Sum, the code unchanged); the A/A builds are two byte-identical binaries.

Peers come from a throwaway environment (see docs/benchmarks.md):
    python -m venv /tmp/peers-venv
    /tmp/peers-venv/bin/pip install pytest pytest-benchmark asv scipy
    apt-get install -y libbenchmark-tools   # /usr/share/benchmark/compare.py

Usage: PYTHONPATH=src .venv/bin/python bench/suite_peers.py [--quick] [--budget 5] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from machine_facts import machine

ROOT = Path(__file__).resolve().parent.parent
PLANT = 1.03
METRIC = "time"  # perflab's lens: --metric instructions asks the same of instruction counts

PYTEST_PLANTED = "test_sort.py::test_sorted[10000]"
ASV_PLANTED = "bench_sort.time_sum"
GBENCH_PLANTED = "BM_Sum"


@dataclass(frozen=True)
class Verdict:
    """One tool's word on one benchmark: `different` when the tool calls it so."""

    benchmark: str
    different: bool
    ratio: float | None
    word: str


@dataclass(frozen=True)
class Outcome:
    tool: str
    suite: str
    case: str  # "A/A" or "A/B"
    verdicts: tuple[Verdict, ...]
    planted: str
    wall_s: float
    note: str = ""

    def planted_verdict(self) -> Verdict | None:
        return next((v for v in self.verdicts if v.benchmark == self.planted), None)

    def false_claims(self) -> int:
        return sum(
            v.different for v in self.verdicts if self.case == "A/A" or v.benchmark != self.planted
        )


# --- parsing each tool's answer (pure) -----------------------------------------------------


def perflab_verdicts(document: dict, metric: str = "time") -> list[Verdict]:
    """perflab's JSON: `slower`/`faster` is a claim, anything else is not."""
    return [
        Verdict(c["benchmark"], c["verdict"] in ("slower", "faster"), c.get("ratio"), c["verdict"])
        for c in document["comparisons"]
        if c.get("metric") == metric
    ]


_PB_FAILED = re.compile(r"^\s*(\S+) \(\d+_\S*\) - Field '(\w+)' has failed", re.MULTILINE)


def pytest_benchmark_verdicts(output: str, before: dict, after: dict) -> list[Verdict]:
    """The gate's failures (`--benchmark-compare-fail`) in pytest's output, the ratio of the
    saved runs' means. The gate names a test by pytest-benchmark's `name` (`test_sorted[10000]`)."""
    failed = set(_PB_FAILED.findall(output))
    failed_names = {name for name, _ in failed}
    means_before = {b["fullname"]: (b["name"], b["stats"]["mean"]) for b in before["benchmarks"]}
    out = []
    for bench in after["benchmarks"]:
        name, mean_before = means_before.get(bench["fullname"], (bench["name"], None))
        ratio = bench["stats"]["mean"] / mean_before if mean_before else None
        different = name in failed_names
        out.append(
            Verdict(bench["fullname"], different, ratio, "gate failed" if different else "passed")
        )
    return out


# asv compare's rows: "| Change | Before | After | Ratio | Benchmark (Parameter) |", the Change
# cell "+" (slower) or "-" (faster) when significant and beyond the factor, "x"/"!" when failed;
# a ratio "~1.21" is beyond the factor but not significant; "n/a" on both sides is skipped


def asv_compare_verdicts(output: str) -> list[Verdict]:
    """asv compare's table: `+`/`-` are claims; a combination skipped on both sides is left out."""
    out = []
    for line in output.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 5 or cells[0] not in ("", "+", "-", "x", "!"):
            continue
        mark, before, after, ratio_text, name = cells
        if before == after == "n/a":
            continue
        try:
            ratio: float | None = float(ratio_text.lstrip("~"))
        except ValueError:
            ratio = None
        if mark in ("+", "-"):
            word = {"+": "slower", "-": "faster"}[mark]
        else:
            word = "not significant" if ratio_text.startswith("~") else "same"
        out.append(Verdict(name, mark in ("+", "-"), ratio, word))
    return out


def compare_py_verdicts(diff_report: list[dict], alpha: float = 0.05) -> list[Verdict]:
    """compare.py's `--dump_to_json`: the U test's p-value on real time below alpha is a claim;
    the ratio is the medians' (its `_median` aggregate row)."""
    medians = {
        d["name"].removesuffix("_median"): 1.0 + d["measurements"][0]["time"]
        for d in diff_report
        if d.get("aggregate_name") == "median"
    }
    out = []
    for d in diff_report:
        if d.get("run_type") == "aggregate" or d["name"] == "OVERALL_GEOMEAN":
            continue
        pvalue = (d.get("utest") or {}).get("time_pvalue")
        different = pvalue is not None and pvalue < alpha
        word = f"p={pvalue:.3f}" if pvalue is not None else "no U test"
        out.append(Verdict(d["name"], different, medians.get(d["name"]), word))
    return out


# --- the suites ----------------------------------------------------------------------------


def _plant(text: str, old: str, new: str) -> str:
    if old not in text:
        raise SystemExit(f"the example changed: {old!r} is not in it any more")
    return text.replace(old, new, 1)


def make_pytest_suite(where: Path) -> Path:
    source = (ROOT / "examples/pytest_suite/test_sort.py").read_text()
    source = _plant(source, "import random\n", "import os\nimport random\n")
    source = _plant(
        source,
        "result = benchmark(sorted, range(n, 0, -1))",
        "planted = float(os.environ.get('PEERS_PLANT', '1')) if n == 10000 else 1.0\n"
        "    result = benchmark(sorted, range(round(n * planted), 0, -1))",
    )
    where.mkdir()
    (where / "test_sort.py").write_text(source)
    return where


def make_asv_repo(where: Path) -> tuple[Path, str, str]:
    """A git repository holding the asv example (the plant in time_sum), two commits."""
    shutil.copytree(ROOT / "examples/asv_suite", where)
    module = where / "benchmarks/bench_sort.py"
    source = _plant(module.read_text(), "import random\n", "import os\nimport random\n")
    source = _plant(
        source,
        "def time_sum():\n    sum(range(1000))",
        "SUM_LENGTH = round(1000 * float(os.environ.get('PEERS_PLANT', '1')))\n\n\n"
        "def time_sum():\n    sum(range(SUM_LENGTH))",
    )
    module.write_text(source)
    config = (where / "asv.conf.json").read_text()
    # asv's JSON allows comments; its keys beside the example's: results inside the scratch repo
    config = config.replace(
        '"benchmark_dir": "benchmarks"',
        '"benchmark_dir": "benchmarks",\n    "results_dir": ".asv/results",\n'
        '    "html_dir": ".asv/html",\n    "env_dir": ".asv/env",\n    "branches": ["main"],\n'
        '    "environment_type": "virtualenv"',
    )
    (where / "asv.conf.json").write_text(config)
    (where / ".gitignore").write_text(".asv/\n")

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=where, check=True, capture_output=True, text=True
        ).stdout.strip()

    git("init", "-q", "-b", "main")
    git("config", "user.name", "bench")
    git("config", "user.email", "bench@example.com")
    git("add", "-A")
    git("commit", "-q", "-m", "the suite")
    first = git("rev-parse", "HEAD")
    git("commit", "-q", "--allow-empty", "-m", "the change")
    second = git("rev-parse", "HEAD")
    return where, first, second


def make_gbench(where: Path) -> dict[str, Path]:
    where.mkdir()
    source = ROOT / "examples/gbench_suite/bench.cc"
    builds = {"a": [], "a2": [], "b": [f"-DSUM_LENGTH={round(4096 * PLANT)}"]}
    out = {}
    for name, flags in builds.items():
        binary = where / f"bench_{name}"
        subprocess.run(
            ["g++", "-O2", *flags, "-o", str(binary), str(source), "-lbenchmark", "-lpthread"],
            check=True,
        )
        out[name] = binary
    return out


# --- running -------------------------------------------------------------------------------


def timed(argv: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[str, float]:
    started = time.monotonic()
    done = subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.monotonic() - started
    output = done.stdout + done.stderr
    if done.returncode not in (0, 1, 3):  # 1: a gate failed; 3: perflab's incomplete run
        raise SystemExit(f"{' '.join(argv)} exited with {done.returncode}:\n{output[-3000:]}")
    return output, elapsed


def perflab(args: list[str], cwd: Path, scratch: Path, budget: float) -> tuple[dict, float]:
    out = scratch / f"perflab{time.monotonic_ns()}.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    _, wall = timed(
        [sys.executable, "-m", "perflab.cli.main", "run", *args, "--budget", str(budget),
         "--json", str(out), "--quiet", "--store", str(scratch / "perflab.db"),
         "--cache-dir", str(scratch / "cache"), "--metric", METRIC],
        cwd, env,
    )  # fmt: skip
    return json.loads(out.read_text()), wall


def env_with(plant: float) -> dict[str, str]:
    return dict(os.environ, PEERS_PLANT=str(plant))


def run_pytest(suite: Path, scratch: Path, case: str, plant: float, budget: float, peers: Path,
               quick: bool) -> list[Outcome]:  # fmt: skip
    document, wall = perflab(
        ["--pytest", "test_sort.py", "--variant", "A env.PEERS_PLANT=1",
         "--variant", f"B env.PEERS_PLANT={plant}"],
        suite, scratch, budget,
    )  # fmt: skip
    ours = Outcome(f"perflab ({METRIC})", "pytest", case, tuple(perflab_verdicts(document, METRIC)),
                   f"test_sort.py::{PYTEST_PLANTED.split('::')[1]}", wall)  # fmt: skip
    storage = scratch / f"pb-{case.replace('/', '')}"
    common = [str(peers / "pytest"), "test_sort.py", "-q", "-p", "no:cacheprovider",
              f"--benchmark-storage=file://{storage}"]  # fmt: skip
    if quick:
        common.append("--benchmark-max-time=0.2")
    _, wall_a = timed([*common, "--benchmark-save=a"], suite, env_with(1.0))
    output, wall_b = timed(
        [*common, "--benchmark-save=b", "--benchmark-compare=0001",
         "--benchmark-compare-fail=mean:3%"],
        suite, env_with(plant),
    )  # fmt: skip
    saved = sorted(storage.rglob("*.json"))
    before, after = (json.loads(p.read_text()) for p in saved[-2:])
    theirs = Outcome(
        "pytest-benchmark (mean:3% gate)", "pytest", case,
        tuple(pytest_benchmark_verdicts(output, before, after)), ours.planted, wall_a + wall_b,
    )  # fmt: skip
    # the gate flags regressions only; read both ways, as a reviewer reading the table would
    both_ways = Outcome(
        "pytest-benchmark (mean beyond ±3%)", "pytest", case,
        tuple(Verdict(v.benchmark, v.ratio is not None and abs(v.ratio - 1) > 0.03, v.ratio,
                      "beyond" if v.ratio is not None and abs(v.ratio - 1) > 0.03 else "within")
              for v in theirs.verdicts),
        ours.planted, theirs.wall_s,
    )  # fmt: skip
    return [ours, theirs, both_ways]


def run_asv(repo: Path, commits: tuple[str, str], scratch: Path, case: str, plant: float,
            budget: float, peers: Path, quick: bool) -> list[Outcome]:  # fmt: skip
    document, wall = perflab(
        ["--asv", ".", "--variant", "A env.PEERS_PLANT=1",
         "--variant", f"B env.PEERS_PLANT={plant}"],
        repo, scratch, budget,
    )  # fmt: skip
    ours = Outcome(
        f"perflab ({METRIC})",
        "asv",
        case,
        tuple(perflab_verdicts(document, METRIC)),
        ASV_PLANTED,
        wall,
    )
    asv = [str(peers / "asv"), "--config", "asv.conf.json"]
    results = repo / ".asv/results"
    shutil.rmtree(results, ignore_errors=True)
    extra = ["-a", "repeat=(1, 5, 2.0)"] if quick else []
    walls = []
    for commit, value in zip(commits, (1.0, plant), strict=True):
        _, w = timed(
            [*asv, "run", "--python=same", f"--set-commit-hash={commit}", "--bench", "time_",
             "--show-stderr", *extra],
            repo, env_with(value),
        )  # fmt: skip
        walls.append(w)
    out = []
    for factor in ("1.1", "1.02"):
        output, w = timed(
            [*asv, "compare", "--factor", factor, commits[0], commits[1]], repo, dict(os.environ)
        )
        label = (
            "asv compare (default factor 1.1)" if factor == "1.1" else "asv compare --factor 1.02"
        )
        verdicts = tuple(asv_compare_verdicts(output))
        if not verdicts:
            raise SystemExit(f"asv compare gave no rows:\n{output[-3000:]}")
        out.append(Outcome(label, "asv", case, verdicts, ASV_PLANTED, sum(walls) + w))
    return [ours, *out]


def run_gbench(binaries: dict[str, Path], scratch: Path, case: str, budget: float, peers: Path,
               quick: bool) -> list[Outcome]:  # fmt: skip
    other = binaries["a2"] if case == "A/A" else binaries["b"]
    min_time = "0.05" if quick else "0.1"
    document, wall = perflab(
        ["--gbench", str(binaries["a"]),
         "--variant", f"A cmd='{binaries['a']} --benchmark_min_time={min_time}'",
         "--variant", f"B cmd='{other} --benchmark_min_time={min_time}'"],
        scratch, scratch, budget,
    )  # fmt: skip
    verdicts = tuple(perflab_verdicts(document, METRIC))
    ours = Outcome(f"perflab ({METRIC})", "gbench", case, verdicts, GBENCH_PLANTED, wall)
    dump = scratch / f"compare-{case.replace('/', '')}.json"
    _, wall = timed(
        [str(peers / "python"), "/usr/share/benchmark/compare.py", "--no-color", "--dump_to_json",
         str(dump), "benchmarks", str(binaries["a"]), str(other),
         "--benchmark_repetitions=9", f"--benchmark_min_time={min_time}"],
        scratch,
    )  # fmt: skip
    theirs = Outcome("compare.py (U test, p<0.05)", "gbench", case,
                     tuple(compare_py_verdicts(json.loads(dump.read_text()))), GBENCH_PLANTED,
                     wall)  # fmt: skip
    return [ours, theirs]


# --- rendering -----------------------------------------------------------------------------


def table(outcomes: Sequence[Outcome]) -> str:
    rows = [
        "| suite | tool | case | benchmarks | called different (false) | planted: verdict | "
        "planted: ratio | wall (s) |",
        "|---|---|---|---:|---:|---|---:|---:|",
    ]
    for o in outcomes:
        planted = o.planted_verdict()
        if o.case == "A/A":
            verdict, ratio = "–", "–"
        elif planted is None:
            verdict, ratio = "(not reported)", "–"
        else:
            # the plant is a slowdown: a claim that it got faster finds nothing
            if planted.different and (planted.ratio is None or planted.ratio > 1):
                verdict = "**found**: " + planted.word
            else:
                verdict = ("wrong way: " if planted.different else "missed: ") + planted.word
            ratio = f"{planted.ratio:.3f}" if planted.ratio is not None else "–"
        called = sum(v.different for v in o.verdicts)
        rows.append(
            f"| {o.suite} | {o.tool} | {o.case} | {len(o.verdicts)} | {called} "
            f"({o.false_claims()}) | {verdict} | {ratio} | {o.wall_s:.0f} |"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller budgets, about 10 minutes")
    parser.add_argument("--budget", type=float, default=None, help="perflab's, per benchmark")
    parser.add_argument("--peers", type=Path, default=Path("/tmp/peers-venv/bin"))
    parser.add_argument("--suites", default="pytest,asv,gbench")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--metric", default="time", help="perflab's lens (time or instructions)")
    args = parser.parse_args()
    global METRIC
    METRIC = args.metric
    budget = args.budget or (2.0 if args.quick else 4.0)
    facts = machine(load_average_start=list(os.getloadavg()))
    started = time.monotonic()
    outcomes: list[Outcome] = []
    suites = args.suites.split(",")
    with tempfile.TemporaryDirectory(prefix="suite-peers-") as scratch_name:
        scratch = Path(scratch_name)
        pytest_suite = make_pytest_suite(scratch / "pytest_suite") if "pytest" in suites else None
        repo = make_asv_repo(scratch / "asv_repo") if "asv" in suites else None
        binaries = make_gbench(scratch / "gbench") if "gbench" in suites else None
        if repo is not None:
            subprocess.run([str(args.peers / "asv"), "machine", "--yes"], cwd=repo[0],
                           capture_output=True, check=True)  # fmt: skip
        for case, plant in (("A/A", 1.0), ("A/B", PLANT)):
            if pytest_suite is not None:
                outcomes += run_pytest(pytest_suite, scratch, case, plant, budget, args.peers,
                                       args.quick)  # fmt: skip
                print(table(outcomes[-3:]), flush=True)
            if repo is not None:
                outcomes += run_asv(repo[0], (repo[1], repo[2]), scratch, case, plant, budget,
                                    args.peers, args.quick)  # fmt: skip
                print(table(outcomes[-3:]), flush=True)
            if binaries is not None:
                outcomes += run_gbench(binaries, scratch, case, budget, args.peers, args.quick)
                print(table(outcomes[-2:]), flush=True)
    order = {"pytest": 0, "asv": 1, "gbench": 2}
    outcomes.sort(key=lambda o: (order[o.suite], not o.tool.startswith("perflab"), o.tool, o.case))
    facts["load_average_end"] = list(os.getloadavg())
    facts["wall_s"] = round(time.monotonic() - started)
    report = "\n".join(
        [
            f"perflab budget {budget:g} s per benchmark; plant {PLANT}; "
            f"command: {' '.join(sys.argv)}",
            "",
            json.dumps(facts),
            "",
            table(outcomes),
            "",
            "Per benchmark:",
            "",
            *(
                f"- {o.suite} {o.tool} {o.case}: "
                + "; ".join(
                    f"{v.benchmark} {v.word}" + (f" {v.ratio:.3f}" if v.ratio is not None else "")
                    for v in o.verdicts
                )
                for o in outcomes
            ),
        ]
    )
    print(report)
    if args.out:
        args.out.write_text(report + "\n")


if __name__ == "__main__":
    main()
