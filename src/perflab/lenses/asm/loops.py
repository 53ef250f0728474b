"""The loops of a function's normalised code: its basic blocks, their dominators, the natural
loops they form, and the hot one (where the measured cost lies). Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from perflab.lenses.asm.disassembly import AsmLine, Flow, vector_bits


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
    """A straight run of a function's lines, entered only at its first and left only at its last."""

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
