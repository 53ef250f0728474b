"""A pytest-benchmark suite as perflab benchmarks. Each test that uses the `benchmark` fixture,
listed by pytest in the variants' own interpreters, is one statement benchmark whose set-up runs the
test up to its benchmark(...) call (perflab/worker/perflab_bench_plugin.py) and whose statement
calls what it benchmarks.

The listing runs `python -m pytest --collect-only` in every variant that needs no checkout or
build (the others have no interpreter yet); a suite whose variants all need one is listed in
the current directory by the interpreter running perflab."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from perflab.machine.proc import Completed, LaunchSpec, ProcessRunner
from perflab.machine.scratch import private_folder
from perflab.plan.suite_listing import distinct_listings, helpers_env
from perflab.records.errors import ConfigError
from perflab.records.model import Benchmark, Variant

PLUGIN = "perflab_bench_plugin"  # next to the statement worker, so on its sys.path
LIST_ENV = "PERFLAB_PYTEST_LIST"  # where the plugin writes the listing
LIST_TIMEOUT_S = 300.0  # collecting a large suite imports all of it
_OUTPUT_LINES = 15  # of pytest's output, shown when it could not list

# as for listing, pytest must not write its cache into the suite, and pytest-benchmark's own
# fixture (or pytest-codspeed's) must not replace perflab's
_PYTEST_OPTIONS = (
    "-p", "no:cacheprovider", "-p", "no:benchmark", "-p", "no:codspeed", "-p", PLUGIN,
)  # fmt: skip
_COLLECT = ("-m", "pytest", "--collect-only", "-q", *_PYTEST_OPTIONS)  # list, run nothing
# pytest's exit statuses the listing can end with and still have listed: tests found (0), some
# files failed to collect (2: those become benchmarks that fail with pytest's report), none (5)
_LISTED = (0, 2, 5)


@dataclass(frozen=True)
class PytestTest:
    """One test that uses the `benchmark` fixture, or one file that failed to collect."""

    nodeid: str  # pytest's name of it: test_sort.py::test_sorted[100]
    path: str  # its file, relative to the directory pytest ran in (the variant's cwd)
    rootdir: str  # pytest's rootdir, relative to the same directory
    error: str | None = None  # the file failed to collect: pytest's report

    def benchmark(self) -> Benchmark:
        """The statement benchmark that runs the test and measures its benchmarked call."""
        setup = (
            f"import {PLUGIN} as _perflab_pytest\n"
            "_perflab_fn, _perflab_args, _perflab_kwargs = _perflab_pytest.benchmarked("
            f"{self.path!r}, {self.nodeid!r}, {self.rootdir!r})"
        )
        return Benchmark(
            name=self.nodeid, stmt="_perflab_fn(*_perflab_args, **_perflab_kwargs)", setup=setup
        )


def parse_listing(text: str) -> list[PytestTest]:
    """The plugin's listing: one JSON object per line."""
    tests = []
    for line in text.splitlines():
        if line.strip():
            entry = json.loads(line)
            tests.append(
                PytestTest(
                    nodeid=str(entry["nodeid"]),
                    path=str(entry["path"]),
                    rootdir=str(entry["rootdir"]),
                    error=None if entry.get("error") is None else str(entry["error"]),
                )
            )
    return tests


def pytest_benchmarks(
    path: str | Path,
    variants: Sequence[Variant],
    runner: ProcessRunner,
    *,
    keyword: str | None = None,
    default_python: str = sys.executable,
) -> tuple[Benchmark, ...]:
    """The suite's benchmarks: the tests under `path` (selected by pytest's `-k keyword`) that
    use the `benchmark` fixture in any variant, in the order pytest lists them, the first
    variant's first; a file that fails to collect is a benchmark that fails with pytest's
    report (the others are measured)."""
    found: dict[str, PytestTest] = {}
    for variant in distinct_listings(variants, default_python):
        for test in _listed(runner, variant, str(path), keyword, default_python):
            found.setdefault(test.nodeid, test)
    if not found:
        selected = f" selected by -k {keyword!r}" if keyword else ""
        raise ConfigError(
            f"no test in {str(path)!r}{selected} uses the benchmark fixture",
            hint="perflab measures pytest-benchmark tests: def test_x(benchmark): "
            "benchmark(fn, *args)",
        )
    return tuple(test.benchmark() for test in found.values())


def _listed(
    runner: ProcessRunner, variant: Variant, path: str, keyword: str | None, default_python: str
) -> list[PytestTest]:
    interpreter = variant.python or default_python
    selection = ("-k", keyword) if keyword else ()
    with private_folder("pytest") as folder:
        listing = Path(folder) / "listing.jsonl"
        env = helpers_env(variant)  # the plugin is imported from the worker's folder
        env[LIST_ENV] = str(listing)
        completed = runner.run(
            LaunchSpec(
                argv=(interpreter, *_COLLECT, *selection, path),
                env=env,
                cwd=variant.cwd,
            ),
            timeout_s=LIST_TIMEOUT_S,
        )
        _check_listed(completed, variant, interpreter, path)
        return parse_listing(listing.read_text()) if listing.exists() else []


def _check_listed(completed: Completed, variant: Variant, interpreter: str, path: str) -> None:
    """pytest listed the suite, or a ConfigError says why not."""
    if completed.returncode in _LISTED and not completed.timed_out:
        return
    output = (completed.stderr + completed.stdout).strip()
    if "No module named pytest" in output:
        raise ConfigError(
            f"pytest is not installed for {interpreter!r}: perflab runs the suite's tests with "
            "the variant's own pytest",
            hint=f"install it there: {interpreter} -m pip install pytest (pytest-benchmark is "
            "not needed)",
            variant=variant.name,
        )
    lines = output.splitlines()
    shown = lines[-_OUTPUT_LINES:]
    raise ConfigError(
        f"pytest could not list the tests of {path!r}: it {completed.describe_failure()}",
        hint=f"run it yourself to see why: {interpreter} -m pytest --collect-only -q {path}",
        variant=variant.name,
        detail="\n".join(shown) or None,
    )
