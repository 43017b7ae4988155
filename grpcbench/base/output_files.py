"""The one place results reach a file: a temporary file beside it, renamed over it.

Exporters render bytes; this writes them (hyperfine's shape). A reader of the
path (a dashboard, ``tail``, a second run's ``compare``) sees the old file or the
new one, never half of one, and a full disk leaves the old file whole. An existing
file keeps its permission bits (the temporary file would otherwise give it 0600).
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from grpcbench.base.errors import UsageError


def write_atomically(path: Path, data: bytes) -> None:
    """``data`` at ``path``, whole or not at all (OSError when it cannot be)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def write_to_stdout(data: bytes) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.flush()


def _same_file(a: Path, b: Path) -> bool:
    """The same file, through links and relative paths alike (a name no file can have,
    too long or with a NUL, is the same as nothing)."""
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return False


def is_file(path: Path) -> bool:
    """Whether ``path`` names a regular file; False for a name no file can have."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def check_apart(
    outputs: Iterable[tuple[str, Path]], inputs: Iterable[tuple[str, Path]] = ()
) -> None:
    """No output names another output's file or an input's: writing it would destroy
    what the run reads (``-D data.json -o data.json``) or what another output holds
    (``-o r.json --debug r.json``). Each pair is one clear line, before anything runs."""
    written: list[tuple[str, Path]] = []
    read = list(inputs)
    for option, path in outputs:
        for other, taken in written:
            if _same_file(path, taken):
                raise UsageError(f"{option} and {other} name the same file {path}")
        for other, source in read:
            if _same_file(path, source):
                raise UsageError(
                    f"{option} {path} is also {other}'s input: it would be overwritten;"
                    " give another path"
                )
        written.append((option, path))
