"""git= variants, perflab stack and perflab matrix on a small repository made here, checked
with the instructions lens (deterministic counts), so the verdicts are known in advance."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from perflab import api
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric, Verdict
from perflab.records.results import InteractionVerdict, RunResult
from perflab.report.json_report import run_to_json
from tests.support.git_repo import commit, git

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        shutil.which("valgrind") is None or shutil.which("gcc") is None or not shutil.which("git"),
        reason="needs valgrind, gcc and git",
    ),
]

MAIN_C = """#include "config.h"
int work_a(int n);
int work_b(int n);
int extra(int n);
int main(void) {
    volatile int r = 0;
    r += USE_B ? work_b(200000) : work_a(200000);
    r += extra(EXTRA);
    return 0;
}
"""
A_C = "int work_a(int n) { int s = 0; for (int i = 0; i < n; i += STEP_A) s += i % 7; return s; }\n"
B_C = "int work_b(int n) { int s = 0; for (int i = 0; i < n; i += STEP_B) s += i % 5; return s; }\n"
EXTRA_C = "int extra(int n) { int s = 0; for (int i = 0; i < n; i++) s += i % 3; return s; }\n"
BUILD = "gcc -O1 -DSTEP_A=$(cat step_a) -DSTEP_B=$(cat step_b) -o prog main.c a.c b.c extra.c"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main: base, faster (work_a does half the iterations), slower (extra work), neutral (a
    README); branch other: base with USE_B (work_b instead of work_a)."""
    repo = tmp_path_factory.mktemp("repo")
    git(repo, "init", "-q", "-b", "main")
    commit(
        repo,
        "base",
        {
            "main.c": MAIN_C,
            "a.c": A_C,
            "b.c": B_C,
            "extra.c": EXTRA_C,
            "config.h": "#define USE_B 0\n#define EXTRA 1000\n",
            "step_a": "1\n",
            "step_b": "1\n",
            "mod.py": "def work():\n    return sum(range(2000))\n",
            "README": "a test repository\n",
        },
    )
    git(repo, "tag", "base")
    git(repo, "branch", "other")
    commit(repo, "faster: work_a takes every other number", {"step_a": "2\n"})
    commit(
        repo,
        "slower: more extra work",
        {"config.h": "#define USE_B 0\n#define EXTRA 300000\n"},
    )
    commit(repo, "neutral: a README", {"README": "a test repository, documented\n"})
    git(repo, "checkout", "-q", "other")
    commit(repo, "other: use work_b", {"config.h": "#define USE_B 1\n#define EXTRA 1000\n"})
    git(repo, "checkout", "-q", "main")
    return repo


def user_state(repo: Path) -> tuple[str, ...]:
    return (
        git(repo, "rev-parse", "HEAD"),
        git(repo, "symbolic-ref", "HEAD"),
        git(repo, "status", "--porcelain"),
        git(repo, "stash", "list"),
        hashlib.sha256((repo / ".git" / "index").read_bytes()).hexdigest(),
    )


COMMON = dict(
    cmd="./prog",
    build=BUILD,
    metrics="instructions",
    store_path=None,
)


def run_stack(repo: Path, cache: Path, range_text: str) -> RunResult:
    experiment = api.make_stack(
        range_text,
        repository=repo,
        cmd="./prog",
        build=BUILD,
        metrics="instructions",
    )
    return api.run(experiment, store_path=None, cache_dir=cache)


def instructions(result: RunResult, baseline: str, variant: str) -> Verdict:
    found = [
        c
        for c in result.comparisons
        if c.metric is Metric.INSTRUCTIONS
        and c.event is None
        and (c.baseline, c.variant) == (baseline, variant)
    ]
    assert len(found) == 1, (baseline, variant, result.comparisons)
    return found[0].verdict


def test_stack_measures_each_step_against_its_parent_and_the_whole_range(
    repo: Path, tmp_path: Path
) -> None:
    before = user_state(repo)
    result = run_stack(repo, tmp_path / "cache", "base..main")
    assert user_state(repo) == before
    assert not result.failures
    assert [v.name for v in result.experiment.variants] == ["base", "step1", "step2", "step3"]
    assert instructions(result, "base", "step1") is Verdict.FASTER
    assert instructions(result, "step1", "step2") is Verdict.SLOWER
    assert instructions(result, "step2", "step3") is Verdict.EQUIVALENT
    assert instructions(result, "base", "step3") is Verdict.SLOWER  # extra work outweighs
    (summary,) = [s for s in result.stacks if s.metric is Metric.INSTRUCTIONS and not s.event]
    assert summary.consistent
    assert summary.product.ratio == pytest.approx(summary.whole.ratio, rel=1e-6)
    document = run_to_json(result)
    pairs = [(c["baseline"], c["variant"]) for c in document["comparisons"] if "event" not in c]
    assert pairs == [("base", "step1"), ("step1", "step2"), ("step2", "step3"), ("base", "step3")]
    provenance = result.variant_info["step1"].provenance
    assert provenance["commit"] == git(repo, "rev-parse", "main~2")
    assert provenance["tree"] == git(repo, "rev-parse", "main~2^{tree}")
    assert provenance["build"] == BUILD
    assert document["stack"][0]["consistent"] is True

    # again: every checkout and build comes from the cache
    again = run_stack(repo, tmp_path / "cache", "base..main")
    assert all(info.provenance["cached"] for info in again.variant_info.values())
    assert len(api.cache_entries(tmp_path / "cache")) == 4
    removed = api.prune_cache(tmp_path / "cache")
    assert len(removed) == 4 and api.cache_entries(tmp_path / "cache") == []
    assert "perflab" not in git(repo, "worktree", "list")
    assert user_state(repo) == before


def test_matrix_finds_a_change_that_helps_on_one_base_only(repo: Path, tmp_path: Path) -> None:
    fast_a = tmp_path / "fast-a.patch"
    fast_a.write_text(git(repo, "diff", "base", "main~2") + "\n")
    broken = tmp_path / "broken.patch"
    broken.write_text("--- a/a.c\n+++ b/a.c\n@@ -1 +1 @@\n-int nothing_like_this(void);\n+int x;\n")
    before = user_state(repo)
    experiment = api.make_matrix(
        ["base", "other"],
        [str(fast_a), str(broken)],
        repository=repo,
        cmd="./prog",
        build=BUILD,
        metrics="instructions",
    )
    result = api.run(experiment, store_path=None, cache_dir=tmp_path / "cache")
    assert user_state(repo) == before
    # the broken patch applies to neither base: its cells are reported, the others measured
    assert {f.variant for f in result.failures} == {"broken@base", "broken@other"}
    assert all("does not apply" in f.message for f in result.failures)
    assert instructions(result, "base", "fast-a@base") is Verdict.FASTER
    assert instructions(result, "other", "fast-a@other") is Verdict.EQUIVALENT
    (interaction,) = [
        i for i in result.interactions if i.metric is Metric.INSTRUCTIONS and i.event is None
    ]
    assert (interaction.change, interaction.base, interaction.reference_base) == (
        "fast-a",
        "other",
        "base",
    )
    assert interaction.ratio > 1.2
    assert interaction.verdict is InteractionVerdict.WORSE_ON_BASE
    document = run_to_json(result)
    fields = {"change", "base", "reference_base", "ratio", "ci_low", "ci_high", "verdict"}
    assert fields <= set(document["interactions"][0])


def test_bad_refs_and_builds_are_reported_and_other_cells_kept(repo: Path, tmp_path: Path) -> None:
    (repo / "README").write_text("dirty\n")  # an uncommitted change in the user's tree
    try:
        before = user_state(repo)
        experiment = api.make_experiment(
            cmd="./prog",
            build=BUILD,
            metrics="instructions",
            variants=[
                "head git=HEAD",
                "base git=base",
                "missing git=no-such-ref",
                "broken git=base build=false",
                f"hangs git=base build='sleep 30; {BUILD}'",
            ],
            build_timeout_s=2,
        )
        # the experiment is planned in the repository perflab runs in: give it explicitly
        experiment = experiment.__class__(**{**experiment.__dict__, "repository": str(repo)})
        result = api.run(experiment, store_path=None, cache_dir=tmp_path / "cache")
        assert user_state(repo) == before
    finally:
        git(repo, "checkout", "README")
    failed = {f.variant: f for f in result.failures}
    assert set(failed) == {"missing", "broken", "hangs"}
    assert "no-such-ref" in failed["missing"].message
    assert "exited with status 1" in failed["broken"].message
    assert "timed out" in failed["hangs"].message
    assert instructions(result, "head", "base") is Verdict.FASTER  # base lacks the extra work
    dirty = [n for n in result.notes if "uncommitted" in n.message]
    assert dirty and "as committed" in dirty[0].message
    assert "(changed: README)" in dirty[0].message  # the file name whole


def test_range_with_merges_and_missing_build_are_refused(repo: Path, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(clone, "checkout", "-q", "-b", "merged", "origin/main")
    git(clone, "merge", "-q", "--no-edit", "origin/other", "-X", "ours")
    with pytest.raises(ConfigError, match="merge commits.*--first-parent"):
        api.make_stack("base..merged", repository=clone, cmd="./prog", first_parent=False)
    # by default a range with merges is followed along its first-parent line, and says so
    followed = api.make_stack("base..merged", repository=clone, cmd="./prog")
    assert len(followed.variants) == 5  # base, the three commits of main, the merge
    assert "first-parent line (it holds merges)" in followed.plan_notes[0]
    with pytest.raises(ConfigError, match="is not a range"):
        api.make_stack("main", repository=clone, cmd="./prog")
    experiment = api.make_stack(
        "base..origin/main~2",
        repository=clone,
        cmd="./prog",
        metrics="instructions",
    )
    result = api.run(experiment, store_path=None, cache_dir=tmp_path / "cache")
    assert {f.variant for f in result.failures} == {"base", "step1"}
    assert all("no build command was given" in f.message for f in result.failures)
    assert not result.comparisons


def test_statement_stack_with_a_per_ref_interpreter(repo: Path, tmp_path: Path) -> None:
    """A Python module: each ref gets its own virtual environment (the build), whose
    interpreter runs the statement."""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(clone, "checkout", "-q", "-b", "py", "origin/main")
    commit(clone, "mod: faster", {"mod.py": "def work():\n    return 1999000\n"})
    experiment = api.make_stack(
        "HEAD~1..HEAD",
        repository=clone,
        stmt="mod.work()",
        setup="import mod",
        each="python=venv/bin/python env.PYTHONPATH=.",
        build="python3 -m venv --without-pip venv",
        metrics="instructions",
    )
    result = api.run(experiment, store_path=None, cache_dir=tmp_path / "cache")
    assert not result.failures
    assert instructions(result, "base", "step1") is Verdict.FASTER
    python = result.experiment.variants[1].python
    assert python == "venv/bin/python"
    assert result.variant_info["step1"].python_version


def test_params_choose_the_ref_of_each_benchmark(repo: Path, tmp_path: Path) -> None:
    experiment = api.make_experiment(
        cmd="./prog",
        name="prog",
        build=BUILD,
        metrics="instructions",
        variants=["old git=base", "new git=$ref"],
        params={"ref": ["main~2", "main~1"]},
    )
    experiment = experiment.__class__(**{**experiment.__dict__, "repository": str(repo)})
    result = api.run(experiment, store_path=None, cache_dir=tmp_path / "cache")
    assert not result.failures
    verdicts = {
        c.benchmark: c.verdict
        for c in result.comparisons
        if c.metric is Metric.INSTRUCTIONS and c.event is None
    }
    assert verdicts == {"prog[ref=main~2]": Verdict.FASTER, "prog[ref=main~1]": Verdict.SLOWER}
