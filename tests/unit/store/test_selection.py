"""Which store a command uses: --store > PERFLAB_STORE > a project file > the default."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab.records.errors import ConfigError
from perflab.store.selection import resolve_store
from perflab.store.sqlite import DEFAULT_STORE_PATH

URL = "postgresql://team:s3cret@db.example/perf"


def test_the_default_when_nothing_names_a_store(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    setting = resolve_store(None, {}, tmp_path)
    assert (setting.location, setting.source) == (DEFAULT_STORE_PATH, "the default")


def test_store_beats_the_environment_which_beats_a_file(tmp_path: Path) -> None:
    (tmp_path / "perflab.toml").write_text('store = "from-file.db"\n')
    environ = {"PERFLAB_STORE": "from-env.db"}
    given = resolve_store(Path("given.db"), environ, tmp_path)
    assert (given.location, given.source) == (Path("given.db"), "--store")
    from_env = resolve_store(None, environ, tmp_path)
    assert (from_env.location, from_env.source) == (Path("from-env.db"), "PERFLAB_STORE")
    from_file = resolve_store(None, {"PERFLAB_STORE": ""}, tmp_path)
    assert from_file.location == tmp_path / "from-file.db"
    assert from_file.source == f"perflab.toml at {tmp_path / 'perflab.toml'}"


def test_pyproject_found_from_a_subfolder_relative_to_its_own_folder(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[tool.perflab]\nstore = "s/p.db"\n'
    )
    deep = tmp_path / "src" / "pkg"
    deep.mkdir(parents=True)
    (deep / "pyproject.toml").write_text('[project]\nname = "inner"\n')  # names no store: skipped
    setting = resolve_store(None, {}, deep)
    assert setting.location == tmp_path / "s" / "p.db"
    assert setting.source == f"pyproject.toml at {tmp_path / 'pyproject.toml'}"


def test_perflab_toml_is_read_before_pyproject_in_one_folder(tmp_path: Path) -> None:
    (tmp_path / "perflab.toml").write_text('store = "a.db"\n')
    (tmp_path / "pyproject.toml").write_text('[tool.perflab]\nstore = "b.db"\n')
    assert resolve_store(None, {}, tmp_path).location == tmp_path / "a.db"


def test_the_search_stops_at_the_repository_root(tmp_path: Path) -> None:
    (tmp_path / "perflab.toml").write_text('store = "outside.db"\n')
    repository = tmp_path / "repo"
    (repository / ".git").mkdir(parents=True)
    assert resolve_store(None, {}, repository).source == "the default"


def test_a_url_is_kept_and_shown_without_its_password(tmp_path: Path) -> None:
    (tmp_path / "perflab.toml").write_text(f'store = "{URL}"\n')
    setting = resolve_store(None, {}, tmp_path)
    assert setting.location == URL
    assert "s3cret" not in setting.shown() and "s3cret" not in str(setting.to_json())
    assert resolve_store(None, {"PERFLAB_STORE": URL}, tmp_path).location == URL


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        ("perflab.toml", "store = [unclosed\n", "cannot be read as TOML"),
        ("perflab.toml", "store = 3\n", "store must be a non-empty string"),
        ("pyproject.toml", "[tool.perflab]\nstore = true\n", "[tool.perflab] store must be"),
        ("pyproject.toml", "[tool]\nperflab = 1\n", "[tool.perflab] must be a table"),
    ],
)
def test_a_bad_file_is_an_error_naming_it(tmp_path: Path, name: str, text: str, words: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(ConfigError) as raised:
        resolve_store(None, {}, tmp_path)
    assert str(tmp_path / name) in str(raised.value) and words in str(raised.value)
    assert raised.value.exit_code == 2


def test_a_malformed_url_names_where_it_was_written_without_its_password(tmp_path: Path) -> None:
    bad = "postgresql://team:s3cret@[::1/perf"
    with pytest.raises(ConfigError) as from_env:
        resolve_store(None, {"PERFLAB_STORE": bad}, tmp_path)
    assert str(from_env.value).startswith("PERFLAB_STORE: ")
    (tmp_path / "perflab.toml").write_text(f'store = "{bad}"\n')
    with pytest.raises(ConfigError) as from_file:
        resolve_store(None, {}, tmp_path)
    assert str(from_file.value).startswith(f"{tmp_path / 'perflab.toml'}: ")
    assert "s3cret" not in str(from_env.value) + str(from_file.value)
