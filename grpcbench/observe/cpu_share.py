"""Was a process short of CPU? The basis of every saturation figure.

A process is saturated when it ran, or wanted to run but a neighbour held its
CPU, for (nearly) all of its CPU budget. Two readings bound that wanting:
- its threads' run-queue wait (``/proc/PID/task/*/schedstat``), which also
  counts its own threads waiting for each other (grpcio's poller behind its
  Python thread) - not a shortage of CPU;
- the CPU time other processes took from its CPUs (their busy time in
  ``/proc/stat`` minus its own), which also counts time it did not want.
The smaller of the two is the CPU it lost to neighbours, so saturation is
(CPU time + that) / budget: 1.0 with a noisy neighbour taking half its core
while it always had work, and its plain CPU share when nobody else was there.
When a process may run on more CPUs than it can keep busy (one Python process,
one GIL, on two CPUs), what others took cannot be attributed, and saturation is
its CPU time over its budget.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

import psutil


def busy_seconds(cpus: Sequence[int]) -> float:
    """Seconds the given CPUs spent busy since boot (every process, every mode)."""
    per_cpu = psutil.cpu_times(percpu=True)
    total = 0.0
    for index in cpus:
        if 0 <= index < len(per_cpu):
            times = per_cpu[index]
            idle = times.idle + getattr(times, "iowait", 0.0)
            total += (
                sum(times) - idle - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0)
            )
    return total


def others_share(cpus: Sequence[int], cores: float, busy_delta_s: float, own_cpu_s: float) -> float:
    """CPU seconds other processes took from ``cpus`` while the process ran there;
    0.0 when it may run on more CPUs than it can keep busy (not attributable)."""
    if not cpus or len(cpus) > cores:
        return 0.0
    return max(0.0, busy_delta_s - own_cpu_s)


class NeighbourMeter:
    """What other processes take from some CPUs over a window (a level's measured
    phase): ``start()`` at its start, ``others(cores, own_cpu_s)`` at its end."""

    def __init__(self, cpus: Sequence[int]) -> None:
        self.cpus = tuple(cpus)
        self._busy_start = 0.0

    def start(self) -> None:
        self._busy_start = busy_seconds(self.cpus)

    def others(self, cores: float, own_cpu_s: float) -> float:
        busy = busy_seconds(self.cpus) - self._busy_start
        return others_share(self.cpus, cores, busy, own_cpu_s)


def run_queue_wait_s(pid: int) -> float:
    """Seconds the threads of ``pid`` spent runnable but waiting for a CPU (Linux
    schedstat, since they started; 0.0 where unavailable)."""
    total_ns = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError, ValueError, IndexError):
                total_ns += int((task / "schedstat").read_text().split()[1])
    except OSError:
        return 0.0
    return total_ns / 1e9


def saturation(
    cpu_s: float, wall_s: float, cores: float, wait_s: float = 0.0, others_s: float = 0.0
) -> float:
    """Share of its CPU budget a process used or lost to neighbours (1.0 = saturated)."""
    budget = wall_s * cores
    return (cpu_s + min(wait_s, others_s)) / budget if budget > 0 else 0.0
