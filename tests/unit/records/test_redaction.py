"""Credentials never shown (records/redaction.py): a URL's password and a connection string's
secret parameters are masked, anything else is kept, and malformed text never raises. The
passwords of real stores in every output are checked in tests/faults/test_secrets.py."""

from __future__ import annotations

import pytest

from perflab.records.redaction import MASK, SECRET_PARAMETERS, redact


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("postgresql://u:pw@h:5/db", "postgresql://u:***@h:5/db"),
        ("postgres://u:p@ss/w@h/db failed", "postgres://u:***@h/db failed"),  # to the last @
        (
            "postgresql://h/db?password=pw&sslmode=require",
            "postgresql://h/db?password=***&sslmode=require",
        ),
        ("postgresql://h/db?pass%77ord=pw", "postgresql://h/db?pass%77ord=***"),  # decoded key
        ("host=h password='a b' user=u", "host=h password=*** user=u"),
        ("host=h password = pw", "host=h password = ***"),  # libpq allows spaces around =
        ("host=h sslpassword=k passfile=/home/u/.pgpass", "host=h sslpassword=*** passfile=***"),
        ("postgresql://u:pw@[::1:5432/db", "postgresql://u:***@[::1:5432/db"),  # unclosed [
    ],
)
def test_every_credential_is_masked(text: str, shown: str) -> None:
    assert redact(text) == shown


@pytest.mark.parametrize(
    "text",
    [
        "postgresql://u@[::1]:5432/db?host=/tmp&sslmode=require",
        "runs/perflab.db",
        "postgresql://h/db?password=&sslmode=require",  # no value: nothing to hide
        "postgresql://USER[:PASSWORD]@HOST/DB",  # a hint showing the syntax
        "timeout=5 budget=10",
    ],
)
def test_what_is_not_a_secret_is_kept(text: str) -> None:
    assert redact(text) == text


def test_the_mask_and_the_secret_parameters() -> None:
    assert MASK == "***"
    assert SECRET_PARAMETERS == {"password", "sslpassword", "passfile"}
