"""Same code, same work: what the deterministic lenses say about a pair of variants as a whole.

Two findings, each a top-level note, derived from the comparisons of one benchmark (after every
lens's analysis, so every output format shows them):

- **the variants executed the same code** although their settings differ (an environment
  variable, an interpreter, a directory, a command, a git ref ...): the setting did not reach
  the measured code, and the "A/B" is an A/A. Evidence: the instructions lens (per-iteration
  counts within `COUNT_TOLERANCE`, the same functions executed, none moved by more than
  `FUNCTION_TOLERANCE` of the total) or the asm lens (the same hot functions, each the same
  symbol of a byte-identical object); never when either lens saw different code, never from a
  lens that cannot tell.
- **the time difference is not in the executed code**: the time lens calls a pair faster or
  slower while the instructions lens saw the same code; the cause is elsewhere (memory layout,
  caches, frequency, noise).

A third finding, **lenses that disagree**: two lenses' verdicts on one pair point opposite ways
(one `faster`, the other `slower`), or the time lens calls the pair `equivalent` while another
speed lens moved by more than `DISAGREEMENT` decisively. Each lens measures something else (an
op's self time under a profiler, instructions under valgrind, the whole statement), so both can
be right; the note says what each measured and how to settle it.

Valgrind hides AVX-512 from the code it runs: on an AVX-512 machine, code that picks its path by
the CPU's features runs its AVX2 path under callgrind whatever the setting, so instruction
counts alone cannot tell "same code" there when the time lens sees a difference.
"""

from __future__ import annotations

import enum
import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from perflab.lenses.asm.analyse import AsmDetails
from perflab.lenses.instructions.analyse import InstructionsDetails
from perflab.lenses.instructions.explain import Presence
from perflab.model import (
    VARIANT_FIELDS,
    Comparison,
    Experiment,
    Metric,
    Note,
    Severity,
    Variant,
    VariantFieldKind,
    Verdict,
)

# Counts of the same code under callgrind differ between repeats and variants by the residue of
# the worker's handshake (reading the next request, the allocator: thousands of instructions per
# loop at load, spread thinly over dozens of functions). Measured on a 2-vCPU VM
# (bench/same_code_tolerance.py, docs/benchmarks.md): medians of two variants of the same code
# up to 4.7e-4 apart and repeats of one variant up to 2.7e-4 at load 13, 1e-5 when idle. 0.1%
# sits above that, ten times below the time lens's equivalence band; smaller changes are caught
# by the functions: one that runs in one variant only, or one whose count moves by more than
# FUNCTION_TOLERANCE of the total (pymalloc's state moves 8-11 per iteration, 3e-4 of it).
COUNT_TOLERANCE = 1e-3
FUNCTION_TOLERANCE = 5e-4
# functions below this many instructions per iteration (or this fraction of the total) are that
# residue (drop_gil, _Py_read ... of the handshake), not code the benchmark executed
RESIDUE_PER_ITERATION = 2.0
RESIDUE_FRACTION = 1e-5


class Seen(enum.StrEnum):
    SAME = "same"
    DIFFERENT = "different"
    CANNOT_TELL = "cannot_tell"


@dataclass(frozen=True)
class Finding:
    """What one deterministic lens saw of one pair: the same code or not, and the evidence."""

    metric: Metric
    seen: Seen
    evidence: str = ""  # "instruction counts within 0.1%, the same 214 functions"
    reason: str = ""  # why not the same (different, or cannot tell), for reading and debugging


def _relative_spread(values: Sequence[float]) -> float:
    low, high = min(values), max(values)
    return (high - low) / low if low > 0 else math.inf


def instructions_finding(details: InstructionsDetails) -> Finding:
    """Same code: the repeats of each variant, and the two variants' medians, within
    COUNT_TOLERANCE of each other; no function above the residue run in one variant only, and
    no function's count moved by more than FUNCTION_TOLERANCE of the total (or the residue)."""
    base, other = details.baseline_repeats, details.variant_repeats
    if not base or not other:
        return Finding(Metric.INSTRUCTIONS, Seen.CANNOT_TELL, reason="no repeats stored")
    within = max(_relative_spread(base), _relative_spread(other))
    if within > COUNT_TOLERANCE:
        return Finding(
            Metric.INSTRUCTIONS,
            Seen.CANNOT_TELL,
            reason=f"counts moved {within:.1e} between repeats of one variant",
        )
    between = _relative_spread([statistics.median(base), statistics.median(other)])
    if between > COUNT_TOLERANCE:
        return Finding(
            Metric.INSTRUCTIONS, Seen.DIFFERENT, reason=f"counts differ by {between:.1e}"
        )
    total = statistics.median(base)
    floor = max(RESIDUE_PER_ITERATION, RESIDUE_FRACTION * total)
    executed = 0
    for delta in details.functions:
        cost = max(abs(delta.baseline_self), abs(delta.variant_self))
        if delta.presence is not Presence.BOTH and cost >= floor:
            return Finding(
                Metric.INSTRUCTIONS,
                Seen.DIFFERENT,
                reason=f"{delta.name} ran in one variant only ({cost:g} per iteration)",
            )
        # the allocator's state moves counts between its functions (pymalloc's pools and
        # arenas: 8 instructions per iteration seen), the code stays the same
        if abs(delta.delta_self) > max(floor, FUNCTION_TOLERANCE * total):
            return Finding(
                Metric.INSTRUCTIONS,
                Seen.DIFFERENT,
                reason=f"{delta.name}: {delta.baseline_self:g} vs {delta.variant_self:g} "
                "per iteration",
            )
        executed += cost >= floor
    if executed == 0:
        return Finding(Metric.INSTRUCTIONS, Seen.CANNOT_TELL, reason="no function above residue")
    return Finding(
        Metric.INSTRUCTIONS,
        Seen.SAME,
        f"instruction counts within {COUNT_TOLERANCE * 100:g}%, the same {executed} functions",
    )


def asm_finding(details: AsmDetails) -> Finding:
    """Same code: every hot function ran in both variants as the same symbol of a
    byte-identical object (build-id or SHA-256); different when one ran on one side only or
    its code changed; cannot tell when nothing ran hot enough, or the objects are not known to
    be identical."""
    hot = [row for row in details.rows if row.baseline.ran or row.variant.ran]
    if not hot:
        return Finding(Metric.ASM, Seen.CANNOT_TELL)
    for row in hot:
        if not (row.baseline.ran and row.variant.ran) or not row.change.identical:
            return Finding(Metric.ASM, Seen.DIFFERENT)
    if any(row.name not in details.byte_identical for row in hot):
        return Finding(Metric.ASM, Seen.CANNOT_TELL)
    return Finding(
        Metric.ASM,
        Seen.SAME,
        f"the same {len(hot)} hot function{'s' if len(hot) != 1 else ''} with byte-identical code",
    )


def finding_of(comparison: Comparison) -> Finding | None:
    """The finding a lens's comparison carries, or None for lenses that cannot tell code."""
    if comparison.metric == Metric.INSTRUCTIONS and comparison.event is None:
        if isinstance(comparison.details, InstructionsDetails):
            return instructions_finding(comparison.details)
    if comparison.metric == Metric.ASM and isinstance(comparison.details, AsmDetails):
        return asm_finding(comparison.details)
    return None


@dataclass(frozen=True)
class Setting:
    """One setting in which a variant differs from its baseline, as the note names it."""

    shown: str  # "INF=1", "python=/envs/b/bin/python"
    question: str  # "is `INF` read by the benchmark?"


_ENV = next(spec for spec in VARIANT_FIELDS if spec.kind is VariantFieldKind.TABLE)


def setting_differences(baseline: Variant, variant: Variant) -> list[Setting]:
    """What the variant sets differently from its baseline (environment, interpreter,
    directory, command, build, git ref, changes applied)."""
    found: list[Setting] = []
    for key in sorted(set(baseline.env) | set(variant.env)):
        value = variant.env.get(key)
        if baseline.env.get(key) != value:
            shown = f"{key}={value}" if value is not None else f"{key} unset"
            found.append(Setting(shown, _ENV.question.format(key=key)))
    for spec in VARIANT_FIELDS:
        value = getattr(variant, spec.name)
        if spec.kind is VariantFieldKind.TABLE or getattr(baseline, spec.name) == value:
            continue
        unset = "(none)" if spec.kind is VariantFieldKind.TEXTS else "(unset)"
        found.append(Setting(f"{spec.name}={spec.shown(value) or unset}", spec.question))
    return found


def _listed(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _percent(ratio: float) -> str:
    return f"{abs(ratio - 1):.1%} {'faster' if ratio < 1 else 'slower'}"


def same_work_notes(
    experiment: Experiment,
    comparisons: Iterable[Comparison],
    machine: Mapping[str, Any] | None = None,
) -> list[Note]:
    """The notes of every (benchmark, baseline, variant) pair, in the comparisons' order."""
    grouped: dict[tuple[str, str, str], list[Comparison]] = defaultdict(list)
    for comparison in comparisons:
        grouped[(comparison.benchmark, comparison.baseline, comparison.variant)].append(comparison)
    variants = {v.name: v for v in experiment.variants}
    params = {b.name: b.params for b in experiment.benchmarks}
    avx512 = bool((machine or {}).get("avx512"))
    notes: list[Note] = []
    for (benchmark, baseline, variant), found in grouped.items():
        if baseline not in variants or variant not in variants:
            continue  # a cross-run comparison: its "variants" are runs
        if any(c.verdict is Verdict.INVALID for c in found):
            continue  # the output check already says they did different work
        pair = (variants[baseline].at(params[benchmark]), variants[variant].at(params[benchmark]))
        notes += _pair_notes(benchmark, pair, found, avx512=avx512)
    return notes


def _pair_notes(
    benchmark: str, pair: tuple[Variant, Variant], found: Sequence[Comparison], *, avx512: bool
) -> list[Note]:
    baseline, variant = pair
    findings = [f for f in (finding_of(c) for c in found) if f is not None]
    same = [f for f in findings if f.seen is Seen.SAME]
    if not same or any(f.seen is Seen.DIFFERENT for f in findings):
        return []
    time = next(
        (
            c
            for c in found
            if c.metric == Metric.TIME
            and c.event is None
            and c.verdict in (Verdict.FASTER, Verdict.SLOWER)
        ),
        None,
    )
    by_counts = next((f for f in same if f.metric == Metric.INSTRUCTIONS), None)
    # under valgrind an AVX-512 machine runs every CPU-dispatched library's AVX2 path: counts
    # alone cannot tell a setting that picks the AVX-512 path from one that does nothing
    counts_blind = avx512 and by_counts is not None and len(same) == 1
    avx512_caveat = (
        "; valgrind hides AVX-512 from the code it counts, so code this CPU picks by its "
        "features (AVX-512 kernels) may differ outside it"
        if avx512 and by_counts is not None
        else ""
    )
    notes: list[Note] = []
    settings = setting_differences(baseline, variant)
    if settings and not (counts_blind and time is not None):
        evidence = "; ".join(f.evidence for f in same)
        notes.append(
            Note(
                severity=Severity.WARNING,
                message=f"`{variant.name}` and `{baseline.name}` differ only in "
                f"{_listed([s.shown for s in settings])}, but the variants executed the same "
                f"code ({evidence}): "
                + " ".join(dict.fromkeys(s.question for s in settings))
                + (avx512_caveat if counts_blind else ""),
                hint="a setting that never reaches the measured code makes the comparison an "
                "A/A test; read it where the benchmark runs (the setup or the statement, not "
                "an import that happened before it was set), or check its spelling",
                benchmark=benchmark,
                variant=variant.name,
            )
        )
    if time is not None and by_counts is not None:
        notes.append(
            Note(
                severity=Severity.WARNING,
                message=f"`{variant.name}` measured {_percent(time.ratio)} than "
                f"`{baseline.name}`, but the time difference is not in the executed code: "
                f"the instruction counts are the same within {COUNT_TOLERANCE * 100:g}% "
                f"({by_counts.evidence.split(', ', 1)[-1]}); look at memory layout, caches, "
                f"frequency or noise" + avx512_caveat,
                hint="an A/A run (two variants without keys) shows what this machine's noise "
                "alone calls a difference; --cache-sim counts simulated cache misses",
                benchmark=benchmark,
                variant=variant.name,
            )
        )
    return notes


# what a lens's figure is, beside the time lens's whole-statement wall time: why they can differ
_WHAT_IT_MEASURES = {
    Metric.TORCH: "the torch lens adds up the ops' own (self) CPU time under torch.profiler, "
    "whose own cost per op (a few µs) can exceed a small op's work; the time lens times the "
    "whole statement (Python, argument parsing, dispatch) without a profiler, so work moved out "
    "of the op, into dispatch or Python, shrinks one and not the other",
    Metric.INSTRUCTIONS: "the instructions lens counts instructions under valgrind (an "
    "AVX-512 machine's AVX2 path); time also depends on cache misses, branches, the clock and "
    "vector width, so fewer instructions can take longer",
    Metric.PROFILE: "the profile lens's ratio comes from one process per variant under perf "
    "record, so it holds none of what differs between processes (memory layout, hash seed)",
    Metric.COUNTERS: "the counters lens counts in worker processes of its own under perf stat",
}
# a lens's change this large beside the time lens's `equivalent` is worth saying
DISAGREEMENT = 0.10
_SPEED_EVENTS = {None, "cycles", "task-clock", "cpu-clock", "instructions"}


def _direction(comparison: Comparison) -> int:
    return {Verdict.FASTER: -1, Verdict.SLOWER: 1}.get(comparison.verdict, 0)


def disagreement_notes(comparisons: Iterable[Comparison]) -> list[Note]:
    """Where another lens points the other way than the time lens about the same pair, one
    warning naming both figures, why they can differ, and how to settle it."""
    grouped: dict[tuple[str, str, str], list[Comparison]] = defaultdict(list)
    for comparison in comparisons:
        grouped[(comparison.benchmark, comparison.baseline, comparison.variant)].append(comparison)
    notes = []
    for (benchmark, _baseline, variant), found in grouped.items():
        time = next((c for c in found if c.metric is Metric.TIME and c.event is None), None)
        if time is None or time.verdict is Verdict.INVALID:
            continue
        for other in found:
            if other.metric not in _WHAT_IT_MEASURES or other.event not in _SPEED_EVENTS:
                continue
            opposite = _direction(time) * _direction(other) < 0
            hidden = (
                time.verdict is Verdict.EQUIVALENT
                and _direction(other) != 0
                and abs(math.log(other.ratio)) > math.log(1 + DISAGREEMENT)
            )
            if not (opposite or hidden):
                continue
            event = f" {other.event}" if other.event else ""
            notes.append(
                Note(
                    severity=Severity.WARNING,
                    message=f"the lenses disagree about `{variant}` vs `{time.baseline}`: the "
                    f"{other.metric.value} lens{event} says {other.ratio:.3f} "
                    f"[{other.ci_low:.3f}, {other.ci_high:.3f}] {other.verdict.value}, the time "
                    f"lens {time.ratio:.3f} [{time.ci_low:.3f}, {time.ci_high:.3f}] "
                    f"{time.verdict.value}. Both can be right: " + _WHAT_IT_MEASURES[other.metric],
                    hint="the time lens answers whether the statement as a whole got faster; "
                    "to settle the other lens's part, measure it alone (a statement of just that "
                    "op or function), or longer (--budget) until both intervals are narrow",
                    benchmark=benchmark,
                    variant=variant,
                )
            )
    return notes
