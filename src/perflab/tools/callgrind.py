"""Callgrind's output files, parsed into values that subtract, filter, scale and normalise.

The format is valgrind's "Callgrind Format Specification" (version 1). We read the files
directly because callgrind_annotate's text output changed between releases. What the parser
handles, and why it matters:

- name compression: ``fn=(12) name`` defines id 12, later ``fn=(12)`` refers to it. Callgrind
  shares one id space per *kind* of name: files (fl, fi, fe, cfi, cfl, jfi), functions (fn, cfn,
  jfn) and objects (ob, cob); ``cfi=(2)`` may refer to an id defined by ``fl=(2) ...``.
- ``positions:`` with ``instr`` and/or ``line``; subposition compression ``+N``, ``-N``, ``*``
  relative to the last *regular* cost line. Callgrind writes the positions of ``calls=`` and
  ``jump=``/``jcnd=`` lines and of the line after them relative to that same last cost line and
  does not move it (valgrind's callgrind/dump.c), so neither do we.
- ``calls=COUNT TARGET`` is followed by one line: the call site and the *inclusive* cost of the
  calls; that cost is not self cost of the caller.
- ``cob=``/``cfi=``/``cfn=`` describe only the next call; without ``cob=`` the callee lives in
  the caller's object.
- several parts (``part:``) per file, each with its own header; ``totals:`` closes a part.
- any number of ``events:``; missing trailing costs are zero.

Pure: text in, values out; no I/O.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

from perflab.tools.symbol_names import fold_clones

INSTRUCTIONS_EVENT = "Ir"

# Which id space each position specification uses (see module docstring).
_FILE_SPECS = frozenset({"fl", "fi", "fe", "cfi", "cfl", "jfi"})
_FUNCTION_SPECS = frozenset({"fn", "cfn", "jfn"})
_OBJECT_SPECS = frozenset({"ob", "cob"})
_HEADER_KEYS = frozenset(
    {
        "version",
        "creator",
        "pid",
        "cmd",
        "part",
        "thread",
        "desc",
        "positions",
        "events",
        "event",
        "summary",
        "totals",
    }
)
_ALL_SPECS = _FILE_SPECS | _FUNCTION_SPECS | _OBJECT_SPECS
_SPEC_KIND = {
    **{spec: "file" for spec in _FILE_SPECS},
    **{spec: "function" for spec in _FUNCTION_SPECS},
    **{spec: "object" for spec in _OBJECT_SPECS},
}
_COMPRESSED = re.compile(r"^\((\d+)\)\s?(.*)$")


class CallgrindFormatError(ValueError):
    """The text is not a callgrind profile we can read; carries the line number."""

    def __init__(self, message: str, line_number: int) -> None:
        super().__init__(f"line {line_number}: {message}")
        self.line_number = line_number


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
    # every function's inclusive cost, and rebuilding the index per query made that quadratic
    # (minutes for a run of many variants). A frozen value never changes, so the cache cannot go
    # stale; `cached_property` writes the instance's __dict__ directly, past the frozen check.
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


# -- parsing ---------------------------------------------------------------------------------


class _PartBuilder:
    """Accumulates one part while lines are read; mutable, private to the parser."""

    def __init__(self, number: int | None) -> None:
        self.number = number
        self.positions: tuple[str, ...] = ("line",)
        self.events: tuple[str, ...] = ()
        self.descriptions: dict[str, str] = {}
        self.totals: tuple[int, ...] | None = None
        self.summary: tuple[int, ...] | None = None
        self.self_costs: dict[FunctionId, list[int]] = {}
        self.files: dict[FunctionId, str] = {}
        self.calls: dict[tuple[FunctionId, FunctionId], list[int]] = {}  # [count, *inclusive]
        # (function's number, address) -> (function, address, file, line, costs): ints hash
        # faster than a FunctionId, once per cost line
        self.instructions: dict[tuple[int, int], tuple[FunctionId, int, str, int, list[int]]] = {}
        self.numbers: dict[FunctionId, int] = {}
        self.has_body = False

    def build(self) -> CallgrindPart:
        events = self.events or (INSTRUCTIONS_EVENT,)
        n = len(events)
        functions = {
            fid: FunctionCost(fid, self.files.get(fid, "???"), tuple(map(float, cost[:n])))
            for fid, cost in self.self_costs.items()
        }
        calls = {
            edge: CallCost(edge[0], edge[1], float(v[0]), tuple(float(x) for x in v[1 : n + 1]))
            for edge, v in self.calls.items()
        }
        instructions = None
        if "instr" in self.positions:
            instructions = InstructionCosts(
                events,
                tuple(
                    InstructionCost(fid, address, file, line, tuple(map(float, cost[:n])))
                    for fid, address, file, line, cost in self.instructions.values()
                ),
            )
        trigger = self.descriptions.get("Trigger")
        return CallgrindPart(
            number=self.number,
            trigger=trigger,
            positions=self.positions,
            events=events,
            descriptions=MappingProxyType(dict(self.descriptions)),
            totals=self.totals,
            summary=self.summary,
            costs=FunctionCosts(events, MappingProxyType(functions), MappingProxyType(calls)),
            instructions=instructions,
        )


def _numbers(text: str, line_number: int) -> tuple[int, ...]:
    try:
        return tuple(_absolute(token) for token in text.split())
    except ValueError:
        raise CallgrindFormatError(f"expected numbers, got {text!r}", line_number) from None


def _absolute(token: str) -> int:
    return int(token, 16) if token.startswith(("0x", "0X")) else int(token)


def parse_callgrind(text: str) -> CallgrindProfile:
    """Parse one callgrind output file (any number of parts)."""
    reader = _CallgrindReader()
    read, cost_line = reader.read, reader._cost_line
    for line_number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        first = line[0]
        # cost lines are nearly all of a file: dispatched here, as `read` would
        if first.isdigit() or first in "+-*":
            cost_line(line, line_number)
        elif first != "#":
            read(line, line_number)
    return reader.profile()


class _CallgrindReader:
    """The reader's state, line by line: names seen so far (compressed ids), the part being
    built, and the position that the next cost lines belong to."""

    def __init__(self) -> None:
        self.names: dict[str, dict[int, str]] = {"file": {}, "function": {}, "object": {}}
        self.command: str | None = None
        self.pid: int | None = None
        self.creator: str | None = None
        self.parts: list[CallgrindPart] = []
        self.part = _PartBuilder(None)
        self.obj = self.fn_file = self.cost_file = "???"
        self.fn: FunctionId | None = None
        self.call_object: str | None = None
        self.callee_name: str | None = None
        self.last: list[int] = [0]
        self.npos = 1
        self.instr_index: int | None = None
        self.line_index: int | None = 0
        self.pending_call: tuple[FunctionId, int] | None = None  # its cost is the next line
        self.skip_next = False  # the position line after jump=/jcnd=
        # the function of the last cost line, its part, costs and number: consecutive lines of
        # one fn= skip the lookups
        self.fn_seen: FunctionId | None = None
        self.part_seen: _PartBuilder | None = None
        self.fn_cost: list[int] = []
        self.fn_number = 0

    def read(self, line: str, line_number: int) -> None:
        first = line[0]
        if first.isdigit() or first in "+-*":
            self._cost_line(line, line_number)
            return
        spec, eq, spec_value = line.partition("=")
        if eq and spec in _ALL_SPECS:
            self._name_line(spec, spec_value.strip(), line_number)
        elif eq and spec == "calls":
            self._calls_line(spec_value, line_number)
        elif eq and spec in ("jump", "jcnd"):
            self.skip_next = True
        else:
            self._header_line(line, line_number)

    def profile(self) -> CallgrindProfile:
        part = self.part
        if part.has_body or part.events or part.totals is not None:
            self.parts.append(part.build())
        return CallgrindProfile(
            command=self.command, pid=self.pid, creator=self.creator, parts=tuple(self.parts)
        )

    # -- cost lines

    def _cost_line(self, line: str, line_number: int) -> None:
        # one call per cost line (10^4-10^5 a file): the positions and costs are read inline
        tokens = line.split()
        if self.skip_next:
            self.skip_next = False
            return
        fn = self.fn
        if fn is None:
            raise CallgrindFormatError("cost line before any fn=", line_number)
        part = self.part
        part.has_body = True
        if self.pending_call is not None:
            self._call_cost(fn, tokens, line, line_number)
            return
        npos = self.npos
        if len(tokens) < npos:
            raise CallgrindFormatError("cost line with too few positions", line_number)
        last = self.last
        position = []
        for i in range(npos):
            token = tokens[i]
            first = token[0]
            try:
                if first == "+":
                    position.append(last[i] + int(token[1:]))
                elif first == "-":
                    position.append(last[i] - int(token[1:]))
                elif first == "*":
                    position.append(last[i])
                else:
                    position.append(_absolute(token))
            except ValueError:
                raise CallgrindFormatError(f"bad position {token!r}", line_number) from None
        self.last = position
        try:
            costs = [int(t) for t in tokens[npos:]]
        except ValueError:
            raise CallgrindFormatError(f"bad cost in {line!r}", line_number) from None
        if fn is self.fn_seen and part is self.part_seen:  # the same fn= as the last line's
            self_cost, number = self.fn_cost, self.fn_number
        else:
            known = part.self_costs.get(fn)
            if known is None:
                known = part.self_costs[fn] = [0] * len(part.events)
                part.files[fn] = self.fn_file
            self_cost = known
            number = part.numbers.setdefault(fn, len(part.numbers))
            self.fn_seen, self.part_seen, self.fn_cost, self.fn_number = fn, part, self_cost, number
        for i, value in enumerate(costs):
            self_cost[i] += value
        if self.instr_index is not None:
            self._instruction_cost(fn, number, position, costs)

    def _call_cost(self, fn: FunctionId, tokens: list[str], line: str, line_number: int) -> None:
        """The call site and the inclusive cost of the calls; `last` does not move."""
        assert self.pending_call is not None
        callee, count = self.pending_call
        self.pending_call = None
        costs = _costs(tokens[self.npos :], line, line_number)
        entry = self.part.calls.setdefault((fn, callee), [0] * (len(self.part.events) + 1))
        entry[0] += count
        for i, value in enumerate(costs):
            entry[i + 1] += value
        self.call_object = self.callee_name = None

    def _instruction_cost(
        self, fn: FunctionId, number: int, position: list[int], costs: list[int]
    ) -> None:
        assert self.instr_index is not None
        address = position[self.instr_index]
        line_no = position[self.line_index] if self.line_index is not None else 0
        at = (number, address)
        have = self.part.instructions.get(at)
        if have is None:
            padding = [0] * (len(self.part.events) - len(costs))
            self.part.instructions[at] = (fn, address, self.cost_file, line_no, costs + padding)
        else:
            for i, value in enumerate(costs):
                have[4][i] += value

    # -- spec lines: names and calls

    def _resolve(self, kind: str, value: str, line_number: int) -> str:
        match = _COMPRESSED.match(value)
        if match is None:
            return value
        ident, name = int(match.group(1)), match.group(2)
        table = self.names[kind]
        if name:
            table[ident] = name
            return name
        if ident not in table:
            raise CallgrindFormatError(f"{kind} id ({ident}) used before defined", line_number)
        return table[ident]

    def _name_line(self, spec: str, value: str, line_number: int) -> None:
        name = self._resolve(_SPEC_KIND[spec], value, line_number)
        if spec == "ob":
            self.obj = name
        elif spec == "fl":
            self.fn_file = self.cost_file = name
        elif spec in ("fi", "fe"):
            self.cost_file = name
        elif spec == "fn":
            self.fn = FunctionId(name, self.obj)
            self.cost_file = self.fn_file
        elif spec == "cob":
            self.call_object = name
        elif spec == "cfn":
            self.callee_name = name
        # cfi/jfi/jfn: names registered; the callee's file is not needed

    def _calls_line(self, value: str, line_number: int) -> None:
        tokens = value.split()
        if not tokens or self.callee_name is None:
            raise CallgrindFormatError("calls= without a count or before cfn=", line_number)
        caller_object = self.fn.object if self.fn is not None else self.obj
        callee = FunctionId(self.callee_name, self.call_object or caller_object)
        try:
            count = _absolute(tokens[0])
        except ValueError:
            raise CallgrindFormatError(f"bad call count {tokens[0]!r}", line_number) from None
        self.pending_call = (callee, count)

    # -- header lines

    def _header_line(self, line: str, line_number: int) -> None:
        key, colon, rest = line.partition(":")
        key = key.strip()
        if not colon or key not in _HEADER_KEYS:
            raise CallgrindFormatError(f"unrecognised line {line!r}", line_number)
        rest = rest.strip()
        if self.part.has_body and key not in ("totals", "summary"):
            self._start_part()
        if key == "version":
            if rest.split(".")[0] not in ("0", "1"):
                raise CallgrindFormatError(f"unsupported format version {rest}", line_number)
        elif key == "creator":
            self.creator = rest
        elif key == "cmd":
            self.command = rest
        elif key == "pid":
            self.pid = int(rest)
        elif key == "part":
            if self.part.has_body or self.part.number is not None:
                self._start_part()
            self.part.number = int(rest)
        else:
            self._part_header(key, rest, line_number)

    def _part_header(self, key: str, rest: str, line_number: int) -> None:
        part = self.part
        if key == "desc":
            desc_key, _, desc_value = rest.partition(":")
            part.descriptions[desc_key.strip()] = desc_value.strip()
        elif key == "positions":
            part.positions = tuple(rest.split()) or ("line",)
            self.npos = len(part.positions)
            self.instr_index = part.positions.index("instr") if "instr" in part.positions else None
            self.line_index = part.positions.index("line") if "line" in part.positions else None
            self.last = [0] * self.npos
        elif key == "events":
            part.events = tuple(rest.split())
        elif key == "summary":
            part.summary = _numbers(rest, line_number)
        elif key == "totals":
            part.totals = _numbers(rest, line_number)

    def _start_part(self) -> None:
        if self.part.has_body or self.part.events:
            self.parts.append(self.part.build())
        self.part = _PartBuilder(None)
        self.last = [0] * self.npos


def _costs(tokens: list[str], line: str, line_number: int) -> list[int]:
    try:
        return [int(t) for t in tokens]
    except ValueError:
        raise CallgrindFormatError(f"bad cost in {line!r}", line_number) from None


# -- name normalisation ----------------------------------------------------------------------

# Clone and fragment suffixes are folded by the rule the asm and profile lenses share
# (perflab.tools.symbol_names). What is callgrind's own is here: its recursion marks and the
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
