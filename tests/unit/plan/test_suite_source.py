"""The suite make_experiment's keywords give, as one record: the first of gbench, asv, pytest
given refuses the later ones, a filter needs its suite, and a record is not given beside the
keywords; the record says itself as the command line's options."""

from __future__ import annotations

from typing import Any

import pytest

from perflab.plan.suite_source import SuiteKind, SuiteSource, suite_given
from perflab.records.errors import ConfigError


def test_the_keywords_of_one_suite_make_its_record() -> None:
    assert suite_given() is None
    assert suite_given(asv="benchmarks", asv_filter="sort") == SuiteSource(
        kind=SuiteKind.ASV, path="benchmarks", filter="sort"
    )
    record = SuiteSource(kind=SuiteKind.GBENCH, path="./bench")
    assert suite_given(record) is record


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"gbench_filter": "x"}, "--filter selects benchmarks of a Google Benchmark binary"),
        ({"pytest": "t", "asv_filter": "x"}, "--bench selects benchmarks of an asv suite"),
        ({"gbench": "b", "asv": "s"}, "--gbench makes the benchmarks"),
        ({"asv": "s", "pytest": "t"}, "--asv makes the benchmarks"),
        # a later suite's filter is not looked at once an earlier suite is refused
        ({"gbench": "b", "pytest": "t", "asv_filter": "x"}, "--gbench makes the benchmarks"),
    ],
)
def test_a_suite_given_wrongly_is_refused(keywords: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        suite_given(**keywords)
    assert message in str(refused.value)


def test_a_record_and_keywords_together_are_refused() -> None:
    record = SuiteSource(kind=SuiteKind.PYTEST, path="tests")
    with pytest.raises(ConfigError, match="suite= gives the suite"):
        suite_given(record, pytest_filter="sort")


def test_a_suite_says_itself_as_the_command_line_gives_it() -> None:
    pytest_suite = SuiteSource(kind=SuiteKind.PYTEST, path="t.py", filter="sort")
    assert pytest_suite.flags() == ("--pytest", "t.py", "-k", "sort")
    assert SuiteSource(kind=SuiteKind.ASV, path="b").flags() == ("--asv", "b")
    gbench = SuiteSource(kind=SuiteKind.GBENCH, path="./bench", filter="BM_Add")
    assert gbench.filter_flags() == ("--filter", "BM_Add")
    refused = str(gbench.refused_beside())
    assert "--gbench makes the benchmarks" in refused and "--asv and --pytest" in refused
    assert "--asv" not in str(pytest_suite.refused_beside())
