"""Machine code disassembled into instruction records and normalised into lines two builds can
compare, and what kind each is (vector, scalar floating point, a zeroing idiom). Pure: bytes in,
records out.

Syntax: Intel (``vmaxps zmm0, zmm1, zmm2``), because it is the syntax of Intel's and AMD's manuals,
of uops.info and of the intrinsics guide a performance engineer cross-checks against; operand width
is spelled out (``zmmword ptr``) instead of hidden in a suffix letter; and llvm-mca reads it after
``.intel_syntax noprefix``.

Normalisation makes two builds comparable: addresses disappear, jump targets become local labels
(``.L3``), call targets become symbol names, RIP-relative operands become symbol(+offset) or the
section they point into, and alignment padding becomes a plain ``nop``. Listings are compared in
`code_diff`.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import capstone
from capstone import x86 as cs_x86

Resolver = Callable[[int], str | None]


class Flow(enum.StrEnum):
    """How an instruction passes control on: falls through, jumps, branches, calls or returns."""

    NONE = "none"
    JUMP = "jump"  # unconditional
    BRANCH = "branch"  # conditional
    CALL = "call"
    RET = "ret"


@dataclass(frozen=True)
class Instruction:
    """One decoded machine instruction: where it is, its text, where it sends control and whether it
    touches memory."""

    address: int
    size: int
    mnemonic: str
    operands: str  # capstone's Intel syntax, addresses still absolute
    flow: Flow = Flow.NONE
    target: int | None = None  # direct jump/branch/call target
    rip_target: int | None = None  # address a RIP-relative operand refers to
    loads: bool = False
    stores: bool = False

    @property
    def raw(self) -> str:
        return f"{self.mnemonic} {self.operands}".strip()


_GROUP_FLOW = {capstone.CS_GRP_CALL: Flow.CALL, capstone.CS_GRP_RET: Flow.RET}
# Mnemonics whose memory destination is written without being read first.
_PURE_STORE = re.compile(
    r"^(v?mov|v?movnt|stos|set|v?extract|v?pextr|vcompress|v?p?scatter|vpmov[^m]|push)"
)
_NO_MEMORY_ACCESS = re.compile(r"^(lea|nop|prefetch|clflush|endbr)")
_COMPARE = re.compile(r"^(cmp|test|bt|v?u?comis|v?ptest)")


def disassemble(code: bytes, address: int) -> tuple[Instruction, ...]:
    """Decode a function's bytes (x86-64). Undecodable bytes end the listing, as objdump's
    "(bad)" would: they are data or padding inside the symbol."""
    disassembler = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    disassembler.detail = True
    return tuple(_instruction(insn) for insn in disassembler.disasm(code, address))


def _instruction(insn: Any) -> Instruction:
    flow = Flow.NONE
    for group, kind in _GROUP_FLOW.items():
        if group in insn.groups:
            flow = kind
    if capstone.CS_GRP_JUMP in insn.groups:
        flow = Flow.JUMP if insn.mnemonic.endswith("jmp") else Flow.BRANCH
    target = None
    rip_target = None
    memory_positions = []
    for position, operand in enumerate(insn.operands):
        if operand.type == cs_x86.X86_OP_IMM and flow is not Flow.NONE:
            target = int(operand.imm)
        elif operand.type == cs_x86.X86_OP_MEM:
            memory_positions.append(position)
            if operand.mem.base == cs_x86.X86_REG_RIP:
                rip_target = insn.address + insn.size + int(operand.mem.disp)
    loads, stores = _memory_access(insn.mnemonic, memory_positions)
    return Instruction(
        address=insn.address,
        size=insn.size,
        mnemonic=insn.mnemonic,
        operands=insn.op_str,
        flow=flow,
        target=target,
        rip_target=rip_target,
        loads=loads,
        stores=stores,
    )


def _memory_access(mnemonic: str, memory_positions: Sequence[int]) -> tuple[bool, bool]:
    """(loads, stores) from where the memory operand sits. Capstone's per-operand access flags
    are unreliable for AVX-512 (masked moves report neither), so the Intel operand order decides:
    a memory destination is a store, and also a load unless the instruction only writes it."""
    base = mnemonic.split()[-1] if mnemonic else mnemonic
    if not memory_positions or _NO_MEMORY_ACCESS.match(base):
        return False, False
    if memory_positions[0] != 0 or _COMPARE.match(base):
        return True, False
    return not _PURE_STORE.match(base), True


# ---------------------------------------------------------------------------------------------
# what kind of instruction


_VECTOR_REGISTER = re.compile(r"\b(?:([xyz])mm\d+|([xyz])mmword)\b")
_WIDTH = {"x": 128, "y": 256, "z": 512}
_MASK_REGISTER = re.compile(r"\bk[0-7]\b")
# scalar floating point on vector registers: addss, vfmadd231sd, cvtsi2ss, ucomisd ...
_SCALAR_FP = re.compile(r"^v?(?:[a-z0-9]+(?:ss|sd|sh)|cvt\w*2s[sd]|v?u?comis[sd])$")


def vector_bits(insn: Instruction) -> int:
    """Width of the widest vector register or memory operand the instruction names (0: none)."""
    widths = [
        _WIDTH[match.group(1) or match.group(2)]
        for match in _VECTOR_REGISTER.finditer(insn.operands)
    ]
    if not widths and _MASK_REGISTER.search(insn.operands):
        return 512  # mask registers exist only with AVX-512
    return max(widths, default=0)


_XOR_ZEROING = re.compile(r"^v?(?:p?xor|xorp[sd]|pxor[dq]?)$")


def is_zeroing_idiom(insn: Instruction) -> bool:
    """`pxor xmm1, xmm1` and friends: a dependency-breaking zero, not vector work (scalar code
    uses it to make 0.0f)."""
    operands = [part.strip() for part in insn.operands.split(",")]
    return bool(_XOR_ZEROING.match(insn.mnemonic)) and len(set(operands)) == 1 and len(operands) > 1


def is_scalar_fp(insn: Instruction) -> bool:
    return bool(_SCALAR_FP.match(insn.mnemonic)) and vector_bits(insn) <= 128


# ---------------------------------------------------------------------------------------------
# normalisation


@dataclass(frozen=True)
class AsmLine:
    """One instruction, normalised, with the cost other lenses measured at its address."""

    instruction: Instruction
    text: str  # normalised, for reading and diffing
    assembly: str  # assemblable by llvm-mc (labels and placeholders instead of C++ names)
    label: str | None = None  # set when some jump in the function lands here
    cost: float = 0.0
    in_hot_loop: bool = False

    @property
    def key(self) -> str:
        """What diffs compare: the text with label numbers masked."""
        return _LABEL.sub(".L", self.text)


_LABEL = re.compile(r"\.L\d+")
_RIP_OPERAND = re.compile(r"\[rip [+-] 0x[0-9a-f]+\]")
_HEX_TARGET = re.compile(r"^0x[0-9a-f]+$")


def normalise(instructions: Sequence[Instruction], resolve: Resolver) -> tuple[AsmLine, ...]:
    """Replace addresses by labels and names. `resolve` names an address outside the function
    (a symbol, PLT import, GOT slot or section), or returns None."""
    if not instructions:
        return ()
    start = instructions[0].address
    end = instructions[-1].address + instructions[-1].size
    starts = {insn.address for insn in instructions}
    targets = sorted(
        {
            i.target
            for i in instructions
            if i.target is not None and i.target in starts and i.flow is not Flow.CALL
        }
    )
    labels = {address: f".L{n}" for n, address in enumerate(targets, start=1)}
    lines = []
    for insn in instructions:
        text, assembly = _normalised_operands(insn, labels, start, end, resolve)
        lines.append(AsmLine(insn, text, assembly, label=labels.get(insn.address)))
    return tuple(lines)


def _normalised_operands(
    insn: Instruction, labels: Mapping[int, str], start: int, end: int, resolve: Resolver
) -> tuple[str, str]:
    mnemonic = insn.mnemonic
    if mnemonic.startswith("nop") or mnemonic.endswith(" nop"):
        return "nop", "nop"  # alignment padding: its length differs between builds, not its meaning
    operands = insn.operands
    assembly_operands = operands
    if insn.target is not None and _HEX_TARGET.match(operands):
        if insn.target in labels:
            operands = assembly_operands = labels[insn.target]
        elif start <= insn.target < end:
            operands = assembly_operands = f".Lmid_{insn.target - start:#x}"
        else:
            operands = _name_or_placeholder(resolve(insn.target), insn.target, start)
            assembly_operands = "__perflab_external"
    if insn.rip_target is not None:
        name = _name_or_placeholder(resolve(insn.rip_target), insn.rip_target, start)
        operands = _RIP_OPERAND.sub(f"[rip + {name}]", operands)
        assembly_operands = _RIP_OPERAND.sub("[rip + __perflab_data]", assembly_operands)
    return f"{mnemonic} {operands}".strip(), f"{mnemonic} {assembly_operands}".strip()


def _name_or_placeholder(name: str | None, address: int, function_start: int) -> str:
    # an unnamed address outside the function cannot be made stable; say so instead of diffing it
    return name if name is not None else "<unknown>"


def annotate(lines: Sequence[AsmLine], costs: Mapping[int, float]) -> tuple[AsmLine, ...]:
    """Attach per-address costs (perf samples or callgrind Ir) to the instructions."""
    return tuple(
        replace(line, cost=float(costs.get(line.instruction.address, 0.0))) for line in lines
    )
