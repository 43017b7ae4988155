"""Secrets stay secret: credentials are masked wherever grpcbench prints or saves text.

A password in a URI (``mongodb://user:PASSWORD@host``) is replaced by ``***``
in messages, results files, reports and saved options; secrets reach child
processes on stdin, never on their command line (``ps`` shows that to everyone).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
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


def mask_params(params: dict[str, Any], secret: Collection[str]) -> dict[str, Any]:
    """Parameters as shown and saved: secret ones masked, URIs redacted."""
    return {key: MASK if key in secret else redact_all(value) for key, value in params.items()}


# Options whose value is request metadata (credentials, as ghz users pass them).
_METADATA_OPTIONS = ("-m", "--metadata")
_PARAM_OPTIONS = ("--server-param", "--workload-param")


def redact_argv(argv: Sequence[str], secret_params: Collection[str] = ()) -> list[str]:
    """A command line as saved: metadata values and secret parameters masked."""
    shown: list[str] = []
    masking: str | None = None  # the option whose value comes next
    for arg in argv:
        if masking is not None:
            shown.append(_masked_value(masking, arg, secret_params))
            masking = None
            continue
        option, equals, value = arg.partition("=")
        if option in _METADATA_OPTIONS + _PARAM_OPTIONS:
            if equals:
                shown.append(f"{option}={_masked_value(option, value, secret_params)}")
            else:
                shown.append(arg)
                masking = option
            continue
        if arg.startswith("-m") and not arg.startswith("--") and len(arg) > 2:
            shown.append("-m" + MASK)
            continue
        shown.append(redact(arg))
    return shown


def _masked_value(option: str, value: str, secret_params: Collection[str]) -> str:
    if option in _METADATA_OPTIONS:
        key, equals, _ = value.partition("=")
        return f"{key}={MASK}" if equals and not value.lstrip().startswith("{") else MASK
    key, equals, _ = value.partition("=")
    return f"{key}={MASK}" if equals and key in secret_params else redact(value)
