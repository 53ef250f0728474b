"""The Variant field schema: a spec, describe, at and the JSON derive from VARIANT_FIELDS."""

from __future__ import annotations

from dataclasses import fields

from perflab.plan.specs import parse_variant
from perflab.records.model import VARIANT_FIELDS, Variant, short_commit

# what this file tests, though most names it imports are other packages' (cross/test_layout.py)
SUBJECT = "perflab.records.model"

COMMIT = "0123456789abcdef0123456789abcdef01234567"
FULL = Variant(
    "b",
    python="/envs/$n/bin/python",
    env={"Y": "$n", "X": "1"},
    cwd="d",
    cmd="c",
    build="make",
    git=COMMIT,
    apply=("patches/a.patch", "1234abc"),
)


def test_every_field_but_the_name_has_one_spec() -> None:
    assert [f.name for f in VARIANT_FIELDS] == [
        "python",
        "env",
        "git",
        "cwd",
        "cmd",
        "build",
        "apply",
    ]
    assert {f.name for f in fields(Variant)} == {"name", *(f.name for f in VARIANT_FIELDS)}


def test_a_spec_reads_back_what_describe_writes() -> None:
    described = FULL.describe()
    assert described == (
        f"b python=/envs/$n/bin/python env.X=1 env.Y=$n git={COMMIT} cwd=d cmd=c build=make "
        "apply=patches/a.patch,1234abc"
    )
    assert parse_variant(described) == FULL


def test_at_fills_every_field() -> None:
    filled = FULL.at({"n": "5"})
    assert filled.python == "/envs/5/bin/python" and filled.env["Y"] == "5"
    assert filled.apply == FULL.apply


def test_the_json_keeps_the_dataclass_order() -> None:
    assert list(FULL.to_json()) == ["python", "env", "cwd", "cmd", "build", "git", "apply"]
    assert FULL.to_json()["apply"] == ["patches/a.patch", "1234abc"]


def test_a_commit_is_shown_short() -> None:
    assert short_commit(COMMIT) == "0123456789" and short_commit("main") == "main"
