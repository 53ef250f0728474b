"""Callgrind's output files parsed into the values of `perflab.tool_output.callgrind`.

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

import re
from types import MappingProxyType

from perflab.tool_output.callgrind import (
    INSTRUCTIONS_EVENT,
    CallCost,
    CallgrindPart,
    CallgrindProfile,
    FunctionCost,
    FunctionCosts,
    FunctionId,
    InstructionCost,
    InstructionCosts,
)

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
