"""What one variant's debug info and call graph say about where functions' code ran: the
inlined copies that executed, the out-of-line calls, and the costs re-attributed to the inlined
functions debug info names (`reattribute_inlined`).

Pure functions over `FunctionCosts` and `InstructionCosts` (perflab.tool_output.callgrind).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from perflab.tool_drivers.debuginfo import AddressFrames, inline_sites
from perflab.tool_output.callgrind import (
    INSTRUCTIONS_EVENT,
    FunctionCost,
    FunctionCosts,
    FunctionId,
    InstructionCosts,
)

# calls per iteration below which a call edge is a statement's residue (the worker's handshake
# left after subtracting the empty loop), not a call the statement makes
MIN_CALLS = 0.01


@dataclass(frozen=True)
class InlinedCopy:
    """Executed code of `callee` inlined into `caller` (at `location`, the call site), inside
    the out-of-line function `host`, in one variant's `object`."""

    callee: str
    caller: str
    object: str
    host: str
    location: str
    cost: float  # instructions (per iteration) executed in the inlined copy


@dataclass(frozen=True)
class OutOfLineCall:
    """Calls (callgrind's call graph) from `caller` to an out-of-line `callee`."""

    callee: str
    caller: str
    object: str
    count: float  # calls per iteration
    callee_self: float  # the out-of-line callee's own cost per iteration


@dataclass(frozen=True)
class InlineEvidence:
    """What one variant's debug info and call graph say about where functions' code ran.

    Names are normalised (demangled, clone suffixes folded) and objects compared by file name,
    as the function table is. `described` are the objects whose executed addresses were read
    through debug info: only there can the absence of an inlined copy be told."""

    copies: tuple[InlinedCopy, ...] = ()
    calls: tuple[OutOfLineCall, ...] = ()
    described: frozenset[str] = frozenset()
    identities: Mapping[str, str] = field(default_factory=dict)  # object -> build-id/hash
    ran: frozenset[str] = frozenset()  # objects with executed code

    def copies_of(self, callee: str, obj: str) -> tuple[InlinedCopy, ...]:
        return tuple(c for c in self.copies if c.callee == callee and c.object == obj)

    def calls_of(self, callee: str, obj: str) -> tuple[OutOfLineCall, ...]:
        return tuple(c for c in self.calls if c.callee == callee and c.object == obj)

    def hosts_of(self, function: str, obj: str) -> frozenset[str]:
        """The out-of-line functions whose executed code holds `function` (itself included)."""
        return frozenset(
            {function} | {c.host for c in self.copies if c.caller == function and c.object == obj}
        )


def inline_evidence(
    costs: FunctionCosts,
    instructions: InstructionCosts | None,
    frames: Mapping[str, AddressFrames],
    rename: Callable[[FunctionId], FunctionId],
    identities: Mapping[str, str] | None = None,
) -> InlineEvidence:
    """Inlined copies (from the inline frames of executed instructions) and out-of-line calls
    (from the call graph) of one variant. `costs` and `instructions` are per iteration; `rename`
    maps callgrind's raw ids to the compared ones; `frames` and `identities` are keyed by the
    object paths callgrind reports."""
    renamed = costs.renamed(rename)
    return InlineEvidence(
        copies=_inlined_copies(instructions, frames, rename),
        calls=_out_of_line_calls(renamed),
        described=frozenset(rename(FunctionId("", path)).object for path in frames),
        ran=frozenset(fid.object for fid in renamed.functions),
        identities={
            rename(FunctionId("", path)).object: identity
            for path, identity in (identities or {}).items()
        },
    )


def _inlined_copies(
    instructions: InstructionCosts | None,
    frames: Mapping[str, AddressFrames],
    rename: Callable[[FunctionId], FunctionId],
) -> tuple[InlinedCopy, ...]:
    """Every inlined copy that executed, with the instructions it executed."""
    if instructions is None:
        return ()
    copies: dict[tuple[str, str, str, str, str], float] = {}
    for path, by_address in frames.items():
        obj = rename(FunctionId("", path)).object
        cost_of = _instruction_costs(instructions, path)
        for site, addresses in inline_sites(by_address).items():
            key = (
                rename(FunctionId(site.callee, path)).name,
                rename(FunctionId(site.caller, path)).name,
                obj,
                rename(FunctionId(site.function, path)).name,
                site.location(),
            )
            copies[key] = copies.get(key, 0.0) + sum(cost_of.get(a, 0.0) for a in addresses)
    return tuple(
        InlinedCopy(callee, caller, obj, host, where, cost)
        for (callee, caller, obj, host, where), cost in sorted(copies.items())
        # a statement's costs are its loop's minus the empty loop's: code whose costs
        # cancel out (the worker's own) did not run for the statement
        if callee != caller and cost > 0
    )


def _out_of_line_calls(renamed: FunctionCosts) -> tuple[OutOfLineCall, ...]:
    """The call graph's calls within one object, made at least MIN_CALLS times an iteration."""
    calls: dict[tuple[str, str, str], tuple[float, float]] = {}
    for (caller, callee), call in renamed.calls.items():
        if call.count < MIN_CALLS or caller == callee or caller.object != callee.object:
            continue
        edge = (callee.name, caller.name, caller.object)
        have = calls.get(edge, (0.0, 0.0))
        calls[edge] = (have[0] + call.count, renamed.self_of(callee))
    return tuple(
        OutOfLineCall(callee, caller, obj, count, own)
        for (callee, caller, obj), (count, own) in sorted(calls.items())
    )


def _instruction_costs(instructions: InstructionCosts, path: str) -> dict[int, float]:
    index = instructions.events.index(INSTRUCTIONS_EVENT)
    out: dict[int, float] = {}
    for row in instructions.rows:
        if row.function.object == path:
            out[row.address] = out.get(row.address, 0.0) + row.cost[index]
    return out


def reattribute_inlined(
    instructions: InstructionCosts, frames: Mapping[str, AddressFrames]
) -> FunctionCosts:
    """Self costs with each instruction charged to the innermost function its debug info names.

    Instructions of objects without frames keep callgrind's attribution. The result has no
    call edges: inclusive costs of this view equal self costs."""
    # each function's file (its first row's) and costs summed in row order, the records built
    # once at the end: there is a row per executed instruction, too many for a record each
    sums: dict[FunctionId, tuple[str, list[float]]] = {}
    no_frames: AddressFrames = {}
    for row in instructions.rows:
        obj = row.function.object
        chain = frames.get(obj, no_frames).get(row.address)
        fid = FunctionId(chain[0].function, obj) if chain else row.function
        have = sums.get(fid)
        if have is None:
            sums[fid] = (row.file, list(row.cost))
        else:
            total = have[1]
            if len(total) != len(row.cost):
                raise ValueError("rows of one profile with different numbers of events")
            for i, value in enumerate(row.cost):
                total[i] += value
    functions = {fid: FunctionCost(fid, file, tuple(total)) for fid, (file, total) in sums.items()}
    return FunctionCosts(instructions.events, MappingProxyType(functions), MappingProxyType({}))
