"""The torch lens's section on the terminal: the ops that changed and those that appeared."""

from __future__ import annotations

from rich.console import Console

from perflab.lenses.fragments import SectionInput
from perflab.lenses.torch.analyse import (
    analyse_torch,
)
from perflab.lenses.torch.render import section
from perflab.measure.lens import BenchmarkData
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.settings import Settings
from perflab.report.terminal import render_section
from tests.support.torch_tables import stored, table


def test_the_terminal_shows_changed_ops_and_what_appeared() -> None:
    samples, artifacts = [], []
    for variant, ops in (("A", [("aten::add", 10, 10.0)]), ("B", [("aten::relu", 10, 5.0)])):
        s, a = stored(variant, [table(10, *ops, capability=f"CAP{variant}")], generations=2)
        samples += s
        artifacts += a
    data = BenchmarkData(samples=tuple(samples), artifacts=tuple(artifacts))
    comparisons = analyse_torch(Benchmark("b", stmt="x"), ["A", "B"], data, Settings()).comparisons
    console = Console(width=120, record=True)
    experiment = Experiment(
        benchmarks=(Benchmark("b", stmt="x"),), variants=(Variant("A"), Variant("B"))
    )
    render_section(section(SectionInput(Metric.TORCH, comparisons, experiment)), console)
    text = console.export_text()
    assert "torch.profiler ops per iteration" in text
    assert "ops appeared in B: aten::relu" in text
    assert "ops disappeared in B: aten::add" in text
    assert "CPU capability CAPA → CAPB" in text
