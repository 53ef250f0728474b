"""A function's machine code as a listing: normalised lines, its hot loop and mix, its JSON."""

from __future__ import annotations

import json

import pytest

from perflab.lenses.asm.disassembly import Flow
from perflab.lenses.asm.machine_code import FunctionListing
from tests.support.asm_listings import LOOP_CODE, loop_lines


def test_normalise_replaces_addresses_with_labels_and_names() -> None:
    texts = [line.text for line in loop_lines().lines]
    assert texts == [
        "xor eax, eax",
        "add rax, 1",
        "call helper",
        "lea rcx, [rip + table+0x3]",
        "cmp rax, rdi",
        "jne .L1",
        "ret",
    ]
    listing = loop_lines()
    assert listing.lines[1].label == ".L1"
    assert listing.lines[5].instruction.flow is Flow.BRANCH
    # llvm-mca gets placeholders instead of C++ names it could not parse
    assert listing.lines[2].assembly == "call __perflab_external"


def test_loop_summary_and_mix() -> None:
    listing = loop_lines({0x1002: 5.0, 0x1006: 3.0, 0x1000: 1.0})
    assert listing.size_bytes == len(LOOP_CODE)
    assert listing.hot_loop is not None
    assert listing.hot_loop.size_bytes == 0x1017 - 0x1002
    assert listing.hot_loop.instructions == 5
    assert listing.hot_loop.cost_share == pytest.approx(8 / 9)
    assert [line.in_hot_loop for line in listing.lines] == [False] + [True] * 5 + [False]
    assert dict(listing.calls) == {"helper": 1}
    mix = listing.mix
    assert (mix.total, mix.branches, mix.calls, mix.vector, mix.loads) == (7, 1, 1, 0, 0)


def test_listing_json_round_trip() -> None:
    listing = loop_lines({0x1002: 2.0})
    again = FunctionListing.from_json(json.loads(json.dumps(listing.to_json())))
    assert again == listing
