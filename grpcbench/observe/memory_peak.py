"""A process's peak resident memory over a window (a level), for any process, and
its resident memory now.

``ru_maxrss`` is a high-water mark over a process's whole life. Linux keeps it as
``VmHWM`` and resets it on ``clear_refs`` 5, so a window's peak is the mark read
after a reset at its start: the monitor does it for the server's processes, and a
generator kept for the next level (``load.generator_process``) for itself.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path


def reset_peak_rss(pid: int | str = "self") -> bool:
    """Start a new peak from now; False where it cannot be reset (not Linux, not ours)."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def read_vmhwm(pid: int | str = "self") -> int | None:
    """The process's peak resident bytes since its last reset (or its start); None where
    unknown."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024  # kB
    except (OSError, ValueError):
        return None
    return None


def current_rss_bytes() -> int:
    """This process's resident memory now (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def peak_rss_bytes() -> int:
    """This process's peak since ``reset_peak_rss`` (or since it began)."""
    peak = read_vmhwm()
    return peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
