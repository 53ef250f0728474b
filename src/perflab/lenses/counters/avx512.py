"""AVX-512 use in the counters lens's measured region, without counters: `/proc/PID/arch_status`
(AVX512_elapsed_ms) says when the kernel last saw live AVX-512 register state at a context
switch. It is read after each measured region and after one empty-loop control sample per
worker: if the control shows AVX-512 too, something besides the statement (glibc's EVEX string
functions use zmm16-31) sets it, and the check cannot attribute it to the statement."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from perflab.machine.host import read_text

AVX512 = "avx512"  # artifact per variant and generation: an Avx512Tally
AVX512_SLACK_MS = 20.0  # the kernel stamps in jiffies (up to 10 ms) at the next context switch


def read_arch_status(pid: int) -> str | None:
    return read_text(f"/proc/{pid}/arch_status")


@dataclass
class Avx512Tally:
    """A worker's samples over its generation, measured and control, and how many of each saw
    AVX-512 state; `supported` is False once the kernel did not say."""

    samples: int = 0
    with_avx512: int = 0
    control_samples: int = 0
    control_with_avx512: int = 0
    supported: bool = True

    def add(self, elapsed_ms: int | None, region_ms: float, *, control: bool = False) -> None:
        if elapsed_ms is None:
            self.supported = False
            return
        seen = 0 <= elapsed_ms <= region_ms + AVX512_SLACK_MS
        if control:
            self.control_samples += 1
            self.control_with_avx512 += seen
        else:
            self.samples += 1
            self.with_avx512 += seen

    def to_json(self) -> dict[str, Any]:
        """The tally as the lens's AVX512 artifact stores it."""
        return {
            "supported": self.supported,
            "samples": self.samples,
            "with_avx512": self.with_avx512,
            "control_samples": self.control_samples,
            "control_with_avx512": self.control_with_avx512,
        }
