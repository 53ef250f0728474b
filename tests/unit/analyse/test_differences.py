"""What differs between a run's variants, in words (analyse/differences.py)."""

from __future__ import annotations

from perflab.analyse.differences import interpreter_differences, variant_differences
from perflab.records.model import Variant

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def test_differences_show_commits_short_and_patches_by_name() -> None:
    full = Variant("b", git=COMMIT, apply=("patches/a.patch", "1234abc"))
    differences = variant_differences([Variant("a", git="main"), full])
    assert "git: a=main, b=0123456789" in differences
    assert "apply: a=(unset), b=a.patch,1234abc" in differences


def test_an_a_a_run_has_no_differences() -> None:
    assert variant_differences([Variant("a"), Variant("b")]) == []
    assert interpreter_differences({"a": {"python_version": "3.12"}, "b": {}}) == []


def test_interpreters_of_two_versions_are_said() -> None:
    said = interpreter_differences(
        {"a": {"python_version": "3.12"}, "b": {"python_version": "3.13"}}
    )
    assert said == ["python version: a=3.12, b=3.13"]
