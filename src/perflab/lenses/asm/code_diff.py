"""Two variants' function listings compared: paired by name, diffed line by line, and what
changed said in one sentence. Pure: listings in, records out.

Diffs match lines with label numbers masked, so one inserted block does not renumber every later
jump into a "change".
"""

from __future__ import annotations

import difflib
import enum
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from perflab.lenses.asm.disassembly import AsmLine
from perflab.lenses.asm.identity import ISA_NAMESPACE, ISA_SUFFIX
from perflab.lenses.asm.machine_code import FunctionListing
from perflab.lenses.asm.summaries import LoopSummary
from perflab.tool_output.symbol_names import fold_clones

MIN_MOVED_LINES = 3  # a shorter "moved block" is more likely coincidence than code motion


# ---------------------------------------------------------------------------------------------
# pairing across variants


# any "[clone ...]": pairing also folds the compiled version of a dispatch member
_CLONE_BRACKET = re.compile(r"\s*\[clone [^\]]*\]")


def canonical_name(name: str) -> str:
    """A name with ISA namespaces (as identity.py reads them) and compiler clone suffixes
    removed, for pairing."""
    name = fold_clones(_CLONE_BRACKET.sub("", name))
    name = ISA_NAMESPACE.sub("CPU_CAPABILITY", name)
    return ISA_SUFFIX.sub("", name)


# ---------------------------------------------------------------------------------------------
# diffs


class RowTag(enum.StrEnum):
    """How a side-by-side assembly row relates the baseline's line to the variant's."""

    SAME = "same"
    CHANGED = "changed"
    REMOVED = "removed"  # only in the baseline
    ADDED = "added"  # only in the variant
    MOVED = "moved"  # present in both, at another place


@dataclass(frozen=True)
class DiffRow:
    """One row of a side-by-side assembly diff: the baseline's line and the variant's, either
    absent."""

    tag: RowTag
    left: AsmLine | None
    right: AsmLine | None


def align(left: Sequence[AsmLine], right: Sequence[AsmLine]) -> tuple[DiffRow, ...]:
    """Side-by-side rows. Blocks deleted in one place and inserted in another are tagged MOVED."""
    left_keys = [line.key for line in left]
    right_keys = [line.key for line in right]
    matcher = difflib.SequenceMatcher(None, left_keys, right_keys, autojunk=False)
    opcodes = matcher.get_opcodes()
    moved_left, moved_right = _moved_lines(opcodes, left_keys, right_keys)
    rows: list[DiffRow] = []
    for op, i1, i2, j1, j2 in opcodes:
        if op == "equal":
            rows += [
                DiffRow(RowTag.SAME, left[i], right[j])
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            ]
            continue
        olds = list(range(i1, i2))
        news = list(range(j1, j2))
        for k in range(max(len(olds), len(news))):
            i = olds[k] if k < len(olds) else None
            j = news[k] if k < len(news) else None
            rows += _change_rows(left, right, i, j, moved_left, moved_right)
    return tuple(rows)


def _change_rows(
    left: Sequence[AsmLine],
    right: Sequence[AsmLine],
    i: int | None,
    j: int | None,
    moved_left: set[int],
    moved_right: set[int],
) -> list[DiffRow]:
    left_line = left[i] if i is not None else None
    right_line = right[j] if j is not None else None
    left_moved = i is not None and i in moved_left
    right_moved = j is not None and j in moved_right
    if left_line is not None and right_line is not None and not (left_moved or right_moved):
        return [DiffRow(RowTag.CHANGED, left_line, right_line)]
    rows = []
    if left_line is not None:
        rows.append(DiffRow(RowTag.MOVED if left_moved else RowTag.REMOVED, left_line, None))
    if right_line is not None:
        rows.append(DiffRow(RowTag.MOVED if right_moved else RowTag.ADDED, None, right_line))
    return rows


def _moved_lines(
    opcodes: Sequence[tuple[str, int, int, int, int]],
    left_keys: Sequence[str],
    right_keys: Sequence[str],
) -> tuple[set[int], set[int]]:
    removed = [(i1, i2) for op, i1, i2, _, _ in opcodes if op in ("delete", "replace")]
    inserted = [(j1, j2) for op, _, _, j1, j2 in opcodes if op in ("insert", "replace")]
    moved_left: set[int] = set()
    moved_right: set[int] = set()
    for op_i, (i1, i2) in enumerate(removed):
        for op_j, (j1, j2) in enumerate(inserted):
            if op_i == op_j and _same_replace(opcodes, i1, j1):
                continue  # a replacement in place is a change, not a move
            match = difflib.SequenceMatcher(
                None, left_keys[i1:i2], right_keys[j1:j2], autojunk=False
            ).find_longest_match(0, i2 - i1, 0, j2 - j1)
            if match.size >= MIN_MOVED_LINES:
                moved_left.update(range(i1 + match.a, i1 + match.a + match.size))
                moved_right.update(range(j1 + match.b, j1 + match.b + match.size))
    return moved_left, moved_right


def _same_replace(opcodes: Sequence[tuple[str, int, int, int, int]], i1: int, j1: int) -> bool:
    return any(op == "replace" and a == i1 and b == j1 for op, a, _, b, _ in opcodes)


_DIFF_MARK = {
    RowTag.SAME: " ",
    RowTag.CHANGED: "~",
    RowTag.REMOVED: "-",
    RowTag.ADDED: "+",
    RowTag.MOVED: ">",
}


def diff_text(rows: Sequence[DiffRow], context: int = 3) -> str:
    """A unified-style diff of normalised code: '-' baseline only, '+' variant only, '>' moved.

    A changed pair shows as '-' then '+'. Unchanged runs longer than 2*context are elided."""
    interesting = [k for k, row in enumerate(rows) if row.tag is not RowTag.SAME]
    if not interesting:
        return ""
    keep = {k for idx in interesting for k in range(idx - context, idx + context + 1)}
    out: list[str] = []
    skipped = False
    for k, row in enumerate(rows):
        if k not in keep:
            skipped = True
            continue
        if skipped:
            out.append("@@")
            skipped = False
        out += _diff_lines(row)
    return "\n".join(out) + "\n"


def _diff_lines(row: DiffRow) -> list[str]:
    def show(line: AsmLine) -> str:
        return f"{line.label}: {line.text}" if line.label else f"    {line.text}"

    if row.tag is RowTag.CHANGED:
        assert row.left is not None and row.right is not None
        return [f"-{show(row.left)}", f"+{show(row.right)}"]
    if row.tag is RowTag.MOVED:
        line = row.left or row.right
        assert line is not None
        return [f"{'<' if row.left else '>'}{show(line)}"]
    line = row.right if row.right is not None else row.left
    assert line is not None
    return [f"{_DIFF_MARK[row.tag]}{show(line)}"]


# ---------------------------------------------------------------------------------------------
# what changed, in one sentence


@dataclass(frozen=True)
class FunctionChange:
    """Baseline vs variant for one paired function: facts first, then the sentence."""

    name: str
    baseline: FunctionListing | None
    variant: FunctionListing | None
    rows: tuple[DiffRow, ...] = field(default=())

    @property
    def calls_added(self) -> list[str]:
        return sorted(set(self._calls(self.variant)) - set(self._calls(self.baseline)))

    @property
    def calls_removed(self) -> list[str]:
        return sorted(set(self._calls(self.baseline)) - set(self._calls(self.variant)))

    @staticmethod
    def _calls(listing: FunctionListing | None) -> Counter[str]:
        return listing.calls if listing is not None else Counter()

    @property
    def identical(self) -> bool:
        """Both sides present and their normalised code the same, line for line."""
        if self.baseline is None or self.variant is None:
            return False
        return _same_code(self.baseline, self.variant)

    @property
    def sentence(self) -> str:
        return change_sentence(self.baseline, self.variant)


def compare_functions(
    name: str, baseline: FunctionListing | None, variant: FunctionListing | None
) -> FunctionChange:
    rows = align(baseline.lines if baseline else (), variant.lines if variant else ())
    return FunctionChange(name, baseline, variant, rows)


def _hot_mnemonics(listing: FunctionListing) -> Counter[str]:
    lines = [line for line in listing.lines if line.in_hot_loop] or list(listing.lines)
    return Counter(line.instruction.mnemonic for line in lines if not line.text.startswith("nop"))


def _same_code(baseline: FunctionListing, variant: FunctionListing) -> bool:
    return [line.key for line in baseline.lines] == [line.key for line in variant.lines]


def change_sentence(
    baseline: FunctionListing | None,
    variant: FunctionListing | None,
    calls: tuple[Counter[str], Counter[str]] | None = None,
) -> str:
    """What changed, in words. `calls`: the callees of each side when they are more than the
    listing's own (a function's split-off parts call too)."""
    if baseline is None:
        return "not run in the baseline"
    if variant is None:
        return "not run in the variant"
    if _same_code(baseline, variant):
        return "identical after normalisation"
    parts: list[str] = []
    old_width, new_width = baseline.vector_width_bits, variant.vector_width_bits
    if old_width != new_width:
        parts.append(
            f"uses {new_width}-bit registers (baseline {old_width})"
            if new_width
            else f"no vector registers (baseline {old_width}-bit)"
        )
    parts += _mnemonic_change(_hot_mnemonics(baseline), _hot_mnemonics(variant))
    old_calls, new_calls = calls or (baseline.calls, variant.calls)
    added = sorted(set(new_calls) - set(old_calls))
    removed = sorted(set(old_calls) - set(new_calls))
    if removed:
        parts.append(f"no longer calls {', '.join(_short(n) for n in removed[:3])}")
    if added:
        parts.append(f"now calls {', '.join(_short(n) for n in added[:3])}")
    if baseline.size_bytes != variant.size_bytes and baseline.size_bytes:
        old, new = baseline.size_bytes, variant.size_bytes
        parts.append(f"code size {old} -> {new} bytes ({new / old:.2f}x)")
    parts += _loop_change(baseline.hot_loop, variant.hot_loop)
    if not parts:
        return "same size, instructions and mix; code reordered or registers renamed"
    return "; ".join(parts)


def _mnemonic_change(old: Counter[str], new: Counter[str], limit: int = 3) -> list[str]:
    gained = [m for m, _ in (new - old).most_common() if m not in old][:limit]
    lost = [m for m, _ in (old - new).most_common() if m not in new][:limit]
    if gained and lost:
        return [f"{'+'.join(gained)} replaces {'+'.join(lost)}"]
    if gained:
        return [f"adds {', '.join(gained)}"]
    if lost:
        return [f"drops {', '.join(lost)}"]
    return []


def _loop_change(old: LoopSummary | None, new: LoopSummary | None) -> list[str]:
    if old is None or new is None:
        if (old is None) != (new is None):
            return ["hot loop " + ("appeared" if new is not None else "disappeared")]
        return []
    parts = []
    if old.size_bytes != new.size_bytes:
        parts.append(f"hot loop {old.size_bytes} -> {new.size_bytes} bytes")
    if old.throughput and new.throughput:
        a, b = old.throughput.cycles_per_iteration, new.throughput.cycles_per_iteration
        if abs(a - b) > 0.05 * max(a, b):
            parts.append(f"predicted {a:.2f} -> {b:.2f} cycles/iteration")
    return parts


def _short(name: str, limit: int = 60) -> str:
    return name if len(name) <= limit else name[: limit - 3] + "..."
