"""Secrets stay secret: credentials are masked wherever grpcbench prints or saves text.

A password in a URI (``mongodb://user:PASSWORD@host``) is replaced by ``***``
in messages, results files, reports and saved options; secrets reach child
processes on stdin, never on their command line (``ps`` shows that to everyone).
"""

from __future__ import annotations

import re
from typing import Any

MASK = "***"
# scheme://user:password@ - the password is anything up to the last "@" of the authority.
_URI_CREDENTIALS = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^:/@\s]*:)(?P<secret>[^\s/]*)@")


def redact(text: str) -> str:
    """``text`` with the password of every URI in it masked."""
    return _URI_CREDENTIALS.sub(lambda m: f"{m['head']}{MASK}@", text)


def redact_all(value: Any) -> Any:
    """A JSON-like value (dicts, lists, strings) with every string redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: redact_all(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_all(item) for item in value]
    return value
