"""store -> analyse: the output checks' verdicts. A variant that computes something else than
its baseline makes their comparisons invalid; a value that moves within one variant is not
compared."""

from __future__ import annotations

import json
from typing import Any

from perflab.records.kinds import ArtifactScope
from perflab.records.model import Comparison, Note, Severity
from perflab.stats.comparison import invalidate
from perflab.stats.outputs import output_difference
from perflab.store import StoredRun


def judge_outputs(
    run: StoredRun, comparisons: list[Comparison]
) -> tuple[list[Comparison], list[Note]]:
    """The output checks' verdicts: a variant whose value differs from its baseline's makes
    every comparison of that benchmark between the two `invalid`; a value that changed within
    one variant (after setup / after measuring) is not compared, and said to be unstable."""
    experiment = run.experiment
    rtol = experiment.settings.check_rtol
    notes: list[Note] = []
    invalid: dict[tuple[str, str, str], dict[str, Any]] = {}
    for benchmark in experiment.benchmarks:
        stored = run.data_for(benchmark.name, ArtifactScope.OUTPUT_CHECK).artifacts
        values = {a.variant: json.loads(a.content) for a in stored}
        if not values:
            continue
        unstable = _unstable_notes(benchmark.name, values, rtol)
        notes += unstable.values()
        stable = {name: value for name, value in values.items() if name not in unstable}
        same: list[str] = []
        for baseline, variant in experiment.comparison_pairs:
            if baseline not in stable or variant not in stable:
                continue
            difference = _pair_difference(benchmark.name, baseline, variant, stable, rtol)
            if difference is None:
                same.append(variant)
                continue
            invalid[(benchmark.name, baseline, variant)], note = difference
            notes.append(note)
        if same:
            notes.append(
                Note(
                    severity=Severity.INFO,
                    message=f"output check `{values[same[0]]['expression']}`: "
                    f"{', '.join(same)} computed the same value as the baseline",
                    benchmark=benchmark.name,
                )
            )
    marked = [
        invalidate(c, invalid[key])
        if (key := (c.benchmark, c.baseline, c.variant)) in invalid
        else c
        for c in comparisons
    ]
    return marked, notes


def _unstable_notes(benchmark: str, values: dict[str, Any], rtol: float) -> dict[str, Note]:
    """Variant -> the note on its value, for the variants whose value moved within the
    variant."""
    notes: dict[str, Note] = {}
    for name, value in values.items():
        unstable = _unstable_output(value, rtol)
        if unstable is None:
            continue
        notes[name] = Note(
            severity=Severity.WARNING,
            message=f"the output check `{value['expression']}` is not deterministic: "
            f"{unstable}; it was not compared with the other variants",
            hint="seed the randomness in the setup (random.seed, torch.manual_seed, "
            "numpy.random.seed; PYTHONHASHSEED for the order of sets), check a value "
            "the statement does not change, or allow a tolerance (--check-rtol)",
            benchmark=benchmark,
            variant=name,
        )
    return notes


def _pair_difference(
    benchmark: str, baseline: str, variant: str, values: dict[str, Any], rtol: float
) -> tuple[dict[str, Any], Note] | None:
    """None when the variant computed the baseline's value; else the difference (as the
    comparisons carry it) and the note that says so."""
    expression = values[variant]["expression"]
    difference = output_difference(
        values[baseline]["after_setup"], values[variant]["after_setup"], rtol
    )
    if difference is None:
        return None
    note = Note(
        severity=Severity.WARNING,
        message=f"{variant} computes something else than {baseline}: "
        f"`{expression}` differs at {difference.describe()}; its comparisons "
        "are marked invalid (the variants did not do the same work)",
        hint="fix the variant, or compare what it computes (on-disk caches such "
        "as TORCHINDUCTOR_CACHE_DIR shared between variants can run stale code); "
        "--check-rtol allows a relative tolerance for floats and arrays",
        benchmark=benchmark,
        variant=variant,
    )
    return {"expression": expression, **difference.to_json()}, note


def _unstable_output(value: dict[str, Any], rtol: float) -> str | None:
    """How one variant's check value moved within the variant, in words, or None when it did
    not: after measuring vs after setup (one process), and in a second process (statements;
    runs before that was checked have no `another_process`)."""
    moved = output_difference(value["after_setup"], value["after_measuring"], rtol)
    if moved is not None:
        return f"its value after measuring differs from its value after setup ({moved.describe()})"
    if "another_process" in value:
        moved = output_difference(value["after_setup"], value["another_process"], rtol)
        if moved is not None:
            return (
                f"two processes of the same variant computed different values ({moved.describe()})"
            )
    return None
