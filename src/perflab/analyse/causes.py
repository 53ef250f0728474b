"""The functions that account for a pair's difference, the largest named first. A lens's
`Accounting` is weighed, each part with every lens's claims about it, and a pair that ran one in
place of the other is joined into one cause of their net change. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from perflab.analyse.pair_claims import call_identity, function_identity
from perflab.records.accounting import Accounting, Presence
from perflab.records.explanation import Cause
from perflab.tool_output.symbol_names import readable

ACCOUNTED_TARGET = 0.8  # stop naming causes once they account for this share of the difference
MAX_CAUSES = 8  # ... or once this many are named: a longer list is read as a profile, not causes
SHOWN_OBJECTS = 3  # objects the added work around a replacement is grouped into, largest first


@dataclass(frozen=True)
class Found:
    """What one lens's account says of a pair: the lens (`source`), its unit and difference
    per iteration, the causes it found and its own words for the difference (`what`)."""

    source: str
    unit: str
    difference: float | None
    causes: tuple[Cause, ...]
    what: str
    # pairs one ran in place of the other whose net change moved against the difference: what
    # was replaced, the causes being what was added around it
    replaced: tuple[Cause, ...] = ()
    # the work moving with the difference beside a replaced pair, by object, largest first
    added_by_object: tuple[tuple[str, float], ...] = ()

    @property
    def accounted(self) -> float | None:
        """The causes' share of the difference together; None without a cause."""
        return sum(c.share for c in self.causes) if self.causes else None


def from_account(
    account: Accounting,
    claims: Mapping[str, list[str]],
    dispatched: Mapping[str, tuple[str, str]],
) -> Found:
    """The causes in `account`: its functions moving with the difference, each with every
    lens's claims about it, a pair one ran in place of the other joined."""
    difference = account.difference
    if account.settled:
        return Found(account.source, account.unit, difference, (), account.what)
    rows = [
        _Row(
            delta=part.delta,
            name=readable(part.name),
            obj=part.obj,
            evidence=(part.evidence, *claims.get(function_identity(part.name), [])),
            presence=part.presence,
            before=part.before,
            after=part.after,
        )
        for part in account.parts
    ]
    rows = _with_replacements(rows, dispatched, account.tool, account.amount)
    moving = [r for r in rows if r.delta * difference > 0]
    causes = _greedy(moving, difference, account.unit)
    against = [r for r in rows if r.replaced_by and r.delta * difference <= 0]
    if not against:
        return Found(account.source, account.unit, difference, causes, account.what)
    replaced = tuple(_cause(r, difference, account.unit) for r in against)
    by_object = _by_object([r for r in moving if not r.replaced_by])
    return Found(
        account.source,
        account.unit,
        difference,
        causes,
        account.what,
        replaced=replaced,
        added_by_object=by_object,
    )


def _by_object(rows: Sequence[_Row]) -> tuple[tuple[str, float], ...]:
    """The rows' change summed per object (the variant's where it differs), largest first."""
    found: dict[str, float] = {}
    for row in rows:
        obj = row.obj.split(" → ")[-1]
        found[obj] = found.get(obj, 0.0) + row.delta
    ordered = sorted(found.items(), key=lambda item: -abs(item[1]))
    return tuple(ordered[:SHOWN_OBJECTS])


@dataclass(frozen=True, kw_only=True)
class _Row:
    """One function's change per iteration, as a summary weighs it."""

    delta: float
    name: str  # as people read it
    obj: str
    evidence: tuple[str, ...]
    presence: Presence  # a replacement pair's: BOTH
    before: float
    after: float
    replaced_by: str = ""  # the variant's function that ran in place of `name`


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
    gone = [r for r in rows if r.presence is Presence.BASELINE_ONLY]
    new = [r for r in rows if r.presence is Presence.VARIANT_ONLY]
    pairs: list[tuple[_Row, _Row, str]] = []
    for old in gone:
        target, claim = dispatched.get(call_identity(old.name), ("", ""))
        match = next((r for r in new if call_identity(r.name) == target), None)
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
                delta=replacement.after - old.before,
                name=old.name,
                obj=obj,
                evidence=evidence,
                presence=Presence.BOTH,
                before=old.before,
                after=replacement.after,
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
        cause = _cause(row, difference, unit)
        causes.append(cause)
        total += cause.share
    return tuple(causes)


def _cause(row: _Row, difference: float, unit: str) -> Cause:
    return Cause(
        function=row.name,
        object=row.obj,
        delta_per_iteration=row.delta,
        share=row.delta / difference,
        unit=unit,
        evidence=row.evidence,
        replaced_by=row.replaced_by,
        baseline_per_iteration=row.before if row.replaced_by else 0.0,
        variant_per_iteration=row.after if row.replaced_by else 0.0,
    )
