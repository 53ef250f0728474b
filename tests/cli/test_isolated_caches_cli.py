"""Isolated caches: each variant's processes see their own fresh cache directories (removed at
the end), unless the variant sets one itself or --share-caches is given."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from perflab.machine.host import cpu_flags, read_text
from tests.support.cli_commands import FAST, perflab

pytestmark = pytest.mark.integration

VARIABLES = (
    "TORCHINDUCTOR_CACHE_DIR",
    "TRITON_CACHE_DIR",
    "XDG_CACHE_HOME",
    "NUMBA_CACHE_DIR",
    "PYTHONPYCACHEPREFIX",
)

# every worker appends the cache environment it sees, and whether the directories exist
SETUP = f"""
import json, os
seen = {{k: os.environ.get(k) for k in {VARIABLES!r}}}
seen["exists"] = all(os.path.isdir(v) for v in seen.values() if v)
seen["who"] = os.environ["WHO"]
with open(os.environ["LOG"], "a") as log:
    log.write(json.dumps(seen) + "\\n")
"""


def _seen(
    tmp_path: Path, *args: str, no_bytecode: bool = False
) -> tuple[list[dict[str, str]], dict]:
    log = tmp_path / "seen.jsonl"
    env = {"LOG": str(log), "TORCHINDUCTOR_CACHE_DIR": "/tmp/shared-inductor"}
    if no_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = perflab(
        "run", "--stmt", "pass", "--setup", SETUP, "-v", "a env.WHO=a",
        "-v", "b env.WHO=b env.XDG_CACHE_HOME=/tmp", "--json", "out.json", "--store", "s.db",
        *FAST, *args, cwd=tmp_path, env=env, timeout_s=300,
        without=("PYTHONDONTWRITEBYTECODE",),  # the machine's own choice must not decide
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    return lines, json.loads((tmp_path / "out.json").read_text())


def test_each_variant_gets_its_own_fresh_cache_directories(tmp_path: Path) -> None:
    lines, report = _seen(tmp_path)
    by_variant = {line["who"]: line for line in lines}
    a, b = by_variant["a"], by_variant["b"]
    assert all(line["exists"] for line in lines)
    for name in VARIABLES:
        assert a[name] and a[name] != b[name]
        assert all(line[name] == by_variant[line["who"]][name] for line in lines)  # per experiment
    assert a["TORCHINDUCTOR_CACHE_DIR"] != "/tmp/shared-inductor"
    assert b["XDG_CACHE_HOME"] == "/tmp"  # the variant's own setting wins
    assert not Path(a["PYTHONPYCACHEPREFIX"]).exists()  # removed at the end
    infos = {v["name"]: v["info"] for v in report["variants"]}
    assert infos["a"]["isolated_caches"] == list(VARIABLES)
    assert "XDG_CACHE_HOME" not in infos["b"]["isolated_caches"]
    note = next(n for n in report["notes"] if "cache directories" in n["message"])
    assert "b sets XDG_CACHE_HOME" in note["message"]


def test_share_caches_leaves_the_environment_alone(tmp_path: Path) -> None:
    lines, report = _seen(tmp_path, "--share-caches")
    assert {line["TORCHINDUCTOR_CACHE_DIR"] for line in lines} == {"/tmp/shared-inductor"}
    assert {line["PYTHONPYCACHEPREFIX"] for line in lines} == {None}
    assert any("shared their on-disk caches" in n["message"] for n in report["notes"])


def test_no_bytecode_written_leaves_the_bytecode_cache_shared(tmp_path: Path) -> None:
    # PYTHONDONTWRITEBYTECODE: an empty cache of their own would make every worker compile
    # every module it imports, and a cache no variant writes carries nothing between them
    lines, report = _seen(tmp_path, no_bytecode=True)
    assert {line["PYTHONPYCACHEPREFIX"] for line in lines} == {None}
    assert all(line["TORCHINDUCTOR_CACHE_DIR"] != "/tmp/shared-inductor" for line in lines)
    infos = {v["name"]: v["info"] for v in report["variants"]}
    assert "PYTHONPYCACHEPREFIX" not in infos["a"]["isolated_caches"]
    note = next(n for n in report["notes"] if "cache directories" in n["message"])
    assert (
        "(TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR, XDG_CACHE_HOME, NUMBA_CACHE_DIR)"
        in (note["message"])
    )
    assert (
        "bytecode cache stayed shared for a, b: PYTHONDONTWRITEBYTECODE is set" in (note["message"])
    )


# a just-in-time compiler's stand-in: the set-up "compiles" into its cache when the cache lacks
# the code (unless EAGER), and says where it compiled: natively, or under valgrind (whose
# preload it sees)
JIT_SETUP = """
import os
kernel = os.path.join(os.environ["XDG_CACHE_HOME"], "fakejit", "kernel")
if not os.environ.get("EAGER") and not os.path.exists(kernel):
    import time
    time.sleep(float(os.environ.get("COMPILE_S", "0")))
    os.makedirs(os.path.dirname(kernel), exist_ok=True)
    open(kernel, "w").write("compiled")
    where = " valgrind" if "vgpreload" in os.environ.get("LD_PRELOAD", "") else " native"
    with open(os.environ["LOG"], "a") as log:
        log.write(os.environ["WHO"] + where + "\\n")
"""


@pytest.mark.parametrize("compile_s", [0, 6])
def test_code_a_statement_compiles_is_compiled_natively_before_valgrind_runs_it(
    tmp_path: Path, compile_s: int
) -> None:
    # a compile slower than the fork servers' start (6 s): the instructions lens starts them
    # beside the native runs, and its children still wait for the compiled code
    log = tmp_path / "compiled.log"
    done = subprocess.run(
        [
            sys.executable, "-m", "perflab.cli.main", "run", "--stmt", "pass",
            "--setup", JIT_SETUP, "-v", "a env.WHO=a env.EAGER=1",
            "-v", f"b env.WHO=b env.COMPILE_S={compile_s}",
            "--metric", "instructions", "--budget", "1", "--json", "out.json",
            "--store", "s.db",
        ],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, "LOG": str(log)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # the eager baseline compiles nothing; the variant compiled once, natively, into its own
    # cache, and valgrind's processes loaded it
    assert log.read_text().split("\n")[:-1] == ["b native"]
    notes = [n["message"] for n in json.loads((tmp_path / "out.json").read_text())["notes"]]
    (note,) = [n for n in notes if "b compiled code into XDG_CACHE_HOME: each variant ran" in n]
    # valgrind hides AVX-512: a JIT in XDG_CACHE_HOME may be keyed on the CPU's features, and
    # no second fill serves it, so on such a host nothing is promised
    hidden = "avx512f" in cpu_flags(read_text("/proc/cpuinfo") or "")
    assert ("may compile again under valgrind" in note) == hidden
    assert ("processes under valgrind load what it compiled" in note) != hidden
