"""One self-contained HTML report: verdicts, a forest plot, raw samples over time, per-generation
ratios, lens details and differential flame graphs. Inline CSS and SVG only, so the file opens
anywhere without network.

Lens details come from the comparisons' JSON (`Comparison.to_json()`), the documented contract,
not from the lenses' classes. Raw samples and folded stacks come from the StoredRun, when given.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jinja2
from markupsafe import Markup

from perflab.lenses.profile.flame import differential_tree
from perflab.lenses.profile.measure import FOLDED
from perflab.lenses.profile.perf_script import parse_folded
from perflab.lenses.time.measure import WALL_NS, command_batch_blocks
from perflab.model import BenchmarkKind, Comparison, Metric, Note, Sample, Severity, Verdict
from perflab.report import svg
from perflab.report.units import format_ratio, format_seconds, format_value
from perflab.results import RunResult
from perflab.stats.paired import group_means, pair_samples
from perflab.store import StoredRun
from perflab.version import __version__

MAX_FUNCTION_ROWS = 25  # instructions/profile tables: the rest is in the JSON export
MAX_DIFF_LINES = 400  # one asm diff; the full one is in `perflab show --asm`


@dataclass(frozen=True)
class Cell:
    text: str
    css: str = ""


@dataclass(frozen=True)
class Table:
    columns: tuple[str, ...]
    numeric: tuple[bool, ...]  # right-aligned columns
    rows: tuple[tuple[Cell, ...], ...]
    caption: str = ""


@dataclass(frozen=True)
class DiffLine:
    text: str
    css: str  # add, del, moved, gap or ""


@dataclass(frozen=True)
class Detail:
    """What one comparison's lens adds below the verdict table."""

    title: str
    summary: tuple[str, ...] = ()
    sentences: tuple[str, ...] = ()
    tables: tuple[Table, ...] = ()
    diffs: tuple[tuple[str, tuple[DiffLine, ...]], ...] = ()


@dataclass(frozen=True)
class MetricSection:
    metric: str
    table: Table
    details: tuple[Detail, ...]


@dataclass(frozen=True)
class TimePlots:
    benchmark: str
    scatter: Markup
    generations: Markup | None
    group_name: str


@dataclass(frozen=True)
class FlameView:
    benchmark: str
    pair: str
    graph: Markup
    legend: Markup
    samples: str


@dataclass(frozen=True)
class NoteView:
    severity: str
    where: str
    message: str
    hint: str


# --- verdicts -------------------------------------------------------------------------------


def _details(comparison: Comparison) -> dict[str, Any]:
    return comparison.details.to_json() if comparison.details is not None else {}


def _spreads(details: dict[str, Any]) -> tuple[str, str]:
    base, var = details.get("baseline_spread"), details.get("variant_spread")
    if isinstance(base, float) and isinstance(var, float):
        return f" ±{base:.1%}", f" ±{var:.1%}"
    return "", ""


def _verdict_cell(comparison: Comparison, details: dict[str, Any]) -> Cell:
    text = comparison.verdict.value
    extra = details.get("extra_seconds_to_decide")
    if comparison.verdict is Verdict.INCONCLUSIVE and isinstance(extra, int | float):
        text += f" (~{format_seconds(extra)} more)"
    return Cell(text, f"verdict {comparison.verdict.value}")


def verdict_table(comparisons: Sequence[Comparison]) -> Table:
    with_event = any(c.event for c in comparisons)
    columns = ["benchmark", "variant", *(["event"] if with_event else [])]
    columns += ["baseline", "variant", "ratio [95% CI]", "verdict"]
    rows = []
    for c in comparisons:
        details = _details(c)
        base_spread, var_spread = _spreads(details)
        row = [Cell(c.benchmark), Cell(f"{c.variant} vs {c.baseline}")]
        if with_event:
            row.append(Cell(c.event or ""))
        row += [
            Cell(format_value(c.baseline_value, c.unit) + base_spread),
            Cell(format_value(c.variant_value, c.unit) + var_spread),
            Cell(format_ratio(c.ratio, c.ci_low, c.ci_high)),
            _verdict_cell(c, details),
        ]
        rows.append(tuple(row))
    numeric = tuple(name in ("baseline", "ratio [95% CI]") for name in columns)
    # the second "variant" column holds values: right-align it too
    numeric = tuple(n or (i == len(columns) - 3) for i, n in enumerate(numeric))
    return Table(tuple(columns), numeric, tuple(rows))


def forest_rows(comparisons: Sequence[Comparison]) -> list[svg.ForestRow]:
    many_metrics = len({c.metric for c in comparisons}) > 1
    rows = []
    for c in comparisons:
        words = [c.metric.value] if many_metrics else []
        words += [c.benchmark, f"{c.variant} vs {c.baseline}"]
        if c.event:
            words.append(c.event)
        rows.append(svg.ForestRow(" · ".join(words), c.ratio, c.ci_low, c.ci_high, c.verdict))
    return rows


# --- lens details, from the comparison JSON ------------------------------------------------


def _count(value: Any) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "-"
    return f"{value:,.0f}" if abs(value) >= 10 else f"{value:,.2f}"


def _signed(value: Any) -> Cell:
    if not isinstance(value, int | float):
        return Cell("-")
    css = "up" if value > 0 else "down" if value < 0 else ""
    return Cell(("+" if value > 0 else "") + _count(value), css)


def _share(value: Any) -> str:
    return f"{value:.1%}" if isinstance(value, int | float) else "-"


def instructions_detail(comparison: Comparison, details: dict[str, Any]) -> Detail:
    functions = details.get("functions") or []
    rows = tuple(
        (
            Cell(str(f.get("name", ""))),
            Cell(str(f.get("object") or "")),
            Cell(_count(f.get("baseline"))),
            Cell(_count(f.get("variant"))),
            _signed(f.get("delta")),
            Cell(_count(f.get("variant_inclusive"))),
            Cell(str(f.get("presence", "")).replace("_", " ")),
        )
        for f in functions[:MAX_FUNCTION_ROWS]
    )
    table = Table(
        ("function", "object", "baseline self", "variant self", "Δ self", "variant incl.", "in"),
        (False, False, True, True, True, True, False),
        rows,
        caption=f"functions ({len(rows)} of {len(functions)} shown; per iteration)",
    )
    sentences = tuple(
        str(change.get("sentence", "")) for change in details.get("inlining_changes") or []
    )
    return Detail(
        title=f"{comparison.benchmark}: {comparison.variant} vs {comparison.baseline}",
        summary=(f"attribution: {details['attribution']}",) if details.get("attribution") else (),
        sentences=sentences,
        tables=(table,) if rows else (),
    )


def profile_detail(comparison: Comparison, details: dict[str, Any]) -> Detail:
    symbols = details.get("symbols") or []
    rows = tuple(
        (
            Cell(str(s.get("name", ""))),
            Cell(str(s.get("object") or "")),
            Cell(_share(s.get("baseline_share"))),
            Cell(_share(s.get("variant_share"))),
            _signed_points(s.get("delta")),
            Cell(_share(s.get("variant_children_share"))),
        )
        for s in symbols[:MAX_FUNCTION_ROWS]
    )
    table = Table(
        ("symbol", "object", "baseline self", "variant self", "Δ", "variant incl."),
        (False, False, True, True, True, True),
        rows,
        caption=f"hot symbols ({len(rows)} of {len(symbols)} shown; shares of samples)",
    )
    facts = []
    if details.get("sampled_event"):
        facts.append(f"sampled {details['sampled_event']}")
    if details.get("call_graph"):
        facts.append(f"call graph {details['call_graph']}")
    if details.get("baseline_samples") is not None and details.get("variant_samples") is not None:
        facts.append(f"{details['baseline_samples']} vs {details['variant_samples']} samples")
    summary = [", ".join(facts)] if facts else []
    for key in ("appeared", "disappeared"):
        if details.get(key):
            summary.append(f"{key}: " + ", ".join(str(n) for n in details[key]))
    return Detail(
        title=f"{comparison.benchmark}: {comparison.variant} vs {comparison.baseline}",
        summary=tuple(summary),
        tables=(table,) if rows else (),
    )


def _signed_points(value: Any) -> Cell:
    if not isinstance(value, int | float):
        return Cell("-")
    css = "up" if value > 0 else "down" if value < 0 else ""
    return Cell(f"{value * 100:+.1f} pt", css)


def _asm_side(side: Any) -> str:
    if not isinstance(side, dict):
        return "absent"
    width = side.get("vector_width_bits")
    words = [f"{side.get('size_bytes', '?')} B", f"{side.get('instructions', '?')} insns"]
    if width:
        words.append(f"{width}-bit")
    if isinstance(side.get("cost_share"), int | float):
        words.append(f"{side['cost_share']:.1%} of cost")
    return ", ".join(words)


def diff_lines(text: str) -> tuple[DiffLine, ...]:
    """Classify the asm diff's lines by their marker ('-', '+', '>' moved, '@@' elided)."""
    lines = text.splitlines()
    shown = lines[:MAX_DIFF_LINES]
    css = {"-": "del", "+": "add", ">": "moved", "@": "gap"}
    out = [DiffLine(line, css.get(line[:1], "")) for line in shown]
    if len(lines) > len(shown):
        out.append(DiffLine(f"… {len(lines) - len(shown)} more lines", "gap"))
    return tuple(out)


def asm_detail(comparison: Comparison, details: dict[str, Any]) -> Detail:
    functions = details.get("functions") or []
    rows = tuple(
        (
            Cell(str(f.get("name", ""))),
            Cell(_asm_side(f.get("baseline"))),
            Cell(_asm_side(f.get("variant"))),
            Cell(", ".join(f.get("calls_added") or []), "up" if f.get("calls_added") else ""),
            Cell(", ".join(f.get("calls_removed") or []), "down" if f.get("calls_removed") else ""),
            Cell(str(f.get("change") or "")),
        )
        for f in functions
    )
    table = Table(
        ("function", "baseline", "variant", "calls added", "calls removed", "change"),
        (False,) * 6,
        rows,
        caption="hot functions",
    )
    diffs = tuple(
        (str(f.get("name", "")), diff_lines(f["diff"])) for f in functions if f.get("diff")
    )
    return Detail(
        title=f"{comparison.benchmark}: {comparison.variant} vs {comparison.baseline}",
        summary=(str(details["ratio_kind"]),) if details.get("ratio_kind") else (),
        tables=(table,) if rows else (),
        diffs=diffs,
    )


_DETAIL_BUILDERS = {
    Metric.INSTRUCTIONS: instructions_detail,
    Metric.PROFILE: profile_detail,
    Metric.ASM: asm_detail,
}


def metric_sections(comparisons: Sequence[Comparison]) -> list[MetricSection]:
    by_metric: dict[Metric, list[Comparison]] = {}
    for comparison in comparisons:
        by_metric.setdefault(comparison.metric, []).append(comparison)
    sections = []
    for metric, group in by_metric.items():
        builder = _DETAIL_BUILDERS.get(metric)
        details = tuple(builder(c, _details(c)) for c in group) if builder else ()
        sections.append(MetricSection(metric.value, verdict_table(group), details))
    return sections


# --- raw time samples -----------------------------------------------------------------------


def time_series(samples: Sequence[Sample], variants: Sequence[str]) -> list[svg.TimeSeries]:
    """One benchmark's wall-time samples per variant, times since its first sample."""
    start = min((s.at_ns for s in samples), default=0)
    return [
        svg.TimeSeries(
            label=name + (" (baseline)" if k == 0 else ""),
            colour=svg.variant_colour(k),
            points=tuple(
                svg.TimePoint((s.at_ns - start) / 1e9, s.per_iteration, s.generation, s.warmup)
                for s in samples
                if s.variant == name
            ),
        )
        for k, name in enumerate(variants)
    ]


def group_ratios(
    baseline: Sequence[Sample], variant: Sequence[Sample], *, batch_blocks: int | None
) -> tuple[tuple[int, float], ...]:
    """The ratio of every generation (or batch), paired and trimmed as the time lens does: the
    values its confidence interval is computed over."""
    means = group_means(pair_samples(baseline, variant, batch_blocks=batch_blocks))
    return tuple((group, math.exp(mean)) for group, mean in means.items())


def time_plots(result: RunResult, run: StoredRun) -> list[TimePlots]:
    names = [v.name for v in result.experiment.variants]
    band = result.experiment.settings.equivalence_band
    plots = []
    for benchmark in result.experiment.benchmarks:
        samples = [
            s for s in run.data_for(benchmark.name, Metric.TIME).samples if s.name == WALL_NS
        ]
        if not samples:
            continue
        batch_blocks = None
        if benchmark.kind is BenchmarkKind.COMMAND:
            measured = {s.block for s in samples if s.variant == names[0] and not s.warmup}
            batch_blocks = command_batch_blocks(len(measured))
        ratios = []
        for k, name in enumerate(names[1:], start=1):
            comparison = _find(result.comparisons, benchmark.name, Metric.TIME, name)
            per_group = group_ratios(
                [s for s in samples if s.variant == names[0]],
                [s for s in samples if s.variant == name],
                batch_blocks=batch_blocks,
            )
            if comparison is not None and per_group:
                ratios.append(
                    svg.GenerationRatios(
                        f"{name} vs {names[0]}",
                        svg.variant_colour(k),
                        per_group,
                        comparison.ratio,
                        comparison.ci_low,
                        comparison.ci_high,
                    )
                )
        group_name = "batch" if batch_blocks is not None else "generation"
        plots.append(
            TimePlots(
                benchmark=benchmark.name,
                scatter=Markup(svg.time_scatter(time_series(samples, names))),
                generations=Markup(svg.generation_plot(ratios, band=band, group_name=group_name))
                if ratios
                else None,
                group_name=group_name,
            )
        )
    return plots


def _find(
    comparisons: Sequence[Comparison], benchmark: str, metric: Metric, variant: str
) -> Comparison | None:
    return next(
        (
            c
            for c in comparisons
            if c.benchmark == benchmark and c.metric is metric and c.variant == variant
        ),
        None,
    )


# --- flame graphs ---------------------------------------------------------------------------


def flame_views(result: RunResult, run: StoredRun) -> list[FlameView]:
    names = [v.name for v in result.experiment.variants]
    views = []
    for benchmark in result.experiment.benchmarks:
        data = run.data_for(benchmark.name, Metric.PROFILE)
        # the last recording of a variant is the one its analysis used
        folded = {a.variant: a.content for a in data.artifacts if a.kind == FOLDED}
        if names[0] not in folded:
            continue
        baseline = parse_folded(folded[names[0]])
        for name in names[1:]:
            if name not in folded:
                continue
            variant = parse_folded(folded[name])
            tree = differential_tree(baseline, variant)
            views.append(
                FlameView(
                    benchmark=benchmark.name,
                    pair=f"{name} vs {names[0]}",
                    graph=Markup(svg.flame_graph(tree)),
                    legend=Markup(svg.flame_legend(svg.flame_colour_scale(tree))),
                    samples=f"{sum(baseline.values())} baseline and {sum(variant.values())} "
                    "variant samples",
                )
            )
    return views


# --- the page -------------------------------------------------------------------------------


def machine_facts(machine: dict[str, Any]) -> list[tuple[str, str]]:
    pinned = machine.get("pinned_cpu")
    facts = [
        ("CPU", str(machine.get("cpu_model", "?"))),
        ("cores", str(machine.get("cores", "?"))),
        ("pinned to CPU", "not pinned" if pinned is None else str(pinned)),
        ("kernel", str(machine.get("kernel", "?"))),
        ("hypervisor", _hypervisor(machine)),
        ("boost", str(machine.get("boost", "?"))),
    ]
    for key, label in (("governor", "governor"), ("smt", "SMT"), ("aslr", "ASLR")):
        if machine.get(key) is not None:
            facts.append((label, str(machine[key])))
    if machine.get("avx512") is not None:
        facts.append(("AVX-512", "yes" if machine["avx512"] else "no"))
    load = machine.get("load_average")
    if isinstance(load, list) and all(isinstance(v, int | float) for v in load):
        facts.append(("load average", " ".join(f"{v:.2f}" for v in load)))
    return facts


def _hypervisor(machine: dict[str, Any]) -> str:
    if machine.get("hypervisor") is None:
        return "?"
    if not machine["hypervisor"]:
        return "no"
    vendor = machine.get("hypervisor_vendor")
    return f"yes ({vendor})" if vendor else "yes"


def note_views(notes: Sequence[Note]) -> list[NoteView]:
    # warnings first: they are what the reader must act on
    ordered = sorted(notes, key=lambda n: n.severity is not Severity.WARNING)
    return [
        NoteView(
            severity=n.severity.value,
            where=" · ".join(
                x for x in (n.metric.value if n.metric else None, n.benchmark, n.variant) if x
            ),
            message=n.message,
            hint=n.hint or "",
        )
        for n in ordered
    ]


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("perflab", "report/templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_html(result: RunResult, run: StoredRun | None = None) -> str:
    """The report as one HTML document. Without `run` (e.g. a comparison of two stored runs)
    the raw-sample plots and flame graphs are left out: they need the stored samples."""
    experiment = result.experiment
    band = experiment.settings.equivalence_band
    forest = forest_rows(result.comparisons)
    template = _environment().get_template("report.html.j2")
    return template.render(
        result=result,
        version=__version__,
        machine=machine_facts(result.machine),
        variants=[
            (
                v.name,
                v.describe(),
                str(result.variant_info.get(v.name, {}).get("python_version") or ""),
            )
            for v in experiment.variants
        ],
        settings=experiment.settings,
        forest=Markup(svg.forest_plot(forest, band=band)) if forest else None,
        sections=metric_sections(result.comparisons),
        time_plots=time_plots(result, run) if run is not None else [],
        flames=flame_views(result, run) if run is not None else [],
        has_run=run is not None,
        notes=note_views(result.notes),
        verdicts=[v.value for v in Verdict],
    )
