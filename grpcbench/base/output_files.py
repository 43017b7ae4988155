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
from pathlib import Path


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
