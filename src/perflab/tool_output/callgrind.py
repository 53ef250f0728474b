"""Callgrind's costs as values that subtract, filter, scale and normalise: per function with its
calls, per instruction, per part of a run; and the function names made comparable across
builds. Parsed from callgrind's files by `perflab.tool_output.callgrind_format`.

Pure: values in, values out; no I/O.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

from perflab.tool_output.symbol_names import fold_clones

INSTRUCTIONS_EVENT = "Ir"


@dataclass(frozen=True, order=True)
class FunctionId:
    """A function as callgrind names it: symbol and the ELF object it lives in."""

    name: str
    object: str


@dataclass(frozen=True)
class FunctionCost:
    """Self cost of one function, one number per event (in `FunctionCosts.events` order)."""

    function: FunctionId
    file: str
    self_cost: tuple[float, ...]

    @property
    def name(self) -> str:
        return self.function.name

    @property
    def object(self) -> str:
        return self.function.object


@dataclass(frozen=True)
class CallCost:
    """All calls from `caller` to `callee`: how many, and their inclusive cost per event."""

    caller: FunctionId
    callee: FunctionId
    count: float
    inclusive: tuple[float, ...]


def _add(a: tuple[float, ...], b: tuple[float, ...], sign: float = 1.0) -> tuple[float, ...]:
    return tuple(x + sign * y for x, y in zip(a, b, strict=True))


@dataclass(frozen=True)
class FunctionCosts:
    """Per-function costs of one measurement: self costs plus the call graph.

    A value: ``variant - baseline`` subtracts (functions missing on one side count as zero),
    ``scaled(1 / loops)`` gives per-iteration costs, ``normalised()`` merges names that differ
    only by build artefacts. Inclusive costs are derived from self costs and the call edges,
    so they stay right after any of those operations.
    """

    events: tuple[str, ...]
    functions: Mapping[FunctionId, FunctionCost] = field(default_factory=dict)
    calls: Mapping[tuple[FunctionId, FunctionId], CallCost] = field(default_factory=dict)

    # -- queries -------------------------------------------------------------------------
    def event_index(self, event: str) -> int:
        try:
            return self.events.index(event)
        except ValueError:
            have = ", ".join(self.events)
            raise KeyError(f"event {event!r} not measured (have {have})") from None

    def total(self, event: str = INSTRUCTIONS_EVENT) -> float:
        index = self.event_index(event)
        return sum(cost.self_cost[index] for cost in self.functions.values())

    def self_of(self, function: FunctionId, event: str = INSTRUCTIONS_EVENT) -> float:
        cost = self.functions.get(function)
        return 0.0 if cost is None else cost.self_cost[self.event_index(event)]

    def inclusive_of(self, function: FunctionId, event: str = INSTRUCTIONS_EVENT) -> float:
        """Self cost plus the inclusive cost of calls to *other* functions (direct recursion
        is skipped: callgrind's recursive call edges already nest inside the outer call)."""
        index = self.event_index(event)
        total = self.self_of(function, event)
        for call in self._calls_from.get(function, ()):
            if call.callee != function:
                total += call.inclusive[index]
        return total

    def callers_of(self, function: FunctionId) -> tuple[CallCost, ...]:
        return self._calls_to.get(function, ())

    def callees_of(self, function: FunctionId) -> tuple[CallCost, ...]:
        return self._calls_from.get(function, ())

    def find(self, name: str, object: str | None = None) -> tuple[FunctionCost, ...]:
        return tuple(
            cost
            for cost in self.functions.values()
            if cost.name == name and (object is None or cost.object == object)
        )

    # The call indexes are built once per value, on first use: `function_deltas` asks for
    # every function's inclusive cost, and an index built per query makes that quadratic in the
    # profile's size (bench/results/analysis_speed_2026-11-28.md). A frozen value never changes,
    # so the cache cannot go stale; `cached_property` writes the instance's __dict__ directly,
    # past the frozen check.
    @cached_property
    def _calls_from(self) -> Mapping[FunctionId, tuple[CallCost, ...]]:
        return _index_calls(self.calls.values(), lambda call: call.caller)

    @cached_property
    def _calls_to(self) -> Mapping[FunctionId, tuple[CallCost, ...]]:
        return _index_calls(self.calls.values(), lambda call: call.callee)

    # -- value operations ----------------------------------------------------------------
    def __sub__(self, other: FunctionCosts) -> FunctionCosts:
        return self._combine(other, -1.0)

    def __add__(self, other: FunctionCosts) -> FunctionCosts:
        return self._combine(other, 1.0)

    def _combine(self, other: FunctionCosts, sign: float) -> FunctionCosts:
        if other.events != self.events:
            raise ValueError(f"cannot combine costs of events {self.events} and {other.events}")
        zero = tuple(0.0 for _ in self.events)
        functions = dict(self.functions)
        for key, cost in other.functions.items():
            mine = functions.get(key)
            base = mine.self_cost if mine is not None else zero
            functions[key] = FunctionCost(
                key, mine.file if mine is not None else cost.file, _add(base, cost.self_cost, sign)
            )
        calls = dict(self.calls)
        for edge, call in other.calls.items():
            have = calls.get(edge)
            count = (have.count if have else 0.0) + sign * call.count
            inclusive = _add(have.inclusive if have else zero, call.inclusive, sign)
            calls[edge] = CallCost(call.caller, call.callee, count, inclusive)
        return FunctionCosts(self.events, MappingProxyType(functions), MappingProxyType(calls))

    def scaled(self, factor: float) -> FunctionCosts:
        if factor == 1.0:  # x * 1.0 is x, bit for bit: the value itself (it is immutable)
            return self
        functions = {
            key: FunctionCost(key, cost.file, tuple(x * factor for x in cost.self_cost))
            for key, cost in self.functions.items()
        }
        calls = {
            edge: CallCost(
                call.caller,
                call.callee,
                call.count * factor,
                tuple(x * factor for x in call.inclusive),
            )
            for edge, call in self.calls.items()
        }
        return FunctionCosts(self.events, MappingProxyType(functions), MappingProxyType(calls))

    def filtered(self, keep: Callable[[FunctionCost], bool]) -> FunctionCosts:
        """Only the functions `keep` accepts, and the calls they make."""
        functions = {key: cost for key, cost in self.functions.items() if keep(cost)}
        calls = {key: call for key, call in self.calls.items() if call.caller in functions}
        return FunctionCosts(self.events, MappingProxyType(functions), MappingProxyType(calls))

    def renamed(self, rename: Callable[[FunctionId], FunctionId]) -> FunctionCosts:
        """Rename every function; functions that end up with the same id are merged."""
        functions: dict[FunctionId, FunctionCost] = {}
        for cost in self.functions.values():
            key = rename(cost.function)
            have = functions.get(key)
            if have is None:
                functions[key] = FunctionCost(key, os.path.basename(cost.file), cost.self_cost)
            else:
                functions[key] = FunctionCost(key, have.file, _add(have.self_cost, cost.self_cost))
        calls: dict[tuple[FunctionId, FunctionId], CallCost] = {}
        for call in self.calls.values():
            caller, callee = rename(call.caller), rename(call.callee)
            have_call = calls.get((caller, callee))
            if have_call is None:
                calls[(caller, callee)] = CallCost(caller, callee, call.count, call.inclusive)
            else:
                calls[(caller, callee)] = CallCost(
                    caller,
                    callee,
                    have_call.count + call.count,
                    _add(have_call.inclusive, call.inclusive),
                )
        return FunctionCosts(self.events, MappingProxyType(functions), MappingProxyType(calls))

    def normalised(self, demangled: Mapping[str, str] | None = None) -> FunctionCosts:
        """Names made comparable across builds (see `normalise_function_name`)."""
        return self.renamed(lambda fid: normalise_function_id(fid, demangled))

    def without_zero(self) -> FunctionCosts:
        """Drop functions and calls whose costs are all zero (e.g. after a subtraction)."""
        return FunctionCosts(
            self.events,
            MappingProxyType({k: c for k, c in self.functions.items() if any(c.self_cost)}),
            MappingProxyType({k: c for k, c in self.calls.items() if any(c.inclusive) or c.count}),
        )


def _index_calls(
    calls: Iterable[CallCost], key: Callable[[CallCost], FunctionId]
) -> Mapping[FunctionId, tuple[CallCost, ...]]:
    grouped: dict[FunctionId, list[CallCost]] = {}
    for call in calls:
        grouped.setdefault(key(call), []).append(call)
    return MappingProxyType({k: tuple(v) for k, v in grouped.items()})


@dataclass(frozen=True)
class InstructionCost:
    """Cost of one machine instruction (``--dump-instr=yes``). `address` is relative to the
    object's load offset, i.e. an address in the ELF file, ready for a symboliser."""

    function: FunctionId
    address: int
    file: str
    line: int
    cost: tuple[float, ...]


@dataclass(frozen=True)
class InstructionCosts:
    """Callgrind's costs per executed instruction, one row each, under the dump's event names."""

    events: tuple[str, ...]
    rows: tuple[InstructionCost, ...] = ()

    def scaled(self, factor: float) -> InstructionCosts:
        # built directly, not with dataclasses.replace: a profile holds one row per executed
        # instruction (10^5 and more), and replace()'s per-row cost shows
        if factor == 1.0:  # x * 1.0 is x, bit for bit: the value itself (it is immutable)
            return self
        return InstructionCosts(
            self.events,
            tuple(
                [
                    InstructionCost(
                        row.function,
                        row.address,
                        row.file,
                        row.line,
                        tuple([x * factor for x in row.cost]),
                    )
                    for row in self.rows
                ]
            ),
        )

    def addresses_by_object(self) -> dict[str, tuple[int, ...]]:
        grouped: dict[str, set[int]] = {}
        for row in self.rows:
            grouped.setdefault(row.function.object, set()).add(row.address)
        return {obj: tuple(sorted(addresses)) for obj, addresses in grouped.items()}


@dataclass(frozen=True)
class CallgrindPart:
    """One dump: its header facts and its costs."""

    number: int | None
    trigger: str | None  # "desc: Trigger:" e.g. "Program termination" or a dump's hint
    positions: tuple[str, ...]
    events: tuple[str, ...]
    descriptions: Mapping[str, str]
    totals: tuple[int, ...] | None
    summary: tuple[int, ...] | None
    costs: FunctionCosts
    instructions: InstructionCosts | None  # when positions include "instr"

    def total(self, event: str = INSTRUCTIONS_EVENT) -> float:
        return self.costs.total(event)


@dataclass(frozen=True)
class CallgrindProfile:
    """One process's callgrind output: the command, the pid, and each dump's part."""

    command: str | None
    pid: int | None
    creator: str | None
    parts: tuple[CallgrindPart, ...]

    def combined(self) -> FunctionCosts:
        """All parts summed (they cover disjoint time ranges of one process)."""
        return combine_parts(self.parts)


def combine_parts(parts: Iterable[CallgrindPart]) -> FunctionCosts:
    result: FunctionCosts | None = None
    for part in parts:
        result = part.costs if result is None else result + part.costs
    if result is None:
        return FunctionCosts((INSTRUCTIONS_EVENT,))
    return result


# -- name normalisation ----------------------------------------------------------------------

# Clone and fragment suffixes are folded by the rule the asm and profile lenses share
# (perflab.tool_output.symbol_names). What is callgrind's own is here: its recursion marks and the
# addresses it gives code without a symbol.
_RECURSION_MARKER = re.compile(r"'\d+$")  # callgrind --separate-recs: foo'2
_ADDRESS_ONLY = re.compile(r"^0x[0-9a-fA-F]+$")
UNKNOWN_FUNCTION = "[unknown]"


def normalise_function_name(name: str, demangled: Mapping[str, str] | None = None) -> str:
    """The name under which one source function is compared across builds: demangled, without
    clone suffixes (`fold_clones`, the asm lens's rule too; a dispatch member such as
    ``foo.avx2`` stays a function of its own) or recursion markers. Address-only names (no
    symbol) become ``[unknown]``: their addresses differ between builds and would never match."""
    name = _RECURSION_MARKER.sub("", name)
    if _ADDRESS_ONLY.match(name):
        return UNKNOWN_FUNCTION
    base = fold_clones(name)
    if demangled is not None:
        base = demangled.get(base, demangled.get(name, base))
        base = fold_clones(base)
    return base


def function_parts(
    costs: FunctionCosts, rename: Callable[[FunctionId], FunctionId]
) -> dict[FunctionId, tuple[str, ...]]:
    """The names (clones, `.cold` parts, recursion levels) merged into each renamed function,
    for the functions that were merged from more than one name or renamed at all."""
    parts: dict[FunctionId, set[str]] = {}
    for fid in costs.functions:
        renamed = rename(fid)
        if renamed.name != UNKNOWN_FUNCTION:  # addresses are no names worth listing
            parts.setdefault(renamed, set()).add(_RECURSION_MARKER.sub("", fid.name))
    return {
        fid: tuple(sorted(names))
        for fid, names in parts.items()
        if len(names) > 1 or names != {fid.name}
    }


def normalise_object(path: str) -> str:
    """Objects are compared by file name: two builds live in different directories."""
    return os.path.basename(path.rstrip("/")) or path


def normalise_function_id(
    fid: FunctionId, demangled: Mapping[str, str] | None = None
) -> FunctionId:
    return FunctionId(normalise_function_name(fid.name, demangled), normalise_object(fid.object))


def mangled_names(costs: FunctionCosts) -> tuple[str, ...]:
    """Names that look mangled (Itanium C++ `_Z`, Rust v0 `_R`), for a demangler to resolve.
    Callgrind demangles by default; these remain when it could not or was told not to."""
    found = {
        _RECURSION_MARKER.sub("", fid.name)
        for fid in costs.functions
        if fid.name.startswith(("_Z", "_R"))
    }
    return tuple(sorted(found))


def derived_event(costs: FunctionCosts, name: str, components: Iterable[str]) -> FunctionCosts:
    """A one-event view summing some events, e.g. D1 misses = D1mr + D1mw."""
    indices = [costs.event_index(event) for event in components]
    functions = {
        key: FunctionCost(key, cost.file, (sum(cost.self_cost[i] for i in indices),))
        for key, cost in costs.functions.items()
    }
    calls = {
        edge: CallCost(
            call.caller, call.callee, call.count, (sum(call.inclusive[i] for i in indices),)
        )
        for edge, call in costs.calls.items()
    }
    return FunctionCosts((name,), MappingProxyType(functions), MappingProxyType(calls))
