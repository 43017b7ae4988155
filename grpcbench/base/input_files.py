"""Files an option names (-D, -M, -B, --cacert, --protoset, --config), read safely.

A user may name anything: a device that never ends (/dev/zero, /dev/full), a name
too long for the filesystem, one with a NUL in it, a directory. Each is one line
naming the option; a pipe (``-D /dev/stdin``) is read like a file, up to a limit.
"""

from __future__ import annotations

import os
import stat

from grpcbench.base.errors import UsageError

MAX_INPUT_BYTES = 256 * 1024 * 1024  # far beyond any request, key or schema


def check_regular_file(path: str, option: str) -> None:
    """A file that can be mapped and read at any offset (a feeder), or one UsageError."""
    where = f"{option} {path[:120]}"
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            raise UsageError(f"cannot read {where}: {kind}")
        with open(path, "rb"):
            pass
    except OSError as error:
        raise UsageError(f"cannot read {where}: {error.strerror or error}") from None
    except ValueError as error:  # a NUL in the name
        raise UsageError(f"cannot read {where}: {error}") from None


def read_input_bytes(path: str, option: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The file's bytes, or a UsageError naming ``option`` and why."""
    where = f"{option} {path[:120]}"
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            raise UsageError(f"cannot read {where}: is a directory")
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
            raise UsageError(f"cannot read {where}: not a file (a device or socket)")
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as error:
        raise UsageError(f"cannot read {where}: {error.strerror or error}") from None
    except ValueError as error:  # a NUL in the name
        raise UsageError(f"cannot read {where}: {error}") from None
    if len(data) > limit:
        raise UsageError(f"cannot read {where}: larger than {limit // (1024 * 1024)} MiB")
    return data


def read_input_text(path: str, option: str) -> str:
    """The file as UTF-8 text, or a UsageError naming ``option`` and why."""
    data = read_input_bytes(path, option)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(
            f"cannot read {option} {path[:120]}: not UTF-8 text (byte {error.start}:"
            f" {error.reason})"
        ) from None
