"""The small vocabularies (records/kinds.py): metrics are interned names any lens may add, and
the stored strings of verdicts, run states and benchmark kinds never change."""

from __future__ import annotations

import pickle

import pytest

from perflab.records.kinds import BenchmarkKind, Metric, RunStatus, TimeReport, Verdict


def test_a_metric_read_back_is_the_same_object_as_the_built_in_one() -> None:
    assert Metric("time") is Metric.TIME
    assert Metric("new_lens") is Metric("new_lens")
    assert pickle.loads(pickle.dumps(Metric.TIME)) == Metric.TIME


def test_a_metric_is_its_name_as_text() -> None:
    assert str(Metric.ASM) == "asm" and Metric.ASM.value == "asm"
    assert repr(Metric.ASM) == "Metric('asm')" and f"{Metric.ASM}" == "asm"
    assert Metric.ASM == "asm" and {Metric.ASM: 1}["asm"] == 1


@pytest.mark.parametrize("name", ["", "Time", "1st", "my-lens", "a b"])
def test_a_metric_name_is_a_lowercase_identifier(name: str) -> None:
    with pytest.raises(ValueError, match="is not a metric name"):
        Metric(name)


def test_the_stored_strings_are_unchanged() -> None:
    assert [v.value for v in Verdict] == [
        "faster", "slower", "equivalent", "inconclusive", "invalid",
    ]  # fmt: skip
    assert [s.value for s in RunStatus] == ["running", "complete", "incomplete", "interrupted"]
    assert [k.value for k in BenchmarkKind] == ["statement", "command"]
    assert [r.value for r in TimeReport] == ["gbench"]
