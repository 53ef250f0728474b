"""Writing a published site (publish/writer.py): a second publish renders only what changed
and writes only what differs, analyses only new runs, removes the pages of runs the store no
longer holds and no other file, and refuses a folder it cannot write."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from perflab.analyse.run import analyse_run, run_figures
from perflab.publish.writer import publish
from perflab.records.errors import ConfigError
from perflab.records.model import Comparison
from perflab.store import SqliteStore, StoredRun
from tests.support.published_runs import COMMITS, CountingAnalyse, write_run
from tests.support.published_runs import store as store  # noqa: F401 (a fixture)

SUBJECT = "perflab.publish.writer"


def test_a_second_publish_writes_only_what_changed(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    first = publish(out, store)
    again = publish(out, store)
    assert again.written == () and set(again.unchanged) == set(first.written)
    opened = SqliteStore.open(store)
    try:  # one more commit measured: its run's page, the trends and the front page change
        write_run(opened, [COMMITS[4], COMMITS[4]], ["c5", "c5-again"], seed=3)
    finally:
        opened.close()
    third = publish(out, store)
    assert "run-3.html" in third.written and "index.html" in third.written
    assert "run-1.html" in third.unchanged


def test_an_empty_store_publishes_a_front_page_that_says_so(tmp_path: Path) -> None:
    SqliteStore.open(tmp_path / "p.db").close()
    done = publish(tmp_path / "site", tmp_path / "p.db")
    assert done.written == ("index.html",)
    assert "holds no runs of commits" in (tmp_path / "site" / "index.html").read_text()


def test_a_second_publish_analyses_nothing_and_one_new_run_only_that_run(
    store: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    first = CountingAnalyse()
    publish(out, store, analyse=first)
    assert sorted(first.runs) == [1, 2]
    again = CountingAnalyse()
    done = publish(out, store, analyse=again)
    assert again.runs == [] and done.written == () and done.analysed == 0
    opened = SqliteStore.open(store)
    try:
        write_run(opened, [COMMITS[4], COMMITS[4]], ["c5", "c5-again"], seed=3)
    finally:
        opened.close()
    third = CountingAnalyse()
    done = publish(out, store, analyse=third)
    assert third.runs == [3]  # the earlier runs' figures were kept in the folder
    assert {"run-3.html", "index.html"} <= set(done.written)
    assert {"run-1.html", "run-2.html"} <= set(done.unchanged)
    # the same site as a publish from scratch makes
    fresh = tmp_path / "fresh"
    publish(fresh, store)
    for page in fresh.glob("*.html"):
        assert (out / page.name).read_text() == page.read_text(), page.name


def test_pages_of_runs_gone_from_the_store_are_removed_and_no_other_file(
    store: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    out.mkdir()
    foreign = {"CNAME": "perf.example.org", "run-99.html": "mine", "notes.html": "mine"}
    for name, text in foreign.items():
        (out / name).write_text(text)
    publish(out, store)
    smaller = tmp_path / "smaller.db"  # the history's run without the direct comparison
    opened = SqliteStore.open(smaller)
    try:
        write_run(opened, COMMITS, [f"c{c[:10]}" for c, _ in COMMITS], seed=1)
    finally:
        opened.close()
    done = publish(out, smaller)
    assert done.removed == ("run-2.html",) and not (out / "run-2.html").exists()
    assert (out / "run-1.html").is_file()
    for name, text in foreign.items():
        assert (out / name).read_text() == text
    assert not list((out / ".perflab-site").glob("run-2.json"))  # its kept figures too


def test_a_page_changed_by_hand_or_a_damaged_manifest_is_written_again(
    store: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    publish(out, store)
    (out / "run-1.html").write_text("edited")
    done = publish(out, store)
    assert done.written == ("run-1.html",) and "perflab run 1" in (out / "run-1.html").read_text()
    (out / ".perflab-site" / "manifest.json").write_text("{not json")
    (out / ".perflab-site" / "run-1.json").write_text('{"fingerprint": 1}')
    counted = CountingAnalyse()
    done = publish(out, store, analyse=counted)
    # no manifest: every page is rendered (each run analysed once) and compared: all the same
    assert sorted(counted.runs) == [1, 2]
    assert done.written == () and done.removed == ()


class CountingFigures:
    """The seam `publish` derives each run's figures through (figures only), counting them."""

    def __init__(self) -> None:
        self.runs: list[int] = []

    def __call__(self, run: StoredRun) -> tuple[Comparison, ...]:
        self.runs.append(run.run_id)
        return run_figures(run)


def test_the_trends_read_figures_only_and_a_page_analyses_whole_what_it_draws(
    store: Path, tmp_path: Path
) -> None:
    figures, pages = CountingFigures(), CountingAnalyse()
    done = publish(tmp_path / "site", store, analyse=pages, figures=figures)
    assert sorted(figures.runs) == [1, 2] and sorted(pages.runs) == [1, 2]
    assert done.analysed == 2 and done.pages_analysed == 2
    assert done.to_json()["pages_analysed"] == 2
    opened = SqliteStore.open(store, create=False)
    try:
        for run_id in (1, 2):  # the figures-only analysis: the whole one's figures, to the bit
            stored = opened.load_run(run_id)
            whole = analyse_run(stored).comparisons
            assert run_figures(stored) == tuple(replace(c, details=None) for c in whole)
    finally:
        opened.close()


def test_a_folder_that_cannot_be_the_site_is_refused(store: Path, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    for out in (tmp_path / "a-file", tmp_path / "a-file" / "site"):
        with pytest.raises(ConfigError, match="cannot make") as raised:
            publish(out, store)
        assert raised.value.hint == "name another folder"
    (tmp_path / "real").mkdir()
    (tmp_path / "linked").symlink_to(tmp_path / "real")
    with pytest.raises(ConfigError, match="is not a folder") as raised:
        publish(tmp_path / "linked", store)
    assert raised.value.hint == "name a folder for the site"
    assert list((tmp_path / "real").iterdir()) == []  # nothing written through the link


def test_a_folder_where_a_page_goes_is_refused_by_name(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    (out / "index.html").mkdir(parents=True)
    with pytest.raises(ConfigError, match="index.html: it is a folder"):
        publish(out, store)
