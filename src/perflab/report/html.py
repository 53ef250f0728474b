"""One self-contained HTML report: verdicts with a forest plot, then every lens's section (its
verdict table, details, plots: raw samples over time, per-generation ratios, differential flame
graphs, assembly diffs) and the notes. Inline CSS and SVG only, so the file opens anywhere
without network.

Sections come from analysis (:mod:`perflab.records.document` records); this module only lays them
out and draws their figures.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import jinja2
from markupsafe import Markup

from perflab.records.document import (
    Block,
    FlameFigure,
    Paragraph,
    Preformatted,
    RatiosFigure,
    ScatterFigure,
    Section,
    Style,
    Table,
    TrendFigure,
    WaterfallFigure,
)
from perflab.records.kinds import Verdict
from perflab.records.model import Comparison
from perflab.records.results import RunResult
from perflab.records.run_facts import MachineInfo, VariantInfo
from perflab.records.version import __version__
from perflab.report import svg
from perflab.report.design_views import design_sections
from perflab.report.escape import html_finalize, html_prose
from perflab.report.notes import NoteGroup, group_notes

# the styles a cell gets the CSS class `verdict` for, beside its own (the template colours them)
STYLES_WITH_VERDICT_CLASS = {
    Style.FASTER,
    Style.SLOWER,
    Style.EQUIVALENT,
    Style.INCONCLUSIVE,
    Style.INVALID,
}


@dataclass(frozen=True)
class BlockView:
    """One block as the template shows it: a kind and what to put in."""

    kind: str  # table, paragraph, preformatted, figure
    block: Block | None = None
    svg: Markup | None = None
    legend: Markup | None = None
    title: str = ""
    explanation: str = ""


@dataclass(frozen=True)
class SectionView:
    """A Section ready for the HTML template: its blocks drawn and its subsections nested."""

    title: str
    key: str
    blocks: tuple[BlockView, ...]
    subsections: tuple[SectionView, ...]


def css_class(style: Style) -> str:
    if style in STYLES_WITH_VERDICT_CLASS:
        return f"verdict {style.value}"
    return style.value


def forest_rows(comparisons: Sequence[Comparison]) -> list[svg.ForestRow]:
    """The forest plot's rows: one per comparison, labelled with what it compares."""
    many_metrics = len({c.metric for c in comparisons}) > 1
    rows = []
    for c in comparisons:
        words = [c.metric.value] if many_metrics else []
        words += [c.benchmark, f"{c.variant} vs {c.baseline}"]
        if c.event:
            words.append(c.event)
        rows.append(svg.ForestRow(" · ".join(words), c.ratio, c.ci_low, c.ci_high, c.verdict))
    return rows


def block_view(block: Block) -> BlockView:
    """A section's block as the HTML template draws it (figures rendered to SVG)."""
    if isinstance(block, Table):
        return BlockView("table", block)
    if isinstance(block, Paragraph):
        return BlockView("paragraph", block)
    if isinstance(block, Preformatted):
        return BlockView("preformatted", block, title=block.title)
    if isinstance(block, ScatterFigure):
        return BlockView(
            "figure",
            svg=Markup(svg.time_scatter(block.series)),
            title=block.title,
            explanation=block.explanation,
        )
    if isinstance(block, RatiosFigure):
        return BlockView(
            "figure",
            svg=Markup(
                svg.generation_plot(block.ratios, band=block.band, group_name=block.group_name)
            ),
            title=block.title,
            explanation=block.explanation,
        )
    if isinstance(block, WaterfallFigure):
        return BlockView(
            "figure",
            svg=Markup(svg.waterfall(block)),
            title=block.title,
            explanation=block.explanation,
        )
    if isinstance(block, TrendFigure):
        return BlockView(
            "figure", svg=Markup(svg.trend(block)), title=block.title, explanation=block.explanation
        )
    assert isinstance(block, FlameFigure)
    return BlockView(
        "figure",
        svg=Markup(svg.flame_graph(block.tree)),
        legend=Markup(svg.flame_legend(svg.flame_colour_scale(block.tree))),
        title=block.title,
        explanation=block.explanation,
    )


def section_view(section: Section) -> SectionView:
    return SectionView(
        title=section.title,
        key=section.key,
        blocks=tuple(block_view(b) for b in section.blocks),
        subsections=tuple(section_view(s) for s in section.subsections),
    )


# --- the page -------------------------------------------------------------------------------


# the kernel's numbers in words: /sys/devices/system/cpu/smt/active, randomize_va_space
SMT_WORDS = {"0": "off (one thread per core)", "1": "on (two threads share a core)"}
ASLR_WORDS = {
    "0": "off (the same addresses every run)",
    "1": "on, partly (stack and libraries; not the heap)",
    "2": "on (addresses differ every run)",
}


# the report is one file, opened anywhere: the glossary is named by its place in perflab's
# source tree (docs/glossary.md), relative to a checkout beside the report
GLOSSARY_URL = "docs/glossary.md"


def machine_rows(machine: MachineInfo) -> list[tuple[str, str]]:
    """The machine's facts as the report's label-value rows."""
    pinned = machine.pinned_cpu
    facts = [
        ("CPU", _known(machine.cpu_model)),
        ("cores", _known(machine.cores)),
        ("pinned to CPU", "not pinned" if pinned is None else str(pinned)),
        ("kernel", _known(machine.kernel)),
        ("hypervisor", _hypervisor(machine)),
        ("boost", _known(machine.boost)),
    ]
    if machine.governor is not None:
        facts.append(("governor", str(machine.governor)))
    for fact, label, words in ((machine.smt, "SMT", SMT_WORDS), (machine.aslr, "ASLR", ASLR_WORDS)):
        if fact is not None:
            value = str(fact).strip()
            facts.append((label, words.get(value, value)))
    if machine.avx512 is not None:
        facts.append(("AVX-512", "yes" if machine.avx512 else "no"))
    load = machine.load_average
    if load is not None and all(isinstance(v, int | float) for v in load):
        facts.append(("load average", " ".join(f"{v:.2f}" for v in load)))
    return facts


def _known(fact: object) -> str:
    return "?" if fact is None else str(fact)


def _hypervisor(machine: MachineInfo) -> str:
    if machine.hypervisor is None:
        return "?"
    if not machine.hypervisor:
        return "no"
    vendor = machine.hypervisor_vendor
    return f"yes ({vendor})" if vendor else "yes"


def _prose(text: str) -> Markup:
    """perflab's own sentences (notes, hints, explanations): their `code` as <code>."""
    return Markup(html_prose(text))


@functools.lru_cache(maxsize=1)
def template_environment() -> jinja2.Environment:
    """One per process: an environment compiles each template once, and a published site
    renders hundreds of pages (a new environment per page compiles its templates again each
    time, which would be most of a re-publish's work)."""
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("perflab", "report/templates"),
        autoescape=True,
        finalize=html_finalize,  # names' control characters shown, not emitted
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["css"] = css_class
    environment.filters["prose"] = _prose
    return environment


def _provenance_words(info: VariantInfo | None) -> str:
    """Where a git= variant came from: commit, tree, changes, build command."""
    prov = None if info is None else info.commit_provenance
    if prov is None:
        return ""
    words = [f"commit {str(prov['commit'])[:10]}", f"tree {str(prov.get('tree', ''))[:10]}"]
    words += [f"+ {c.get('name')}" for c in prov.get("changes", [])]
    if prov.get("build"):
        words.append(f"built with {prov['build']!r}")
    return " — " + ", ".join(words)


def _python_version(info: VariantInfo | None) -> str:
    return "" if info is None else info.python_version or ""


def render_html(result: RunResult, *, with_samples: bool = False) -> str:
    """The report as one HTML document. `with_samples`: the JSON written next to it holds the
    raw samples (the footer says where they are)."""
    experiment = result.experiment
    band = experiment.settings.equivalence_band
    forest = forest_rows(result.comparisons)
    notes: list[NoteGroup] = group_notes(result.notes)
    template = template_environment().get_template("report.html.j2")
    return template.render(
        result=result,
        version=__version__,
        machine=machine_rows(result.machine),
        variants=[
            (
                v.name,
                v.describe() + _provenance_words(result.variant_info.get(v.name)),
                _python_version(result.variant_info.get(v.name)),
            )
            for v in experiment.variants
        ],
        settings=experiment.settings,
        forest=Markup(svg.forest_plot(forest, band=band)) if forest else None,
        sections=[section_view(s) for s in (*result.sections, *design_sections(result))],
        notes=notes,
        verdicts=[v.value for v in Verdict],
        samples_command=f"perflab show {result.run_id} --json - --samples",
        with_samples=with_samples,
        glossary_url=GLOSSARY_URL,
    )


def render_page(
    title: str, sections: Sequence[Section], *, up: tuple[str, str] | None = None
) -> str:
    """Sections on a page of their own (a history's trend and tables), styled as the report.
    `up`: (link, words) to the page this one is part of (a published site's front page)."""
    return (
        template_environment()
        .get_template("page.html.j2")
        .render(
            title=title,
            version=__version__,
            sections=[section_view(s) for s in sections],
            up=up,
        )
    )
