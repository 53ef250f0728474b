"""A bundle is not made or sent again for nothing: the driver reuses the bundle of the same
commits from its cache, and a node fetches the bundle's data only when its copy lacks a
commit."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from perflab.git.bundle import BUNDLES, KEPT_BUNDLES, bundle_commits, unpack_commits
from perflab.machine.proc import LaunchSpec, SubprocessRunner
from perflab.records.model import Benchmark, Experiment, Variant
from tests.support.git_repo import commit, git

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]


class CountingRunner(SubprocessRunner):
    """The real runner, counting the `git bundle create` it runs."""

    def __init__(self) -> None:
        super().__init__()
        self.bundles_made = 0

    def run(self, spec: LaunchSpec, *args: Any, **kwargs: Any) -> Any:
        if spec.argv[1:3] == ("bundle", "create"):
            self.bundles_made += 1
        return super().run(spec, *args, **kwargs)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for number in range(KEPT_BUNDLES + 2):
        commit(repo, f"c{number}", {"mod.py": f"X = {number}\n"})
    return repo


def experiment_of(repo: Path, *refs: str) -> Experiment:
    return Experiment(
        benchmarks=(Benchmark(name="b", stmt="mod.X", setup="import mod"),),
        variants=tuple(Variant(f"v{i}", git=ref) for i, ref in enumerate(refs)),
        repository=str(repo),
    )


def test_the_driver_reuses_a_bundle_of_the_same_commits(repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    runner = CountingRunner()
    first = bundle_commits(experiment_of(repo, "main~1", "main"), runner, cache_dir=cache)
    again = bundle_commits(experiment_of(repo, "main~1", "main"), runner, cache_dir=cache)
    assert first is not None and again is not None
    assert runner.bundles_made == 1 and again.data == first.data
    assert again.size_bytes == len(first.data) > 0
    other = bundle_commits(experiment_of(repo, "main~2", "main"), runner, cache_dir=cache)
    assert other is not None and runner.bundles_made == 2 and other.data != first.data
    for back in range(KEPT_BUNDLES + 1):  # the cache keeps the most recently used only
        bundle_commits(experiment_of(repo, f"main~{back}"), runner, cache_dir=cache)
    assert len(list((cache / BUNDLES).glob("*.bundle"))) == KEPT_BUNDLES
    bundle_commits(experiment_of(repo, "main~1", "main"), runner)  # no cache: made again
    assert runner.bundles_made == 2 + KEPT_BUNDLES + 1 + 1


def test_a_node_fetches_the_data_only_when_its_copy_lacks_a_commit(
    repo: Path, tmp_path: Path
) -> None:
    experiment = experiment_of(repo, "main~1", "main")
    bundle = bundle_commits(experiment)
    assert bundle is not None
    sent = replace(bundle, data=b"")  # as a cell's task gets it
    fetched: list[int] = []

    def fetch() -> bytes:
        fetched.append(1)
        return bundle.data

    node_cache = tmp_path / "node-cache"
    first = unpack_commits(experiment, sent, cache_dir=node_cache, fetch=fetch)
    assert len(fetched) == 1 and "unpacked into" in first.plan_notes[-1]
    second = unpack_commits(experiment, sent, cache_dir=node_cache, fetch=fetch)
    assert len(fetched) == 1  # the copy had every commit: nothing fetched
    assert "already all in" in second.plan_notes[-1]
    assert "was not needed here" in second.plan_notes[-1]
    assert f"{bundle.size_bytes / 2**20:.1f} MiB" in second.plan_notes[-1]
