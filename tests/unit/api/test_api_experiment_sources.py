"""make_experiment takes its benchmarks from one source: the first given, in the order gbench,
asv, pytest, experiment file, arguments, refuses those after it; a suite's filter needs its suite.
All refusals happen before anything is listed or measured."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from perflab.api import make_experiment
from perflab.records.errors import ConfigError


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"gbench_filter": "x"}, "--filter selects benchmarks of a Google Benchmark binary"),
        ({"asv_filter": "x"}, "--bench selects benchmarks of an asv suite"),
        ({"pytest_filter": "x"}, "-k selects tests of a pytest suite"),
        # the filter of a later suite is checked only after an earlier suite's refusal
        ({"gbench": "b", "asv": "s", "pytest_filter": "x"}, "--gbench makes the benchmarks"),
        ({"gbench": "b", "pytest": "t"}, "--gbench makes the benchmarks"),
        ({"asv": "s", "pytest": "t"}, "--asv makes the benchmarks"),
        ({"asv": "s", "name": "n"}, "--asv makes the benchmarks"),
        ({"pytest": "t", "params": {"n": [1]}}, "--pytest makes the benchmarks"),
        ({"setup": "x = 1"}, "nothing to measure"),
        ({"budget": 3}, "unknown setting(s) budget"),
    ],
)
def test_one_source_makes_the_benchmarks(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        make_experiment(**arguments)
    assert message in str(refused.value)


def test_an_experiment_file_refuses_benchmarks_given_beside_it(tmp_path: Path) -> None:
    path = tmp_path / "e.toml"
    path.write_text('[[variant]]\nname = "A"\n\n[[benchmark]]\nname = "a"\nstmt = "pass"\n')
    with pytest.raises(ConfigError, match="the experiment file defines the benchmarks"):
        make_experiment(path, stmt="pass")
    assert [b.name for b in make_experiment(path).benchmarks] == ["a"]
