"""A statement that raises in one variant leaves the others measured by the time lens, from the
command line: the failing variant is named with its error, the comparison without it kept,
status 3."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_commands import perflab

pytestmark = pytest.mark.integration


def test_a_variant_whose_statement_raises_leaves_the_others_compared(tmp_path: Path) -> None:
    done = perflab(
        "run", "--stmt", "1 / int(os.environ.get('D', '1'))", "--setup", "import os",
        "-v", "a", "-v", "b env.D=0", "-v", "c env.D=2", "--budget", "3",
        "--store", str(tmp_path / "p.db"), "--json", str(tmp_path / "r.json"), "-q",
        cwd=tmp_path, timeout_s=300,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "variant 'b': the statement raised" in done.stderr
    assert "ZeroDivisionError" in done.stderr
    document = json.loads((tmp_path / "r.json").read_text())
    compared = [(c["baseline"], c["variant"]) for c in document["comparisons"]]
    assert compared == [("a", "c")]


def test_comparing_runs_leaves_out_a_variant_that_failed_in_either(tmp_path: Path) -> None:
    """In the second run `b`'s command fails from its sixth run on, after samples were taken:
    what it measured before failing is compared with nothing."""
    # each variant counts its runs in a file of its own; with FAIL set, the sixth run fails
    command = 'sh -c \'echo >> "runs-$V"; test "$(wc -l < "runs-$V")" -lt 6 || test -z "$FAIL"\''

    def run(*b_env: str) -> None:
        for counted in tmp_path.glob("runs-*"):
            counted.unlink()
        done = perflab(
            "run", "--cmd", command, "-v", "a env.V=a", "-v", " ".join(["b env.V=b", *b_env]),
            "-v", "c env.V=c", "--budget", "2", "--store", str(tmp_path / "p.db"), "-q",
            cwd=tmp_path, timeout_s=300,
        )  # fmt: skip
        assert done.returncode == (3 if b_env else 0), done.stderr

    run()
    run("env.FAIL=1")
    done = perflab(
        "compare", "1", "2", "--store", str(tmp_path / "p.db"), "--json", str(tmp_path / "c.json"),
        "-q", cwd=tmp_path, timeout_s=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "c.json").read_text())
    compared = sorted(c["variant"] for c in document["comparisons"] if c["metric"] == "time")
    assert compared == ["run2:a", "run2:c"]
