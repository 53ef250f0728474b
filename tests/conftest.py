from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from perflab.machine.cpu_lock import LOCK_DIR_VARIABLE
from tests.support.file_order import FileCostsWriter, costliest_files_first


@pytest.fixture(scope="session", autouse=True)
def own_cpu_locks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """This test session's runs lock CPUs among themselves only: other test sessions and
    perflab runs on the machine must not make them pick another CPU or wait. The workers of
    one parallel session (pytest-xdist) share one directory, so their runs take different CPUs
    as two real perflab runs do instead of both measuring on the default one."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # each worker's base temporary directory lies in the session's own one
        directory = tmp_path_factory.getbasetemp().parent / "cpu-locks"
        directory.mkdir(mode=0o700, exist_ok=True)
    else:
        directory = tmp_path_factory.mktemp("cpu-locks")
    saved = os.environ.get(LOCK_DIR_VARIABLE)
    os.environ[LOCK_DIR_VARIABLE] = str(directory)
    yield directory
    if saved is None:
        del os.environ[LOCK_DIR_VARIABLE]
    else:
        os.environ[LOCK_DIR_VARIABLE] = saved


@pytest.fixture
def private_cpu_locks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A lock directory of this test's own, for a test that checks which CPU its runs take or
    how they share one: in a parallel session the other worker's runs hold CPUs too."""
    directory = tmp_path / "private-cpu-locks"
    directory.mkdir(mode=0o700)
    monkeypatch.setenv(LOCK_DIR_VARIABLE, str(directory))
    return directory


@pytest.fixture(scope="session", autouse=True)
def analysis_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The tests' own analysis cache (shared by the session, as runs share the user's): tests
    never read or fill the user's ~/.cache/perflab/analysis."""
    path = tmp_path_factory.mktemp("analysis-cache")
    patch = pytest.MonkeyPatch()
    patch.setenv("PERFLAB_ANALYSIS_CACHE_DIR", str(path))
    yield path
    patch.undo()


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second interpreter without perflab (nor pip) installed: a venv of its own."""
    root = tmp_path_factory.mktemp("bare-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    return root / "bin" / "python"


def _no_gpu_because() -> str | None:
    """Why tests marked gpu cannot run here, or None where they can. torch is asked in a
    process of its own: CUDA initialised in the test process would not survive its forks."""
    if shutil.which("nvidia-smi") is None:
        return "no NVIDIA GPU here (nvidia-smi is not on PATH)"
    probe = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.cuda.is_available())"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if probe.stdout.strip() != "True":
        return "torch does not see a GPU here: " + (probe.stderr.strip()[-200:] or probe.stdout)
    return None


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--write-file-costs",
        metavar="PATH",
        type=Path,
        help="write the seconds each test file took (the form of tests/file_costs.json)",
    )


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--write-file-costs")
    # xdist's workers report every test to the controller, which writes the file once
    if path is not None and not hasattr(config, "workerinput"):
        config.pluginmanager.register(FileCostsWriter(path), "file-costs-writer")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items[:] = costliest_files_first(items)
    marked = [item for item in items if item.get_closest_marker("gpu")]
    if not marked:
        return
    reason = _no_gpu_because()
    if reason is not None:
        for item in marked:
            item.add_marker(pytest.mark.skip(reason=reason))
