"""Snapshots of the memory lens's section (terminal, Markdown) and its place in the HTML report,
from the lens's own analysis of stored callgrind files (the unit tests' unfair ReLU: three
passes against two, and an A/A). Regenerate with PERFLAB_UPDATE_SNAPSHOTS=1 after checking the
new output by eye."""

from __future__ import annotations

from perflab.analyse.run import with_sections
from perflab.lenses.memory import MEMORY
from perflab.lenses.memory.analyse import analyse_memory
from perflab.records.document import Section
from perflab.records.kinds import RunStatus
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.results import RunResult
from perflab.records.run_facts import MachineInfo
from perflab.records.settings import Settings
from perflab.report.html import render_html
from perflab.report.markdown import section_lines
from perflab.report.terminal import render_section
from tests.support.memory_runs import data, stored
from tests.support.snapshots import check, terminal_text

BENCHMARK = Benchmark("relu", stmt="f()")


def memory_run() -> RunResult:
    variants = ("out", "copy", "again")
    experiment = Experiment(
        (BENCHMARK,), tuple(Variant(v) for v in variants), Settings(metrics=(MEMORY,))
    )
    analysis = analyse_memory(
        BENCHMARK,
        list(variants),
        data(
            stored("out", passes=2, statement=True),
            stored("copy", passes=3, mallocs=1, statement=True, rss_kb=14_336.0),
            stored("again", passes=2, statement=True),
        ),
        experiment.settings,
    )
    result = RunResult(
        run_id=1,
        status=RunStatus.COMPLETE,
        created_at="2026-01-01T00:00:00+00:00",
        experiment=experiment,
        machine=MachineInfo.from_json({}),
        comparisons=analysis.comparisons,
        notes=analysis.notes,
        variant_info={},
        differences=(),
    )
    return with_sections(result)


def _section() -> Section:
    (section,) = [s for s in memory_run().sections if s.key == "memory"]
    return section


def test_the_memory_section_in_the_terminal() -> None:
    section = _section()
    check("memory.terminal.txt", terminal_text(lambda console: render_section(section, console)))


def test_the_memory_section_in_markdown() -> None:
    check("memory.md", "\n".join(section_lines(_section())) + "\n")


def test_the_memory_section_in_html() -> None:
    page = render_html(memory_run())
    assert "bytes brought into LL from memory (LL misses × 64 B)" in page
    assert "do not do the same memory work" in page
