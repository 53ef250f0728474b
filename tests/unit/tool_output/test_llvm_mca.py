"""llvm-mca's summary read into cycles and uops per iteration."""

from __future__ import annotations

from perflab.tool_output.llvm_mca import parse_mca_summary

MCA = """\
Iterations:        100
Instructions:      600
Total Cycles:      181
Total uOps:        900

Dispatch Width:    6
Block RThroughput: 1.5
"""


def test_parse_mca_summary() -> None:
    result = parse_mca_summary(MCA, "sapphirerapids")
    assert result is not None
    assert (result.cycles_per_iteration, result.uops_per_iteration) == (1.81, 9.0)
    assert parse_mca_summary("error: invalid instruction", "x") is None
