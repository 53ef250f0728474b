"""A worker's AVX-512 tally: a sample saw AVX-512 when the kernel last saw its state within the
measured region (plus the kernel's stamping slack), counted apart for control samples, and a
kernel that does not say marks the tally unsupported."""

from __future__ import annotations

import json
import os

from perflab.lenses.counters.avx512 import AVX512_SLACK_MS, Avx512Tally, read_arch_status
from perflab.machine.host import read_text


def test_a_sample_saw_avx512_when_its_state_was_live_within_the_region_and_slack() -> None:
    tally = Avx512Tally()
    tally.add(-1, 5.0)  # never seen
    tally.add(3, 5.0)
    tally.add(int(5.0 + AVX512_SLACK_MS), 5.0)
    tally.add(int(5.0 + AVX512_SLACK_MS) + 1, 5.0)  # before the region began
    assert (tally.samples, tally.with_avx512) == (4, 2)
    assert (tally.control_samples, tally.control_with_avx512) == (0, 0) and tally.supported


def test_control_samples_are_tallied_apart() -> None:
    tally = Avx512Tally()
    tally.add(0, 1.0, control=True)
    tally.add(-1, 1.0, control=True)
    assert (tally.control_samples, tally.control_with_avx512) == (2, 1)
    assert tally.samples == 0


def test_a_kernel_that_does_not_say_marks_the_tally_unsupported() -> None:
    tally = Avx512Tally()
    tally.add(None, 1.0)
    assert not tally.supported and tally.samples == 0


def test_the_stored_tally_keeps_its_keys_in_the_contracts_order() -> None:
    assert json.dumps(Avx512Tally(samples=2, with_avx512=1).to_json()) == (
        '{"supported": true, "samples": 2, "with_avx512": 1, "control_samples": 0, '
        '"control_with_avx512": 0}'
    )


def test_arch_status_is_read_from_the_process_and_is_none_without_one() -> None:
    assert read_arch_status(os.getpid()) == read_text(f"/proc/{os.getpid()}/arch_status")
    assert read_arch_status(2**22 + 1) is None  # above the kernel's largest pid
