"""The lenses' claims about one pair's functions, read through the lens descriptors: which
lenses make claims, which see what the CPU ran, and the pairs one lens saw run one function in
place of another. Pure: comparisons in, names and claims out."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from perflab.lenses.registry import DESCRIPTORS
from perflab.records.diagnosis import Diagnosis
from perflab.records.kinds import Metric
from perflab.records.model import Comparison
from perflab.tool_output.symbol_names import fold_clones, readable


def function_identity(name: str) -> str:
    """A function as the summary joins and shows it: clones folded, Rust's build-dependent
    spellings (hash, crate disambiguator) left out and its escapes read, as every lens's rows
    have been paired by `perflab.tool_output.symbol_names.pair_names` before they get here."""
    return readable(fold_clones(name))


_OPEN, _CLOSE = "<({[", ">)}]"


def call_identity(name: str) -> str:
    """`function_identity` without a C++ return type, parameter list or trailing ` const`: one
    lens's tool names `f<T>` what another's names `void f<T>(long, char**)`, and a claim made
    from one lens's rows is joined to another's."""
    text = function_identity(name).strip()
    if text.endswith(" const"):
        text = text[: -len(" const")]
    if text.endswith(")"):
        depth = 0
        for index in range(len(text) - 1, -1, -1):
            depth += (text[index] in _CLOSE) - (text[index] in _OPEN)
            if depth == 0:
                text = text[:index] if index else text
                break
    depth, start = 0, 0
    for index, char in enumerate(text):
        depth += (char in _OPEN) - (char in _CLOSE)
        if char == " " and depth == 0:
            start = index + 1  # what precedes the last word at the top level is a return type
    return text[start:] or text


def details_of(comparison: Comparison | None) -> dict[str, Any]:
    if comparison is None or comparison.details is None:
        return {}
    data: dict[str, Any] = comparison.details.to_json()
    return data


def diagnoses_of(comparison: Comparison | None) -> tuple[Diagnosis, ...]:
    """A lens's claims about functions, read back from its details' `diagnoses` field into
    typed records, so the analysis reads fields rather than JSON keys."""
    return tuple(Diagnosis.from_json(d) for d in details_of(comparison).get("diagnoses") or ())


def first_of(comparisons: Sequence[Comparison], metric: Metric) -> Comparison | None:
    return next((c for c in comparisons if c.metric is metric and c.event is None), None)


def first_wall_time(comparisons: Sequence[Comparison]) -> Comparison | None:
    """The comparison of the lens measuring the whole statement's wall time (its descriptor's
    `Figures.wall_time`), or None."""
    timed = [d.metric for d in DESCRIPTORS if d.figures.wall_time]
    return next((c for m in timed if (c := first_of(comparisons, m))), None)


def first_counted(comparisons: Sequence[Comparison]) -> Comparison | None:
    """The comparison of the lens that counts what ran under a tool running other code than
    the CPU does (its descriptor's `blind_spot`), or None."""
    counted = [d.metric for d in DESCRIPTORS if d.explanation.blind_spot is not None]
    return next((c for m in counted if (c := first_of(comparisons, m))), None)


def dispatched_pairs(comparisons: Sequence[Comparison]) -> dict[str, tuple[str, str]]:
    """gone -> (new, the claim), by `call_identity`, of every call site or dispatch a lens saw
    call one in place of the other (instructions: the call graph; profile: one caller's stacks;
    asm: one family)."""
    out: dict[str, tuple[str, str]] = {}
    for metric, diagnosis in _diagnoses(comparisons):
        replaced = diagnosis.replacement
        if replaced is not None:
            claim = f"{metric}: {diagnosis.claim} ({_first_evidence(diagnosis)})"
            out.setdefault(call_identity(replaced.old), (call_identity(replaced.new), claim))
    return out


def _first_evidence(diagnosis: Diagnosis) -> str:
    return diagnosis.evidence[0] if diagnosis.evidence else ""


def _diagnoses(comparisons: Sequence[Comparison]) -> Iterator[tuple[Metric, Diagnosis]]:
    """Every claim of the lenses that make claims about functions, with its lens."""
    for comparison in comparisons:
        if comparison.metric not in _claiming():
            continue
        if comparison.event is not None:
            continue
        for diagnosis in diagnoses_of(comparison):
            yield comparison.metric, diagnosis


def _claiming() -> tuple[Metric, ...]:
    """The lenses whose diagnoses are claims about functions."""
    return tuple(d.metric for d in DESCRIPTORS if d.explanation.claims_about_functions)


def cpu_claiming(*, code_first: bool = False) -> tuple[Metric, ...]:
    """The lenses that claim what the CPU ran (not through a tool that runs other code: no
    `blind_spot`), in the registry's order, or those reading the machine code first."""
    found = [
        d
        for d in DESCRIPTORS
        if d.explanation.claims_about_functions and d.explanation.blind_spot is None
    ]
    if code_first:
        found.sort(key=lambda d: not d.explanation.reads_machine_code)
    return tuple(d.metric for d in found)


def claims_by_function(comparisons: Sequence[Comparison]) -> dict[str, list[str]]:
    """Every lens's claims (diagnoses), by the function they are about (clones folded), each as
    'lens: claim, its first evidence'."""
    found: dict[str, list[str]] = {}
    for metric, diagnosis in _diagnoses(comparisons):
        function = function_identity(diagnosis.function)
        first = _first_evidence(diagnosis)
        text = f"{metric}: {diagnosis.claim} {function}"
        found.setdefault(function, []).append(f"{text} ({first})" if first else text)
    return found
