"""The HTML report opened in a real headless Chromium: the DOM has the tables and the plots, the
page renders (a screenshot that is not blank), nothing is fetched and no script fails."""

from __future__ import annotations

import dataclasses
import hashlib
import html
import json
import os
import re
import struct
import zlib
from pathlib import Path

import pytest

from perflab.analyse.design_analysis import stack_summaries
from perflab.analyse.run import with_sections
from perflab.records.kinds import Metric, Verdict
from perflab.records.lens_agreement import LensDisagreement
from perflab.records.model import Variant
from perflab.records.results import Interaction, InteractionVerdict, RunResult
from perflab.records.workflow_results import HistoryChange, HistoryPoint, HistoryResult
from perflab.report.html import render_html
from perflab.report.workflow_formats import history_html
from tests.support.browser import browse
from tests.support.browser import chromium as chromium  # noqa: F401 (a fixture)
from tests.support.cli_commands import QUICK, perflab
from tests.support.design_runs import design_comparison
from tests.support.report_runs import synthetic_run

pytestmark = pytest.mark.integration

# half a second: enough samples for a page to draw more than ten points
PAGE_RUN = ["--budget", "0.5", *QUICK]


def png_size_and_colours(path: Path) -> tuple[int, int, int]:
    """Width, height and the number of distinct bytes of the pixel data: a blank page has ~2."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    chunks, at = [], 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind = data[at + 4 : at + 8]
        if kind == b"IDAT":
            chunks.append(data[at + 8 : at + 8 + length])
        at += 12 + length
    pixels = zlib.decompress(b"".join(chunks))
    return width, height, len(set(pixels))


# a wide desktop window and a narrow one (a laptop's half screen): every plot must paint in both
WINDOWS = ((1400, 2000), (720, 1600))
# PERFLAB_SCREENSHOTS=DIR: the pages named in SCREENSHOTS are also saved there (docs/images)
SCREENSHOTS = {"lenses": "report-five-lenses", "compare": "report-compare"}
SCREENSHOT_WINDOW = (1100, 1300)


def check_page(chromium: str, page: Path, tmp: Path, *, plots: int, verdicts: bool = True) -> str:
    dom = browse(chromium, page, tmp, "--dump-dom").stdout
    assert dom.count("<svg") == plots
    if verdicts:
        assert "<table" in dom and "ratio [95% CI]" in dom
        assert 'class="verdict ' in dom
    assert "…" not in "".join(re.findall(r"<svg.*?</svg>", dom, re.S))  # no label cut
    for width, height in WINDOWS:
        shot = tmp / f"{page.stem}-{width}.png"
        browse(chromium, page, tmp, f"--screenshot={shot}", f"--window-size={width},{height}")
        assert png_size_and_colours(shot)[:2] == (width, height)
        assert png_size_and_colours(shot)[2] > 20
    keep = os.environ.get("PERFLAB_SCREENSHOTS")
    if keep and page.stem in SCREENSHOTS:
        shot = Path(keep) / f"{SCREENSHOTS[page.stem]}.png"
        width, height = SCREENSHOT_WINDOW
        browse(chromium, page, tmp, f"--screenshot={shot}", f"--window-size={width},{height}")
    return dom


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny real run through the command line, written as HTML right away; then the same
    again (run 2), for `compare 1 2`."""
    root = tmp_path_factory.mktemp("html-run")
    args = ("run", "--stmt", "sorted(data)",
            "--setup", "import os; data = list(range(int(os.environ.get('N', '500'))))",
            "--variant", "small", "--variant", "large env.N=1500", "--html", "run.html",
            "--quiet", *PAGE_RUN)  # fmt: skip
    again = perflab(*args, cwd=root, timeout_s=300)
    assert again.returncode == 0, again.stderr
    (root / "run.html").rename(root / "first.html")
    done = perflab(*args, cwd=root, timeout_s=300)
    assert done.returncode == 0, done.stderr
    return root


def test_a_real_run_renders_with_its_samples_in_chromium(
    chromium: str, measured: Path, tmp_path: Path
) -> None:
    dom = check_page(chromium, measured / "run.html", tmp_path, plots=3)
    assert "large vs small" in dom
    assert "Time: details" in dom and "Per-generation ratios" in dom
    assert "env N: small=(unset), large=1500" in dom
    assert dom.count("<circle") > 10  # the samples


def test_show_and_compare_write_html(chromium: str, measured: Path, tmp_path: Path) -> None:
    # compare: the forest plot and the per-generation ratios (two runs share no sample clock)
    for args, plots in ((["show", "latest"], 3), (["compare", "1", "2"], 2)):
        page = tmp_path / f"{args[0]}.html"
        done = perflab(*args, "--html", str(page), "--quiet", cwd=measured, timeout_s=120)
        assert done.returncode == 0, done.stderr
        dom = check_page(chromium, page, tmp_path, plots=plots)
        if args[0] == "compare":
            assert "perflab compare: run 2 against run 1" in dom


def test_a_variant_measured_alone_renders_in_chromium(
    chromium: str, measured: Path, tmp_path: Path
) -> None:
    page = tmp_path / "alone.html"
    done = perflab("true", "--runs", "3", "--html", str(page), "--quiet", *PAGE_RUN[:2],
                   cwd=measured, timeout_s=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    dom = check_page(chromium, page, tmp_path, plots=1, verdicts=False)  # its raw samples
    assert "per iteration [95% CI]" in dom and "measured alone" in dom


def test_every_lens_section_renders_in_chromium(chromium: str, tmp_path: Path) -> None:
    result, _ = synthetic_run()
    page = tmp_path / "lenses.html"
    page.write_text(render_html(result))
    dom = check_page(chromium, page, tmp_path, plots=5)
    for section in (
        "Time: details",
        "Instructions: details",
        "Profile: details",
        "Asm: details",
        "Torch: details",
        "Notes",
    ):
        assert section in dom
    assert '<pre class="diff">' in dom
    assert "new_thing" in dom  # a frame of the flame graph


# one lens per page: each lens's section must be in the DOM and the page must paint
LENS_PAGES = {
    # metric: (svg plots: the forest plot + the lens's own, a string only its section shows)
    Metric.TIME: (3, "raw samples"),
    Metric.INSTRUCTIONS: (1, "<code>helper</code> is outlined now"),  # perflab's `code`
    Metric.COUNTERS: (1, "task-clock"),
    Metric.PROFILE: (3, "new_thing"),
    Metric.ASM: (1, "vmaxps zmm0, zmm1, zmm2"),
    Metric.TORCH: (1, "aten::add"),
}


@pytest.mark.parametrize("metric", list(LENS_PAGES), ids=lambda m: m.value)
def test_each_lens_section_renders_in_chromium(
    chromium: str, tmp_path: Path, metric: Metric
) -> None:
    result, _ = synthetic_run()
    only = [c for c in result.comparisons if c.metric is metric]
    assert only, f"the synthetic run has no {metric.value} comparison"
    one_lens = with_sections(dataclasses.replace(result, comparisons=tuple(only), notes=()))
    page = tmp_path / f"{metric.value}.html"
    page.write_text(render_html(one_lens))
    plots, marker = LENS_PAGES[metric]
    dom = check_page(chromium, page, tmp_path, plots=plots)
    assert f'id="metric-{metric.value}"' in dom
    assert marker in dom
    has_details = any(s.subsections or len(s.blocks) > 1 for s in one_lens.sections)
    assert (f'id="details-{metric.value}"' in dom) is has_details


def _stack_and_matrix_runs() -> dict[str, RunResult]:
    """A stack of three steps and a matrix of two changes on two bases, from the synthetic
    run's time samples relabelled: what their pages draw (a waterfall, a grid)."""
    result, _ = synthetic_run()

    cmp = design_comparison

    steps = ("base", "cache-the-dispatch-key", "inline-KernelFunction-call", "fast-path")
    ratios = (0.82, 0.91, 0.75)
    pairs = tuple(zip(steps, steps[1:], strict=False)) + (("base", steps[-1]),)
    comparisons = [
        cmp(a, b, r, Verdict.FASTER) for (a, b), r in zip(pairs[:-1], ratios, strict=True)
    ]
    comparisons.append(cmp("base", steps[-1], 0.557, Verdict.FASTER))
    stack_experiment = dataclasses.replace(
        result.experiment,
        variants=tuple(Variant(n, git=n) for n in steps),
        pairs=pairs,
        stack=steps,
        settings=dataclasses.replace(result.experiment.settings, metrics=(Metric.TIME,)),
    )
    stack = with_sections(
        dataclasses.replace(
            result,
            experiment=stack_experiment,
            comparisons=tuple(comparisons),
            notes=(),
            differences=("git: " + ", ".join(f"{n}={n}" for n in steps),),
            stacks=stack_summaries(stack_experiment, comparisons),
        )
    )
    cells = {
        ("main", "fix-a@main"): (0.8, Verdict.FASTER),
        ("release", "fix-a@release"): (1.0, Verdict.EQUIVALENT),
        ("main", "fix-b@main"): (0.95, Verdict.FASTER),
        ("release", "fix-b@release"): (0.94, Verdict.FASTER),
    }
    found = {pair: cmp(*pair, r, v) for pair, (r, v) in cells.items()}
    matrix_experiment = dataclasses.replace(
        stack_experiment,
        variants=(
            Variant("main", git="main"),
            Variant("release", git="release-2.1"),
            *(Variant(v, git=b, apply=(f"{v.split('@')[0]}.patch",)) for b, v in cells),
        ),
        pairs=tuple(cells),
        stack=(),
    )
    interactions = tuple(
        Interaction(
            change=change,
            base="release",
            reference_base="main",
            benchmark="sorted(data)",
            metric=Metric.TIME,
            ratio=ratio,
            ci_low=ratio * 0.96,
            ci_high=ratio * 1.04,
            verdict=verdict,
            on_base=found[("release", f"{change}@release")],
            on_reference=found[("main", f"{change}@main")],
            paired=True,
        )  # fmt: skip
        for change, ratio, verdict in (
            ("fix-a", 1.25, InteractionVerdict.WORSE_ON_BASE),
            ("fix-b", 0.99, InteractionVerdict.INCONCLUSIVE),
        )
    )
    matrix = with_sections(
        dataclasses.replace(
            stack,
            experiment=matrix_experiment,
            comparisons=tuple(found.values()),
            stacks=(),
            differences=("git: main, release-2.1; apply: fix-a.patch, fix-b.patch",),
            interactions=interactions,
        )
    )
    return {"stack": stack, "matrix": matrix}


SCREENSHOTS.update({"stack": "report-stack", "matrix": "report-matrix"})


@pytest.mark.parametrize("design", ["stack", "matrix"])
def test_stack_and_matrix_pages_render_in_chromium(
    chromium: str, tmp_path: Path, design: str
) -> None:
    result = _stack_and_matrix_runs()[design]
    page = tmp_path / f"{design}.html"
    page.write_text(render_html(result))
    # the forest plot, and the stack's waterfall
    dom = check_page(chromium, page, tmp_path, plots=2 if design == "stack" else 1)
    if design == "stack":
        assert "inline-KernelFunction-call vs cache-the-dispatch-key" in dom
        assert "steps multiplied" in dom
    else:
        assert "interaction release / main" in dom and "worse-on-base" in dom


def _long_history() -> HistoryResult:
    """41 commits of instructions per iteration: a rise of 7.3% at the 18th commit (which time
    says is faster), a fall at the 31st, two commits whose benchmark crashed."""
    points = []
    for i in range(41):
        value = 27_129_713 * (1.073 if 17 <= i < 30 else 1.0) * (0.95 if i >= 30 else 1.0)
        crashed = i in (9, 10)
        points.append(
            HistoryPoint(
                hashlib.sha1(str(i).encode()).hexdigest(),
                f"commit {i}: tweak the hash loop",
                f"t{i}",
                None if crashed else value + 8_000 * (i % 3),
                "" if crashed else "instructions",
                run_id=None if crashed else 100 + i,
                skipped="the benchmark crashed: exited with signal 11" if crashed else "",
            )
        )
    faster = LensDisagreement(
        gate=Metric.INSTRUCTIONS,
        gate_ratio=1.073,
        gate_verdict=Verdict.SLOWER,
        other=Metric.TIME,
        other_ratio=0.874,
        other_ci_low=0.86,
        other_ci_high=0.89,
        other_verdict=Verdict.FASTER,
        decisive=True,
    )
    changes = (
        HistoryChange(
            index=17,
            before=points[16],
            after=points[17],
            series_ratio=1.073,
            ratio=1.073,
            ci_low=1.073,
            ci_high=1.073,
            confirmed=True,
            run_id=201,
            disagreement=faster,
        ),
        HistoryChange(
            index=30,
            before=points[29],
            after=points[30],
            series_ratio=0.95,
            ratio=0.951,
            ci_low=0.93,
            ci_high=0.99,
            confirmed=False,
            run_id=202,
        ),
    )
    return HistoryResult(
        range_text="cb1a4a8..0e7c8d3",
        metric=Metric.INSTRUCTIONS,
        threshold=0.02,
        points=tuple(points),
        changes=changes,
        measured_now=39,
        seconds=120.0,
    )


# measured by the browser in the page itself: every label of the chart inside its picture and
# clear of the labels on its line, the smallest label's height on screen, and where the change
# points' table and the chart begin
LAYOUT_SCRIPT = """<script>
(() => {
const texts = [...document.querySelectorAll("svg text")];
const box = (t) => t.getBBox();
const outside = texts.filter((t) => {
  const view = t.ownerSVGElement.viewBox.baseVal, b = box(t);
  return b.x < view.x - 0.5 || b.x + b.width > view.x + view.width + 0.5;
}).map((t) => t.textContent);
const overlapping = [];
for (const a of texts) for (const b of texts) {
  const p = box(a), q = box(b);
  if (a !== b && a.getAttribute("y") === b.getAttribute("y") && p.x < q.x && p.x + p.width > q.x)
    overlapping.push(a.textContent + " / " + b.textContent);
}
const startOf = (selector) => document.querySelector(selector).getBoundingClientRect().top;
const pre = document.createElement("pre");
pre.id = "layout";
pre.textContent = JSON.stringify({
  outside, overlapping, height: window.innerHeight,
  smallest: Math.min(...texts.map((t) => t.getBoundingClientRect().height)),
  changes: startOf("#history table"), chart: startOf("#history svg"),
});
document.body.append(pre);
})();
</script>"""


def test_the_history_page_says_what_changed_first_in_chromium(
    chromium: str, tmp_path: Path
) -> None:
    page = tmp_path / "history.html"
    page.write_text(history_html(_long_history(), change_links={17: "history-change1.html"}))
    dom = check_page(chromium, page, tmp_path, plots=1, verdicts=False)
    assert dom.index("1 change point in instructions") < dom.index("<svg") < dom.index(">value<")
    assert "29 M instructions" in dom and ">0716d97<" in dom  # a value tick, a commit's id
    measured = tmp_path / "history-measured.html"
    measured.write_text(page.read_text().replace("</body>", LAYOUT_SCRIPT + "</body>"))
    for width in (1400, 720):
        shown = browse(chromium, measured, tmp_path, "--dump-dom", f"--window-size={width},1000")
        (data,) = re.findall(r'<pre id="layout">(.*?)</pre>', shown.stdout, re.S)
        layout = json.loads(html.unescape(data))
        assert layout["outside"] == [] and layout["overlapping"] == [], layout
        assert layout["smallest"] >= 10, layout  # px on screen: readable at 720 px wide too
        # the first screen says what changed: the change points' table starts on it
        assert layout["changes"] < min(layout["height"] / 2, layout["chart"]), layout
