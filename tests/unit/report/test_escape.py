"""Lens sections say what their numbers are, and notes are said once: the wording rules of the
reports, on records built here."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from perflab.lenses.counters.render import is_time_event
from perflab.lenses.counters.render import section as counters_section
from perflab.lenses.fragments import SectionInput, per_iteration
from perflab.lenses.instructions.render import NEGATIVE_FOOTNOTE
from perflab.lenses.instructions.render import section as instructions_section
from perflab.lenses.sections import lens_sections
from perflab.records.document import Paragraph, Section, Table
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Benchmark, Comparison, Experiment, Note, Severity, Variant
from perflab.records.settings import Settings
from perflab.report.notes import group_notes
from tests.unit.report.test_html_report import synthetic_run

EXPERIMENT = Experiment(
    benchmarks=(Benchmark("b", stmt="x"),),
    variants=(Variant("A"), Variant("B")),
    settings=Settings(metrics=(Metric.COUNTERS, Metric.INSTRUCTIONS)),
)


@dataclass(frozen=True)
class Fields:
    fields: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return self.fields


def comparison(
    metric: Metric, event: str | None, unit: str, verdict: Verdict, **fields: Any
) -> Comparison:
    return Comparison(
        benchmark="b",
        metric=metric,
        baseline="A",
        variant="B",
        ratio=1.4,
        ci_low=1.2,
        ci_high=1.6,
        verdict=verdict,
        baseline_value=9.001e-05,
        variant_value=2.5,
        unit=unit,
        event=event,
        details=Fields(fields) if fields else None,
    )


def cells(table: Table, column: str) -> list[str]:
    # the last column of that name: "variant" names the pair first, then holds the value
    index = len(table.columns) - 1 - table.columns[::-1].index(column)
    return [row[index].text for row in table.rows]


def test_tiny_counts_per_iteration_read_as_one_per_n_iterations() -> None:
    assert per_iteration(9.001e-05, "") == "1 per 11,110 iterations"
    assert per_iteration(2.5, "D1 misses") == "2.5 D1 misses per iteration"
    assert per_iteration(0.0, "") == "0 per iteration"
    assert per_iteration(123456.0, "instructions") == "123,456 instructions per iteration"


def test_counts_where_more_is_not_slower_are_higher_or_lower() -> None:
    view = SectionInput(
        Metric.COUNTERS,
        (
            comparison(Metric.COUNTERS, "context-switches", "count", Verdict.SLOWER),
            comparison(Metric.COUNTERS, "page-faults", "count", Verdict.FASTER),
            comparison(Metric.COUNTERS, "task-clock", "ns", Verdict.SLOWER),
        ),
        EXPERIMENT,
    )
    table = counters_section(view).blocks[0]
    assert isinstance(table, Table)
    assert cells(table, "verdict") == ["higher", "lower", "slower"]
    assert cells(table, "baseline")[0] == "1 per 11,110 iterations"
    assert is_time_event("cycles") and is_time_event("cpu/cycles/") and is_time_event(None)
    assert not is_time_event("cpu-migrations")
    # the JSON keeps the verdict values
    assert view.comparisons[0].to_json()["verdict"] == "slower"


def test_cache_simulation_rows_say_which_misses_per_iteration() -> None:
    view = SectionInput(
        Metric.INSTRUCTIONS,
        (
            comparison(Metric.INSTRUCTIONS, None, "instructions", Verdict.SLOWER),
            comparison(Metric.INSTRUCTIONS, "D1_misses", "misses", Verdict.SLOWER),
            comparison(Metric.INSTRUCTIONS, "LL_misses", "misses", Verdict.FASTER),
        ),
        EXPERIMENT,
    )
    table = instructions_section(view).blocks[0]
    assert isinstance(table, Table)
    assert cells(table, "event") == [
        "instructions per iteration",
        "D1 misses per iteration",
        "LL misses per iteration",
    ]
    assert cells(table, "variant")[1] == "2.50"
    assert cells(table, "verdict") == ["slower", "higher", "lower"]


def test_negative_counts_after_the_empty_loop_get_a_footnote() -> None:
    functions = [
        {"name": "_PyFrame_Push", "object": "python", "baseline": -0.39, "variant": -1.95,
         "delta": -1.56, "presence": "both"},
    ]  # fmt: skip
    view = SectionInput(
        Metric.INSTRUCTIONS,
        (
            comparison(
                Metric.INSTRUCTIONS, None, "instructions", Verdict.SLOWER, functions=functions
            ),
        ),
        EXPERIMENT,
    )
    (detail,) = instructions_section(view).subsections
    paragraphs = [b.text for b in detail.blocks if isinstance(b, Paragraph)]
    assert any(NEGATIVE_FOOTNOTE in text for text in paragraphs)


def test_the_same_note_for_several_events_or_benchmarks_is_said_once_with_a_count() -> None:
    hint = "run on bare metal"
    notes = [
        Note(Severity.WARNING, f"event {e!r} was not measured: not supported", hint, "b", None,
             Metric.COUNTERS)
        for e in ("cycles", "instructions", "branches")
    ] + [
        Note(Severity.INFO, "sample times look bimodal", "same hint", bench, "A", Metric.TIME)
        for bench in ("b1", "b2")
    ] + [Note(Severity.WARNING, "other", hint)]  # fmt: skip
    groups = group_notes(notes)
    assert [g.count for g in groups] == [3, 1, 2]
    assert (
        groups[0].message
        == "event 'cycles', 'instructions', 'branches' was not measured: not supported"
    )
    assert groups[0].hint == hint and groups[1].hint is None  # each hint once
    assert groups[2].where == "time · b1 · A; time · b2 · A"


def test_every_lens_has_a_section_and_every_format_shows_it() -> None:
    from rich.console import Console

    from perflab.report.html import render_html
    from perflab.report.markdown import render_markdown
    from perflab.report.terminal import render_terminal

    result, _ = synthetic_run()
    keys = [s.key for s in result.sections]
    # the summary joining the lenses comes first, then one section per lens
    assert keys == ["summary", *(m.value for m in result.experiment.settings.metrics)]
    console = Console(width=200, record=True)
    render_terminal(result, console)
    terminal, markdown, page = console.export_text(), render_markdown(result), render_html(result)
    for section in result.sections:
        assert f"#### {section.title}" in markdown
        assert f'id="metric-{section.key}"' in page
        assert section.title in terminal
    rebuilt = lens_sections(
        dataclasses.replace(
            result, findings=(), variant_info={}, notes=(), cross_run=False, measurements=()
        )
    )
    assert all(isinstance(s, Section) for s in rebuilt) and len(rebuilt) == len(keys) - 1


def test_code_in_a_note_reads_as_code_in_every_format() -> None:
    """perflab's own `code` in notes and hints: a code span in Markdown (it was shown with its
    backticks escaped), <code> in HTML, the backticks as written on a terminal; the names
    around it stay escaped."""
    from rich.console import Console

    from perflab.report.html import render_html
    from perflab.report.markdown import render_markdown
    from perflab.report.terminal import render_terminal

    result, _ = synthetic_run()
    note = Note(
        Severity.WARNING,
        "`fast_1` and `base` differ only in INF=1: is `INF` read by the benchmark?",
        hint="search with `perflab events WORD`; a_b",
    )
    result = dataclasses.replace(result, notes=(note,))
    markdown = render_markdown(result)
    assert "`fast_1` and `base` differ only in INF=1: is `INF` read by the benchmark?" in markdown
    assert "hint: search with `perflab events WORD`; a\\_b" in markdown
    page = render_html(result)
    assert "<code>fast_1</code> and <code>base</code> differ only in INF=1" in page
    assert "hint: search with <code>perflab events WORD</code>" in page
    console = Console(width=200, record=True)
    render_terminal(result, console)
    assert "`fast_1` and `base` differ only in INF=1" in console.export_text()


def test_code_spans_stay_text() -> None:
    """What a code span may hold: no raw HTML reaches Markdown (code with <, > or & stays
    escaped text), an unpaired backtick stays a backtick, HTML escapes inside <code>."""
    from perflab.report.escape import code_spans, html_prose, markdown_prose

    assert code_spans("a `b` c `d") == [("a ", False), ("b", True), (" c `d", False)]
    assert markdown_prose("a `b` c `d") == "a `b` c \\`d"
    assert markdown_prose("check `x<1` failed") == "check \\`x&lt;1\\` failed"
    assert markdown_prose("`x |y` *z*") == "`x |y` \\*z\\*"
    assert markdown_prose("` x`") == "`  x `"  # Markdown strips one space each side
    assert markdown_prose("`a`\n`b\x1b`", line_break="<br>") == "`a`<br>`b\\x1b`"
    assert html_prose("`<b>` & `c`") == "<code>&lt;b&gt;</code> &amp; <code>c</code>"


def test_the_rss_section_says_higher_and_names_the_measure() -> None:
    from perflab.lenses.rss.render import section as rss_section

    rss = Metric("rss")
    net = {"net_blocks_per_iteration": {"baseline": 0.0, "variant": 2.0}}
    view = SectionInput(
        rss,
        (
            comparison(rss, "maxrss_kb", "kB", Verdict.SLOWER, **net),
            comparison(rss, "peak_alloc_bytes", "B", Verdict.FASTER, **net),
        ),
        EXPERIMENT,
    )
    table, blocks = rss_section(view).blocks
    assert isinstance(table, Table) and isinstance(blocks, Table)
    assert cells(table, "verdict") == ["higher", "lower"]
    assert cells(table, "event") == ["peak RSS of the process", "peak allocated while the loop ran"]
    assert len(blocks.rows) == 1 and cells(blocks, "Δ") == ["+2"]


def test_the_terminal_is_quiet_by_default_and_whole_with_verbose() -> None:
    from rich.console import Console

    from perflab.records.document import Cell, Preformatted, Style
    from perflab.report.terminal import quiet_diff, render_terminal, short_symbol

    name = (
        "void at::native::(anonymous namespace)::cpu_kernel_vec<at::native::AddFunctor<float>, "
        "at::vec::Vectorized<float>>(at::TensorIteratorBase&, long)"
    )
    assert short_symbol(name) == "void at::native::(…)::cpu_kernel_vec<…>(…)"
    assert short_symbol("short_name") == "short_name"
    lines = [Cell(f"  mov r{k}", Style.PLAIN) for k in range(40)]
    lines[20] = Cell("- vmaxps zmm0", Style.DEL)
    lines[21] = Cell("+ vmaxps ymm0", Style.ADD)
    shown = [c.text for c in quiet_diff(lines)]
    assert shown == ["…", "  mov r19", "- vmaxps zmm0", "+ vmaxps ymm0", "  mov r22", "…"]
    assert Preformatted("d", tuple(lines))  # the record is unchanged: the HTML has it whole

    result, _ = synthetic_run()
    quiet = Console(width=200, record=True)
    render_terminal(result, quiet)
    loud = Console(width=200, record=True)
    render_terminal(result, loud, verbose=True)
    quiet_text = quiet.export_text()
    assert "bimodal" not in quiet_text and "1 more note: --verbose" in quiet_text
    assert "bimodal" in loud.export_text()
    assert "samples became 26% slower" in quiet_text  # warnings always
