"""Lens findings as the JSON document's top-level fields: the merge rule, and the analysed run's
`top_level` read from its findings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from perflab.records.kinds import RunStatus
from perflab.records.lens_findings import LensFindings, joined_rows, top_level_json
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.results import RunResult
from perflab.records.run_facts import MachineInfo


@dataclass(frozen=True)
class _Rows:
    """A stand-in lens record: rows of one benchmark under one field."""

    field: str
    benchmark: str
    variants: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {self.field: [{"benchmark": self.benchmark, "variant": v} for v in self.variants]}


def test_list_fields_of_several_benchmarks_are_concatenated_in_order() -> None:
    found: list[LensFindings] = [_Rows("rows", "b1", ("A", "B")), _Rows("rows", "b2", ("A",))]
    assert top_level_json(found) == {
        "rows": [
            {"benchmark": "b1", "variant": "A"},
            {"benchmark": "b1", "variant": "B"},
            {"benchmark": "b2", "variant": "A"},
        ]
    }


def test_a_row_given_again_by_another_pair_is_kept_once() -> None:
    # pairs (A, B) and (B, C): B is analysed in both groups
    merged = top_level_json([_Rows("rows", "b", ("A", "B")), _Rows("rows", "b", ("B", "C"))])
    assert [r["variant"] for r in merged["rows"]] == ["A", "B", "C"]


def test_fields_keep_the_order_they_first_appear_in() -> None:
    merged = top_level_json([_Rows("first", "b", ("A",)), _Rows("second", "b", ("A",))])
    assert list(merged) == ["first", "second"]
    assert top_level_json([]) == {}


def test_a_run_results_top_level_is_its_findings_json() -> None:
    experiment = Experiment((Benchmark("b", stmt="pass"),), (Variant("A"), Variant("B")))
    result = RunResult(
        run_id=1,
        status=RunStatus.COMPLETE,
        created_at="now",
        experiment=experiment,
        machine=MachineInfo.from_json({}),
        comparisons=(),
        notes=(),
        variant_info={},
        differences=(),
        findings=(_Rows("rows", "b", ("A",)),),
    )
    assert result.top_level == {"rows": [{"benchmark": "b", "variant": "A"}]}


def test_joined_rows_leave_out_only_what_an_earlier_list_gave() -> None:
    # one findings' own rows are its own (a run compared with itself names each variant twice)
    assert joined_rows([["A", "A"], ["A", "B"], ["C"]]) == ["A", "A", "B", "C"]
