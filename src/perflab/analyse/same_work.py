"""Same code, same work: what the deterministic lenses say about a pair of variants as a whole.

Two findings, each a top-level note, derived from the comparisons of one benchmark (after every
lens's analysis, so every output format shows them):

- **the variants executed the same code** although their settings differ (an environment
  variable, an interpreter, a directory, a command, a git ref ...): the setting did not reach
  the measured code, and the "A/B" is an A/A. Evidence: the findings of the lenses that can
  tell code apart (their descriptors' `same_code` hooks: counts per function, the hot
  functions' bytes); never when either lens saw different code, never from a lens that cannot tell.
- **the time difference is not in the executed code**: the time lens calls a pair faster or
  slower while a lens that counts the executed work (instructions) saw the same counts; the
  cause is elsewhere (memory layout, caches, frequency, noise).

A third finding, **lenses that disagree**: two lenses' verdicts on one pair point opposite ways
(one `faster`, the other `slower`), or the time lens calls the pair `equivalent` while another
speed lens moved by more than `DISAGREEMENT` decisively. Each lens measures something else (an
op's self time under a profiler, instructions under a simulator, the whole statement), so both
can be right; the note says what each measured and how to settle it. A workflow that decides by one
lens (bisect, check, history) asks `gate_disagreement` the same of the lens that decided, so its
answer says so where the decision is shown.

A lens whose tool runs other code than the CPU does (its descriptor's `blind_spot`: a tool that
hides a CPU feature makes code that picks its path by the CPU's features take another path
under it whatever the setting) cannot tell "same code" alone on a machine with that feature when
the time lens sees a difference: the notes say so in the lens's words, on such a machine only.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from perflab.lenses.descriptor import BlindSpot
from perflab.lenses.registry import (
    DESCRIPTORS,
    countable_metrics,
    descriptor_for,
    wall_time_metrics,
)
from perflab.records.code_findings import Finding, Seen
from perflab.records.kinds import Metric, Verdict
from perflab.records.lens_agreement import LensDisagreement
from perflab.records.model import (
    VARIANT_FIELDS,
    Comparison,
    Experiment,
    Note,
    Severity,
    Variant,
    VariantFieldKind,
)
from perflab.records.run_facts import MachineInfo

_SAME_CODE = {d.metric: d for d in DESCRIPTORS if d.explanation.same_code is not None}


def finding_of(comparison: Comparison) -> Finding | None:
    """The finding a lens's comparison carries (its descriptor's `same_code` hook), or None for
    lenses that cannot tell code."""
    descriptor = _SAME_CODE.get(comparison.metric)
    return None if descriptor is None else descriptor.same_code_finding(comparison)


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
    machine: MachineInfo | None = None,
) -> list[Note]:
    """The notes of every (benchmark, baseline, variant) pair, in the comparisons' order."""
    grouped: dict[tuple[str, str, str], list[Comparison]] = defaultdict(list)
    for comparison in comparisons:
        grouped[(comparison.benchmark, comparison.baseline, comparison.variant)].append(comparison)
    variants = {v.name: v for v in experiment.variants}
    params = {b.name: b.params for b in experiment.benchmarks}
    notes: list[Note] = []
    for (benchmark, baseline, variant), found in grouped.items():
        if baseline not in variants or variant not in variants:
            continue  # a cross-run comparison: its "variants" are runs
        if any(c.verdict is Verdict.INVALID for c in found):
            continue  # the output check already says they did different work
        pair = (variants[baseline].at(params[benchmark]), variants[variant].at(params[benchmark]))
        notes += _pair_notes(benchmark, pair, found, machine or MachineInfo())
    return notes


def _blind_here(metric: Metric, machine: MachineInfo) -> BlindSpot | None:
    """The lens's blind spot where this machine has what its tool hides, else None."""
    blind = descriptor_for(metric).explanation.blind_spot
    return blind if blind is not None and getattr(machine, blind.machine_fact) else None


def _pair_notes(
    benchmark: str,
    pair: tuple[Variant, Variant],
    found: Sequence[Comparison],
    machine: MachineInfo,
) -> list[Note]:
    """The pair's same-code and not-in-code notes, from the comparisons of one benchmark."""
    same = _same_code_findings(found)
    if not same:
        return []
    time = _time_difference(found)
    blind = _blind_spot(same, machine)
    blind_caveat = blind.same_code if blind is not None else ""
    # one lens's counts, blind to the path the CPU takes, cannot say "same code" while the time
    # lens sees a difference
    counts_blind = blind is not None and len(same) == 1
    notes: list[Note] = []
    settings = setting_differences(*pair)
    if settings and not (counts_blind and time is not None):
        caveat = blind_caveat if counts_blind else ""
        notes.append(_same_code_note(benchmark, pair, settings, same, caveat))
    by_counts = next((f for f in same if f.same_work), None)
    if time is not None and by_counts is not None:
        notes.append(_not_in_code_note(benchmark, pair, time, by_counts, blind_caveat))
    return notes


def _same_code_findings(found: Sequence[Comparison]) -> list[Finding]:
    """The lenses' findings of the same code; none when any lens saw different code."""
    findings = [f for f in (finding_of(c) for c in found) if f is not None]
    if any(f.seen is Seen.DIFFERENT for f in findings):
        return []
    return [f for f in findings if f.seen is Seen.SAME]


def _time_difference(found: Sequence[Comparison]) -> Comparison | None:
    """The wall-time comparison (of the whole, not an event) that calls the pair faster or
    slower, if any."""
    timed = wall_time_metrics()
    decided = (Verdict.FASTER, Verdict.SLOWER)
    return next(
        (c for c in found if c.metric in timed and c.event is None and c.verdict in decided),
        None,
    )


def _blind_spot(same: Sequence[Finding], machine: MachineInfo) -> BlindSpot | None:
    """The blind spot of the first lens whose tool hid a CPU feature this machine has.

    A tool hiding a CPU feature runs every library that dispatches on it down another path:
    its counts alone cannot tell a setting that picks the hidden path from one doing nothing."""
    return next(
        (b for f in same if f.avx512_hidden and (b := _blind_here(f.metric, machine))), None
    )


def _same_code_note(
    benchmark: str,
    pair: tuple[Variant, Variant],
    settings: Sequence[Setting],
    same: Sequence[Finding],
    caveat: str,
) -> Note:
    """The settings differ, but the lenses that tell code apart saw the same code."""
    baseline, variant = pair
    evidence = "; ".join(f.evidence for f in same)
    return Note(
        severity=Severity.WARNING,
        message=f"`{variant.name}` and `{baseline.name}` differ only in "
        f"{_listed([s.shown for s in settings])}, but the variants executed the same "
        f"code ({evidence}): " + " ".join(dict.fromkeys(s.question for s in settings)) + caveat,
        hint="a setting that never reaches the measured code makes the comparison an "
        "A/A test; read it where the benchmark runs (the setup or the statement, not "
        "an import that happened before it was set), or check its spelling; or it is read "
        "and this code does not depend on it (a CPU feature switched off that the code has "
        "no version for)",
        benchmark=benchmark,
        variant=variant.name,
    )


def _not_in_code_note(
    benchmark: str,
    pair: tuple[Variant, Variant],
    time: Comparison,
    by_counts: Finding,
    caveat: str,
) -> Note:
    """The time lens saw a difference where the executed work was counted the same."""
    baseline, variant = pair
    return Note(
        severity=Severity.WARNING,
        message=f"`{variant.name}` measured {_percent(time.ratio)} than "
        f"`{baseline.name}`, but the time difference is not in the executed code: "
        f"{by_counts.same_work}; look at memory layout, caches, frequency or noise" + caveat,
        hint="an A/A run (two variants without keys) shows what this machine's noise "
        "alone calls a difference"
        + (f"; {by_counts.look_further}" if by_counts.look_further else ""),
        benchmark=benchmark,
        variant=variant.name,
    )


# what each speed lens's figure is, beside the time lens's whole-statement wall time
_BESIDE_TIME = {
    d.metric: d.explanation.beside_time
    for d in DESCRIPTORS
    if d.explanation.beside_time is not None
}
# a lens's change this large beside the time lens's `equivalent` is worth saying
DISAGREEMENT = 0.10
_SPEED_EVENTS = {None, "cycles", "task-clock", "cpu-clock", "instructions"}


def _direction(comparison: Comparison) -> int:
    return {Verdict.FASTER: -1, Verdict.SLOWER: 1}.get(comparison.verdict, 0)


def disagreement_notes(
    comparisons: Iterable[Comparison], machine: MachineInfo | None = None
) -> list[Note]:
    """Where another lens points the other way than the time lens about the same pair, one
    warning naming both figures, why they can differ, and how to settle it; `machine`: the
    run's machine facts (its CPU features are named only where it has them)."""
    grouped: dict[tuple[str, str, str], list[Comparison]] = defaultdict(list)
    for comparison in comparisons:
        grouped[(comparison.benchmark, comparison.baseline, comparison.variant)].append(comparison)
    notes = []
    timed = wall_time_metrics()
    for found in grouped.values():
        time = next((c for c in found if c.metric in timed and c.event is None), None)
        if time is None or time.verdict is Verdict.INVALID:
            continue
        notes += [
            _disagreement_note(time, other, machine or MachineInfo())
            for other in found
            if other.metric in _BESIDE_TIME
            and other.event in _SPEED_EVENTS
            and _disagrees(time, other)
        ]
    return notes


def _disagrees(time: Comparison, other: Comparison) -> bool:
    """Whether `other` points the other way than `time`, or moves clearly where time sees no
    difference."""
    opposite = _direction(time) * _direction(other) < 0
    hidden = (
        time.verdict is Verdict.EQUIVALENT
        and _direction(other) != 0
        and abs(math.log(other.ratio)) > math.log(1 + DISAGREEMENT)
    )
    return opposite or hidden


def _disagreement_note(time: Comparison, other: Comparison, machine: MachineInfo) -> Note:
    """Both lenses' figures, why both can be right, and how to settle it."""
    event = f" {other.event}" if other.event else ""
    # said only on a machine that has what the lens's tool hides (its facts say so)
    blind = _blind_here(other.metric, machine)
    return Note(
        severity=Severity.WARNING,
        message=f"the lenses disagree about `{time.variant}` vs `{time.baseline}`: the "
        f"{other.metric.value} lens{event} says {other.ratio:.3f} "
        f"[{other.ci_low:.3f}, {other.ci_high:.3f}] {other.verdict.value}, the "
        f"{time.metric.value} lens {time.ratio:.3f} "
        f"[{time.ci_low:.3f}, {time.ci_high:.3f}] {time.verdict.value}. "
        "Both can be right: "
        + _BESIDE_TIME[other.metric]
        + (blind.beside_time if blind is not None else ""),
        hint=f"the {time.metric.value} lens answers whether the statement as a "
        "whole got faster; to settle the other lens's part, measure it alone (a "
        "statement of just that op or function), or longer (--budget) until both "
        "intervals are narrow",
        benchmark=time.benchmark,
        variant=time.variant,
    )


def _beyond(comparison: Comparison, threshold: float) -> bool:
    """The comparison's whole CI lies beyond the threshold, one way or the other."""
    limit = 1.0 + threshold
    return comparison.ci_low > limit or comparison.ci_high < 1.0 / limit


def gate_disagreement(
    comparisons: Iterable[Comparison],
    gate: Metric,
    pair: tuple[str, str],
    threshold: float,
) -> LensDisagreement | None:
    """Where another speed lens measured on `pair` (baseline, variant) disagrees with the lens
    that decides a workflow: opposite verdicts, the deciding lens unmoved while the other moved
    beyond the threshold, or the deciding lens beyond it while the other is equivalent. The
    time lens is preferred: it is the question every speed lens stands in for."""
    found = [
        c
        for c in comparisons
        if (c.baseline, c.variant) == pair and c.event is None and c.verdict is not Verdict.INVALID
    ]
    # a suite's benchmarks each have their own lenses: one benchmark's time is never set
    # against another's instructions; those beyond the threshold (what gates) first
    deciders = sorted(
        (c for c in found if c.metric is gate), key=lambda c: not _beyond(c, threshold)
    )
    for decider in deciders:
        of = [c for c in found if c.benchmark == decider.benchmark]
        disagreement = _disagreeing(decider, of, gate, threshold)
        if disagreement is not None:
            return disagreement
    return None


def _disagreeing(
    decider: Comparison, found: list[Comparison], gate: Metric, threshold: float
) -> LensDisagreement | None:
    """The first other speed lens of one benchmark that disagrees with its deciding lens."""
    timed = wall_time_metrics()
    others = [
        c for c in found if c.metric is not gate and (c.metric in timed or c.metric in _BESIDE_TIME)
    ]
    others.sort(key=lambda c: c.metric not in timed)
    for other in others:
        decisive = _beyond(other, threshold)
        opposite = _direction(decider) * _direction(other) < 0
        unmoved = _direction(decider) == 0 and decisive
        unseen = _beyond(decider, threshold) and other.verdict is Verdict.EQUIVALENT
        if opposite or unmoved or unseen:
            return LensDisagreement(
                gate=gate,
                gate_ratio=decider.ratio,
                gate_verdict=decider.verdict,
                other=other.metric,
                other_ratio=other.ratio,
                other_ci_low=other.ci_low,
                other_ci_high=other.ci_high,
                other_verdict=other.verdict,
                decisive=decisive,
                gate_countable=gate in countable_metrics(),
                other_countable=other.metric in countable_metrics(),
            )
    return None
