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

A virtual machine's host also takes its vCPUs now and then ("steal" in
/proc/stat): a process that always had work then neither runs nor waits in the
guest's run queue, so neither reading sees it. The CPU it could get is its budget
less the share of its CPUs' time the host took; a CI VM whose steal ran at 4-10%
otherwise calls a spinning generator "neither" at 86% of a core.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil


@dataclass(frozen=True)
class CpuTimes:
    """Seconds some CPUs spent since boot: busy in this guest, taken by the host, in all."""

    busy_s: float
    steal_s: float
    total_s: float

    def __sub__(self, other: CpuTimes) -> CpuTimes:
        return CpuTimes(
            self.busy_s - other.busy_s, self.steal_s - other.steal_s, self.total_s - other.total_s
        )

    @property
    def steal_share(self) -> float:
        """The share of these CPUs' time the host took (0.0 on bare metal)."""
        return self.steal_s / self.total_s if self.total_s > 0 else 0.0


def cpu_times(cpus: Sequence[int]) -> CpuTimes:
    """What the given CPUs (all of them when none are given) did since boot."""
    per_cpu = psutil.cpu_times(percpu=True)
    indexes = [i for i in cpus if 0 <= i < len(per_cpu)] if cpus else range(len(per_cpu))
    busy = steal = total = 0.0
    for index in indexes:
        times = per_cpu[index]
        # guest time is already counted in user (and guest_nice in nice).
        all_s = sum(times) - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0)
        taken = getattr(times, "steal", 0.0)
        idle = times.idle + getattr(times, "iowait", 0.0)
        busy += all_s - idle - taken
        steal += taken
        total += all_s
    return CpuTimes(busy, steal, total)


def others_share(cpus: Sequence[int], cores: float, busy_delta_s: float, own_cpu_s: float) -> float:
    """CPU seconds other processes took from ``cpus`` while the process ran there;
    0.0 when it may run on more CPUs than it can keep busy (not attributable)."""
    if not cpus or len(cpus) > cores:
        return 0.0
    return max(0.0, busy_delta_s - own_cpu_s)


class NeighbourMeter:
    """What other processes take from some CPUs over a window (a level's measured
    phase): ``start()`` at its start, ``stop()`` at its end, then ``taken(cores,
    own_cpu_s)``. Without ``stop()`` the window ends at ``taken``: once it ended when
    the results were merged, which a busy coordinator put off by tens of seconds
    (``client_others_s`` of 57 s for a 20 s level)."""

    def __init__(self, cpus: Sequence[int]) -> None:
        self.cpus = tuple(cpus)
        self._start = CpuTimes(0.0, 0.0, 0.0)
        self._stop: CpuTimes | None = None

    def start(self) -> None:
        self._start = cpu_times(self.cpus)
        self._stop = None

    def stop(self) -> None:
        self._stop = cpu_times(self.cpus)

    def taken(self, cores: float, own_cpu_s: float) -> tuple[float, float]:
        """Over the window, from one reading of the CPUs at each end: the CPU seconds
        other processes took from them (``others_share``), and the share of their time
        (all CPUs when unpinned) the host took."""
        window = (self._stop or cpu_times(self.cpus)) - self._start
        return others_share(self.cpus, cores, window.busy_s, own_cpu_s), window.steal_share


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


def saturation(*figures: float, **named: float) -> float:
    """Share of the CPU a process could get that it used or lost to neighbours
    (1.0 = saturated): both of ``shares``, which takes the same figures."""
    return sum(shares(*figures, **named))


def shares(
    cpu_s: float,
    wall_s: float,
    cores: float,
    wait_s: float = 0.0,
    others_s: float = 0.0,
    steal_share: float = 0.0,
) -> tuple[float, float]:
    """The share of its CPU budget a process used, and the share it spent waiting for a
    CPU that neighbours held (the tables show both, as the verdict counts both); what
    the host took (``steal_share``) it could not get, so is not in the budget."""
    budget = wall_s * cores * (1.0 - min(max(steal_share, 0.0), 0.9))
    if budget <= 0:
        return 0.0, 0.0
    return cpu_s / budget, min(wait_s, others_s) / budget
