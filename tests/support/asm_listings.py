"""Machine code for the asm lens's tests: the same kernel built for two vector widths, a loop that
calls a helper, function listings built from raw bytes, and the claims an explanation makes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from perflab.lenses.asm.disassembly import Flow, Instruction
from perflab.lenses.asm.machine_code import FunctionCode, FunctionListing, build_listing
from perflab.lenses.asm.rows import Row, VariantCode
from perflab.tool_drivers.debuginfo import SourceFrame

# vmovups ymm0, [rdi]; vmaxps ymm0, ymm0, ymm1; vmovups [rsi], ymm0; ret
YMM = bytes.fromhex("c5fc1007c5fc5fc1c5fc1106c3")

# movups xmm0, [rdi]; maxps xmm0, xmm1; movups [rsi], xmm0; ret
XMM = bytes.fromhex("0f10070f5fc10f1106c3")
ZMM = bytes.fromhex("62f17c481007c3")  # vmovups zmm0, [rdi]; ret

# the callees of a call at 0x1000 to 0x2000 or 0x3000 (CALL_A, CALL_B in the tests)
CALLEE_NAMES = {0x2000: "Sleef_expf8_u10", 0x3000: "Sleef_expf16_u10"}


def listing(
    name: str,
    code: bytes = YMM,
    samples: float = 0.0,
    obj: str = "/lib/libk.so",
    frames: Mapping[int, tuple[SourceFrame, ...]] | None = None,
    names: dict[int, str] = CALLEE_NAMES,
) -> FunctionListing:
    """One function's listing at 0x1000 in `obj`, all `samples` on its first instruction."""
    out = build_listing(
        FunctionCode(name, name, obj, 0x1000, code=code),
        names.get,
        costs={0x1000: samples} if samples else None,
    )
    return replace(out, inline_frames=frames)


def code(*listings: FunctionListing, total: float = 1000.0, **kw: object) -> VariantCode:
    """One variant's code: its listings, out of `total` samples."""
    return VariantCode(tuple(listings), total, **kw)  # type: ignore[arg-type]


def claims(rows: list[Row]) -> list[tuple[str, str]]:
    """(claim, function) for each diagnosis of the rows."""
    return [(str(d.claim), d.function) for row in rows for d in row.diagnoses]


# A counted loop calling a helper and reading a global:
#   0x1000 xor eax, eax
#   0x1002 add rax, 1            <- loop head
#   0x1006 call 0x2000
#   0x100b lea rcx, [rip + 0xff1] (-> 0x2003)
#   0x1012 cmp rax, rdi
#   0x1015 jne 0x1002
#   0x1017 ret
LOOP_CODE = bytes.fromhex("31c04883c001e8f50f0000488d0df10f00004839f875ebc3")

LOOP_NAMES = {0x2000: "helper", 0x2003: "table+0x3"}


def loop_lines(costs: dict[int, float] | None = None) -> FunctionListing:
    """LOOP_CODE's listing at 0x1000, `costs` by address."""
    return build_listing(
        FunctionCode("f", "f", "/lib/x.so", 0x1000, code=LOOP_CODE), LOOP_NAMES.get, costs=costs
    )


def insn(mnemonic: str, operands: str, flow: Flow = Flow.NONE) -> Instruction:
    """A 4-byte instruction at address 0."""
    return Instruction(0, 4, mnemonic, operands, flow)
