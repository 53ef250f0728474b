"""What the asm lens found about a pair's code beside the difference, for the explanation. These are
the hot functions with the same machine code in both variants, changes in code no sample landed on
(not causes), and the hot loops that lie differently (crossing other 64-byte lines or 32-byte fetch
windows: a cause the instruction counts cannot see)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from perflab.records.accounting import CodeFacts
from perflab.records.model import Comparison
from perflab.tool_output.symbol_names import readable

LINE_BYTES = 64  # a cache line, and what -falign-loops=64 aligns to
WINDOW_BYTES = 32  # the decoders' and the uop cache's fetch window on x86


def code_facts(comparison: Comparison) -> CodeFacts:
    """What the asm comparison says about a pair's code for the explanation: unchanged functions,
    changes not run, loops placed differently."""
    asm: dict[str, Any] = comparison.details.to_json() if comparison.details is not None else {}
    same = asm.get("byte_identical_functions") or []
    rows = asm.get("functions") or []
    unchanged = (
        (f"{len(same)} of {len(rows)} hot functions the same machine code in both (asm)",)
        if same
        else ()
    )
    not_run = tuple(
        f"{d.get('claim')}: {readable(str(d.get('function')))}"
        for d in asm.get("changed_not_run") or []
    )
    misplaced, compared = _placement(asm)
    alike = (
        f"the same {LINE_BYTES}-byte lines and {WINDOW_BYTES}-byte windows in both"
        if compared
        else ""
    )
    return CodeFacts(unchanged, not_run, tuple(misplaced), compared, alike)


def _blocks(start: int, end: int, size: int) -> int:
    """How many `size`-byte blocks the bytes [start, end) touch."""
    return (end - 1) // size - start // size + 1 if end > start else 0


def _placement(asm: Mapping[str, Any]) -> tuple[list[str], int]:
    """The hot loops that lie differently in the two variants: one crosses more 64-byte lines
    or 32-byte windows than the other (their addresses are the evidence); and how many hot
    loops were compared."""
    found = []
    compared = 0
    for row in asm.get("functions") or []:
        ran = row.get("ran") or {}
        if not (ran.get("baseline") and ran.get("variant")):
            continue
        loops = [((row.get(side) or {}).get("hot_loop") or {}) for side in ("baseline", "variant")]
        raw = [(loop.get("start_address"), loop.get("end_address")) for loop in loops]
        spans = [(a, b) for a, b in raw if isinstance(a, int) and isinstance(b, int)]
        if len(spans) != 2:
            continue
        compared += 1
        (base_lines, base_windows), (variant_lines, variant_windows) = [
            (_blocks(a, b, LINE_BYTES), _blocks(a, b, WINDOW_BYTES)) for a, b in spans
        ]
        if (base_lines, base_windows) == (variant_lines, variant_windows):
            continue
        base_where, variant_where = [f"{a:#x}–{b - 1:#x}" for a, b in spans]
        found.append(
            f"the hot loop of {readable(str(row.get('name')))} crosses "
            f"{base_lines} 64-byte line(s) and {base_windows} 32-byte window(s) in the "
            f"baseline ({base_where}) and {variant_lines} and {variant_windows} in the variant "
            f"({variant_where})"
        )
    return found, compared
