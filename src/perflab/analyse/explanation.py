"""One paragraph per comparison: the measured difference, the few functions that account for it
with their evidence, and what was checked and found unchanged, joining the lenses' analyses.

Pure: the comparisons of one (benchmark, baseline, variant) pair in, a `Summary` record out.

The difference is the instructions lens's (instructions per iteration: deterministic, and every
function's share of it is counted, not sampled); without it, the profile lens's (wall time per
iteration under perf, each function's self share of the samples). Causes are functions whose
own cost moved the way the total moved, largest first, until they account for
`ACCOUNTED_TARGET` of the difference or `MAX_CAUSES` are named: every one of them ran (a row of
counted or sampled code), and its evidence is the count or share on each side plus the other
lenses' claims about it. A pair whose counts agree within the spread between processes (or
`SAME_COUNT` of the total) has nothing to account for and names no cause. A function that ran in
the baseline only and one that ran in the variant only in its place (a lens saw one call site or
dispatch call them: `callee_changed`, `dispatch_changed`) are one cause, with their net change:
apart, the gone one read "-1,000,008 sum_scalar ... 3.3 times the difference" where sum_pairs
(+700,015) replaced it. Vector width changes
(asm) come first: the plainest cause of a dispatch or `-march` change, which the counts may not
see (valgrind hides AVX-512) and a short profile may not tell.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from perflab.lenses.registry import DESCRIPTORS, descriptor_for
from perflab.records.accounting import BASELINE_ONLY, VARIANT_ONLY, Accounting
from perflab.records.diagnosis import REPLACING, Claim
from perflab.records.document import Block, Cell, Paragraph, Section, Style, Table
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Comparison
from perflab.tools.symbol_names import fold_clones, readable

ACCOUNTED_TARGET = 0.8  # stop naming causes once they account for this share of the difference
MAX_CAUSES = 8
RESIDUE = 2.0  # instructions per iteration below which a function's change is the handshake's
SHOWN_IN_TEXT = 5  # causes named in the paragraph (all are in the table and the JSON)
SHOWN_WIDTHS = 3  # vector width changes named first in the paragraph
OVERSHOOT = 1.5  # causes adding up to more than this share: others cancelled part of them


def _identity(name: str) -> str:
    """A function as the summary joins and shows it: clones folded, Rust's build-dependent
    spellings (hash, crate disambiguator) left out and its escapes read, as every lens's rows
    have been paired by `perflab.tools.symbol_names.pair_names` before they get here."""
    return readable(fold_clones(name))


@dataclass(frozen=True)
class Cause:
    """A function whose own cost per iteration moved with the difference, and by how much."""

    function: str
    object: str
    delta_per_iteration: float
    share: float  # of the whole difference (variant - baseline)
    unit: str
    evidence: tuple[str, ...]
    # a function that ran in the variant only in place of `function`, which ran in the
    # baseline only: the delta is their net change
    replaced_by: str = ""
    baseline_per_iteration: float = 0.0
    variant_per_iteration: float = 0.0

    @property
    def named(self) -> str:
        if not self.replaced_by:
            return self.function
        return f"{self.function} → {self.replaced_by}"

    @property
    def words(self) -> str:
        """The cause in the summary's paragraph."""
        delta = _signed(self.delta_per_iteration, self.unit)
        if not self.replaced_by:
            return f"{delta} {self.function}"
        return (
            f"{self.function} ({self.baseline_per_iteration:,.0f}) replaced by "
            f"{self.replaced_by} ({self.variant_per_iteration:,.0f}), {delta}"
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "function": self.function,
            "object": self.object,
            "delta_per_iteration": self.delta_per_iteration,
            "share": self.share,
            "unit": self.unit,
            "evidence": list(self.evidence),
        }
        if self.replaced_by:
            out["replaced_by"] = self.replaced_by
            out["baseline_per_iteration"] = self.baseline_per_iteration
            out["variant_per_iteration"] = self.variant_per_iteration
        return out


@dataclass(frozen=True)
class Summary:
    benchmark: str
    baseline: str
    variant: str
    text: str
    causes: tuple[Cause, ...] = ()
    source: str = ""  # the lens whose difference is accounted for
    difference: float | None = None  # variant - baseline, per iteration
    unit: str = ""
    accounted: float | None = None  # the causes' share of the difference together
    unchanged: tuple[str, ...] = ()  # what was checked and found the same
    changed_not_run: tuple[str, ...] = ()  # changes in code that did not run: not causes
    # what the CPU ran differently (profile, asm) where callgrind ran the same code in both
    valgrind_ran_other_code: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark,
            "baseline": self.baseline,
            "variant": self.variant,
            "summary": {
                "text": self.text,
                "causes": [cause.to_json() for cause in self.causes],
                "source": self.source,
                "difference_per_iteration": self.difference,
                "unit": self.unit,
                "accounted_share": self.accounted,
                "unchanged": list(self.unchanged),
                "changed_not_run": list(self.changed_not_run),
                "valgrind_ran_other_code": list(self.valgrind_ran_other_code),
            },
        }


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


def _details(comparison: Comparison | None) -> dict[str, Any]:
    if comparison is None or comparison.details is None:
        return {}
    data: dict[str, Any] = comparison.details.to_json()
    return data


def _first(comparisons: Sequence[Comparison], metric: Metric) -> Comparison | None:
    return next((c for c in comparisons if c.metric is metric and c.event is None), None)


def summarise(
    benchmark: str, baseline: str, variant: str, comparisons: Sequence[Comparison]
) -> Summary | None:
    accounts = _accountings(comparisons)
    if not accounts:
        return None
    counted = _first_counted(comparisons)
    time = _first(comparisons, Metric.TIME)
    asm = _details(_first(comparisons, Metric.ASM))
    claims = _claims_by_function(comparisons)
    dispatched = _dispatched(comparisons)
    unchanged = _unchanged(_details(counted), asm)
    not_run = tuple(
        f"{d.get('claim')}: {readable(str(d.get('function')))}"
        for d in asm.get("changed_not_run") or []
    )
    hidden = [h.sentence for h in hidden_dispatches(comparisons)]
    primary = accounts[0]
    found = _from(primary, claims, dispatched)
    if hidden and not found[3]:
        # the counts cannot see what the CPU ran differently: valgrind ran other code
        valgrind = found[4]
        if len(accounts) > 1:
            found = _from(accounts[1], claims, dispatched)
        hidden_words = "; ".join(hidden)
        found = (
            *found[:4],
            f"{found[4]}. The instruction counts ({valgrind[0].lower()}{valgrind[1:]}) "
            f"cannot see what changed: {hidden_words}; valgrind hides AVX-512 from the "
            "code it runs",
        )
    if primary.counts_work and found[0] == primary.source and not found[3]:
        found = (*found[:4], _same_counts_words(primary, time, asm) or found[4])
    source, unit, difference, causes, what = found
    accounted = sum(c.share for c in causes) if causes else None
    text = _width_lead(comparisons) + _text(
        what, causes, accounted, unit, time, source, unchanged, not_run
    )
    return Summary(
        benchmark,
        baseline,
        variant,
        text,
        causes,
        source,
        difference,
        unit,
        accounted,
        unchanged,
        not_run,
        tuple(hidden) if counted is not None else (),
    )


def _accountings(comparisons: Sequence[Comparison]) -> list[Accounting]:
    """The pair's accounts of its difference, the registry's order: the first is the one the
    summary gives, the next its fallback."""
    found = []
    for descriptor in DESCRIPTORS:
        comparison = _first(comparisons, descriptor.metric)
        account = descriptor.accounting(comparison) if comparison is not None else None
        if account is not None:
            found.append(account)
    return found


def _first_counted(comparisons: Sequence[Comparison]) -> Comparison | None:
    """The comparison of the lens that counts what ran under a tool running other code than
    the CPU does (valgrind: its descriptor's `cpu_ran` hook), or None."""
    counted = [d.metric for d in DESCRIPTORS if d.cpu_ran is not None]
    return next((c for m in counted if (c := _first(comparisons, m))), None)


_Found = tuple[str, str, float | None, tuple[Cause, ...], str]


def _from(
    account: Accounting,
    claims: Mapping[str, list[str]],
    dispatched: Mapping[str, tuple[str, str]],
) -> _Found:
    """The causes in `account`: its functions moving with the difference, each with every
    lens's claims about it, a pair one ran in place of the other joined."""
    difference = account.difference
    if account.settled:
        return account.source, account.unit, difference, (), account.what
    rows = [
        _Row(
            part.delta,
            readable(part.name),
            part.obj,
            (part.evidence, *claims.get(_identity(part.name), [])),
            part.presence,
            part.before,
            part.after,
        )
        for part in account.parts
    ]
    rows = _with_replacements(rows, dispatched, account.tool, account.amount)
    causes = _greedy([r for r in rows if r.delta * difference > 0], difference, account.unit)
    return account.source, account.unit, difference, causes, account.what


def _all_rows(comparison: Comparison) -> list[tuple[str, float, float, str]]:
    """(name, baseline, variant, presence) of every function row, not only the JSON's largest
    changes: the instructions details' own rows where it has them."""
    rows = getattr(comparison.details, "functions", None)
    if isinstance(rows, tuple) and all(hasattr(r, "baseline_self") for r in rows):
        return [(r.name, r.baseline_self, r.variant_self, str(r.presence)) for r in rows]
    return [
        (
            str(r.get("name")),
            float(r.get("baseline") or 0.0),
            float(r.get("variant") or 0.0),
            str(r.get("presence")),
        )
        for r in _details(comparison).get("functions") or []
    ]


@dataclass(frozen=True)
class HiddenDispatch:
    """A dispatch change the CPU made (profile, asm) where callgrind ran the same code in both
    variants: valgrind hides AVX-512 from the code it runs, so libraries that pick a kernel by
    the CPU's features take the same path under it whatever the setting."""

    cpu_baseline: str  # what the CPU ran in the baseline
    cpu_variant: str  # ... and in the variant
    lenses: tuple[str, ...]  # the lenses that saw the change
    width: str  # "512 → 256-bit vectors", or ""
    valgrind_ran: str  # the function callgrind ran in both variants, "" when neither
    valgrind_per_iteration: float = 0.0

    @property
    def sentence(self) -> str:
        valgrind = (
            f"valgrind ran {self.valgrind_ran} in both ({self.valgrind_per_iteration:,.0f} "
            "instructions per iteration each)"
            if self.valgrind_ran
            else "valgrind ran neither differently"
        )
        shape = f", {self.width}" if self.width else ""
        return (
            f"the CPU ran {self.cpu_baseline} → {self.cpu_variant} "
            f"({', '.join(self.lenses)}{shape}), {valgrind}"
        )


def hidden_dispatches(comparisons: Sequence[Comparison]) -> list[HiddenDispatch]:
    """The dispatch changes of one pair's profile and asm comparisons that callgrind did not
    see: neither function's count changed, and one of them ran in both variants under it."""
    instructions = _first_counted(comparisons)
    if instructions is None:
        return []
    rows = _all_rows(instructions)
    changed = {_identity(name) for name, before, after, _ in rows if abs(after - before) >= RESIDUE}
    ran_both = {
        _identity(name): (name, after)
        for name, _, after, presence in rows
        if presence == "both" and _identity(name) not in changed
    }
    pairs: dict[tuple[str, str], list[str]] = {}
    widths = _widths(comparisons)
    for metric in _cpu_claiming():
        for diagnosis in _details(_first(comparisons, metric)).get("diagnoses") or []:
            if diagnosis.get("claim") != Claim.DISPATCH_CHANGED:
                continue
            detail = diagnosis.get("detail") or {}
            old, new = str(detail.get("from") or ""), str(detail.get("to") or "")
            if not old or not new or _identity(old) in changed or _identity(new) in changed:
                continue
            pairs.setdefault((old, new), []).append(str(metric))
    out = []
    for (old, new), lenses in pairs.items():
        under, count = next(
            (ran_both[_identity(name)] for name in (new, old) if _identity(name) in ran_both),
            ("", 0.0),
        )
        width = widths.get(_identity(old))
        out.append(
            HiddenDispatch(
                readable(old),
                readable(new),
                tuple(lenses),
                f"{width[0]} → {width[1]}-bit vectors" if width else "",
                under,
                count,
            )
        )
    return out


@dataclass(frozen=True)
class _WidthChange:
    """A function's widest vector register changed (a lens's vector_width_changed claim)."""

    function: str  # clones folded
    bits: tuple[Any, Any]  # (baseline, variant); None: no vector register
    lens: str
    samples: float


def _width_changes(comparisons: Sequence[Comparison]) -> list[_WidthChange]:
    """The asm's (and profile's) vector_width_changed claims, one per function, most sampled
    first."""
    found: dict[str, _WidthChange] = {}
    for metric in _cpu_claiming(code_first=True):
        for diagnosis in _details(_first(comparisons, metric)).get("diagnoses") or []:
            if diagnosis.get("claim") != Claim.VECTOR_WIDTH_CHANGED:
                continue
            detail = diagnosis.get("detail") or {}
            function = _identity(str(diagnosis.get("function")))
            samples = float(diagnosis.get("samples") or 0.0)
            bits = (detail.get("from"), detail.get("to"))
            found.setdefault(function, _WidthChange(function, bits, str(metric), samples))
    return sorted(found.values(), key=lambda w: -w.samples)


def _widths(comparisons: Sequence[Comparison]) -> dict[str, tuple[Any, Any]]:
    """Function (clones folded) -> (baseline, variant) widest vector register in bits."""
    return {w.function: w.bits for w in _width_changes(comparisons)}


def _width_lead(comparisons: Sequence[Comparison]) -> str:
    """The vector width changes, as the summary's first words: the plainest cause of a dispatch
    or -march change, which the counts (valgrind hides AVX-512) and a short profile may miss."""
    changes = _width_changes(comparisons)
    if not changes:
        return ""
    dispatched: dict[str, str] = {}
    for metric in _cpu_claiming(code_first=True):
        for diagnosis in _details(_first(comparisons, metric)).get("diagnoses") or []:
            detail = diagnosis.get("detail") or {}
            if diagnosis.get("claim") == Claim.DISPATCH_CHANGED and detail.get("from"):
                function = _identity(str(diagnosis.get("function")))
                shown = f"{readable(str(detail['from']))} → {readable(str(detail.get('to')))}"
                dispatched.setdefault(function, shown)
    words = []
    for change in changes[:SHOWN_WIDTHS]:
        name = dispatched.get(change.function, change.function)
        old, new = (f"{bits}-bit" if bits else "no" for bits in change.bits)
        words.append(f"{name}: {old} → {new} vectors ({change.lens})")
    more = len(changes) - SHOWN_WIDTHS
    return "; ".join(words) + (f"; and {more} more" if more > 0 else "") + ". "


def with_cpu_ran(comparisons: Sequence[Comparison]) -> list[Comparison]:
    """The comparisons with each instructions row whose function valgrind ran in both variants
    while the CPU ran another dispatch target (`hidden_dispatches`) saying what the CPU ran
    (`FunctionDelta.cpu_ran`), so the row says it where it is shown, not only the summary."""
    groups: dict[tuple[str, str, str], list[Comparison]] = {}
    for comparison in comparisons:
        key = (comparison.benchmark, comparison.baseline, comparison.variant)
        groups.setdefault(key, []).append(comparison)
    annotated: dict[int, Comparison] = {}
    for mine in groups.values():
        ran = {h.valgrind_ran: (h.cpu_baseline, h.cpu_variant) for h in hidden_dispatches(mine)}
        ran.pop("", None)
        if not ran:
            continue
        for comparison in mine:
            if comparison.event is not None:
                continue
            details = descriptor_for(comparison.metric).with_cpu_ran(comparison.details, ran)
            if details is not None:
                annotated[id(comparison)] = replace(comparison, details=details)
    return [annotated.get(id(c), c) for c in comparisons]


LINE_BYTES = 64  # a cache line, and what -falign-loops=64 aligns to
WINDOW_BYTES = 32  # the decoders' and the uop cache's fetch window on x86
CONFIRM_PLACEMENT = (
    "to confirm, rebuild both with -falign-loops=64 -falign-functions=64 (gcc, clang) or "
    "-C llvm-args=-align-loops=64 (Rust): if the gap closes, code placement was the cause"
)


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
        counts = [(_blocks(a, b, LINE_BYTES), _blocks(a, b, WINDOW_BYTES)) for a, b in spans]
        if counts[0] == counts[1]:
            continue
        where = [f"{a:#x}–{b - 1:#x}" for a, b in spans]
        found.append(
            f"the hot loop of {readable(str(row.get('name')))} crosses "
            f"{counts[0][0]} 64-byte line(s) and {counts[0][1]} 32-byte window(s) in the "
            f"baseline ({where[0]}) and {counts[1][0]} and {counts[1][1]} in the variant "
            f"({where[1]})"
        )
    return found, compared


def _same_counts_words(
    counted: Accounting, time: Comparison | None, asm: Mapping[str, Any]
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
    placed, compared = _placement(asm)
    if placed:
        return f"{counts}; the code lies differently: {'; '.join(placed)}; {CONFIRM_PLACEMENT}"
    rule_out = CONFIRM_PLACEMENT.replace("to confirm", "to rule out code placement")
    if not compared:
        return (
            f"{counts}; where the code lies was not read (the asm lens reads the hot loops' "
            "addresses); what is left: code placement, data layout and memory, frequency, "
            f"noise; {rule_out}"
        )
    return (
        f"{counts} nor in the placement of the {compared} hot loop(s) it compared (the same "
        "64-byte lines and 32-byte windows in both); what is left: placement it cannot see "
        "(function alignment, branch targets, pages), data layout and memory, frequency, "
        f"noise; {rule_out}"
    )


@dataclass(frozen=True)
class _Row:
    """One function's change per iteration, as a summary weighs it."""

    delta: float
    name: str  # as people read it
    obj: str
    evidence: tuple[str, ...]
    presence: str  # BASELINE_ONLY, VARIANT_ONLY, or "both" (a replacement pair: "both")
    before: float
    after: float
    replaced_by: str = ""  # the variant's function that ran in place of `name`


def _dispatched(comparisons: Sequence[Comparison]) -> dict[str, tuple[str, str]]:
    """gone -> (new, the claim) of every call site or dispatch a lens saw call one in place of
    the other (instructions: the call graph; profile: one caller's stacks; asm: one family)."""
    out: dict[str, tuple[str, str]] = {}
    for metric, diagnosis in _diagnoses(comparisons):
        detail = diagnosis.get("detail") or {}
        if diagnosis.get("claim") in REPLACING and detail.get("from") and detail.get("to"):
            first = (diagnosis.get("evidence") or [""])[0]
            claim = f"{metric}: {diagnosis['claim']} ({first})"
            out.setdefault(_identity(str(detail["from"])), (_identity(str(detail["to"])), claim))
    return out


def _diagnoses(comparisons: Sequence[Comparison]) -> Iterator[tuple[Metric, dict[str, Any]]]:
    """Every claim of the lenses that make claims about functions, with its lens."""
    for comparison in comparisons:
        if comparison.metric not in _claiming():
            continue
        if comparison.event is not None:
            continue
        for diagnosis in _details(comparison).get("diagnoses") or []:
            yield comparison.metric, diagnosis


def _claiming() -> tuple[Metric, ...]:
    """The lenses whose diagnoses are claims about functions."""
    return tuple(d.metric for d in DESCRIPTORS if d.claims_about_functions)


def _cpu_claiming(*, code_first: bool = False) -> tuple[Metric, ...]:
    """The lenses that claim what the CPU ran (not through a tool that runs other code, as
    valgrind does), in the registry's order, or those reading the machine code first."""
    found = [d for d in DESCRIPTORS if d.claims_about_functions and d.cpu_ran is None]
    if code_first:
        found.sort(key=lambda d: not d.reads_machine_code)
    return tuple(d.metric for d in found)


def _with_replacements(
    rows: list[_Row],
    dispatched: Mapping[str, tuple[str, str]],
    tool: str,
    amount: str,
) -> list[_Row]:
    """`rows` with each pair a lens saw called one in place of the other (`dispatched`: gone ->
    new) joined into one row of their net change. Never by size alone: Python 3.12 lost
    PyFunction_NewWithQualName and gained _Py_IsImmortal, both hot, neither in place of the
    other."""
    gone = [r for r in rows if r.presence == BASELINE_ONLY]
    new = [r for r in rows if r.presence == VARIANT_ONLY]
    pairs: list[tuple[_Row, _Row, str]] = []
    for old in gone:
        target, claim = dispatched.get(_identity(old.name), ("", ""))
        match = next((r for r in new if _identity(r.name) == target), None)
        if match is not None:
            pairs.append((old, match, claim))
            new.remove(match)
    if not pairs:
        return rows
    joined = {id(r) for pair in pairs for r in pair[:2]}
    out = [r for r in rows if id(r) not in joined]
    for old, replacement, claim in pairs:
        evidence = (
            f"{tool}: {old.name} {old.before:,.1f} {amount} per iteration in the baseline only, "
            f"{replacement.name} {replacement.after:,.1f} in the variant only",
            claim,
            *old.evidence[1:],
            *replacement.evidence[1:],
        )
        obj = old.obj if old.obj == replacement.obj else f"{old.obj} → {replacement.obj}"
        out.append(
            _Row(
                replacement.after - old.before,
                old.name,
                obj,
                evidence,
                "both",
                old.before,
                replacement.after,
                replaced_by=replacement.name,
            )
        )
    return out


def _greedy(rows: Sequence[_Row], difference: float, unit: str) -> tuple[Cause, ...]:
    """The largest rows moving with the difference, until they account for ACCOUNTED_TARGET
    of it or MAX_CAUSES are named."""
    if not difference:
        return ()
    causes: list[Cause] = []
    total = 0.0
    for row in sorted(rows, key=lambda r: -abs(r.delta)):
        if total >= ACCOUNTED_TARGET or len(causes) >= MAX_CAUSES:
            break
        share = row.delta / difference
        causes.append(
            Cause(
                row.name,
                row.obj,
                row.delta,
                share,
                unit,
                row.evidence,
                row.replaced_by,
                row.before if row.replaced_by else 0.0,
                row.after if row.replaced_by else 0.0,
            )
        )
        total += share
    return tuple(causes)


def _claims_by_function(comparisons: Sequence[Comparison]) -> dict[str, list[str]]:
    """Every lens's claims (diagnoses), by the function they are about (clones folded), each as
    'lens: claim, its first evidence'."""
    found: dict[str, list[str]] = {}
    for metric, diagnosis in _diagnoses(comparisons):
        function = _identity(str(diagnosis.get("function") or ""))
        first = (diagnosis.get("evidence") or [""])[0]
        text = f"{metric}: {diagnosis.get('claim')} {function}"
        found.setdefault(function, []).append(f"{text} ({first})" if first else text)
    return found


def _unchanged(instructions: Mapping[str, Any], asm: Mapping[str, Any]) -> tuple[str, ...]:
    out = []
    identical = instructions.get("identical_objects") or []
    if identical:
        shown = ", ".join(identical[:4]) + (" ..." if len(identical) > 4 else "")
        out.append(f"{len(identical)} objects byte-identical in both variants ({shown})")
    same = asm.get("byte_identical_functions") or []
    rows = asm.get("functions") or []
    if same:
        out.append(f"{len(same)} of {len(rows)} hot functions the same machine code in both (asm)")
    return tuple(out)


def _signed(value: float, unit: str) -> str:
    return f"{value:+,.0f}" + (" ns" if unit == "ns" else "")


def _time_words(time: Comparison | None, difference: float | None) -> str:
    if time is None or difference is None:
        return ""
    ratio = f"time {time.ratio:.3f}"
    if time.verdict is Verdict.EQUIVALENT:
        return f" ({ratio}, equivalent: the time lens sees no difference)"
    if time.verdict not in (Verdict.FASTER, Verdict.SLOWER):
        return f" ({ratio}, {time.verdict})"
    agrees = (time.verdict is Verdict.FASTER) == (difference < 0)
    return f" ({ratio} agrees)" if agrees else f" ({ratio} does not agree)"


def _text(
    what: str,
    causes: Sequence[Cause],
    accounted: float | None,
    unit: str,
    time: Comparison | None,
    source: str,
    unchanged: Sequence[str],
    not_run: Sequence[str],
) -> str:
    difference = causes[0].delta_per_iteration / causes[0].share if causes else None
    words = what + _time_words(time, difference)
    if causes:
        named = ", ".join(c.words for c in causes[:SHOWN_IN_TEXT])
        more = f" and {len(causes) - SHOWN_IN_TEXT} more" if len(causes) > SHOWN_IN_TEXT else ""
        share = accounted or 0.0
        if share > OVERSHOOT:
            # functions moving the other way cancel part of these: say so, not "1780%"
            tail = (
                f"these add up to {share:.1f} times the difference; functions that moved the "
                "other way make up the rest"
            )
        else:
            tail = f"these account for {share:.0%} of the difference"
        words += f": {named}{more} ({source}, per iteration); {tail}"
    words += "."
    if unchanged:
        words += " Unchanged: " + "; ".join(unchanged) + "."
    if not_run:
        words += (
            f" {len(not_run)} changes in code no sample landed on are not causes "
            f"({', '.join(not_run[:3])}{' ...' if len(not_run) > 3 else ''})."
        )
    return words


def summary_section(found: Sequence[Summary]) -> Section | None:
    """The paragraph of every pair first, then per pair its causes and their evidence."""
    if not found:
        return None
    rows = []
    subsections = []
    for summary in found:
        title = f"{summary.benchmark}: {summary.variant} vs {summary.baseline}"
        rows.append((Cell(title), Cell(summary.text)))
        if not summary.causes:
            continue
        blocks: list[Block] = [
            Table(
                ("function", "object", "Δ per iteration", "share", "evidence"),
                tuple(
                    (
                        Cell(cause.named),
                        Cell(cause.object),
                        Cell(_signed(cause.delta_per_iteration, cause.unit)),
                        Cell(f"{cause.share:.0%}"),
                        Cell(cause.evidence[0] if cause.evidence else ""),
                    )
                    for cause in summary.causes
                ),
                numeric=(False, False, True, True, False),
                caption=f"what accounts for the difference ({summary.source})",
            )
        ]
        for cause in summary.causes:
            blocks += [
                Paragraph(f"{cause.named}: {line}", Style.MUTED) for line in cause.evidence[1:3]
            ]
        subsections.append(Section(title, tuple(blocks)))
    # the paragraphs as the section's first block, a table: every format shows it up front
    overview = Table(("comparison", "what changed and why"), tuple(rows))
    return Section("summary", (overview,), tuple(subsections), key="summary")
