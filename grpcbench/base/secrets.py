"""Secrets stay secret: credentials are masked wherever grpcbench prints or saves text.

A password in a URI (``mongodb://user:PASSWORD@host``) is replaced by ``***``
in messages, results files, reports and saved options; secrets reach child
processes on stdin, never on their command line (``ps`` shows that to everyone).
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Sequence
from typing import Any

MASK = "***"
_SPACE = re.compile(r"\s")


def redact(text: str) -> str:
    """``text`` with the password of every URI in it masked: in ``scheme://user:PASSWORD@``
    everything between the first ":" and the last "@" of the URI's word, so a password
    holding "/" or "@" is masked whole. Linear in the text's length: a megabyte of
    letters is read once, not once per letter (a regex anchored on the scheme was)."""
    if "://" not in text:
        return text
    shown: list[str] = []
    done = 0
    while (mark := text.find("://", done)) != -1:
        start = mark + 3
        space = _SPACE.search(text, start)
        end = space.start() if space else len(text)
        word = text[start:end]
        at = word.rfind("@")
        colon = word.find(":", 0, at) if at > 0 else -1
        if colon == -1:
            shown.append(text[done:end])
        else:
            shown.append(f"{text[done:start]}{word[: colon + 1]}{MASK}{word[at:]}")
        done = end
    shown.append(text[done:])
    return "".join(shown)


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


# Options whose value is request metadata (credentials, as ghz users pass them):
# KEY=VALUE keeps its key. Other secret options are declared (``declarations.option``
# with ``secret=True``) and reach ``redact_argv`` as ``secret_options``.
_METADATA_OPTIONS = ("-m", "--metadata")
_PARAM_OPTIONS = ("--server-param", "--workload-param")


def redact_argv(
    argv: Sequence[str],
    secret_params: Collection[str] = (),
    secret_options: Collection[str] = (),
) -> list[str]:
    """A command line as saved: the values of secret options (every spelling, ``--opt
    V``, ``--opt=V`` and ``-oV``) and of secret parameters masked, URIs redacted."""
    masked = set(secret_options) | set(_METADATA_OPTIONS) | set(_PARAM_OPTIONS)
    shorts = {option for option in masked if len(option) == 2 and option[1] != "-"}
    shown: list[str] = []
    masking: str | None = None  # the option whose value comes next
    for arg in argv:
        if masking is not None:
            shown.append(_masked_value(masking, arg, secret_params))
            masking = None
            continue
        option, equals, value = arg.partition("=")
        if option in masked:
            if equals:
                shown.append(f"{option}={_masked_value(option, value, secret_params)}")
            else:
                shown.append(arg)
                masking = option
            continue
        if arg[:2] in shorts and len(arg) > 2:
            shown.append(arg[:2] + _masked_value(arg[:2], arg[2:], secret_params))
            continue
        shown.append(redact(arg))
    return shown


def _masked_value(option: str, value: str, secret_params: Collection[str]) -> str:
    key, equals, _ = value.partition("=")
    if option in _METADATA_OPTIONS:
        return f"{key}={MASK}" if equals and not value.lstrip().startswith("{") else MASK
    if option in _PARAM_OPTIONS:
        return f"{key}={MASK}" if equals and key in secret_params else redact(value)
    return redact(value) if "://" in value else MASK


class SecretFiles:
    """Secrets handed to a program that reads them only from a file (ghz's
    ``--metadata-file``): anonymous in-memory files (``memfd``) the child inherits and
    opens as ``/dev/fd/N``, so nothing is left on a disk whatever happens to us, kill -9
    included (a file in a temporary directory was). ``fds``: what the child must
    inherit. Where there is no memfd (not Linux), ``path`` is None: write a file."""

    def __init__(self) -> None:
        self.fds: list[int] = []

    def path(self, text: str) -> str | None:
        if not hasattr(os, "memfd_create"):
            return None
        descriptor = os.memfd_create("grpcbench-secret", 0)  # not CLOEXEC: for the child
        self.fds.append(descriptor)
        os.write(descriptor, text.encode())
        return f"/dev/fd/{descriptor}"

    def close(self) -> None:
        for descriptor in self.fds:
            os.close(descriptor)
        self.fds.clear()

    def __enter__(self) -> SecretFiles:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
