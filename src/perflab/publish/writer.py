"""Writing a published site, only what changed. Each page is rendered only when what it is made from
changed since the last publish into the folder (its manifest says), and written only when its text
changed; the pages of runs the store no longer holds are removed."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from perflab.analyse.run import analyse_run, run_figures
from perflab.publish.figures import Analyse, Figures, SiteRuns
from perflab.publish.manifest import Manifest, Page, digest, fingerprint
from perflab.publish.run_page import (
    Focus,
    commits_of,
    drawn_benchmarks,
    focus_of,
    run_page_result,
)
from perflab.publish.trends import read_site
from perflab.records.errors import ConfigError
from perflab.records.published import Published, Site
from perflab.report.files import write_file
from perflab.report.site import FRONT_PAGE, front_page, run_page_name, trend_page, trend_page_name


def publish(
    out: Path | str,
    store: str | Path,
    *,
    threshold: float = 0.02,
    analyse: Analyse = analyse_run,
    figures: Figures = run_figures,
    workers: int | None = 1,
) -> Published:
    """The site of `store` written to the folder `out`: only the pages whose content changed;
    each run's figures analysed (`figures`, figures only) only when the folder holds none of
    it, those runs in up to `workers` processes at once (None: a process per usable CPU); a
    run's page analysed whole (`analyse`) when it is rendered, for the benchmarks it draws in
    full. `analyse` and `figures` are seams for tests. One process by default: a spawned
    process imports the caller's main module again, which a script without a `__main__`
    guard does not survive; the `perflab` command asks for one per CPU."""
    folder = Path(out)
    runs = SiteRuns.read(store, folder, analyse=analyse, figures=figures)
    runs.analyse_missing(workers)
    site = read_site(store, threshold=threshold, runs=runs)
    _make_folder(folder)
    before = Manifest.read(folder)
    pages = _PagesWritten()
    for name, made_from, render in _pages(site, runs):
        if before.up_to_date(folder, name, made_from):
            pages.kept(name, before.pages[name])
        else:
            pages.rendered(folder, name, made_from, render())
    front = front_page(site)  # every trend's line: rendered each time, written when it changed
    pages.rendered(folder, FRONT_PAGE, fingerprint(digest(front)), front)
    removed = before.stale(folder, pages.pages)
    for name in removed:
        (folder / name).unlink(missing_ok=True)
    runs.keep(run.run_id for run in runs.runs)
    Manifest(pages.pages).write(folder)
    return Published(
        str(folder),
        tuple(pages.written),
        tuple(pages.unchanged),
        site,
        removed=tuple(removed),
        analysed=runs.analysed,
        pages_analysed=len(runs.pages_analysed),
    )


@dataclass
class _PagesWritten:
    """The site's pages as this publish leaves them (the next manifest), and which of them it
    wrote and which it left as they were: filled page by page as the publish goes."""

    pages: dict[str, Page] = field(default_factory=dict)
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    def kept(self, name: str, page: Page) -> None:
        """A page whose sources did not change since the last publish: not rendered again."""
        self.pages[name] = page
        self.unchanged.append(name)

    def rendered(self, folder: Path, name: str, made_from: str, text: str) -> None:
        """A page rendered again: written only where its text changed."""
        (self.written if _write_if_changed(folder / name, text) else self.unchanged).append(name)
        self.pages[name] = Page(made_from, digest(text))


def _make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(
            f"cannot make {folder}: {error.strerror}", hint="name another folder"
        ) from None
    if not folder.is_dir() or folder.is_symlink():
        raise ConfigError(f"{folder} is not a folder", hint="name a folder for the site")


def _pages(site: Site, runs: SiteRuns) -> Iterator[tuple[str, str, Callable[[], str]]]:
    """The runs' and the trends' pages: file name, what the page is made from, its renderer."""
    focus = focus_of(site)
    for run_id in site.run_ids:
        linked = focus.get(run_id, frozenset())
        made_from = fingerprint("run", runs.fingerprint(run_id), sorted(linked))
        yield run_page_name(run_id), made_from, partial(_run_page, runs, run_id, linked)
    for trend in site.trends:
        yield trend_page_name(trend), fingerprint("trend", trend), partial(trend_page, trend)


def _run_page(runs: SiteRuns, run_id: int, focus: Focus) -> str:
    from perflab.report.html import render_html  # jinja2: loaded only when pages are written

    commits = commits_of(runs.code_run(run_id))
    figures = runs.figures(run_id).comparisons
    analysed = runs.analysed_for_page(run_id, drawn_benchmarks(figures, focus, commits))
    return render_html(run_page_result(analysed, figures, focus, commits))


def _write_if_changed(path: Path, text: str) -> bool:
    """Writes `text` unless the file holds it already (compared by digest); True: written."""
    if path.is_symlink():
        write_file(path, text)  # refuses: perflab does not write through a link
    try:
        old = hashlib.sha256(path.read_bytes()).digest()
    except FileNotFoundError:
        old = b""
    except IsADirectoryError:
        raise ConfigError(f"cannot write {path}: it is a folder", hint="remove it") from None
    if old == hashlib.sha256(text.encode("utf-8")).digest():
        return False
    write_file(path, text)
    return True
