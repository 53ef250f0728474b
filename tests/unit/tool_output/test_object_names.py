"""Pairing two builds of one library under different file names: the rule every explanation
lens shares (`perflab.tool_output.object_names`)."""

from __future__ import annotations

import pytest

from perflab.lenses.instructions.explain import function_deltas
from perflab.lenses.instructions.pairing import paired_costs, with_variant_objects
from perflab.records.accounting import Presence
from perflab.tool_output.object_names import library_name, object_basename, pair_objects
from tests.support.callgrind_texts import costs

# what this file tests, though most names it imports are other packages' (cross/test_layout.py)
SUBJECT = "perflab.tool_output.object_names"


@pytest.mark.parametrize(
    ("name", "library"),
    [
        ("libpython3.11.so.1.0", "libpython"),
        ("/root/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0", "libpython"),
        ("python3.12", "python"),
        ("libfoo.so.1", "libfoo"),
        ("libfoo.so", "libfoo"),
        ("libscipy_openblas64_-ff651d7f.so", "libscipy_openblas64_"),
        ("_multiarray_umath.cpython-311-x86_64-linux-gnu.so", "_multiarray_umath"),
        ("libstdc++.so.6.0.30", "libstdc++"),
        ("[main]", "[main]"),
    ],
)
def test_library_names_drop_versions_hashes_and_abi_tags(name: str, library: str) -> None:
    assert library_name(name) == library


def test_only_objects_missing_from_the_other_side_and_unique_there_are_paired() -> None:
    assert pair_objects(
        ["libpython3.11.so.1.0", "libc.so.6", "[main]"],
        ["libpython3.12.so.1.0", "libc.so.6", "[main]"],
    ) == {"libpython3.12.so.1.0": "libpython3.11.so.1.0"}
    # the same file on both sides is never re-paired, and two candidates on a side make none
    assert pair_objects(["libfoo.so.1", "libfoo.so.2"], ["libfoo.so.2", "libfoo.so.3"]) == {}
    assert pair_objects(["libfoo.so.1"], ["libfoo.so.2", "libfoo.so.3"]) == {}
    # unrelated libraries stay apart
    assert pair_objects(["libk_base.so"], ["libk_change.so"]) == {}


def test_one_function_is_one_row_across_two_builds_of_a_library() -> None:
    base = costs({"_PyEval_EvalFrameDefault": 9413.0, "PyFunction_NewWithQualName": 106.0},
                 obj="libpython3.11.so.1.0")  # fmt: skip
    new = costs({"_PyEval_EvalFrameDefault": 9166.0}, obj="libpython3.12.so.1.0")
    renamed, pairs = paired_costs(base, new)
    assert pairs == {"libpython3.11.so.1.0": "libpython3.12.so.1.0"}
    rows = with_variant_objects(function_deltas(base, renamed), pairs)
    by_name = {row.name: row for row in rows}
    frame = by_name["_PyEval_EvalFrameDefault"]
    assert frame.presence is Presence.BOTH and frame.delta_self == -247.0
    assert frame.variant_object == "libpython3.12.so.1.0"
    assert by_name["PyFunction_NewWithQualName"].presence is Presence.BASELINE_ONLY
    assert len(rows) == 2


@pytest.mark.parametrize(
    ("path", "basename"),
    [
        ("/usr/lib/libpython3.12.so.1.0", "libpython3.12.so.1.0"),
        ("python3", "python3"),
        ("/lib/", ""),
    ],
)
def test_object_basename_is_the_last_part_of_the_path(path: str, basename: str) -> None:
    assert object_basename(path) == basename
