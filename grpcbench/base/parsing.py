"""Parsers for the small value languages of the CLI (lists, durations, CPU sets).

They raise ``UsageError`` with a message that names the bad value, so the CLI can
print one line instead of a traceback.
"""

from __future__ import annotations

import os
import re
import tomllib
from typing import Any

from grpcbench.base.errors import UsageError

# A bare number of seconds, or Go's time.ParseDuration form as ghz takes it: one or
# more number-unit pairs (1m30s, 1.5h, 200us), plus "min".
_BARE_SECONDS = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*$")
_GO_DURATION = re.compile(r"^(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|min|m|h))+$")
_GO_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|min|m|h)")
_UNIT_SECONDS = {
    "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0,
    "min": 60.0, "h": 3600.0,
}  # fmt: skip


def parse_positive_int_list(text: str, what: str) -> tuple[int, ...]:
    """``"2,10,25"`` -> ``(2, 10, 25)``; every item must be a positive integer."""
    items = [item.strip() for item in text.split(",")]
    if not text.strip() or any(not item for item in items):
        raise UsageError(f"bad {what} list {text!r}: expected comma-separated positive integers")
    values: list[int] = []
    for item in items:
        value = decimal(item)
        if value is None or value <= 0:
            raise UsageError(f"bad {what} {item!r} in {text!r}: must be a positive integer")
        values.append(value)
    return tuple(values)


def parse_positive_float_list(text: str, what: str) -> tuple[float, ...]:
    """``"500,1000,2500"`` -> ``(500.0, 1000.0, 2500.0)``; every item must be > 0."""
    values: list[float] = []
    for item in text.split(","):
        try:
            value = float(item)
        except ValueError:
            raise UsageError(
                f"bad {what} {item.strip()!r} in {text!r}: expected a number"
            ) from None
        if not value > 0 or value != value or value == float("inf"):
            raise UsageError(f"bad {what} {item.strip()!r} in {text!r}: must be greater than zero")
        values.append(value)
    return tuple(values)


def parse_duration(text: str, what: str) -> float:
    """``"10s"``, ``"500ms"``, ``"1m30s"``, ``"200us"``, ``"1.5h"`` (Go's form, as ghz
    takes it) or a bare number of seconds -> seconds (> 0)."""
    seconds = duration_seconds(text)
    if seconds is None:
        raise UsageError(
            f"bad {what} {text!r}: expected a duration such as 10s, 500ms, 1m30s or 200us"
        )
    if not seconds > 0 or seconds == float("inf"):
        raise UsageError(f"bad {what} {text!r}: must be greater than zero")
    return seconds


def duration_seconds(text: str) -> float | None:
    """A duration's seconds (0 allowed), or None when ``text`` is not one."""
    bare = _BARE_SECONDS.match(text)
    if bare:
        return float(bare.group(1))
    compact = text.strip().replace(" ", "")
    if not _GO_DURATION.match(compact):
        return None
    return sum(float(number) * _UNIT_SECONDS[unit] for number, unit in _GO_PART.findall(compact))


# Past this many digits a number is no count, size, port or pid of this world: it is
# refused before int() sees it (which refuses past 4,300 digits, exit 70 here before).
MAX_DIGITS = 18


def decimal(text: str) -> int | None:
    """``text`` (stripped) as a non-negative integer of at most ``MAX_DIGITS`` ASCII
    digits; None for anything else."""
    stripped = text.strip()
    if not stripped.isascii() or not stripped.isdecimal() or len(stripped) > MAX_DIGITS:
        return None
    return int(stripped)


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)\s*$", re.IGNORECASE)


# The largest message size grpc takes (a channel argument is a 32-bit int).
LARGEST_SIZE = 2**31 - 1


def parse_size(text: str, what: str) -> int:
    """``"4194304"``, ``"42 MB"`` (10**6) or ``"4 MiB"`` (2**20) -> bytes, as ghz reads
    its message size options; at most ``LARGEST_SIZE``."""
    match = _SIZE.match(text)
    if not match or len(match.group(1)) > MAX_DIGITS:
        raise UsageError(f"bad {what} {text!r}: a size such as 4194304, 42 MB or 4 MiB")
    unit = match.group(2).lower().rstrip("b")
    powers = "kmgt"
    if not unit:
        scale = 1
    elif unit.endswith("i"):
        scale = 1024 ** (powers.index(unit[0]) + 1)
    else:
        scale = 1000 ** (powers.index(unit[0]) + 1)
    size = float(match.group(1)) * scale
    if size > LARGEST_SIZE:
        raise UsageError(f"bad {what} {text!r}: at most 2 GiB - 1 ({LARGEST_SIZE}), grpc's largest")
    return int(size)


def parse_warmup(text: str) -> tuple[int, float]:
    """A warm-up is either a request count (``"500"``) or a duration (``"2s"``).

    Returns ``(requests, seconds)`` with exactly one of them non-zero, or both zero
    for ``"0"`` (no warm-up).
    """
    stripped = text.strip()
    count = decimal(stripped)
    if count is not None:
        return count, 0.0
    if stripped.isdecimal():
        raise UsageError(f"bad warm-up {stripped[:40]!r}: too many calls")
    return 0, parse_duration(stripped, "warm-up")


def parse_cpu_set(text: str, what: str) -> tuple[int, ...]:
    """``"0"``, ``"0,1"`` or ``"0-3"`` -> sorted CPU indices, each one this process may
    run on (a range is bounded by them before it is built: ``0-999999999999`` is one
    line, not a set of a trillion)."""
    allowed = _allowed_cpus()
    cpus: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        bounds = part.split("-")
        numbers = [decimal(bound) if bound else None for bound in bounds]
        if not part or len(bounds) > 2 or None in numbers:
            raise UsageError(f"bad {what} {text!r}: expected CPU numbers such as 0, 0,1 or 0-3")
        low, high = numbers[0] or 0, numbers[-1] or 0
        if high < low:
            raise UsageError(f"bad {what} {text!r}: range {part} is empty")
        if high > max(allowed):
            raise _unavailable(what, max(low, max(allowed) + 1), allowed)
        cpus.update(range(low, high + 1))
    if cpus - allowed:
        raise _unavailable(what, min(cpus - allowed), allowed)
    return tuple(sorted(cpus))


def _unavailable(what: str, cpu: int, allowed: set[int]) -> UsageError:
    return UsageError(f"bad {what}: CPU {cpu} is not available (allowed: {sorted(allowed)})")


def _allowed_cpus() -> set[int]:
    """The CPUs this process may run on (all of the machine's where that is unknown)."""
    if hasattr(os, "sched_getaffinity"):
        return set(os.sched_getaffinity(0))
    return set(range(os.cpu_count() or 1))


def parse_host_port(text: str) -> tuple[str, int]:
    """``"127.0.0.1:50051"`` -> ``("127.0.0.1", 50051)``."""
    host, sep, port = text.rpartition(":")
    number = decimal(port) if sep and host else None
    if number is None or not 0 < number < 65536:
        raise UsageError(f"bad target {text!r}: expected HOST:PORT, e.g. 127.0.0.1:50051")
    return host.strip("[]"), number


# Deeper than this, a value given on the command line is no parameter: refused before
# a parser recurses into it (TOML's, JSON's: RecursionError, exit 70 before).
MAX_NESTING = 64


def nesting(text: str) -> int:
    """How deep ``[`` and ``{`` nest in ``text`` (brackets in strings count too: an
    upper bound, which is what a guard needs)."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(depth - 1, 0)
    return deepest


def parse_params(items: list[str], what: str) -> dict[str, Any]:
    """``["users=1000000", "keyword=e"]`` -> ``{"users": 1000000, "keyword": "e"}``.

    Values are read as TOML values (numbers, booleans, ``["a", "b"]``) and fall
    back to plain strings, so the command line says what a scenario file says.
    """
    params: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"bad {what} {item[:80]!r}: expected KEY=VALUE")
        if nesting(raw) > MAX_NESTING:  # refused before TOML's parser recurses into it
            raise UsageError(f"bad {what} {key.strip()[:40]!r}: nested over {MAX_NESTING} deep")
        try:
            value = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw
        params[key.strip()] = value
    return params


# Dask's comms a scheduler listens on; tls:// and wss:// are the encrypted ones.
CLUSTER_SCHEMES = ("tcp", "tls", "ws", "wss")
ENCRYPTED_CLUSTER_SCHEMES = ("tls", "wss")


def parse_cluster(text: str) -> str:
    """``local:N`` or a scheduler address (``tcp://host:port``, ``tls://...``)."""
    value = text.strip()
    if value.startswith("local:"):
        count = value[len("local:") :]
        if not count.isdecimal() or int(count) <= 0:
            raise UsageError(f"bad --cluster {text!r}: local:N needs a positive N")
        return value
    scheme, sep, rest = value.partition("://")
    if sep and scheme in CLUSTER_SCHEMES and rest.rpartition(":")[2].isdecimal():
        return value
    if sep and scheme not in CLUSTER_SCHEMES:
        raise UsageError(
            f"bad --cluster {text!r}: a Dask scheduler's address starts with"
            f" {', '.join(s + '://' for s in CLUSTER_SCHEMES)} (lower case)"
        )
    raise UsageError(
        f"bad --cluster {text!r}: local:N (a LocalCluster here) or a scheduler address"
        " such as tcp://SCHEDULER:8786"
    )
