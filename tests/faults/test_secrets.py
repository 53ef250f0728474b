"""Secrets are never printed: a PostgreSQL store's password, wherever the URL carries it (its
user-info, `?password=`, `&sslpassword=`), appears in no message, traceback, report or file; a
malformed URL is a clear error (status 2), not a traceback quoting it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from perflab.records.redaction import redact
from tests.support import postgres_server
from tests.support.cli_commands import FAST, perflab

pytestmark = pytest.mark.integration

SECRET = "S3cr3tPerflabPw"
# a closed port on this machine: nothing answers
URLS = {
    "user-info": f"postgresql://u:{SECRET}@127.0.0.1:55999/nodb",
    "query": f"postgresql://u@127.0.0.1:55999/nodb?password={SECRET}",
    "host-then-password": f"postgresql:///nodb?host=127.0.0.1&port=55999&password={SECRET}",
    "sslpassword": f"postgresql://u@127.0.0.1:55999/nodb?sslpassword={SECRET}&sslmode=disable",
    "encoded-key": f"postgresql://u@127.0.0.1:55999/nodb?pass%77ord={SECRET}",
}
MALFORMED = {
    "unclosed-ipv6": f"postgresql://u:{SECRET}@[::1:55999/db",
    "unknown-parameter": f"postgresql://u:{SECRET}@127.0.0.1:55999/db?bogus={SECRET}",
}


def _outputs(tmp_path: Path, *args: str) -> tuple[int, str]:
    """Status, and everything perflab said or wrote: stdout, stderr, every file made."""
    done = perflab(*args, cwd=tmp_path, timeout_s=120)
    written = "".join(
        p.read_text(errors="replace") for p in sorted(tmp_path.rglob("*")) if p.is_file()
    )
    return done.returncode, done.stdout + done.stderr + written


def _commands(url: str, tmp_path: Path) -> list[list[str]]:
    reports = ["--json", str(tmp_path / "r.json"), "--markdown", str(tmp_path / "r.md"),
               "--export-csv", str(tmp_path / "r.csv")]  # fmt: skip
    return [
        ["run", "--cmd", "true", "-q", *FAST, "--store", url, *reports],
        ["list", "--store", url, "--json", "-"],
        ["show", "latest", "--store", url],
        ["compare", "1", "2", "--store", url],
        ["doctor", "--store", url],
    ]


@pytest.mark.parametrize("case", sorted(URLS))
def test_a_password_in_a_store_url_is_never_printed(tmp_path: Path, case: str) -> None:
    """--store with a password-bearing PostgreSQL URL on an unreachable server (the password
    in the user-info, ?password=, ?host=…&password=, sslpassword, a percent-encoded key): run,
    list, show, compare and doctor fail with a message (status 2, no traceback) and the
    password is in no output and no file written"""
    for args in _commands(URLS[case], tmp_path):
        status, said = _outputs(tmp_path, *args)
        assert status == 2, (args, said)
        assert SECRET not in said, (args, said)
        assert "Traceback" not in said
        assert "***" in said


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_store_url_is_a_clear_error_without_its_password(
    tmp_path: Path, case: str
) -> None:
    """--store with a malformed PostgreSQL URL holding a password (an unclosed IPv6 '[', an
    unknown parameter): "not a valid PostgreSQL URL", status 2, no traceback, no password"""
    for args in _commands(MALFORMED[case], tmp_path)[:3]:
        status, said = _outputs(tmp_path, *args)
        assert status == 2, (args, said)
        assert "not a valid PostgreSQL URL" in " ".join(said.split())
        assert SECRET not in said and "Traceback" not in said


def test_a_store_url_typed_in_the_wrong_place_is_refused_without_its_password(
    tmp_path: Path,
) -> None:
    """a password-bearing URL given where no URL belongs (a stray argument, a wrong option's
    value): the usage error (status 2) quotes it with its password hidden"""
    for args in (
        ["list", URLS["user-info"]],
        ["list", "--limit", URLS["query"]],
        ["run", "--cmd", "true", "--runs", URLS["host-then-password"]],
    ):
        status, said = _outputs(tmp_path, *args)
        assert status == 2, (args, said)
        assert SECRET not in said and "Traceback" not in said, (args, said)


def test_redaction_hides_every_credential_and_keeps_the_rest() -> None:
    """the one redaction: user-info passwords, secret parameters (quoted, encoded), malformed
    URLs; user, host, port, database and other parameters kept"""
    for url in (*URLS.values(), MALFORMED["unclosed-ipv6"]):
        assert SECRET not in redact(f"cannot connect to {url}: refused")
    assert redact("host=h password='a b' user=u") == "host=h password=*** user=u"
    kept = "postgresql://u@[::1]:5432/db?host=/tmp&sslmode=require"
    assert redact(kept) == kept
    assert redact("postgresql://u:pw@h:5/db") == "postgresql://u:***@h:5/db"


@pytest.fixture(scope="module")
def postgresql() -> Iterator[str]:
    pytest.importorskip("psycopg", reason="psycopg is not installed (perflab[team])")
    if postgres_server.binaries() is None:
        pytest.skip("PostgreSQL is not installed (scripts/setup.sh --test installs it)")
    with postgres_server.postgresql_server() as url:
        yield url


@pytest.mark.parametrize("where", ["user-info", "query"])
def test_a_working_store_urls_password_is_in_no_output_report_or_stored_run(
    postgresql: str, tmp_path: Path, where: str
) -> None:
    """a PostgreSQL store reached with a password in its URL (the server trusts the socket, so
    any password connects): run (every report), list, show and compare succeed, and the
    password is in no output, no file and no stored row"""
    import psycopg

    database = postgres_server.new_database(postgresql, f"secrets_{where.replace('-', '_')}")
    user, _, rest = database.removeprefix("postgresql://").partition("@")
    url = (
        f"postgresql://{user}:{SECRET}@{rest}"
        if where == "user-info"
        else f"{database}&password={SECRET}"
    )
    commands = _commands(url, tmp_path)
    commands[0] += ["--html", str(tmp_path / "r.html"),
                    "--export-hyperfine-json", str(tmp_path / "h.json")]  # fmt: skip
    for args in (commands[0], commands[0], *commands[1:4]):
        status, said = _outputs(tmp_path, *args)
        assert status == 0, (args, said)
        assert SECRET not in said, args
    with psycopg.connect(database) as connection:
        stored = connection.execute(
            "SELECT experiment_json || machine_json || COALESCE(error, '') FROM runs"
            " UNION ALL SELECT info_json FROM variant_info"
            " UNION ALL SELECT message || COALESCE(hint, '') FROM notes"
        ).fetchall()
    assert stored and not [row for row in stored if SECRET in row[0]]
