"""The pages a publish wrote, kept in the site's folder: each page's fingerprint (a digest of
what it was made from) and the digest of its text. Publishing again renders only the pages
whose fingerprint changed or whose file no longer holds what was written, and removes the
pages it wrote before that the store no longer has, and no other file."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from perflab.publish.figures import KEPT_FOLDER
from perflab.records.version import __version__
from perflab.report.files import write_file

MANIFEST_NAME = "manifest.json"
# raise it when the manifest changes shape: an older one is then read as none (every page rendered)
MANIFEST_FORMAT = 1
# the only names a publish writes, so the only ones it may remove
PAGE_NAME = re.compile(r"index\.html|run-\d+\.html|trend-[a-z0-9-]+\.html")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fingerprint(*parts: object) -> str:
    """What a page is made from, with the perflab that renders it."""
    return digest(repr((MANIFEST_FORMAT, __version__, *parts)))[:20]


@dataclass(frozen=True)
class Page:
    """What the manifest remembers of one published page: what it was made from and what was
    written."""

    fingerprint: str
    sha256: str  # of the text written


@dataclass(frozen=True)
class Manifest:
    """The pages a publish wrote, by file name."""

    pages: Mapping[str, Page]

    @classmethod
    def read(cls, folder: Path) -> Manifest:
        """The manifest a publish left in `folder`; empty when there is none, or one this
        perflab cannot read (every page is then rendered and compared, none removed)."""
        try:
            data = json.loads((folder / KEPT_FOLDER / MANIFEST_NAME).read_text(encoding="utf-8"))
            if data.get("format") != MANIFEST_FORMAT:
                return cls({})
            return cls(
                {
                    str(name): Page(str(page["fingerprint"]), str(page["sha256"]))
                    for name, page in data["pages"].items()
                    if PAGE_NAME.fullmatch(str(name))
                }
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return cls({})  # a cache of what was written: the pages are compared instead

    def up_to_date(self, folder: Path, name: str, made_from: str) -> bool:
        """The page was made from `made_from` and its file still holds what was written."""
        page = self.pages.get(name)
        if page is None or page.fingerprint != made_from:
            return False
        path = folder / name
        if path.is_symlink():
            return False
        try:
            return hashlib.sha256(path.read_bytes()).hexdigest() == page.sha256
        except OSError:
            return False

    def stale(self, folder: Path, kept: Mapping[str, Page]) -> list[str]:
        """Pages this manifest lists that `kept` does not, still files in `folder`."""
        return sorted(
            name
            for name in self.pages
            if name not in kept
            and PAGE_NAME.fullmatch(name)
            and (folder / name).is_file()
            and not (folder / name).is_symlink()
        )

    def write(self, folder: Path) -> None:
        data = {
            "format": MANIFEST_FORMAT,
            "perflab": __version__,
            "pages": {
                name: {"fingerprint": p.fingerprint, "sha256": p.sha256}
                for name, p in sorted(self.pages.items())
            },
        }
        (folder / KEPT_FOLDER).mkdir(exist_ok=True)
        write_file(folder / KEPT_FOLDER / MANIFEST_NAME, json.dumps(data, indent=1) + "\n")
