"""Which store a command uses, and where that was said: `--store`, else the PERFLAB_STORE
environment variable, else a project's configuration file, else the default.

The configuration file is the nearest `perflab.toml` (`store = "..."`) or `pyproject.toml`
(`[tool.perflab] store = "..."`) that names a store, searched from the current folder upwards;
the search stops after a repository's root (a folder holding `.git`) or the filesystem's root, so
a project never picks up a setting from outside its repository. In one folder, perflab.toml is read
before pyproject.toml. A relative path in a file is relative to that file's folder (the file is
the project's, the current folder may be any of its subfolders).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perflab.records.errors import ConfigError
from perflab.records.redaction import redact
from perflab.store import StoreLocation, location_facts, store_location
from perflab.store.sqlite import DEFAULT_STORE_PATH

ENVIRONMENT_VARIABLE = "PERFLAB_STORE"
# searched in this order in each folder
CONFIG_FILES = ("perflab.toml", "pyproject.toml")


@dataclass(frozen=True)
class StoreSetting:
    """The store in use and where the setting came from ("--store", "PERFLAB_STORE",
    "pyproject.toml at /path", "the default")."""

    location: StoreLocation
    source: str

    def shown(self) -> str:
        """The store as it may be printed: a URL's password hidden."""
        return redact(str(self.location))

    def to_json(self) -> dict[str, str]:
        return {"location": self.shown(), "source": self.source}


def resolve_store(
    given: StoreLocation | None, environ: Mapping[str, str], cwd: Path
) -> StoreSetting:
    """--store > PERFLAB_STORE > the nearest configuration file > the default."""
    if given is not None:
        return StoreSetting(given, "--store")
    from_environment = environ.get(ENVIRONMENT_VARIABLE, "")
    if from_environment:
        return StoreSetting(_checked(from_environment, ENVIRONMENT_VARIABLE), ENVIRONMENT_VARIABLE)
    for path in _config_candidates(cwd):
        text = _store_in(path)
        if text is not None:
            return StoreSetting(_relative_to(path, text), f"{path.name} at {path}")
    return StoreSetting(DEFAULT_STORE_PATH, "the default")


def _config_candidates(cwd: Path) -> list[Path]:
    """The configuration files from `cwd` up to its repository's root or the filesystem's."""
    found = []
    for folder in (cwd, *cwd.parents):
        found += [folder / name for name in CONFIG_FILES if (folder / name).is_file()]
        if (folder / ".git").exists():
            break
    return found


def _store_in(path: Path) -> str | None:
    """The store a configuration file names, or None when it names none."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(
            f"{path} cannot be read as TOML: {error}",
            hint="fix the file, or name the store with --store or PERFLAB_STORE",
        ) from None
    table: Any = document
    if path.name == "pyproject.toml":
        tool = document.get("tool", {})
        table = tool.get("perflab", {}) if isinstance(tool, dict) else {}
        if not isinstance(table, dict):
            raise ConfigError(
                f"{path}: [tool.perflab] must be a table", hint='write [tool.perflab] store = "..."'
            )
    value = table.get("store")
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        key = "[tool.perflab] store" if path.name == "pyproject.toml" else "store"
        raise ConfigError(
            f"{path}: {key} must be a non-empty string (a path or a postgresql:// URL), "
            f"not {type(value).__name__}",
            hint='e.g. store = ".perflab/perflab.db"',
        )
    return value


def _relative_to(config: Path, text: str) -> StoreLocation:
    if not location_facts(text).is_file:  # a server's URL: relative to nothing
        return _checked(text, str(config))
    path = Path(text).expanduser()
    return path if path.is_absolute() else config.parent / path


def _checked(text: str, source: str) -> StoreLocation:
    """A URL checked as --store's is, its error naming where it was written."""
    try:
        return store_location(text)
    except ConfigError as error:
        raise ConfigError(
            f"{source}: {error.message.removeprefix('--store ')}", hint=error.hint
        ) from None
