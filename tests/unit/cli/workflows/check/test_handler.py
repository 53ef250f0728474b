"""The check command's report link must be an http URL."""

from __future__ import annotations

import pytest

from perflab.cli.workflows.check.handler import checked_link
from perflab.records.errors import ConfigError


@pytest.mark.parametrize(
    "link",
    [
        "javascript:alert(1)",
        "report.html",
        "ftp://ci.example/r.html",
        "https://",
        "https://user@ci.example/r.html",
        "https://ci.example/a b",
        "https://ci.example:port/r",
        "https://ci.example/r\n### ✅",
    ],
)
def test_a_report_link_must_be_an_http_url(link: str) -> None:
    with pytest.raises(ConfigError, match="--report-link"):
        checked_link(link)
