"""The terminal report: quiet by default, whole with --verbose."""

from __future__ import annotations

from tests.unit.report.test_html_report import synthetic_run


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
