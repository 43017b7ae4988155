"""gRPC metadata as given on the command line: ``-m KEY=VALUE``, ghz's ``-m JSON`` and
``-M FILE`` read into one JSON object (``read_metadata``), and that text, rendered,
into the key/value pairs a call sends (``parse_metadata``), each key and value checked
as gRPC would before any load: reserved keys refused by name."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import Any

from grpcbench.base.errors import UsageError
from grpcbench.base.input_files import read_input_text

Metadata = tuple[tuple[str, str | bytes], ...]


def parse_json(text: str, what: str) -> Any:
    """JSON text, or one line saying what of the command line it is not."""
    try:
        return json.loads(text)
    except ValueError as error:
        raise UsageError(f"{what} is not valid JSON: {error}") from None
    except RecursionError:
        raise UsageError(f"{what} is nested too deeply to be a request") from None


def parse_metadata(text: str) -> Metadata:
    """-m/-M's JSON object text -> gRPC metadata (one UsageError if it is not that)."""
    return metadata_pairs(parse_json(text, "the metadata (-m/-M)"), "the metadata (-m/-M)")


def metadata_pairs(value: Any, what: str) -> Metadata:
    """A JSON object of strings -> gRPC metadata; ``-bin`` keys carry bytes."""
    if not isinstance(value, dict):
        raise UsageError(f"{what} must be a JSON object of strings")
    pairs: list[tuple[str, str | bytes]] = []
    for key, item in value.items():
        if not isinstance(item, str | int | float | bool) or not key:
            raise UsageError(f"{what}: the value of {key!r} must be a string")
        name = key.lower()  # gRPC metadata keys are lower case (ghz lowercases them too)
        text = str(item)
        _check_metadata(name, text, what)
        pairs.append((name, text.encode() if name.endswith("-bin") else text))
    return tuple(pairs)


# gRPC's PROTOCOL-HTTP2.md: a key is lower-case letters, digits, "_", "-" and "."; a
# value printable ASCII (space included) unless the key ends in -bin (any bytes).
_METADATA_KEY = re.compile(r"[0-9a-z_.-]+")
_METADATA_VALUE = re.compile(r"[\x20-\x7e]*")


# Keys gRPC sets itself (grpc-go's isReservedHeader; grpc.aio leaves them out too) and
# HTTP/2's connection-specific fields (RFC 9113 8.2.2, 8.3.1): as metadata they would be
# dropped by grpc and malformed or duplicated on the wire, so each is refused by name.
RESERVED_METADATA = {
    "content-type": "gRPC sets it (application/grpc)",
    "te": "gRPC sets it (trailers)",
    "user-agent": "gRPC sets it",
    "grpc-timeout": "the call's deadline sets it: give -t/--timeout",
    "grpc-encoding": "compression sets it: give -e/--enable-compression",
    "grpc-message-type": "gRPC sets it",
    "grpc-message": "a server's reply field",
    "grpc-status": "a server's reply field",
    "grpc-status-details-bin": "a server's reply field",
    "host": "HTTP/2 carries it as :authority: give --authority",
    "connection": "HTTP/2 has no connection-specific fields",
    "keep-alive": "HTTP/2 has no connection-specific fields: give --keepalive for PINGs",
    "proxy-connection": "HTTP/2 has no connection-specific fields",
    "transfer-encoding": "HTTP/2 has no connection-specific fields",
    "upgrade": "HTTP/2 has no connection-specific fields",
}


def _check_reserved(name: str, what: str) -> None:
    """A reserved key (``RESERVED_METADATA``), which grpc would drop and the wire stack
    would send, is refused by name."""
    if name in RESERVED_METADATA:
        raise UsageError(f"{what}: {name} is reserved: {RESERVED_METADATA[name]}")


def _check_metadata(name: str, value: str, what: str) -> None:
    """Metadata grpc would refuse to send is refused here, before any load, on both
    client stacks (grpc crashed the generator; wire sent it); so is a reserved key."""
    _check_reserved(name, what)
    if not _METADATA_KEY.fullmatch(name):
        shown = ":authority and other pseudo-headers" if name.startswith(":") else repr(name)
        raise UsageError(
            f"{what}: {shown} cannot be a metadata key (letters, digits, '_', '-', '.')"
        )
    if not name.endswith("-bin") and not _METADATA_VALUE.fullmatch(value):
        raise UsageError(
            f"{what}: the value of {name!r} holds a character gRPC metadata cannot carry"
            " (printable ASCII only; a key ending in -bin carries any bytes)"
        )


def read_metadata(items: Sequence[str], metadata_file: str | None) -> str:
    """``-m KEY=VALUE`` (repeatable) or ghz's ``-m JSON``, and/or ``-M FILE`` -> one JSON object.

    Later entries win; the values stay untouched (template actions included)."""
    merged: dict[str, Any] = {}
    if metadata_file is not None:
        text = read_input_text(metadata_file, "-M")
        value = parse_json(text, f"-M {os.path.basename(metadata_file)}")
        metadata_pairs(value, "-M")
        merged.update(value)
    for item in items:
        if item.lstrip().startswith("{"):
            value = parse_json(item, "-m")
            metadata_pairs(value, "-m")
            merged.update(value)
            continue
        key, separator, text = item.partition("=")
        if not separator or not key.strip():
            raise UsageError("bad -m: expected KEY=VALUE or a JSON object")  # never echo a value
        merged[key.strip()] = text
    for key in merged:  # the values wait for their templates; a reserved key is known now
        _check_reserved(key.lower(), "-m")
    return json.dumps(merged)
