"""The manifest of a published site (publish/manifest.py): which pages are up to date, which
are stale, and a manifest that cannot be read costing only a full render, never a removal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perflab.publish.figures import KEPT_FOLDER
from perflab.publish.manifest import (
    MANIFEST_FORMAT,
    MANIFEST_NAME,
    Manifest,
    Page,
    digest,
    fingerprint,
)

TEXT = "<html>run 1</html>"


def site(folder: Path, pages: dict[str, str]) -> Manifest:
    """`pages` (name -> text) written in `folder`, and the manifest that says so."""
    for name, text in pages.items():
        (folder / name).write_text(text)
    return Manifest({name: Page(fingerprint(name), digest(text)) for name, text in pages.items()})


def test_the_fingerprint_says_what_a_page_is_made_of() -> None:
    assert fingerprint("run", 1) == fingerprint("run", 1)
    assert fingerprint("run", 1) != fingerprint("run", 2)
    assert len(fingerprint("run", 1)) == 20
    assert digest(TEXT) == digest(TEXT) != digest(TEXT + " ")


def test_a_page_is_up_to_date_when_made_of_the_same_and_still_as_written(tmp_path: Path) -> None:
    manifest = site(tmp_path, {"run-1.html": TEXT})
    assert manifest.up_to_date(tmp_path, "run-1.html", fingerprint("run-1.html"))
    assert not manifest.up_to_date(tmp_path, "run-1.html", fingerprint("another source"))
    assert not manifest.up_to_date(tmp_path, "run-2.html", fingerprint("run-2.html"))
    (tmp_path / "run-1.html").write_text("edited by hand")
    assert not manifest.up_to_date(tmp_path, "run-1.html", fingerprint("run-1.html"))
    (tmp_path / "run-1.html").unlink()
    assert not manifest.up_to_date(tmp_path, "run-1.html", fingerprint("run-1.html"))


def test_a_link_in_a_pages_place_is_never_up_to_date(tmp_path: Path) -> None:
    manifest = site(tmp_path, {"run-1.html": TEXT})
    (tmp_path / "elsewhere.html").write_text(TEXT)
    (tmp_path / "run-1.html").unlink()
    (tmp_path / "run-1.html").symlink_to(tmp_path / "elsewhere.html")
    assert not manifest.up_to_date(tmp_path, "run-1.html", fingerprint("run-1.html"))


def test_stale_pages_are_the_listed_ones_not_kept_and_still_files(tmp_path: Path) -> None:
    before = site(tmp_path, {"index.html": "i", "run-1.html": "1", "run-2.html": "2"})
    kept = {"index.html": before.pages["index.html"]}
    (tmp_path / "run-2.html").unlink()  # gone already: nothing to remove
    assert before.stale(tmp_path, kept) == ["run-1.html"]


def test_only_a_publishs_own_page_names_are_ever_stale(tmp_path: Path) -> None:
    (tmp_path / "notes.html").write_text("mine")
    (tmp_path / "run-9.html").mkdir()
    (tmp_path / "trend-x.html").symlink_to(tmp_path / "notes.html")
    listed = Manifest(
        {name: Page("f", "d") for name in ("notes.html", "run-9.html", "trend-x.html")}
    )
    assert listed.stale(tmp_path, {}) == []


def test_written_and_read_back(tmp_path: Path) -> None:
    manifest = site(tmp_path, {"index.html": "i", "run-1.html": "1", "trend-a-b.html": "t"})
    manifest.write(tmp_path)
    stored = json.loads((tmp_path / KEPT_FOLDER / MANIFEST_NAME).read_text())
    assert stored["format"] == MANIFEST_FORMAT and list(stored["pages"]) == sorted(manifest.pages)
    assert Manifest.read(tmp_path) == manifest


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        json.dumps({"format": MANIFEST_FORMAT + 1, "pages": {}}),
        json.dumps({"format": MANIFEST_FORMAT, "pages": {"run-1.html": {"sha256": "d"}}}),
        json.dumps({"format": MANIFEST_FORMAT, "pages": []}),
        json.dumps([]),
    ],
    ids=["not-json", "another-format", "a-page-without-fingerprint", "pages-a-list", "a-list"],
)
def test_a_manifest_that_cannot_be_read_is_empty(tmp_path: Path, text: str) -> None:
    (tmp_path / KEPT_FOLDER).mkdir()
    (tmp_path / KEPT_FOLDER / MANIFEST_NAME).write_text(text)
    assert Manifest.read(tmp_path) == Manifest({})


def test_no_manifest_is_empty_and_names_not_a_publishs_are_dropped(tmp_path: Path) -> None:
    assert Manifest.read(tmp_path) == Manifest({})
    (tmp_path / KEPT_FOLDER).mkdir()
    pages = {name: {"fingerprint": "f", "sha256": "d"} for name in ("run-1.html", "../etc.html")}
    data = {"format": MANIFEST_FORMAT, "pages": pages}
    (tmp_path / KEPT_FOLDER / MANIFEST_NAME).write_text(json.dumps(data))
    assert Manifest.read(tmp_path) == Manifest({"run-1.html": Page("f", "d")})
