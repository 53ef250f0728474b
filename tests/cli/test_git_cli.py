"""perflab stack / matrix / cache and git= variants from the command line, on the example
repository (examples/stack/make_repo.sh), with the instructions lens."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support import cli_commands

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not (shutil.which("valgrind") and shutil.which("cc") and shutil.which("make")),
        reason="needs valgrind, cc and make",
    ),
]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "stack" / "make_repo.sh"


def perflab(*args: str, cwd: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    """Every command here builds into the test's own cache."""
    return cli_commands.perflab(*args, "--cache-dir", str(cache), cwd=cwd)


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run([str(EXAMPLE), str(tmp_path / "repo")], check=True, capture_output=True)
    return tmp_path / "repo"


def state(repo: Path) -> tuple[str, str, str]:
    return (
        git(repo, "rev-parse", "HEAD"),
        git(repo, "status", "--porcelain"),
        git(repo, "stash", "list"),
    )


def test_stack_of_the_example_writes_the_contract(repo: Path, tmp_path: Path) -> None:
    before = state(repo)
    cache = tmp_path / "cache"
    done = perflab(
        "stack", "base..main", "--cmd", "./prog", "--build", "make", "--metric", "instructions",
        "--json", "out.json", "--html", "out.html", "--store", str(tmp_path / "p.db"),
        cwd=repo, cache=cache,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "4 variants measured together" in done.stderr  # the budget split, said up front
    assert state(repo)[:1] == before[:1] and state(repo)[2] == before[2]
    document = json.loads((repo / "out.json").read_text())
    main = [c for c in document["comparisons"] if "event" not in c]
    assert [(c["baseline"], c["variant"], c["verdict"]) for c in main] == [
        ("base", "step1", "faster"),
        ("step1", "step2", "slower"),
        ("step2", "step3", "equivalent"),
        ("base", "step3", "equivalent"),
    ]
    assert document["stack"][0]["consistent"] is True
    step1 = next(v for v in document["variants"] if v["name"] == "step1")
    assert step1["info"]["provenance"]["commit"] == git(repo, "rev-parse", "main~2")
    assert 'id="details-stack"' in (repo / "out.html").read_text()
    listed = perflab(
        "list", "--json", "-", "--store", str(tmp_path / "p.db"), cwd=repo, cache=cache
    )
    assert listed.returncode == 2  # list has no --cache-dir
    listed = cli_commands.perflab(
        "list", "--json", "-", "--store", str(tmp_path / "p.db"), cwd=repo
    )
    assert listed.returncode == 0, listed.stderr
    (run,) = json.loads(listed.stdout)
    assert run["provenance"]["step3"]["commit"] == git(repo, "rev-parse", "main")
    entries = perflab("cache", "list", "--json", "-", cwd=repo, cache=cache)
    assert [e["status"] for e in json.loads(entries.stdout)] == ["built"] * 4
    assert "built" in perflab("cache", "list", cwd=repo, cache=cache).stdout
    pruned = perflab("cache", "prune", cwd=repo, cache=cache)
    assert "removed 4" in pruned.stdout
    assert git(repo, "worktree", "list").count("\n") == 0  # only the user's own tree is left


def test_matrix_and_bad_input_from_the_command_line(repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    store = ["--store", str(tmp_path / "p.db")]
    missing = perflab("stack", "nosuch..main", "--cmd", "./prog", *store, cwd=repo, cache=cache)
    assert missing.returncode == 3
    assert "git ref 'nosuch' does not exist" in " ".join(missing.stderr.split())
    no_build = perflab(
        "stack", "main~1..main", "--cmd", "./prog", "--metric", "instructions", *store,
        cwd=repo, cache=cache,
    )  # fmt: skip
    assert no_build.returncode == 3
    # each failure once where it is read: in the run's notes (the report, here a pipe) and in
    # full on stderr (a table in a pipe is not "above"): step1 and base, once each
    assert no_build.stdout.count("no build command was given") == 2
    assert no_build.stderr.count("no build command was given") == 2
    assert "perflab: run" in no_build.stderr  # the run is stored, incomplete
    with_variant = perflab(
        "stack", "main~1..main", "--cmd", "./prog", "--variant", "x", *store, cwd=repo, cache=cache
    )
    assert with_variant.returncode == 2
    assert "--variant cannot be added" in " ".join(with_variant.stderr.split())
    matrix = perflab(
        "matrix", "--base", "base", "--base", "main~2", "--change", "main~1",
        "--cmd", "./prog", "--build", "make", "--metric", "instructions", "--json", "m.json",
        "--html", "m.html", *store, cwd=repo, cache=cache,
    )  # fmt: skip
    assert matrix.returncode == 0, matrix.stderr
    document = json.loads((repo / "m.json").read_text())
    (interaction,) = [i for i in document["interactions"] if "event" not in i]
    # a second pass costs relatively less where the stride already halved the checksum
    assert interaction["change"] == "main-1"
    assert (interaction["base"], interaction["reference_base"]) == ("main-2", "base")
    expected = interaction["ratio_on_base"] / interaction["ratio_on_reference"]
    assert interaction["ratio"] == pytest.approx(expected)
    assert interaction["ratio"] < 0.99
    assert interaction["verdict"] == "better-on-base"
    html = (repo / "m.html").read_text()
    assert 'id="details-matrix"' in html and "interaction main-2 / base" in html


def test_experiment_file_with_a_stack(repo: Path, tmp_path: Path) -> None:
    (repo / "stack.toml").write_text(
        'build = "make"\n'
        '[settings]\nmetrics = ["instructions"]\n'
        '[stack]\nrange = "main~2..main"\n'
        '[[benchmark]]\nname = "checksum"\ncmd = "./prog"\n'
    )
    done = perflab(
        "run", "stack.toml", "--json", "-", "--store", str(tmp_path / "p.db"),
        cwd=repo, cache=tmp_path / "cache",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert [v["name"] for v in document["variants"]] == ["base", "step1", "step2"]
    assert document["stack"]


def test_a_relative_cache_dir_is_the_same_folder_for_every_git_command(
    repo: Path, tmp_path: Path
) -> None:
    """`--cache-dir ../cache` as typed in the repository: git and the builds run elsewhere, and
    every commit failed ("cannot copy the branches and tags ... into perflab's clone")."""
    done = cli_commands.perflab(
        "run", "--cmd", "./prog", "--build", "make", "--metric", "instructions",
        "--variant", "a git=base", "--variant", "b git=main~2", "--cache-dir", "../cache",
        "--store", str(tmp_path / "p.db"), "--json", "out.json", cwd=repo,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (comparison,) = [c for c in json.loads((repo / "out.json").read_text())["comparisons"]]
    assert comparison["verdict"] == "faster"
    assert len(list((tmp_path / "cache").iterdir())) > 0
