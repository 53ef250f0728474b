"""/proc/PID/arch_status's AVX512_elapsed_ms read as perflab reads it: -1 for never, None for a
kernel or CPU that does not report it."""

from __future__ import annotations

from perflab.tool_output.arch_status import parse_arch_status


def test_arch_status() -> None:
    assert parse_arch_status("AVX512_elapsed_ms:\t-1") == -1
    assert parse_arch_status("AVX512_elapsed_ms:\t12\n") == 12
    assert parse_arch_status(None) is None


def test_a_kernel_or_cpu_that_does_not_report_it_gives_none() -> None:
    assert parse_arch_status("") is None
    assert parse_arch_status("something_else:\t3\n") is None
