"""One store setting through the command line: PERFLAB_STORE and a project's configuration
file name the store, --store wins, doctor says which store is in use and why."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support import cli_commands
from tests.support.cli_commands import FAST


def perflab(*args: str, cwd: Path, **environ: str) -> subprocess.CompletedProcess[str]:
    """The store setting is the subject: a developer's PERFLAB_STORE is dropped, a test's set."""
    return cli_commands.perflab(*args, cwd=cwd, env=environ, without=("PERFLAB_STORE",))


def _project(tmp_path: Path, store: str) -> Path:
    """A repository whose pyproject.toml names the store, and a subfolder of it."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(f'[tool.perflab]\nstore = "{store}"\n')
    sub = tmp_path / "src" / "pkg"
    sub.mkdir(parents=True)
    return sub


def _run_ids(listed: subprocess.CompletedProcess[str]) -> list[int]:
    assert listed.returncode == 0, listed.stderr
    return [run["run_id"] for run in json.loads(listed.stdout)]


@pytest.mark.integration
def test_perflab_store_is_used_by_run_then_list(tmp_path: Path) -> None:
    store = tmp_path / "team" / "runs.db"
    (tmp_path / "team").mkdir()
    done = perflab(
        "run", "--stmt", "pass", "--variant", "A", "--variant", "B", "--json", "out.json",
        "--quiet", *FAST, cwd=tmp_path, PERFLAB_STORE=str(store),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert store.exists() and not (tmp_path / ".perflab").exists()
    run_id = json.loads((tmp_path / "out.json").read_text())["run_id"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    listed = perflab("list", "--json", "-", cwd=elsewhere, PERFLAB_STORE=str(store))
    assert _run_ids(listed) == [run_id]


def test_pyproject_found_from_a_subfolder_and_store_wins(tmp_path: Path) -> None:
    sub = _project(tmp_path, "perf/runs.db")
    (tmp_path / "perf").mkdir()
    missing = perflab("list", cwd=sub)
    # the project's store, relative to pyproject.toml's folder: it does not exist yet
    assert missing.returncode == 2 and str(tmp_path / "perf" / "runs.db") in missing.stderr
    empty = perflab("list", "--json", "-", "--store", str(tmp_path / "new.db"), cwd=sub)
    assert str(tmp_path / "new.db") in empty.stderr and "runs.db" not in empty.stderr
    env_wins = perflab("list", cwd=sub, PERFLAB_STORE=str(tmp_path / "env.db"))
    assert str(tmp_path / "env.db") in env_wins.stderr


def test_doctor_names_the_store_and_its_source(tmp_path: Path) -> None:
    sub = _project(tmp_path, "postgresql://team:s3cret@db.example/perf")
    doctor = perflab("doctor", cwd=sub)
    assert doctor.returncode == 0, doctor.stderr
    pyproject = tmp_path / "pyproject.toml"
    assert f"(from pyproject.toml at {pyproject})" in doctor.stdout
    assert "postgresql://team:***@db.example/perf" in doctor.stdout
    assert "s3cret" not in doctor.stdout + doctor.stderr
    as_json = json.loads(perflab("doctor", "--json", "-", cwd=sub, PERFLAB_STORE="x.db").stdout)
    assert as_json["store"] == {"location": "x.db", "source": "PERFLAB_STORE"}
    # doctor --store without PATH checks the store in use
    checked = perflab("doctor", "--store", cwd=sub, PERFLAB_STORE=str(tmp_path / "x.db"))
    assert checked.returncode == 2 and str(tmp_path / "x.db") in checked.stderr.replace("\n", "")


def test_an_invalid_file_is_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "perflab.toml").write_text("store = 7\n")
    listed = perflab("list", cwd=tmp_path)
    assert listed.returncode == 2
    # the terminal's width may wrap the path: read the message unwrapped
    unwrapped = listed.stderr.replace("\n", "")
    assert str(tmp_path / "perflab.toml") in unwrapped and "Traceback" not in listed.stderr
    (tmp_path / "perflab.toml").write_text("store = [\n")
    broken = perflab("history", "--help", cwd=tmp_path)  # help needs no store
    assert broken.returncode == 0
    broken = perflab("show", "latest", cwd=tmp_path)
    assert broken.returncode == 2 and "cannot be read as TOML" in broken.stderr
    assert "Traceback" not in broken.stderr


def test_a_url_whose_host_cannot_be_looked_up_is_an_error_not_a_traceback(
    tmp_path: Path,
) -> None:
    """A host name label over 63 characters: Python's resolver raises UnicodeError."""
    pytest.importorskip("psycopg")
    url = f"postgresql://{'h' * 64}/perflab"
    listed = perflab("list", "--store", url, cwd=tmp_path)
    assert listed.returncode == 2 and "Traceback" not in listed.stderr, listed.stderr
    assert f"cannot connect to the PostgreSQL store {url}: " in listed.stderr
