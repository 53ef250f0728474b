"""What a function's instructions and its hot loop amount to: the instruction mix, the call
targets, and the loop's summary (its size against the caches, its llvm-mca throughput). Pure."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from perflab.lenses.asm.disassembly import (
    AsmLine,
    Flow,
    Instruction,
    is_scalar_fp,
    is_zeroing_idiom,
    vector_bits,
)
from perflab.lenses.asm.loops import Loop
from perflab.tool_output.llvm_mca import LoopThroughput

L1I_CACHE_BYTES = 32 * 1024  # L1 instruction cache of current Intel and AMD cores
UOP_CACHE_UOPS = 1536  # decoded-uop cache: 1.5K (Skylake) to 4K (Golden Cove, Zen 3/4); the low end


@dataclass(frozen=True)
class InstructionMix:
    """A function's or loop's instructions counted by kind (vector, scalar FP, integer, memory,
    control flow)."""

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
    """The instructions counted by kind."""
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
class LoopSummary:
    """One loop of a function: its size, its share of the cost, whether it fits the instruction
    caches, and where it lies."""

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
    """One loop of a listing summed up: its size, its share of the function's cost, and whether it
    fits the instruction caches."""
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
