"""Disassembly, normalisation, loops and summaries of machine code, into function listings. One
module near 800 lines on purpose: each step reads the instruction records the one before it made.

Pure: bytes in, records out.

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
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import capstone
from capstone import x86 as cs_x86

from perflab.tools.debuginfo import SourceFrame, frames_from_json, frames_to_json

L1I_CACHE_BYTES = 32 * 1024  # L1 instruction cache of current Intel and AMD cores
UOP_CACHE_UOPS = 1536  # decoded-uop cache: 1.5K (Skylake) to 4K (Golden Cove, Zen 3/4); the low end
# A "loop" larger than this is an interpreter's dispatch or a whole algorithm: a static
# per-iteration prediction means little there and llvm-mca takes seconds on it.
MCA_MAX_INSTRUCTIONS = 400

Resolver = Callable[[int], str | None]


class Flow(enum.StrEnum):
    NONE = "none"
    JUMP = "jump"  # unconditional
    BRANCH = "branch"  # conditional
    CALL = "call"
    RET = "ret"


@dataclass(frozen=True)
class Instruction:
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


# ---------------------------------------------------------------------------------------------
# loops


@dataclass(frozen=True)
class Loop:
    """A natural loop of the control-flow graph: a header block that dominates the source of
    an edge back to it (the back edge), and every block that reaches that source without passing
    through the header. Its body need not be contiguous: a cold block the loop jumps out to and
    back from belongs to it only if the header dominates it."""

    start: int  # the header's first instruction
    end: int  # just after the body's last instruction (in address order)
    instructions: int
    cost: float
    vector_instructions: int
    body: frozenset[int] = frozenset()  # addresses of the body's instructions
    size: int = 0  # bytes of the body's instructions

    @property
    def size_bytes(self) -> int:
        return self.size or self.end - self.start

    def contains(self, address: int) -> bool:
        if self.body:
            return address in self.body
        return self.start <= address < self.end

    def encloses(self, other: Loop) -> bool:
        if self.body and other.body:
            return self != other and other.body < self.body
        return self != other and self.start <= other.start and other.end <= self.end


@dataclass(frozen=True)
class BasicBlock:
    first: int  # index of its first line
    last: int  # index of its last line (inclusive)
    successors: tuple[int, ...]  # indexes of successor blocks


def basic_blocks(lines: Sequence[AsmLine]) -> tuple[BasicBlock, ...]:
    """Split a function at jump targets and after jumps, branches and returns. A jump out of the
    function (a tail call) or through a register has no successor inside it."""
    if not lines:
        return ()
    index_of = {line.instruction.address: k for k, line in enumerate(lines)}
    leaders = {0}
    for k, line in enumerate(lines):
        insn = line.instruction
        if insn.flow in (Flow.JUMP, Flow.BRANCH, Flow.RET):
            if k + 1 < len(lines):
                leaders.add(k + 1)
            if insn.target is not None and insn.target in index_of and insn.flow is not Flow.RET:
                leaders.add(index_of[insn.target])
    starts = sorted(leaders)
    block_of = {first: n for n, first in enumerate(starts)}
    blocks = []
    for n, first in enumerate(starts):
        last = (starts[n + 1] if n + 1 < len(starts) else len(lines)) - 1
        insn = lines[last].instruction
        successors: list[int] = []
        if insn.flow in (Flow.JUMP, Flow.BRANCH) and insn.target in index_of:
            successors.append(block_of[index_of[insn.target]])
        if insn.flow not in (Flow.JUMP, Flow.RET) and n + 1 < len(starts):
            successors.append(n + 1)
        blocks.append(BasicBlock(first, last, tuple(dict.fromkeys(successors))))
    return tuple(blocks)


def dominators(blocks: Sequence[BasicBlock]) -> list[int | None]:
    """Immediate dominator of each block (entry: itself; unreachable from the entry: None), by
    the iterative algorithm of Cooper, Harvey and Kennedy on reverse postorder."""
    if not blocks:
        return []
    order = _reverse_postorder(blocks)
    rank = {node: k for k, node in enumerate(order)}
    predecessors: dict[int, list[int]] = {}
    for node in order:
        for successor in blocks[node].successors:
            predecessors.setdefault(successor, []).append(node)
    idom: list[int | None] = [None] * len(blocks)
    idom[0] = 0

    def intersect(a: int, b: int) -> int:
        while a != b:
            while rank[a] > rank[b]:
                a = idom[a]  # type: ignore[assignment]
            while rank[b] > rank[a]:
                b = idom[b]  # type: ignore[assignment]
        return a

    changed = True
    while changed:
        changed = False
        for node in order[1:]:
            done = [p for p in predecessors.get(node, []) if idom[p] is not None]
            if not done:
                continue
            new = done[0]
            for other in done[1:]:
                new = intersect(other, new)
            if idom[node] != new:
                idom[node] = new
                changed = True
    return idom


def _reverse_postorder(blocks: Sequence[BasicBlock]) -> list[int]:
    """The blocks reachable from the entry, each before its successors except along back edges."""
    order: list[int] = []
    seen = {0}
    stack: list[tuple[int, int]] = [(0, 0)]
    while stack:  # iterative depth-first search: big functions have thousands of blocks
        node, next_child = stack[-1]
        successors = blocks[node].successors
        if next_child < len(successors):
            stack[-1] = (node, next_child + 1)
            child = successors[next_child]
            if child not in seen:
                seen.add(child)
                stack.append((child, 0))
        else:
            order.append(node)
            stack.pop()
    order.reverse()
    return order


def _dominates(idom: Sequence[int | None], a: int, b: int) -> bool:
    """Block a dominates block b (both reachable)."""
    while True:
        if a == b:
            return True
        parent = idom[b]
        if parent is None or parent == b:
            return False
        b = parent


def find_loops(lines: Sequence[AsmLine]) -> tuple[Loop, ...]:
    """Natural loops: for each back edge u -> h (h dominates u), h and the blocks reaching u
    without passing h; back edges to one header make one loop."""
    blocks = basic_blocks(lines)
    idom = dominators(blocks)
    predecessors: dict[int, list[int]] = {}
    for n, block in enumerate(blocks):
        for successor in block.successors:
            predecessors.setdefault(successor, []).append(n)
    bodies: dict[int, set[int]] = {}
    for n, block in enumerate(blocks):
        if idom[n] is None:
            continue
        for header in block.successors:
            if idom[header] is not None and _dominates(idom, header, n):
                body = bodies.setdefault(header, {header})
                work = [n]
                while work:
                    node = work.pop()
                    if node not in body:
                        body.add(node)
                        work += predecessors.get(node, [])
    loops = []
    for header, body in bodies.items():
        members = [
            lines[k] for b in sorted(body) for k in range(blocks[b].first, blocks[b].last + 1)
        ]
        loops.append(
            Loop(
                start=lines[blocks[header].first].instruction.address,
                end=max(m.instruction.address + m.instruction.size for m in members),
                instructions=len(members),
                cost=sum(m.cost for m in members),
                vector_instructions=sum(vector_bits(m.instruction) > 0 for m in members),
                body=frozenset(m.instruction.address for m in members),
                size=sum(m.instruction.size for m in members),
            )
        )
    return tuple(sorted(loops, key=lambda loop: (loop.start, loop.end)))


def _own_cost(loop: Loop, loops: Sequence[Loop], cost_at: Mapping[int, float]) -> float:
    """The cost of the loop's instructions that are in none of its nested loops."""
    nested: set[int] = set()
    for other in loops:
        if loop.encloses(other):
            nested |= other.body
    return sum(cost for address, cost in cost_at.items() if address in loop.body - nested)


def hot_loop(loops: Sequence[Loop], lines: Sequence[AsmLine] = ()) -> Loop | None:
    """The loop whose own instructions (outside its nested loops) carry the most cost, the
    innermost and then the first by address among equals, so that one stray sample in an outer
    loop does not move the choice; without costs, the innermost loop doing the most vector work
    (the vectorised main loop rather than its scalar remainder)."""
    if not loops:
        return None
    cost_at = {line.instruction.address: line.cost for line in lines if line.cost}
    if cost_at and any(loop.cost > 0 for loop in loops):
        return max(
            loops,
            key=lambda loop: (_own_cost(loop, loops, cost_at), -loop.instructions, -loop.start),
        )
    innermost = [loop for loop in loops if not any(loop.encloses(other) for other in loops)]
    return max(
        innermost, key=lambda loop: (loop.vector_instructions, loop.instructions, -loop.start)
    )


def mark_loop(lines: Sequence[AsmLine], loop: Loop | None) -> tuple[AsmLine, ...]:
    if loop is None:
        return tuple(lines)
    return tuple(
        replace(line, in_hot_loop=loop.contains(line.instruction.address)) for line in lines
    )


# ---------------------------------------------------------------------------------------------
# summaries


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


@dataclass(frozen=True)
class InstructionMix:
    total: int
    vector: int  # SIMD instructions on xmm/ymm/zmm/k registers; scalar FP and zeroing excluded
    scalar_fp: int
    integer: int  # everything else: integer, address arithmetic, control flow
    loads: int
    stores: int
    branches: int  # jumps and conditional branches
    calls: int

    def to_json(self) -> dict[str, int]:
        return {key: getattr(self, key) for key in self.__dataclass_fields__}


def instruction_mix(instructions: Iterable[Instruction]) -> InstructionMix:
    counts: Counter[str] = Counter()
    for insn in instructions:
        counts["total"] += 1
        if is_scalar_fp(insn):
            counts["scalar_fp"] += 1
        elif vector_bits(insn) and not is_zeroing_idiom(insn):
            counts["vector"] += 1
        else:
            counts["integer"] += 1
        counts["loads"] += insn.loads
        counts["stores"] += insn.stores
        counts["branches"] += insn.flow in (Flow.JUMP, Flow.BRANCH)
        counts["calls"] += insn.flow is Flow.CALL
    return InstructionMix(**{key: counts[key] for key in InstructionMix.__dataclass_fields__})


INDIRECT_CALL = "<indirect>"


def call_targets(lines: Iterable[AsmLine]) -> Counter[str]:
    """Callee name -> number of call sites; indirect calls through a named GOT slot keep it.
    A direct jump out of the function (a tail call, `jmp slowPath`) is a call too."""
    calls: Counter[str] = Counter()
    for line in lines:
        insn = line.instruction
        if insn.flow is Flow.JUMP and insn.target is not None and " " in line.text:
            operand = line.text.split(" ", 1)[1]
            if not operand.startswith(".L") and operand != "<unknown>":
                calls[operand] += 1
            continue
        if line.instruction.flow is Flow.CALL:
            operand = line.text.split(" ", 1)[1] if " " in line.text else ""
            if line.instruction.target is None and "[rip + " not in operand:
                operand = INDIRECT_CALL  # through a register or vtable: the callee is not static
            calls[_strip_call_operand(operand)] += 1
    return calls


def _strip_call_operand(operand: str) -> str:
    match = re.match(r"^qword ptr \[rip \+ (.*)\]$", operand)
    return match.group(1) if match else operand


@dataclass(frozen=True)
class LoopThroughput:
    """llvm-mca's static prediction for one iteration of a loop body."""

    cpu: str
    cycles_per_iteration: float
    uops_per_iteration: float
    block_reciprocal_throughput: float

    def to_json(self) -> dict[str, Any]:
        return {
            "cpu": self.cpu,
            "cycles_per_iteration": self.cycles_per_iteration,
            "uops_per_iteration": self.uops_per_iteration,
            "block_rthroughput": self.block_reciprocal_throughput,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LoopThroughput:
        return cls(
            str(data["cpu"]),
            float(data["cycles_per_iteration"]),
            float(data["uops_per_iteration"]),
            float(data["block_rthroughput"]),
        )


@dataclass(frozen=True)
class LoopSummary:
    start_label: str | None
    size_bytes: int
    instructions: int
    cost_share: float | None  # fraction of the function's cost inside the loop; None: no costs
    fits_l1i: bool
    fits_uop_cache: bool  # judged by uops from llvm-mca when known, else instructions
    throughput: LoopThroughput | None = None
    # where the loop lies (link-time addresses: a load base is page-aligned, so their offsets
    # within 32- and 64-byte blocks are the running code's): [start, end)
    start_address: int | None = None
    end_address: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "start_address": self.start_address,
            "end_address": self.end_address,
            "label": self.start_label,
            "size_bytes": self.size_bytes,
            "instructions": self.instructions,
            "cost_share": self.cost_share,
            "fits_l1i": self.fits_l1i,
            "fits_uop_cache": self.fits_uop_cache,
            "predicted_cycles_per_iteration": (
                self.throughput.cycles_per_iteration if self.throughput else None
            ),
            "throughput": self.throughput.to_json() if self.throughput else None,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LoopSummary:
        return cls(
            data["label"],
            int(data["size_bytes"]),
            int(data["instructions"]),
            data["cost_share"],
            bool(data["fits_l1i"]),
            bool(data["fits_uop_cache"]),
            LoopThroughput.from_json(data["throughput"]) if data.get("throughput") else None,
            data.get("start_address"),
            data.get("end_address"),
        )


def summarise_loop(
    lines: Sequence[AsmLine], loop: Loop, throughput: LoopThroughput | None = None
) -> LoopSummary:
    total_cost = sum(line.cost for line in lines)
    label = next((line.label for line in lines if line.instruction.address == loop.start), None)
    uops = throughput.uops_per_iteration if throughput else float(loop.instructions)
    return LoopSummary(
        start_label=label,
        size_bytes=loop.size_bytes,
        instructions=loop.instructions,
        cost_share=loop.cost / total_cost if total_cost > 0 else None,
        fits_l1i=loop.size_bytes <= L1I_CACHE_BYTES,
        fits_uop_cache=uops <= UOP_CACHE_UOPS,
        throughput=throughput,
        start_address=loop.start,
        end_address=loop.end,
    )


def loop_body_assembly(lines: Sequence[AsmLine], loop: Loop) -> str:
    """The loop as an llvm-mca input: Intel syntax, its own labels kept, the rest placeholders."""
    body = [".intel_syntax noprefix"]
    for line in lines:
        if loop.contains(line.instruction.address):
            if line.label:
                body.append(f"{line.label}:")
            body.append(line.assembly)
    return "\n".join(body) + "\n"


# ---------------------------------------------------------------------------------------------
# function listings


@dataclass(frozen=True)
class FunctionListing:
    """One function of one variant: where it came from, its normalised code and its summary."""

    name: str  # demangled
    symbol: str  # as in the symbol table
    object_path: str
    address: int  # link-time
    lines: tuple[AsmLine, ...]
    hot_loop: LoopSummary | None = None
    cost: float = 0.0  # samples (or Ir) attributed to the function as a whole
    cost_unit: str = "samples"
    # DWARF inline chains (innermost first) of the addresses that execute inlined code; None:
    # the object has no debug info (or it was not read), so inlining cannot be told
    inline_frames: Mapping[int, tuple[SourceFrame, ...]] | None = None

    @property
    def size_bytes(self) -> int:
        if not self.lines:
            return 0
        last = self.lines[-1].instruction
        return last.address + last.size - self.address

    @property
    def vector_width_bits(self) -> int:
        return max((vector_bits(line.instruction) for line in self.lines), default=0)

    @property
    def mix(self) -> InstructionMix:
        return instruction_mix(line.instruction for line in self.lines)

    @property
    def calls(self) -> Counter[str]:
        return call_targets(self.lines)

    def summary_json(self) -> dict[str, Any]:
        """The per-function fields of the asm comparison's JSON contract (and more)."""
        return {
            "symbol": self.symbol,
            "demangled": self.name,
            "object": self.object_path,
            "address": self.address,
            "size_bytes": self.size_bytes,
            "instructions": len(self.lines),
            "vector_width_bits": self.vector_width_bits,
            "calls": sorted(self.calls),
            "call_sites": sum(self.calls.values()),
            "mix": self.mix.to_json(),
            "hot_loop": self.hot_loop.to_json() if self.hot_loop else None,
            "cost": self.cost,
            "cost_unit": self.cost_unit,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "symbol": self.symbol,
            "object": self.object_path,
            "address": self.address,
            "cost": self.cost,
            "cost_unit": self.cost_unit,
            "hot_loop": self.hot_loop.to_json() if self.hot_loop else None,
            "lines": [line_to_json(line) for line in self.lines],
            "inline_frames": (
                None if self.inline_frames is None else frames_to_json(self.inline_frames)
            ),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FunctionListing:
        return cls(
            name=str(data["name"]),
            symbol=str(data["symbol"]),
            object_path=str(data["object"]),
            address=int(data["address"]),
            lines=tuple(line_from_json(line) for line in data["lines"]),
            hot_loop=LoopSummary.from_json(data["hot_loop"]) if data.get("hot_loop") else None,
            cost=float(data.get("cost", 0.0)),
            cost_unit=str(data.get("cost_unit", "samples")),
            inline_frames=(
                None
                if data.get("inline_frames") is None
                else frames_from_json(data["inline_frames"])
            ),
        )


def line_to_json(line: AsmLine) -> dict[str, Any]:
    insn = line.instruction
    out: dict[str, Any] = {
        "address": insn.address,
        "size": insn.size,
        "mnemonic": insn.mnemonic,
        "operands": insn.operands,
        "text": line.text,
        "assembly": line.assembly,
    }
    optional = {
        "flow": str(insn.flow) if insn.flow is not Flow.NONE else None,
        "target": insn.target,
        "rip_target": insn.rip_target,
        "loads": insn.loads or None,
        "stores": insn.stores or None,
        "label": line.label,
        "cost": line.cost or None,
        "hot": line.in_hot_loop or None,
    }
    out.update({key: value for key, value in optional.items() if value is not None})
    return out


def line_from_json(data: Mapping[str, Any]) -> AsmLine:
    insn = Instruction(
        address=int(data["address"]),
        size=int(data["size"]),
        mnemonic=str(data["mnemonic"]),
        operands=str(data["operands"]),
        flow=Flow(data.get("flow", "none")),
        target=data.get("target"),
        rip_target=data.get("rip_target"),
        loads=bool(data.get("loads", False)),
        stores=bool(data.get("stores", False)),
    )
    return AsmLine(
        instruction=insn,
        text=str(data["text"]),
        assembly=str(data["assembly"]),
        label=data.get("label"),
        cost=float(data.get("cost", 0.0)),
        in_hot_loop=bool(data.get("hot", False)),
    )


@dataclass(frozen=True)
class FunctionCode:
    """One function to list: its names, where it lives, and its machine code (`code`), or the
    code already disassembled and normalised (`normalised`; `code` is then not read)."""

    name: str
    symbol: str
    object_path: str
    address: int
    code: bytes = b""
    normalised: Sequence[AsmLine] | None = None


def build_listing(
    function: FunctionCode,
    resolve: Resolver,
    *,
    costs: Mapping[int, float] | None = None,
    cost_unit: str = "samples",
    throughput_of: Callable[[str], LoopThroughput | None] | None = None,
) -> FunctionListing:
    """Disassemble, normalise, annotate and summarise one function. `throughput_of` gets the
    hot loop's llvm-mca input and returns its prediction (None: not available)."""
    normalised = function.normalised
    if normalised is None:
        normalised = normalise(disassemble(function.code, function.address), resolve)
    lines = annotate(normalised, costs or {})
    loop = hot_loop(find_loops(lines), lines)
    summary = None
    if loop is not None:
        lines = mark_loop(lines, loop)
        throughput = None
        if throughput_of is not None and loop.instructions <= MCA_MAX_INSTRUCTIONS:
            throughput = throughput_of(loop_body_assembly(lines, loop))
        summary = summarise_loop(lines, loop, throughput)
    return FunctionListing(
        name=function.name,
        symbol=function.symbol,
        object_path=function.object_path,
        address=function.address,
        lines=lines,
        hot_loop=summary,
        cost=sum(costs.values()) if costs else 0.0,
        cost_unit=cost_unit,
    )
