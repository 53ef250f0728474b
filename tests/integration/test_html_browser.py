"""The HTML report opened in a real headless Chromium: the DOM has the tables and the plots, the
page renders (a screenshot that is not blank), nothing is fetched and no script fails."""

from __future__ import annotations

import dataclasses
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from perflab.engine import with_sections
from perflab.model import Metric
from perflab.report.html import render_html
from tests.unit.test_html_report import synthetic_run

pytestmark = pytest.mark.integration

FAST = [
    "--budget", "0.5", "--min-measurements-anyway",
    "--min-generations", "2", "--sample-ms", "1", "--seed", "5",
]  # fmt: skip
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",  # console messages (script errors) go to stderr
    "--v=0",
)


@pytest.fixture(scope="module")
def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("chromium is not installed (bash scripts/setup.sh --test installs it)")
    return found


def browse(chromium: str, page: Path, tmp: Path, *action: str) -> subprocess.CompletedProcess[str]:
    profile = tmp / "chromium-profile"
    profile.mkdir(exist_ok=True)
    done = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *action, page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for sign in ("Uncaught", "CONSOLE", "net::ERR_"):
        assert sign not in done.stderr, done.stderr[-3000:]
    return done


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


def check_page(chromium: str, page: Path, tmp: Path, *, plots: int) -> str:
    dom = browse(chromium, page, tmp, "--dump-dom").stdout
    assert dom.count("<svg") == plots
    assert "<table" in dom and "ratio [95% CI]" in dom
    assert 'class="verdict ' in dom
    shot = tmp / (page.stem + ".png")
    browse(chromium, page, tmp, f"--screenshot={shot}", "--window-size=1400,2000")
    width, height, colours = png_size_and_colours(shot)
    assert (width, height) == (1400, 2000)
    assert colours > 20
    return dom


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny real run through the command line, written as HTML right away."""
    root = tmp_path_factory.mktemp("html-run")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "perflab.cli.main",
            "run",
            "--stmt",
            "sorted(data)",
            "--setup",
            "import os; data = list(range(int(os.environ.get('N', '500'))))",
            "--variant",
            "small",
            "--variant",
            "large env.N=1500",
            "--html",
            "run.html",
            "--quiet",
            *FAST,
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
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
    for args, plots in ((["show", "latest"], 3), (["compare", "1", "1"], 2)):
        page = tmp_path / f"{args[0]}.html"
        done = subprocess.run(
            [sys.executable, "-m", "perflab.cli.main", *args, "--html", str(page), "--quiet"],
            cwd=measured,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        check_page(chromium, page, tmp_path, plots=plots)


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
