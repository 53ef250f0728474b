"""Exports hyperfine's users read with their own scripts: hyperfine's JSON (its `results` list)
and its CSV columns, from each variant's own figures (`RunResult.measurements`, the time
lens's). Seconds, as hyperfine writes them. hyperfine's fields (`times`, `mean`, `stddev`,
`median`, `min`, `max`, `user`, `system`) are the runs as measured; perflab's estimate and its
interval (preempted time taken out, docs/json-format.md) are extra fields named `perflab_*`."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections import Counter
from typing import Any

from perflab.records.model import Measurement
from perflab.records.results import RunResult

NS_PER_S = 1e9  # hyperfine's exports are in seconds, perflab's samples in ns
CSV_COLUMNS = ("command", "mean", "stddev", "median", "user", "system", "min", "max")
# perflab's columns after hyperfine's; `ci_low`/`ci_high` are `perflab_ci_low`/`_high` under
# their first names (kept for readers of older exports): the estimate's interval, not the mean's
PERFLAB_COLUMNS = (
    "benchmark",
    "variant",
    "ci_low",
    "ci_high",
    "perflab_estimate",
    "perflab_ci_low",
    "perflab_ci_high",
    "perflab_estimator",
    "perflab_preempted",
)


def _seconds(value_ns: float | None) -> float | None:
    if value_ns is None or not math.isfinite(value_ns):
        return None
    return value_ns / NS_PER_S


def _commands(result: RunResult, rows: list[Measurement]) -> list[str]:
    """What each row ran (the command, or the statement), as hyperfine names a result; the
    variant's name goes first where two rows ran the same text (an A/A test)."""
    benchmarks = {b.name: b for b in result.experiment.benchmarks}
    variants = {v.name: v for v in result.experiment.variants}
    texts = []
    for row in rows:
        benchmark = benchmarks.get(row.benchmark)
        variant = variants.get(row.variant)
        if benchmark is None or variant is None:
            texts.append(row.benchmark)
        elif benchmark.stmt is not None:
            texts.append(benchmark.stmt)
        else:
            texts.append(benchmark.command_for(variant.at(benchmark.params)))
    repeated = Counter(texts)
    return [f"{r.variant}: {t}" if repeated[t] > 1 else t for r, t in zip(rows, texts, strict=True)]


def _time_rows(result: RunResult) -> list[Measurement]:
    """The wall-time lenses' rows in ns: hyperfine's exports are wall times."""
    wall_time = result.wall_time_metrics
    return [m for m in result.measurements if m.metric in wall_time and m.unit == "ns"]


def _parameters(result: RunResult, benchmark: str) -> dict[str, str]:
    for b in result.experiment.benchmarks:
        if b.name == benchmark:
            return dict(b.params)
    return {}


def hyperfine_results(result: RunResult) -> list[dict[str, Any]]:
    """hyperfine's `results` entries: command, mean, stddev, median, user, system, min, max,
    times, exit_codes (and parameters). perflab keeps one CPU time per sample (user and system
    together): it is `user`, and `system` is 0."""
    rows = _time_rows(result)
    out = []
    for row, command in zip(rows, _commands(result, rows), strict=True):
        entry: dict[str, Any] = {
            "command": command,
            "mean": _seconds(row.mean),
            "stddev": _seconds(row.stddev),
            "median": _seconds(row.median),
            "user": _seconds(row.cpu_mean) or 0.0,
            "system": 0.0,
            "min": _seconds(row.min),
            "max": _seconds(row.max),
            "times": [_seconds(t) for t in row.times],
            # a failed run stops perflab's measuring, but where --ignore-failure measured it
            "exit_codes": list(row.exit_codes) or [0] * len(row.times),
            "benchmark": row.benchmark,
            "variant": row.variant,
            "ci_low": _seconds(row.ci_low),
            "ci_high": _seconds(row.ci_high),
            **_perflab_fields(row),
        }
        parameters = _parameters(result, row.benchmark)
        if parameters:
            entry["parameters"] = parameters
        out.append(entry)
    return out


def _perflab_fields(row: Measurement) -> dict[str, Any]:
    """perflab's estimate of the time per run and its interval, and what it is: not the mean
    of `times` (the runs as measured) but `estimator` over the groups, after `preempted`."""
    return {
        "perflab_estimate": _seconds(row.value),
        "perflab_ci_low": _seconds(row.ci_low),
        "perflab_ci_high": _seconds(row.ci_high),
        "perflab_estimator": row.estimator,
        "perflab_preempted": row.preempted,
    }


def render_hyperfine_json(result: RunResult) -> str:
    return json.dumps({"results": hyperfine_results(result)}, indent=2) + "\n"


# a spreadsheet runs a cell that starts with one of these as a formula (=HYPERLINK(...), -2+3)
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# control characters but the line breaks and tabs a quoted CSV cell holds (a multi-line
# statement): an ESC sequence would drive the terminal of whoever `cat`s the file
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def csv_cell(value: object) -> object:
    """A cell a spreadsheet shows as text: a formula's first character is neutralised with a
    `'` (numbers stay numbers), control characters are written as \\xNN."""
    if not isinstance(value, str):
        return value
    text = _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", value)
    if text.startswith(_FORMULA_STARTS) and not _is_number(text):
        return "'" + text
    return text


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def render_csv(result: RunResult) -> str:
    """hyperfine's CSV columns, then perflab's (benchmark, variant, the estimate and its
    interval) and one `parameter_NAME` column per parameter: the same values as the hyperfine
    JSON's fields of those names."""
    entries = hyperfine_results(result)
    names = sorted({name for e in entries for name in e.get("parameters", {})})
    columns = [*CSV_COLUMNS, *PERFLAB_COLUMNS]
    columns += [f"parameter_{name}" for name in names]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([csv_cell(column) for column in columns])
    for entry in entries:
        parameters = entry.get("parameters", {})
        cells = [
            *("" if entry[c] is None else entry[c] for c in columns[: -len(names) or None]),
            *(parameters.get(name, "") for name in names),
        ]
        writer.writerow([csv_cell(cell) for cell in cells])
    return buffer.getvalue()
