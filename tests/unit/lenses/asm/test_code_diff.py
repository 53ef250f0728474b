"""Two listings compared: names paired across builds, lines aligned, the change said."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from perflab.lenses.asm.code_diff import (
    RowTag,
    align,
    canonical_name,
    change_sentence,
    diff_text,
)
from perflab.lenses.asm.disassembly import AsmLine, Instruction
from perflab.lenses.asm.machine_code import FunctionListing


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (
            "at::native::AVX2::(anonymous namespace)::relu_kernel(at::TensorIteratorBase&)",
            "at::native::AVX512::(anonymous namespace)::relu_kernel(at::TensorIteratorBase&)",
        ),
        ("threshold_kernel.constprop.0", "threshold_kernel"),
        ("foo(int) [clone .isra.0]", "foo(int)"),
        ("kernel_avx2", "kernel_AVX512F"),
        ("f.cold", "f"),
    ],
)
def test_canonical_names_pair(left: str, right: str) -> None:
    assert canonical_name(left) == canonical_name(right)


def line(text: str, address: int, label: str | None = None) -> AsmLine:
    return AsmLine(Instruction(address, 1, text.split()[0], ""), text, text, label)


def lines(texts: Sequence[str]) -> tuple[AsmLine, ...]:
    return tuple(line(text, k) for k, text in enumerate(texts))


def test_align_masks_label_numbers_and_finds_moves() -> None:
    block = ["mov a", "mov b", "mov c"]
    left = lines(["push", *block, "jne .L1", "x", "y", "z", "ret"])
    right = lines(["push", "jne .L2", "x", "y", "z", *block, "ret"])
    rows = align(left, right)
    tags = [row.tag for row in rows]
    assert RowTag.MOVED in tags
    assert sum(tag is RowTag.MOVED for tag in tags) == 6  # the block on both sides
    assert all(row.tag is RowTag.SAME for row in rows if row.left and row.left.text == "jne .L1")
    text = diff_text(rows)
    assert "<    mov a" in text and ">    mov a" in text


def test_change_sentence_names_the_replacement() -> None:
    def listing(mnemonics: Sequence[str], width: str) -> FunctionListing:
        body = tuple(
            AsmLine(Instruction(k * 4, 4, m, f"{width}0, {width}1"), f"{m} {width}0", m)
            for k, m in enumerate(mnemonics)
        )
        return FunctionListing("relu", "relu", "/x", 0, body)

    before = listing(["vcmpps", "vblendvps", "ret"], "ymm")
    after = listing(["vmaxps", "ret"], "zmm")
    sentence = change_sentence(before, after)
    assert sentence.startswith(
        "uses 512-bit registers (baseline 256); vmaxps replaces vcmpps+vblendvps"
    )
    assert change_sentence(before, before) == "identical after normalisation"
