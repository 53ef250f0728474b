"""The hint an asv suite's failed import gets when the package it wanted lies in the working
directory, which the suite's imports leave off sys.path (as asv does): its unbuilt source tree
imported anyway, or a package there that is not installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab.worker.perflab_asv import import_hint


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project's root as the working directory, its package `mypkg` unbuilt there."""
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("from ._built import work\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_package_in_the_working_directory_but_not_installed(project: Path) -> None:
    hint = import_hint(ModuleNotFoundError("No module named 'mypkg'", name="mypkg"))
    assert hint is not None
    assert f"'mypkg' is in the working directory ({project / 'mypkg'}) but not installed" in hint
    # git= variants: an install per checkout, not one environment that the last build wins
    assert '--build "python3 -m venv venv && venv/bin/pip install ."' in hint
    assert "python=venv/bin/python" in hint and "env.PYTHONPATH=." in hint


def test_the_unbuilt_source_tree_imported_through_the_path(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(project))  # PYTHONPATH=. of a variant
    hint = import_hint(ModuleNotFoundError("No module named 'mypkg._built'", name="mypkg._built"))
    assert hint is not None
    assert (
        f"'mypkg' was imported from the source tree in the working directory ({project / 'mypkg'})"
        in hint
    )


def test_other_errors_get_no_hint(project: Path) -> None:
    assert import_hint(ModuleNotFoundError("No module named 'elsewhere'", name="elsewhere")) is None
    assert import_hint(ValueError("no data")) is None
    assert import_hint(ImportError("no name")) is None
