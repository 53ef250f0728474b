"""Sampled call stacks counted: hot symbols, sampled places and folded stacks. Pure.

Folded stacks (the flame graph format: `root;caller;leaf COUNT`) name each frame `object`symbol`
(DTrace style), root first, so a renderer can colour by library and strip the object for
differential views. Symbols pair between variants by name only: library paths differ between
builds of the same code.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from perflab.tool_output.perf_script import UNKNOWN, ProfileSample, object_file_name
from perflab.tool_output.symbol_names import NamePairing, plt_target

# --- hot symbols ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SymbolShare:
    """One symbol's samples in a profile: in itself, and anywhere on the stack."""

    name: str
    object: str  # where most of its samples were
    self_samples: int
    children_samples: int  # samples with the symbol anywhere on the stack (itself included)
    self_share: float
    children_share: float

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "object": self.object,
            "self_samples": self.self_samples,
            "children_samples": self.children_samples,
            "self_share": self.self_share,
            "children_share": self.children_share,
        }


@dataclass(frozen=True)
class ObjectShare:
    """One object file's self samples in a profile."""

    object: str
    self_samples: int
    self_share: float

    def to_json(self) -> dict[str, Any]:
        return {
            "object": self.object,
            "self_samples": self.self_samples,
            "self_share": self.self_share,
        }


@dataclass(frozen=True)
class HotSymbols:
    """A profile's samples by symbol and by object file, hottest first."""

    total_samples: int
    symbols: tuple[SymbolShare, ...]  # by self samples, hottest first
    objects: tuple[ObjectShare, ...]

    def share_of(self, name: str) -> SymbolShare | None:
        for symbol in self.symbols:
            if symbol.name == name:
                return symbol
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "total_samples": self.total_samples,
            "symbols": [s.to_json() for s in self.symbols],
            "objects": [o.to_json() for o in self.objects],
        }


Stack = tuple[tuple[str, str], ...]  # ((object, symbol), ...) leaf first


def stack_symbols(stacks: Iterable[Stack]) -> set[str]:
    return {symbol for stack in stacks for _, symbol in stack}


def respelled_stacks(stacks: Mapping[Stack, int], pairing: NamePairing) -> Counter[Stack]:
    """A variant's stacks with each function the builds spell differently named as in the
    baseline (`pair_names`, the rule every lens shares), so one function is one row."""
    if not pairing.pairs:
        return Counter(stacks)
    out: Counter[Stack] = Counter()
    for stack, count in stacks.items():
        out[tuple((obj, pairing.variant_name(symbol)) for obj, symbol in stack)] += count
    return out


def stacks_of(samples: Iterable[ProfileSample]) -> Counter[Stack]:
    counts: Counter[Stack] = Counter()
    for sample in samples:
        counts[tuple((frame.object, frame.symbol) for frame in sample.frames)] += 1
    return counts


def hot_symbols(samples: Iterable[ProfileSample] | Mapping[Stack, int]) -> HotSymbols:
    """Self and children shares per symbol name, and self shares per object; a PLT stub's
    samples are its target function's (`plt_target`).

    Accepts samples or already-counted stacks (from :func:`parse_folded`)."""
    stacks = samples if isinstance(samples, Mapping) else stacks_of(samples)
    self_counts: Counter[str] = Counter()
    children_counts: Counter[str] = Counter()
    object_votes: dict[str, Counter[str]] = defaultdict(Counter)
    object_counts: Counter[str] = Counter()
    total = 0
    for stack, count in stacks.items():
        total += count
        if not stack:
            continue
        leaf_object, leaf_symbol = stack[0]
        self_counts[plt_target(leaf_symbol)] += count
        object_counts[leaf_object] += count
        seen = set()
        for obj, frame_symbol in stack:
            symbol = plt_target(frame_symbol)
            object_votes[symbol][obj] += count
            if symbol not in seen:  # recursion counts once per sample
                seen.add(symbol)
                children_counts[symbol] += count
    if total == 0:
        return HotSymbols(0, (), ())
    symbols = [
        SymbolShare(
            name=name,
            object=object_votes[name].most_common(1)[0][0],
            self_samples=self_counts[name],
            children_samples=children,
            self_share=self_counts[name] / total,
            children_share=children / total,
        )
        for name, children in children_counts.items()
    ]
    symbols.sort(key=lambda s: (-s.self_samples, -s.children_samples, s.name))
    objects = sorted(
        (ObjectShare(obj, n, n / total) for obj, n in object_counts.items()),
        key=lambda o: (-o.self_samples, o.object),
    )
    return HotSymbols(total, tuple(symbols), tuple(objects))


Place = tuple[str, str, int | None]  # (dso path, symbol, offset from the symbol's start)


def leaf_places(samples: Iterable[ProfileSample]) -> Counter[Place]:
    """Samples per sampled instruction, named by object path, symbol and offset: where in a
    disassembly the time went. Samples without a frame are left out."""
    counts: Counter[Place] = Counter()
    for sample in samples:
        leaf = sample.leaf
        if leaf is not None:
            counts[(leaf.dso, leaf.symbol, leaf.offset)] += 1
    return counts


def address_histogram(
    samples: Iterable[ProfileSample], symbol: str, *, object_name: str | None = None
) -> dict[int, int]:
    """Sample counts per offset inside `symbol` (leaf frames only): the per-instruction cost to
    annotate a disassembly with. `object_name` restricts it to one object (file name)."""
    counts: Counter[int] = Counter()
    for (dso, name, offset), count in leaf_places(samples).items():
        if name != symbol or offset is None:
            continue
        if object_name is not None and object_file_name(dso) != object_name:
            continue
        counts[offset] += count
    return dict(sorted(counts.items()))


# --- folded stacks --------------------------------------------------------------------------


def _frame_text(obj: str, symbol: str) -> str:
    # `;` separates frames and the last space separates the count: keep both out of names
    return f"{obj}`{symbol}".replace(";", ",")


def folded_stacks(samples: Iterable[ProfileSample]) -> str:
    """`root;...;leaf COUNT` lines, frames as `object`symbol`, sorted for stable output."""
    lines = []
    for stack, count in stacks_of(samples).items():
        if not stack:
            continue
        frames = ";".join(_frame_text(obj, sym) for obj, sym in reversed(stack))
        lines.append(f"{frames} {count}")
    return "\n".join(sorted(lines)) + ("\n" if lines else "")


def parse_folded(text: str) -> Counter[Stack]:
    """The inverse of :func:`folded_stacks` (leaf first again). Frames without an object get ''."""
    stacks: Counter[Stack] = Counter()
    for line in text.splitlines():
        line = line.rstrip()
        if not line:
            continue
        frames_text, _, count_text = line.rpartition(" ")
        if not frames_text or not count_text.isdigit():
            continue
        frames = []
        for frame in frames_text.split(";"):
            obj, tick, symbol = frame.partition("`")
            frames.append((obj, symbol) if tick else ("", obj))
        stacks[tuple(reversed(frames))] += int(count_text)
    return stacks


def top_symbols(summary: HotSymbols, sequence: Sequence[str] = (), *, limit: int = 10) -> list[str]:
    """Names of the hottest symbols by self share (for the asm lens), skipping unresolved ones
    and anything in `sequence` (symbols to exclude, e.g. the interpreter's eval loop)."""
    excluded = set(sequence)
    names = [
        s.name for s in summary.symbols if not s.name.startswith(UNKNOWN) and s.name not in excluded
    ]
    return names[:limit]
