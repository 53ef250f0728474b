"""The terminal report: quiet by default, whole with --verbose."""

from __future__ import annotations

from tests.support.report_runs import synthetic_run


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


def test_the_plots_hint_names_the_report_when_one_was_written() -> None:
    import io

    from rich.console import Console

    from perflab.records.document import RatiosFigure, Section
    from perflab.report.terminal import render_section

    section = Section("time", (), (Section("b", (RatiosFigure("ratios", (), 0.01),)),))

    def said(html_path: str | None) -> str:
        console = Console(file=io.StringIO(), width=200, record=True)
        render_section(section, console, html_path=html_path)
        return console.export_text()

    assert "(--html FILE)" in said(None)
    written = said("report.html")
    assert "(--html FILE)" not in written and "report.html" in written


def test_the_header_says_not_pinned_only_for_what_was_asked() -> None:
    from perflab.records.run_facts import MachineInfo
    from perflab.report.terminal import pinning_words

    assert pinning_words(MachineInfo(pinned_cpu=3), pin=True) == "pinned to CPU 3"
    assert pinning_words(MachineInfo(), pin=False) == "not pinned (--no-pin)"
    cluster = MachineInfo(cluster={"address": "local", "nodes": 1, "cpus": 2})
    assert pinning_words(cluster, pin=True) == "on a Ray cluster of 1 node"
