"""The kernel's /proc/PID/arch_status parsed: AVX512_elapsed_ms, how long ago the kernel last saw
live AVX-512 register state in the process at a context switch (x86 only)."""

from __future__ import annotations

import re


def parse_arch_status(text: str | None) -> int | None:
    """AVX512_elapsed_ms from /proc/PID/arch_status: ms since AVX-512 state was last seen live,
    -1 when never; None when the kernel or CPU does not report it."""
    if not text:
        return None
    match = re.search(r"AVX512_elapsed_ms:\s*(-?\d+)", text)
    return int(match.group(1)) if match else None
