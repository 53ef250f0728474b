"""A function's listing: its machine code disassembled and normalised (`disassembly`), its
loops found (`loops`) and the hot one summarised (`summaries`), in a record stored as JSON and
compared in `code_diff`. Pure: bytes in, records out."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from perflab.lenses.asm.disassembly import (
    AsmLine,
    Flow,
    Instruction,
    Resolver,
    annotate,
    disassemble,
    normalise,
    vector_bits,
)
from perflab.lenses.asm.loops import find_loops, hot_loop, mark_loop
from perflab.lenses.asm.summaries import (
    InstructionMix,
    LoopSummary,
    call_targets,
    instruction_mix,
    loop_body_assembly,
    summarise_loop,
)
from perflab.tool_drivers.debuginfo import SourceFrame, frames_from_json, frames_to_json
from perflab.tool_output.llvm_mca import LoopThroughput

# A "loop" larger than this is an interpreter's dispatch or a whole algorithm: a static
# per-iteration prediction means little there and llvm-mca takes seconds on it.
MCA_MAX_INSTRUCTIONS = 400


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
    """One listing line as stored in the asm artifact (optional fields only when set)."""
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
    """One listing line read back from the asm artifact."""
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
