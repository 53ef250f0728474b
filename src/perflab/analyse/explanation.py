"""One paragraph per comparison: the measured difference, the few functions that account for it
with their evidence, and what was checked and found unchanged, joining the lenses' analyses.

Pure: the comparisons of one (benchmark, baseline, variant) pair in, a `Summary` record out.

The difference is the instructions lens's (instructions per iteration: deterministic, and every
function's share of it is counted, not sampled); without it, the profile lens's (wall time per
iteration under perf, each function's self share of the samples): each lens reads its own
details through its descriptor's `accounts` hook, taken in the registry's order (causes.py
weighs them). Causes are functions whose own cost moved the way the total moved, largest first,
until they account for `ACCOUNTED_TARGET` of the difference or `MAX_CAUSES` are named: every one
of them ran (a row of counted or sampled code), and its evidence is the count or share on each
side plus the other lenses' claims about it. A pair whose counts agree within the spread between
processes (or the instructions lens's `SAME_COUNT` of the total) has nothing to account for and
names no cause. A function that ran in the baseline only and one that ran in the variant only in
its place (a lens saw one call site or dispatch call them: `callee_changed`, `dispatch_changed`)
are one cause, with their net change: apart, the gone one alone would claim more than the whole
difference its replacement mostly cancels. Vector width changes (asm) come first: the plainest cause
of a dispatch or `-march` change, which a tool's counts may not see (its blind spot) and a short
profile may not tell (hidden_dispatch.py). What a lens cannot see is said in its own words (its
descriptor's `blind_spot` and `reads_placement`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from perflab.analyse.causes import Found, from_account
from perflab.analyse.hidden_dispatch import counted_blind_spot, hidden_dispatches, width_lead
from perflab.analyse.pair_claims import (
    claims_by_function,
    dispatched_pairs,
    first_counted,
    first_of,
    first_wall_time,
)
from perflab.lenses.registry import DESCRIPTORS
from perflab.records.accounting import Accounting, CodeFacts
from perflab.records.document import Block, Cell, Paragraph, Section, Style, Table
from perflab.records.explanation import Summary, signed_text
from perflab.records.kinds import Verdict
from perflab.records.model import Comparison
from perflab.tool_output.symbol_names import brief

SHOWN_IN_TEXT = 5  # causes named in the paragraph (all are in the table and the JSON)
OVERSHOOT = 1.5  # causes adding up to more than this share: others cancelled part of them


def summaries(comparisons: Sequence[Comparison]) -> tuple[Summary, ...]:
    """One summary per (benchmark, baseline, variant) with an instructions or profile
    comparison, in the order the comparisons come."""
    groups: dict[tuple[str, str, str], list[Comparison]] = {}
    for comparison in comparisons:
        key = (comparison.benchmark, comparison.baseline, comparison.variant)
        groups.setdefault(key, []).append(comparison)
    out = []
    for (benchmark, baseline, variant), mine in groups.items():
        summary = summarise(benchmark, baseline, variant, mine)
        if summary is not None:
            out.append(summary)
    return tuple(out)


def summarise(
    benchmark: str, baseline: str, variant: str, comparisons: Sequence[Comparison]
) -> Summary | None:
    """Why `variant` differs from `baseline` in `benchmark`, from what the lenses account for; None
    when no lens accounts for anything."""
    accounts = _accountings(comparisons)
    if not accounts:
        return None
    time = first_wall_time(comparisons)
    facts = _code_facts(comparisons)
    hidden = [h.sentence for h in hidden_dispatches(comparisons)]
    found = _found(accounts, comparisons, hidden, time, facts)
    return Summary(
        benchmark=benchmark,
        baseline=baseline,
        variant=variant,
        text=width_lead(comparisons) + _text(found, time, facts),
        causes=found.causes,
        source=found.source,
        difference=found.difference,
        unit=found.unit,
        accounted=found.accounted,
        unchanged=facts.unchanged,
        changed_not_run=facts.changed_not_run,
        valgrind_ran_other_code=tuple(hidden) if first_counted(comparisons) is not None else (),
        replaced=found.replaced,
        added_by_object=found.added_by_object,
    )


def _found(
    accounts: Sequence[Accounting],
    comparisons: Sequence[Comparison],
    hidden: Sequence[str],
    time: Comparison | None,
    facts: CodeFacts,
) -> Found:
    """The causes the first account finds, in words that say what its tool cannot see (the
    `hidden` dispatches) and, where the counts are the same, what the difference is not."""
    claims = claims_by_function(comparisons)
    dispatched = dispatched_pairs(comparisons)
    blind = counted_blind_spot(comparisons)
    primary = accounts[0]
    found = from_account(primary, claims, dispatched)
    if hidden and blind is not None and not found.causes:
        # the counts cannot see what the CPU ran differently: their tool ran other code
        said = found.what
        if len(accounts) > 1:
            found = from_account(accounts[1], claims, dispatched)
        hidden_words = "; ".join(hidden)
        found = replace(
            found,
            what=f"{found.what}. {blind.counts} ({said[0].lower()}{said[1:]}) "
            f"cannot see what changed: {hidden_words}; {blind.hides}",
        )
    if primary.counts_work and found.source == primary.source and not found.causes:
        found = replace(found, what=_same_counts_words(primary, time, facts) or found.what)
    return found


def _accountings(comparisons: Sequence[Comparison]) -> list[Accounting]:
    """The pair's accounts of its difference, the registry's order: the first is the one the
    summary gives, the next its fallback."""
    found = []
    for descriptor in DESCRIPTORS:
        comparison = first_of(comparisons, descriptor.metric)
        account = descriptor.accounting(comparison) if comparison is not None else None
        if account is not None:
            found.append(account)
    return found


CONFIRM_PLACEMENT = (
    "to confirm, rebuild both with -falign-loops=64 -falign-functions=64 (gcc, clang) or "
    "-C llvm-args=-align-loops=64 (Rust): if the gap closes, code placement was the cause"
)


def _same_counts_words(
    counted: Accounting, time: Comparison | None, facts: CodeFacts
) -> str | None:
    """Where the time lens decides and the executed instructions are the same: what the
    difference is not, where the code lies differently (the hot loops' addresses), and how to
    confirm it; None when time does not decide (then there is nothing to account for)."""
    if time is None or time.verdict not in (Verdict.FASTER, Verdict.SLOWER):
        return None
    before, after, unit = counted.before, counted.after, counted.unit
    counts = (
        f"The same {unit} per iteration ({before:,.0f} and {after:,.0f}), yet time "
        f"{time.ratio:.3f} ({time.verdict}): the difference is not in the executed {unit}"
    )
    placed, compared = facts.misplaced, facts.loops_compared
    if placed:
        return f"{counts}; the code lies differently: {'; '.join(placed)}; {CONFIRM_PLACEMENT}"
    rule_out = CONFIRM_PLACEMENT.replace("to confirm", "to rule out code placement")
    if not compared:
        how = next(
            (d.explanation.reads_placement for d in DESCRIPTORS if d.explanation.reads_placement),
            None,
        )
        return (
            f"{counts}; where the code lies was not read{f' ({how})' if how else ''}; what "
            "is left: code placement, data layout and memory, frequency, "
            f"noise; {rule_out}"
        )
    alike = f" ({facts.placed_alike})" if facts.placed_alike else ""
    return (
        f"{counts} nor in the placement of the {compared} hot loop(s) it compared{alike}; "
        "what is left: placement it cannot see "
        "(function alignment, branch targets, pages), data layout and memory, frequency, "
        f"noise; {rule_out}"
    )


def _code_facts(comparisons: Sequence[Comparison]) -> CodeFacts:
    """Every lens's facts about the pair's code (its descriptor's `code_facts` hook), joined in
    the registry's order."""
    found = [
        facts
        for d in DESCRIPTORS
        if (c := first_of(comparisons, d.metric)) is not None
        and (facts := d.facts_of(c)) is not None
    ]
    return CodeFacts(
        tuple(u for f in found for u in f.unchanged),
        tuple(n for f in found for n in f.changed_not_run),
        tuple(m for f in found for m in f.misplaced),
        sum(f.loops_compared for f in found),
        next((f.placed_alike for f in found if f.placed_alike), ""),
    )


def _time_words(time: Comparison | None, difference: float | None) -> str:
    if time is None or difference is None:
        return ""
    ratio = f"time {time.ratio:.3f}"
    if time.verdict is Verdict.EQUIVALENT:
        return f" ({ratio}, equivalent: the {time.metric.value} lens sees no difference)"
    if time.verdict not in (Verdict.FASTER, Verdict.SLOWER):
        return f" ({ratio}, {time.verdict})"
    agrees = (time.verdict is Verdict.FASTER) == (difference < 0)
    return f" ({ratio} agrees)" if agrees else f" ({ratio} does not agree)"


def _text(found: Found, time: Comparison | None, facts: CodeFacts) -> str:
    causes = found.causes
    difference = causes[0].delta_per_iteration / causes[0].share if causes else None
    words = found.what + _time_words(time, difference)
    if found.replaced:
        words += ": " + "; ".join(c.words(brief) for c in found.replaced)
        words += ", and around it" if causes else ""
    if causes:
        named = ", ".join(c.words(brief) for c in causes[:SHOWN_IN_TEXT])
        more = f" and {len(causes) - SHOWN_IN_TEXT} more" if len(causes) > SHOWN_IN_TEXT else ""
        share = found.accounted or 0.0
        if share > OVERSHOOT:
            # functions moving the other way cancel part of these: say so, not "1780%"
            tail = (
                f"these add up to {share:.1f} times the difference; functions that moved the "
                "other way make up the rest"
            )
        else:
            tail = f"these account for {share:.0%} of the difference"
        words += (
            f"{'' if found.replaced else ':'} {named}{more} ({found.source}, per iteration); {tail}"
        )
        words += _added_words(found)
    words += "."
    unchanged, not_run = facts.unchanged, facts.changed_not_run
    if unchanged:
        words += " Unchanged: " + "; ".join(unchanged) + "."
    if not_run:
        words += (
            f" {len(not_run)} changes in code no sample landed on are not causes "
            f"({', '.join(not_run[:3])}{' ...' if len(not_run) > 3 else ''})."
        )
    return words


def _added_words(found: Found) -> str:
    """The work added around a replaced pair, by object: the replacement's own object apart
    from the interpreter's or a framework's."""
    if not found.replaced or not found.added_by_object:
        return ""
    own = {c.object.split(" → ")[-1]: c.replaced_by for c in found.replaced}
    parts = [
        f"{signed_text(delta, found.unit)} in {obj}"
        + (f" (beside {own[obj]}, in its object)" if obj in own else "")
        for obj, delta in found.added_by_object
    ]
    return "; the added work by object: " + ", ".join(parts)


def summary_section(found: Sequence[Summary]) -> Section | None:
    """The paragraph of every pair first, then per pair its causes and their evidence."""
    if not found:
        return None
    rows = []
    subsections = []
    for summary in found:
        title = f"{summary.benchmark}: {summary.variant} vs {summary.baseline}"
        rows.append((Cell(title), Cell(summary.text)))
        listed = (*summary.replaced, *summary.causes)
        if not listed:
            continue
        blocks: list[Block] = [
            Table(
                ("function", "object", "Δ per iteration", "share", "evidence"),
                tuple(
                    (
                        Cell(cause.named(brief)),
                        Cell(cause.object),
                        Cell(signed_text(cause.delta_per_iteration, cause.unit)),
                        Cell(f"{cause.share:.0%}"),
                        Cell(cause.evidence[0] if cause.evidence else ""),
                    )
                    for cause in listed
                ),
                numeric=(False, False, True, True, False),
                caption=f"what accounts for the difference ({summary.source})",
            )
        ]
        for cause in listed:
            blocks += [
                Paragraph(f"{cause.named(brief)}: {line}", Style.MUTED)
                for line in cause.evidence[1:3]
            ]
        subsections.append(Section(title, tuple(blocks)))
    # the paragraphs as the section's first block, a table: every format shows it up front
    overview = Table(("comparison", "what changed and why"), tuple(rows))
    return Section("summary", (overview,), tuple(subsections), key="summary")
