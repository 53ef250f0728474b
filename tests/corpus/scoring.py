"""Scoring the explanation lenses against a case's ground truth (pure: no tools run here).

A lens's claims are read from a comparison's `diagnoses` (the shared `Diagnosis` schema). A
comparison without that field comes from a lens that does not emit it yet: its older fields are
read as the claims they make in words (`inlining_changes`, the asm rows' `change` sentences, the
profile's `appeared`/`disappeared`), so that the table counts what a user is told today.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

LENSES = ("instructions", "asm", "profile")

# gcc/clang clone and fragment suffixes, and multi-versioned clones (target_clones, ifunc-style)
_SUFFIX = re.compile(
    r"(\s*\(\.[\w.]+\))$"  # llvm-symbolizer's "name (.isra.0)"
    r"|(\.(cold|part|isra|constprop|lto_priv|localalias|llvm)(\.\d+)*)+$"
    r"|\.(resolver|default|avx\w*|sse\w*|fma\w*|arch_\w+)(\.\d+)?$"
)


def fold(name: str) -> str:
    """A readable identity for matching: no @plt/@GLIBC version, clone suffixes folded, no
    argument list or trailing const."""
    name = name.strip().split("@", 1)[0]
    previous = None
    while previous != name:
        previous = name
        name = _SUFFIX.sub("", name).strip()
        name = re.sub(r"\s+const$", "", name)
        if name.endswith(")"):  # drop the (balanced) argument list at the end
            depth = 0
            for i in range(len(name) - 1, -1, -1):
                depth += {")": 1, "(": -1}.get(name[i], 0)
                if depth == 0:
                    if i > 0 and not name[:i].endswith("operator"):
                        name = name[:i].strip()
                    break
    return _without_return_type(name)


def _without_return_type(name: str) -> str:
    """c++filt names template functions with their return type ("void at::f<int>"); perf
    report does not: keep what follows the last space outside <> and ()."""
    depth = 0
    cut = -1
    for i, char in enumerate(name):
        depth += {"<": 1, "(": 1, ">": -1, ")": -1}.get(char, 0)
        if char == " " and depth == 0 and "operator" not in name[max(0, i - 9) : i]:
            cut = i
    return name[cut + 1 :] if cut >= 0 else name


@dataclass(frozen=True)
class Expect:
    """Claims one lens should make: `claims` any of these kinds about a function whose folded
    identity fully matches the regex `function`."""

    lens: str
    claims: tuple[str, ...]
    function: str

    def matches(self, found: Found) -> bool:
        return (
            found.lens == self.lens
            and found.claim in self.claims
            and re.fullmatch(self.function, fold(found.function)) is not None
        )

    def describe(self) -> str:
        return f"{self.lens}: {'|'.join(self.claims)} {self.function}"


@dataclass(frozen=True)
class Found:
    lens: str
    claim: str
    function: str
    source: str  # "diagnoses" or the legacy field it was read from
    text: str = ""

    def describe(self) -> str:
        return f"{self.lens}: {self.claim} {self.function}"


def claims_of(comparison: Mapping[str, Any]) -> list[Found]:
    lens = str(comparison.get("metric"))
    if lens not in LENSES:
        return []
    if "diagnoses" in comparison:
        return [
            Found(lens, str(d["claim"]), str(d["function"]), "diagnoses", "; ".join(d["evidence"]))
            for d in comparison["diagnoses"] or []
        ]
    if lens == "instructions":
        return [
            Found(
                lens,
                str(c["change"]),
                str(c["function"]),
                "inlining_changes",
                c.get("sentence", ""),
            )
            for c in comparison.get("inlining_changes") or []
        ]
    if lens == "profile":
        return [
            Found(lens, kind, str(name), kind)
            for kind in ("appeared", "disappeared")
            for name in comparison.get(kind) or []
        ]
    found: list[Found] = []
    for row in comparison.get("functions") or []:
        found += _asm_row_claims(str(row.get("name")), str(row.get("change") or ""))
    return found


def _asm_row_claims(name: str, sentence: str) -> list[Found]:
    def claim(kind: str, function: str = name) -> Found:
        return Found("asm", kind, function, "functions[].change", sentence)

    if sentence.startswith("identical") or not sentence:
        return []
    if sentence.startswith("only in the variant"):
        return [claim("appeared")]
    if sentence.startswith("only in the baseline"):
        return [claim("disappeared")]
    out: list[Found] = []
    coded = False
    for part in sentence.split("; "):
        inlined = re.match(r"no longer calls (.*) \(inlined\?\)$", part)
        outlined = re.match(r"now calls (.*) \(outlined\?\)$", part)
        if inlined or outlined:
            kind, match = ("inlined", inlined) if inlined else ("outlined", outlined)
            assert match is not None
            out += [claim(kind, callee.strip()) for callee in match.group(1).split(", ")]
        elif re.match(r"(uses \d+-bit registers|no vector registers)", part):
            out.append(claim("vector_width_changed"))
        else:
            coded = True
    if coded:
        out.append(claim("code_changed"))
    return out


@dataclass
class Score:
    """One comparison (an A/B or an A/A) scored for one lens."""

    case: str
    kind: str  # "A/B" or "A/A"
    lens: str
    expected: list[str] = field(default_factory=list)
    found: list[str] = field(default_factory=list)  # expected claims that were made
    missed: list[str] = field(default_factory=list)
    false: list[str] = field(default_factory=list)  # claims the ground truth does not expect
    tolerated: list[str] = field(default_factory=list)  # true incidental claims
    ran: bool = True  # the lens produced a comparison

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def score(
    case: str,
    kind: str,
    lens: str,
    comparison: Mapping[str, Any] | None,
    expected: Sequence[Expect],
    tolerated: Sequence[Expect],
) -> Score:
    """Every expected claim made counts as found; every claim neither expected nor tolerated is
    false. An A/A expects nothing and tolerates nothing."""
    mine = [e for e in expected if e.lens == lens]
    result = Score(case, kind, lens, expected=[e.describe() for e in mine])
    if comparison is None:
        result.ran = False
        result.missed = list(result.expected)
        return result
    claims = claims_of(comparison)
    for want in mine:
        (result.found if any(want.matches(c) for c in claims) else result.missed).append(
            want.describe()
        )
    for c in claims:
        if any(e.matches(c) for e in mine):
            continue
        if any(t.matches(c) for t in tolerated if t.lens == lens):
            result.tolerated.append(c.describe())
        else:
            result.false.append(c.describe())
    return result


def totals(scores: Iterable[Score]) -> dict[str, dict[str, int]]:
    out = {lens: {"expected": 0, "found": 0, "false": 0, "comparisons": 0} for lens in LENSES}
    for s in scores:
        row = out[s.lens]
        row["expected"] += len(s.expected)
        row["found"] += len(s.found)
        row["false"] += len(s.false)
        row["comparisons"] += 1
    return out


def claim_names(diagnosis: Mapping[str, Any]) -> set[str]:
    """The functions a claim says ran differently, folded: a call's claims (`callee_changed`,
    `dispatch_changed`) are about the callees they name, the others about their function."""
    detail = diagnosis.get("detail") or {}
    if diagnosis.get("claim") in ("callee_changed", "dispatch_changed") and (
        detail.get("from") or detail.get("to")
    ):
        return {fold(str(detail[k])) for k in ("from", "to") if detail.get(k)}
    return {fold(str(diagnosis.get("function") or ""))}


def ran_names(symbols: Iterable[str]) -> set[str]:
    """What perf report's sampled symbols name: each folded, and its dispatch family (a claim
    about `strlen` is about `__strlen_evex`, one about ATen's `CPU_CAPABILITY::` kernel about
    its `AVX2::` member), by the asm lens's own rule."""
    from perflab.lenses.asm.identity import family

    out: set[str] = set()
    for name in symbols:
        out |= {fold(name), fold(family(name))}
    return out


def not_run_claims(comparisons: Iterable[Mapping[str, Any]], ran: set[str]) -> list[str]:
    """Claims of the explanation lenses about functions none of which perf report sampled in
    either variant (`ran`: `ran_names` of every symbol it sampled): claims about code that did
    not run in the measured work."""
    out = []
    for comparison in comparisons:
        lens = str(comparison.get("metric"))
        if lens not in LENSES or comparison.get("event") is not None:
            continue
        for diagnosis in comparison.get("diagnoses") or []:
            names = claim_names(diagnosis)
            if not (names | {fold(_family(n)) for n in names}) & ran:
                out.append(f"{lens}: {diagnosis.get('claim')} {diagnosis.get('function')}")
    return out


def _family(name: str) -> str:
    from perflab.lenses.asm.identity import family

    return family(name)
