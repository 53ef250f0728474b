"""Credentials are never shown: `redact` is applied to every text that may hold a store's URL
(messages, hints, tracebacks, the store's name in reports) before it is printed or stored.

It works on any text, not only on a well-formed URL, so a malformed one (an unclosed `[`) is
redacted as surely as a good one; it never raises. What it hides:
  - a URL's user-info password: `postgresql://user:SECRET@host` -> `postgresql://user:***@host`
  - a secret connection parameter in a URL's query or a `key=value` connection string:
    `?password=SECRET`, `&sslpassword=SECRET` (the key compared percent-decoded, as libpq reads it)
"""

from __future__ import annotations

import re
import urllib.parse

MASK = "***"
# libpq's connection parameters whose value is a secret or says where one is kept
SECRET_PARAMETERS = frozenset({"password", "sslpassword", "passfile"})

# scheme://USER:PASSWORD@ : the password runs to the URL's last '@' (an unencoded '@' or '/' in
# it may be read otherwise by libpq; hiding too much is the safe side)
_USER_INFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^:/@\s'\"]*):[^\s'\"]*@")
_TEMPLATE = ":PASSWORD]@"
# KEY=VALUE after a query's '?'/'&', a connection string's space, or the text's start
_PARAMETER = re.compile(
    r"(?P<head>(?:^|(?<=[?&;\s,(]))(?P<key>[A-Za-z0-9_%.+-]+)\s*=\s*)"
    r"(?P<value>'(?:[^'\\]|\\.)*'?|[^\s&#;'\"]*)"
)


def redact(text: str) -> str:
    """`text` with every credential in a URL or connection string replaced by ***."""
    text = _USER_INFO.sub(_user_info, text)
    return _PARAMETER.sub(_parameter, text)


def _user_info(match: re.Match[str]) -> str:
    if match[0].endswith(_TEMPLATE):  # a hint's USER[:PASSWORD]@HOST shows the syntax
        return match[0]
    return f"{match['head']}:{MASK}@"


def _parameter(match: re.Match[str]) -> str:
    key = urllib.parse.unquote(match["key"]).strip().lower()
    if key not in SECRET_PARAMETERS or not match["value"]:
        return match[0]
    return match["head"] + MASK
