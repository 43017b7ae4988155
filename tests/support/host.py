"""What the host takes from this machine: a virtual machine's CPU steal.

A hypervisor that runs other guests on this VM's physical CPUs deschedules its vCPUs
now and then ("steal" in /proc/stat). A known-answer test of latency under an SLO a
few ms above a handler's sleep cannot hold then: a 20 ms sleep came back 8 ms late at
p99 on an idle VM whose steal averaged 10%. Such a test measures the steal while it
runs, and says so when it is the cause, rather than judging grpcbench by the host.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

# Above this share of the CPUs' time taken by the host, a few-ms SLO is the host's.
STEAL_LIMIT = 0.02


def cpu_ticks() -> tuple[int, int]:
    """(steal, total) clock ticks of all CPUs since boot; (0, 0) where unknown."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
    except OSError:
        return 0, 0
    values = [int(value) for value in fields[1:]]
    steal = values[7] if len(values) > 7 else 0
    return steal, sum(values[:8])


def steal_share(since: tuple[int, int]) -> float:
    """The share of the CPUs' time the host took since ``since`` (``cpu_ticks()``)."""
    steal, total = cpu_ticks()
    elapsed = total - since[1]
    return (steal - since[0]) / elapsed if elapsed > 0 else 0.0


# GRPCBENCH_TEST_HOGS=N: the capacity known answers run beside N CPU hogs (nox -s
# capacity_under_load sets 4 on two cores), where a search must still tell the
# server's limit from the host's stalls.
HOGS_VARIABLE = "GRPCBENCH_TEST_HOGS"


@contextlib.contextmanager
def cpu_hogs(count: int | None = None) -> Iterator[int]:
    """``count`` processes that spin on any CPU (default: $GRPCBENCH_TEST_HOGS, else
    none) while the block runs; every one is killed and reaped after it."""
    if count is None:
        count = int(os.environ.get(HOGS_VARIABLE, "0") or 0)
    hogs = [
        subprocess.Popen([sys.executable, "-P", "-c", "while True: pass"]) for _ in range(count)
    ]
    try:
        yield count
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()
