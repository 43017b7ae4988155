"""Server CPU and memory over a level, measured from outside the server (psutil).

CPU is the user+system time (all threads) during the measured phase of the
server process and of its child processes (``grpcio:processes=N`` forks
workers). Peak RSS of one process on Linux is the kernel's high-water mark
(VmHWM), reset at the start of each level through /proc/PID/clear_refs, so it
is the peak of that level and not of start-up. A tree of several processes is
sampled instead: its PSS summed every 0.25 s, so pages they share (a forked
server's code, a database's buffers) count once ("sampled pss"); summed VmHWM
peaks would count them once per process. Where VmHWM cannot be reset, one
process's RSS is sampled every 50 ms ("sampled").
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import psutil

from grpcbench.observe.cpu_share import NeighbourMeter, run_queue_wait_s, shares
from grpcbench.observe.memory_peak import read_vmhwm, reset_peak_rss
from grpcbench.observe.timeline import Timeline, TimelineRecorder, sample

SAMPLE_INTERVAL_S = 0.05
# PSS is read from smaps for every process of a tree: slower to read, so less often.
PSS_SAMPLE_INTERVAL_S = 0.25


@dataclass(frozen=True)
class ProcessUsage:
    cpu_s: float
    wall_s: float
    peak_rss_bytes: int
    peak_rss_method: str  # "vmhwm" (exact kernel peak), "sampled", or "sampled pss" (a tree)
    processes: int = 1  # server processes measured (summed)
    # Cores the server could keep busy: one per process (each has one GIL), at most
    # the CPUs it may run on. 1.0 = a single-process server, or one pinned to one CPU.
    cpu_cores: float = 1.0
    # Run-queue wait of its threads, and the CPU other processes took from its CPUs
    # meanwhile: the smaller is what it lost to neighbours (see cpu_share).
    run_queue_wait_s: float = 0.0
    others_cpu_s: float = 0.0
    steal_share: float = 0.0  # the share of its CPUs' time the host (hypervisor) took
    timeline: Timeline | None = None  # CPU % and RSS every --sample-interval
    # --cooldown: how long it was watched with no load after the measured phase, the
    # CPU it spent meanwhile and its RSS at the end (what it holds after the burst).
    cooldown_s: float = 0.0
    cooldown_cpu_s: float = 0.0
    rss_after_cooldown_bytes: int = 0

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["timeline"] = self.timeline.to_json() if self.timeline else None
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProcessUsage:
        return cls(
            cpu_s=float(data["cpu_s"]),
            wall_s=float(data["wall_s"]),
            peak_rss_bytes=int(data["peak_rss_bytes"]),
            peak_rss_method=str(data["peak_rss_method"]),
            processes=int(data.get("processes", 1)),
            cpu_cores=float(data.get("cpu_cores", 1.0)),
            run_queue_wait_s=float(data.get("run_queue_wait_s", 0.0)),
            others_cpu_s=float(data.get("others_cpu_s", 0.0)),
            steal_share=float(data.get("steal_share", 0.0)),
            timeline=Timeline.from_json(data["timeline"]) if data.get("timeline") else None,
            cooldown_s=float(data.get("cooldown_s", 0.0)),
            cooldown_cpu_s=float(data.get("cooldown_cpu_s", 0.0)),
            rss_after_cooldown_bytes=int(data.get("rss_after_cooldown_bytes", 0)),
        )

    @property
    def cpu_fraction(self) -> float:
        """CPU seconds per wall second: 1.0 is one core fully busy."""
        return self.cpu_s / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def cpu_saturation(self) -> float:
        """Share of its CPU budget the server used or lost to neighbours (1.0 = saturated)."""
        return sum(self.cpu_shares)

    @property
    def cpu_shares(self) -> tuple[float, float]:
        """Its CPU budget's shares used and lost waiting for neighbours (``shares``)."""
        return shares(
            self.cpu_s, self.wall_s, self.cpu_cores, self.run_queue_wait_s, self.others_cpu_s,
            self.steal_share,
        )  # fmt: skip


def _cpu_seconds(process: psutil.Process) -> float:
    """Its CPU, and that of its children that ended and were reaped: a tree's CPU is the
    sum over its live processes, so processes that start or end mid-level (a database's
    backends) are counted whole."""
    try:
        times = process.cpu_times()
    except psutil.Error:
        return 0.0
    return float(times.user + times.system + times.children_user + times.children_system)


def tree_cpu_seconds(root: psutil.Process) -> float:
    """CPU seconds of ``root`` and every process below it, as ``ProcessMonitor`` counts."""
    processes = [root]
    with contextlib.suppress(psutil.Error):
        processes += root.children(recursive=True)
    return sum(_cpu_seconds(process) for process in processes)


def tree_cpu_demand_seconds(root: psutil.Process) -> float:
    """Seconds ``root``'s tree ran *or waited to run* (Linux's per-thread schedstat:
    time on a CPU plus time runnable on a run queue). CPU seconds alone call a busy
    process idle when its neighbours starve it of a core; demand does not. Where
    schedstat cannot be read (not Linux), CPU seconds stand in."""
    processes = [root]
    with contextlib.suppress(psutil.Error):
        processes += root.children(recursive=True)
    total_ns = 0
    for process in processes:
        try:
            threads = os.listdir(f"/proc/{process.pid}/task")
        except FileNotFoundError:
            continue  # it ended
        except OSError:
            return tree_cpu_seconds(root)
        for thread in threads:
            try:
                with open(f"/proc/{process.pid}/task/{thread}/schedstat") as stats:
                    ran, waited = stats.read().split()[:2]
            except FileNotFoundError:
                continue  # the thread ended
            except (OSError, ValueError):
                return tree_cpu_seconds(root)
            total_ns += int(ran) + int(waited)
    return total_ns / 1e9


class CpuMeter:
    """CPU seconds of a changing set of processes since the meter started (a generator's
    processes: one that ends keeps what it spent)."""

    def __init__(self) -> None:
        self._first: dict[int, float] = {}
        self._last: dict[int, float] = {}

    def read(self, pids: Sequence[int]) -> float:
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                times = psutil.Process(pid).cpu_times()
                seconds = float(times.user + times.system)
                self._first.setdefault(pid, seconds)
                self._last[pid] = seconds
        return sum(self._last[pid] - first for pid, first in self._first.items())


def _pss(process: psutil.Process) -> int:
    """Proportional set size: shared pages divided among the processes that map them."""
    try:
        return int(process.memory_full_info().pss)
    except (psutil.Error, AttributeError):
        return 0


class ProcessMonitor:
    """``start()`` at measurement start, ``stop()`` at its end; covers the process tree."""

    def __init__(self, pid: int, gil: bool = True, sample_interval_s: float = 0.0) -> None:
        """``sample_interval_s`` > 0: also record a timeline of CPU % and RSS."""
        self.root = psutil.Process(pid)
        self.sample_interval_s = sample_interval_s
        self._timeline: TimelineRecorder | None = None
        self.gil = gil  # Python: one core per process at most; else (Java) all its CPUs
        self.processes: list[psutil.Process] = [self.root]
        self._cpus: list[int] = []  # its CPU affinity, read once at start()
        self._neighbours = NeighbourMeter(())
        self._cpu_start = 0.0
        self._wait_start = 0.0
        self._wall_start = 0.0
        self._use_hwm = False
        self._shared = False  # several processes: PSS, sampled
        self._most_processes = 1
        self._sampled_peak = 0
        self._sampler: asyncio.Task[None] | None = None
        # Ctrl-C came during the cooldown: the usage so far is returned, and whoever
        # called ``stop_after`` ends the level as interrupted once it is kept.
        self.interrupted = False

    def _refresh(self) -> list[psutil.Process]:
        """The tree as it is now (a database starts a process per connection)."""
        with contextlib.suppress(psutil.Error):
            self.processes = [self.root, *self.root.children(recursive=True)]
            self._most_processes = max(self._most_processes, len(self.processes))
        return self.processes

    def _cpu(self, processes: list[psutil.Process] | None = None) -> float:
        """The tree's CPU seconds; ``processes``: a tree already refreshed for this reading."""
        return sum(_cpu_seconds(process) for process in processes or self._refresh())

    def _wait(self) -> float:
        return sum(run_queue_wait_s(process.pid) for process in self.processes)

    def _affinity(self) -> list[int]:
        try:
            return sorted(self.root.cpu_affinity() or [])
        except (psutil.Error, AttributeError):
            return []

    def _rss(self, processes: list[psutil.Process] | None = None) -> int:
        """The tree's resident memory: RSS of one process; for several, their PSS summed,
        so pages they share (a database's buffers, a forked server's code) count once."""
        processes = processes or self._refresh()
        if self._shared:
            return sum(_pss(process) for process in processes)
        total = 0
        for process in processes:
            with contextlib.suppress(psutil.Error):
                total += process.memory_info().rss
        return total

    def start(self) -> None:
        self._refresh()
        self._most_processes = len(self.processes)
        # Several processes: their VmHWM peaks would count shared pages once per process.
        self._shared = len(self.processes) > 1 and _pss(self.root) > 0
        self._cpus = self._affinity()
        self._neighbours = NeighbourMeter(self._cpus)
        self._cpu_start = self._cpu()
        self._neighbours.start()
        self._wait_start = self._wait()
        self._wall_start = time.perf_counter()
        self._use_hwm = not self._shared and all(
            reset_peak_rss(process.pid) for process in self.processes
        )
        self._sampled_peak = self._rss()
        if self.sample_interval_s > 0:
            self._timeline = TimelineRecorder(self.sample_interval_s)
        if not self._use_hwm or self._timeline:
            self._sampler = asyncio.get_running_loop().create_task(self._sample())

    def so_far(self) -> tuple[float, int]:
        """CPU seconds since ``start`` and the resident memory now (the live view)."""
        processes = self._refresh()  # one walk of the tree for both readings
        return max(0.0, self._cpu(processes) - self._cpu_start), self._peak_tracked_rss(processes)

    def _peak_tracked_rss(self, processes: list[psutil.Process] | None = None) -> int:
        rss = self._rss(processes)
        self._sampled_peak = max(self._sampled_peak, rss)
        return rss

    async def _sample(self) -> None:
        """The timeline, and the sampled peak where VmHWM cannot be reset."""
        if self._timeline is not None:
            await sample(self._timeline, self._cpu, self._peak_tracked_rss)
        while True:
            self._peak_tracked_rss()
            await asyncio.sleep(PSS_SAMPLE_INTERVAL_S if self._shared else SAMPLE_INTERVAL_S)

    async def stop_after(self, cooldown_s: float) -> ProcessUsage | None:
        """``stop``, then (``--cooldown``) watch on with no load: the usage is the
        measured phase's, and the cooldown's CPU and final RSS are added beside it;
        the timeline runs on through the cooldown."""
        usage = self.stop(keep_sampling=cooldown_s > 0)
        if usage is None or cooldown_s <= 0:
            return usage
        cpu_before = self._cpu()
        started = time.perf_counter()
        try:
            await asyncio.sleep(cooldown_s)
        except asyncio.CancelledError:  # Ctrl-C: the level was measured; keep it
            self.interrupted = True
            cooldown_s = time.perf_counter() - started
        alive = self.root.is_running()
        cpu = self._cpu() - cpu_before if alive else 0.0
        rss = self._rss() if alive else 0
        if self._sampler:
            self._sampler.cancel()
        return replace(
            usage,
            cooldown_s=cooldown_s,
            cooldown_cpu_s=max(0.0, cpu),
            rss_after_cooldown_bytes=rss,
            timeline=self._timeline.timeline() if self._timeline else None,
        )

    def stop(self, keep_sampling: bool = False) -> ProcessUsage | None:
        """The level's usage; None when the server died during it (its CPU is unknown,
        and a difference of readings would be negative). ``keep_sampling``: the
        timeline goes on (``stop_after``'s cooldown)."""
        if not self.root.is_running():
            if self._sampler:
                self._sampler.cancel()
            return None
        wall = time.perf_counter() - self._wall_start
        cpu = self._cpu() - self._cpu_start
        wait = max(0.0, self._wait() - self._wait_start)
        if self._sampler and not keep_sampling:
            self._sampler.cancel()
        peaks = [read_vmhwm(process.pid) for process in self.processes] if self._use_hwm else []
        exact = bool(peaks) and all(peak is not None for peak in peaks)
        if not exact:
            self._peak_tracked_rss()
        allowed = len(self._cpus) or os.cpu_count() or 1
        cores = float(min(allowed, self._most_processes) if self.gil else allowed)
        others, steal = self._neighbours.taken(cores, cpu)
        return ProcessUsage(
            cpu_s=cpu,
            wall_s=wall,
            peak_rss_bytes=sum(p or 0 for p in peaks) if exact else self._sampled_peak,
            peak_rss_method="vmhwm" if exact else ("sampled pss" if self._shared else "sampled"),
            processes=self._most_processes,
            cpu_cores=cores,
            run_queue_wait_s=wait,
            others_cpu_s=others,
            steal_share=steal,
            timeline=self._timeline.timeline() if self._timeline else None,
        )
