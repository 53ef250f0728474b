"""Cells on a real local Ray cluster of two nodes (ray.cluster_utils.Cluster): results streamed
into the driver's store, the node of each cell recorded, a cell failing for its own reasons not
retried, a node killed mid-cell and its cell measured again from scratch, never mixed, and
git= cells measured from the driver's bundle of commits without the repository.

Few and small on purpose: a cluster takes tens of seconds to start on a busy 2-core machine."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from perflab import api
from perflab.engine import cluster as cluster_module
from perflab.engine.cluster import ABANDONED
from perflab.git.bundle import node_repository
from perflab.records.kinds import ArtifactScope, Metric, RunStatus
from perflab.records.model import Experiment
from perflab.store import SqliteStore
from tests.support.fast_settings import FAST

pytestmark = pytest.mark.integration
ray = pytest.importorskip("ray", reason="Ray is not installed (perflab[cluster])")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    from ray.cluster_utils import Cluster

    made = Cluster(initialize_head=True, head_node_args={"num_cpus": 2})
    made.add_node(num_cpus=2)
    made.wait_for_nodes()
    yield made
    made.shutdown()


def experiment(
    address: str, *, budget_s: float, min_generations: int = FAST.min_generations, **kwargs: Any
) -> Experiment:
    made = api.make_experiment(**kwargs)
    settings = dataclasses.replace(
        FAST,
        metrics=(Metric.TIME,),
        budget_s=budget_s,
        min_generations=min_generations,
        ray=True,
        ray_address=address,
    )
    return dataclasses.replace(made, settings=settings)


def cells(store: SqliteStore, run_id: int) -> dict[str, list[dict[str, Any]]]:
    """Per benchmark, the attempts that measured it (node, machine facts)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for artifact in store.load_run(run_id).artifacts:
        if artifact.metric == ArtifactScope.CLUSTER:
            found.setdefault(artifact.benchmark, []).append(json.loads(artifact.content))
    return found


def test_cells_stream_into_one_run_and_a_failing_cell_is_not_retried(
    cluster: Any, tmp_path: Path
) -> None:
    exp = experiment(
        cluster.address,
        budget_s=0.5,
        name="stmt",
        stmt="sum(range($n))",
        params={"n": ["50", "100"]},
        # the variant's build fails at one parameter point: that cell's own failure
        variants=["A", "B build='test $n -lt 100'"],
    )
    result = api.run(exp, store_path=tmp_path / "s.db")
    assert result.status is RunStatus.INCOMPLETE
    assert [c.benchmark for c in result.comparisons] == ["stmt[n=50]"]
    assert len(result.failures) == 1 and "stmt[n=100]" in str(result.failures[0].benchmark)
    store = SqliteStore.open(tmp_path / "s.db", create=False)
    measured = cells(store, result.run_id)
    node_ids = {n["NodeID"] for n in ray.nodes()} if ray.is_initialized() else None
    assert set(measured) == {"stmt[n=50]", "stmt[n=100]"}
    for attempts in measured.values():
        (attempt,) = attempts  # one attempt each: the failing cell was not measured again
        assert attempt["attempt"] == 1 and attempt["node_id"] and attempt["hostname"]
        if node_ids:
            assert attempt["node_id"] in node_ids
    run = store.load_run(result.run_id)
    assert {s.benchmark for s in run.samples} == {"stmt[n=50]"}
    assert any("measured on the Ray node" in n.message for n in result.notes)
    assert run.machine["cluster"]["nodes"] == 2
    store.close()


def _processes_with(marker: str) -> list[int]:
    """Processes whose environment holds `marker` (the variants' statement workers)."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker.encode() in environ.read_bytes():
                found.append(int(environ.parent.name))
        except OSError:
            continue
    return found


def test_ctrl_c_cancels_the_cells_and_leaves_no_worker(cluster: Any, tmp_path: Path) -> None:
    marker = f"PERFLAB_RAY_TEST_{uuid.uuid4().hex}"
    path = tmp_path / "s.db"
    process = subprocess.Popen(
        [
            sys.executable, "-m", "perflab.cli.main", "run", "--name", "slow",
            "--stmt", "time.sleep(0.001)", "--setup", "import time", "--param", "k=1,2",
            "--variant", f"A env.MARK={marker}", "--variant", f"B env.MARK={marker}",
            "--metric", "time", "--budget", "120", "--ray", cluster.address,
            "--store", str(path), "-q",
        ],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.5)
        if _processes_with(marker) and path.exists():
            store = SqliteStore.open(path, create=False)
            try:
                if len(store.load_run("latest").samples) > 0:
                    break
            except Exception:
                pass
            finally:
                store.close()
    assert process.poll() is None, process.communicate()
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=90)
    assert process.returncode == 130, stderr
    assert "interrupted; what was measured is kept as run 1" in " ".join(stderr.split())
    store = SqliteStore.open(path, create=False)
    run = store.load_run(1)
    store.close()
    assert run.status is RunStatus.INCOMPLETE and run.samples
    deadline = time.monotonic() + 30
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _processes_with(marker) == []


def test_a_node_dying_mid_cell_is_measured_again_elsewhere(cluster: Any, tmp_path: Path) -> None:
    worker = cluster.list_all_nodes()[-1]
    assert not worker.head
    exp = experiment(
        cluster.address,
        # long enough that the cell still measures when its node is removed, even where a busy
        # machine's start-up (worker, imports) takes most of a short budget before the first sample;
        # a cell that ends first is (rightly) not measured again, and the test would see nothing
        budget_s=20.0,
        name="stmt",
        stmt="time.sleep(0.0005)",
        setup="import time",
        params={"k": ["1", "2"]},
        variants=["A", "B"],
    )
    path = tmp_path / "s.db"
    outcome: dict[str, Any] = {}

    def measure() -> None:
        try:
            outcome["result"] = api.run(exp, store_path=path)
        except BaseException as error:
            outcome["error"] = error

    thread = threading.Thread(target=measure)
    thread.start()
    killed_benchmark = None
    deadline = time.monotonic() + 240
    while killed_benchmark is None and time.monotonic() < deadline and thread.is_alive():
        time.sleep(0.5)
        if not path.exists():
            continue
        store = SqliteStore.open(path, create=False)
        try:
            run = store.load_run("latest")
        except Exception:
            continue
        finally:
            store.close()
        on_worker = {
            a.benchmark
            for a in run.artifacts
            if a.metric == ArtifactScope.CLUSTER
            and json.loads(a.content)["node_id"] == worker.node_id
        }
        if any(s.benchmark in on_worker for s in run.samples):
            killed_benchmark = next(
                b for b in on_worker if any(s.benchmark == b for s in run.samples)
            )
            cluster.remove_node(worker)
    thread.join(300)
    assert killed_benchmark is not None, "no cell was measuring on the worker node"
    assert "error" not in outcome, outcome.get("error")
    result = outcome["result"]
    assert result.status is RunStatus.COMPLETE
    assert sorted(c.benchmark for c in result.comparisons) == ["stmt[k=1]", "stmt[k=2]"]
    store = SqliteStore.open(path, create=False)
    run = store.load_run(result.run_id)
    attempts = cells(store, result.run_id)
    store.close()
    # the killed cell: measured again on the head node; its first attempt kept apart
    (again,) = attempts[killed_benchmark]
    assert again["attempt"] == 2 and again["node_id"] != worker.node_id
    abandoned = {s.benchmark for s in run.samples if ABANDONED in s.benchmark}
    assert len(abandoned) == 1 and killed_benchmark in next(iter(abandoned))
    # no cell counted twice: the analysed samples are the second attempt's only
    generations = [
        (s.variant, s.generation, s.block, s.position)
        for s in run.samples
        if s.benchmark == killed_benchmark
    ]
    assert len(generations) == len(set(generations))
    assert any("measured again from scratch" in n.message for n in result.notes)


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo, check=True, capture_output=True, text=True,
    )  # fmt: skip
    return done.stdout.strip()


def _commit(repo: Path, message: str, files: dict[str, str]) -> None:
    for name, text in files.items():
        (repo / name).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)


@pytest.mark.skipif(not shutil.which("git"), reason="needs git")
def test_git_cells_get_their_commits_as_a_bundle_without_the_repository(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A matrix (bases main and other, the change fix as a commit) whose repository is moved
    away once the driver has bundled its commits, before any cell starts: the cells check out
    and measure the driver's commits from the bundle alone."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    mod = "from speed import N\n\ndef work():\n    return sum(range(N))\n"
    _commit(repo, "base", {"mod.py": mod, "speed.py": "N = 2000\n"})
    _git(repo, "checkout", "-q", "-b", "other")
    _commit(repo, "other", {"mod.py": "# other\n" + mod})
    _git(repo, "checkout", "-q", "-b", "fix", "main")
    _commit(repo, "fix", {"speed.py": "N = 200\n"})
    _git(repo, "checkout", "-q", "main")
    commits = {ref: _git(repo, "rev-parse", ref) for ref in ("main", "other", "fix")}
    (repo / "speed.py").write_text("N = 1\n")  # uncommitted: git=main (HEAD) measures without it
    made = api.make_matrix(
        ["main", "other"],
        ["fix"],
        repository=repo,
        name="stmt",
        stmt="mod.work()",
        setup="import mod",
        each="env.PYTHONPATH=.",
        params={"k": ["1", "2"]},
    )
    settings = dataclasses.replace(
        FAST, metrics=(Metric.TIME,), budget_s=1.0, ray=True, ray_address=cluster.address
    )
    exp = dataclasses.replace(made, settings=settings)
    moved = tmp_path / "moved-away"
    origin = os.path.realpath(repo)
    real_bundle = cluster_module.bundle_commits

    def bundle_then_move(experiment: Experiment, **kwargs: Any) -> Any:
        made = real_bundle(experiment, **kwargs)
        repo.rename(moved)  # from here on no process sees the repository at its path
        return made

    monkeypatch.setattr(cluster_module, "bundle_commits", bundle_then_move)
    cache = tmp_path / "cache"
    result = api.run(exp, store_path=tmp_path / "s.db", cache_dir=cache)
    assert moved.is_dir() and not repo.exists()
    assert not result.failures, result.failures
    assert result.status is RunStatus.COMPLETE
    assert {(c.benchmark, c.baseline, c.variant) for c in result.comparisons} >= {
        (f"stmt[k={k}]", base, f"fix@{base}") for k in ("1", "2") for base in ("main", "other")
    }
    for variant, ref in (("main", "main"), ("other", "other"), ("fix@main", "main")):
        info = result.variant_info[variant].provenance
        assert info["commit"] == commits[ref]
        assert info["ref"] == ref  # the name given, as on one machine
        assert info["checkout"].startswith(str(cache))
    fixed = result.variant_info["fix@other"].provenance
    assert fixed["changes"][0]["source"] == commits["fix"]
    assert fixed["changes"][0]["name"] == "fix"
    warned = [n for n in result.notes if "uncommitted changes" in n.message]
    assert len(warned) == 1 and "git=main means" in warned[0].message
    store = SqliteStore.open(tmp_path / "s.db", create=False)
    measured = cells(store, result.run_id)
    store.close()
    assert all(a[-1]["reference_ns"] > 0 for a in measured.values())  # timed on each node
    # two cells at once need both nodes (2 CPUs each): the run says so, and only then
    on_two = len({a[-1]["node_id"] for a in measured.values()}) > 1
    assert on_two == any("cells were measured on 2 nodes" in n.message for n in result.notes)
    arrived = [n.message for n in result.notes if "git bundle" in n.message]
    assert len(arrived) == 2 and all("it is not on this node" in m for m in arrived)
    assert sum("unpacked into" in m for m in arrived) == 1  # the nodes share this machine's cache
    assert sum("was not needed here" in m for m in arrived) == 1
    assert node_repository(cache, origin).is_dir()
