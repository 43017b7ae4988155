"""A process's peak resident memory over a level, in a process that runs many levels.

``ru_maxrss`` is a high-water mark over the process's whole life, so a generator
kept for the next level (``load.generator_process``) would report the previous
levels' peak. Linux resets the mark on ``clear_refs`` 5 and shows it as ``VmHWM``.
"""

from __future__ import annotations

import contextlib
import resource


def reset_peak_rss() -> None:
    """Start a new peak from now (Linux; elsewhere the peak stays the process's)."""
    with contextlib.suppress(OSError), open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")


def peak_rss_bytes() -> int:
    """The peak resident memory since ``reset_peak_rss`` (or since the process began)."""
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024  # kB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
