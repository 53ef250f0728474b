"""perflab's version (records/version.py) is the one the package is built with and the one the
library's public face gives."""

from __future__ import annotations

import tomllib
from pathlib import Path

import perflab
from perflab.records.version import __version__

PYPROJECT = Path(__file__).resolve().parents[3] / "pyproject.toml"


def test_the_version_is_the_packages_and_the_librarys() -> None:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    assert __version__ == project["version"]
    assert perflab.__version__ == __version__
