"""The terminal views of git variants (report/provenance_views.py): where each variant came from,
in the experiment's order, and the build cache's entries."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from rich.console import Console

from perflab.analyse.run import analyse_run
from perflab.git.cache_entry import CacheEntry, CacheStatus
from perflab.records.results import RunResult
from perflab.records.run_facts import VariantInfo
from perflab.report.provenance_views import provenance_table, render_cache_entries
from perflab.store.json_runs import load_document

CAPTURE = Path(__file__).parents[2] / "golden" / "data" / "runs" / "gzip_preempted.json"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def result() -> RunResult:
    return analyse_run(load_document(CAPTURE))


def text_of(renderable: object) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_only_variants_built_from_a_commit_have_a_provenance_row(result: RunResult) -> None:
    assert provenance_table(result) is None  # the capture's variants are commands
    first, second = (v.name for v in result.experiment.variants)
    provenance = {
        "ref": COMMIT,
        "commit": COMMIT,
        "tree": "f" * 40,
        "changes": [{"name": "fix.patch"}],
        "build": "make",
        "cached": True,
        "subject": "speed up <b>gzip</b>",
    }
    infos = {
        second: VariantInfo(provenance=provenance),
        first: VariantInfo(provenance={**provenance, "ref": "main", "changes": []}),
    }
    table = provenance_table(dataclasses.replace(result, variant_info=infos))
    assert table is not None
    text = text_of(table)
    assert text.index(first) < text.index(second)  # in the experiment's order
    assert "0123456789 " in text  # a full commit id shown short, a name as it is
    assert "fix.patch" in text and "make (cached)" in text and "speed up <b>gzip</b>" in text


def test_the_cache_lists_its_entries_or_says_it_is_empty(tmp_path: Path) -> None:
    console = Console(width=200, record=True, color_system=None)
    render_cache_entries([], console)
    assert console.export_text().strip() == "the build cache is empty"
    entry = CacheEntry(
        key="0123456789abcdef0123", path=tmp_path / "0123456789abcdef0123", repository="/r",
        ref=COMMIT, commit=COMMIT, tree="e" * 40, build=None, status=CacheStatus.BUILT,
        changes=("fix",),
    )  # fmt: skip
    render_cache_entries([entry], console)
    listed = console.export_text()
    assert "cached checkouts and builds" in listed and "0123456789ab" in listed
    assert "built" in listed and "fix" in listed
