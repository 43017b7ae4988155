"""Server CPU and memory over a level, measured from outside the server (psutil).

CPU is the process's user+system time (all its threads) during the measured
phase. Peak RSS on Linux is the kernel's high-water mark (VmHWM), reset at
the start of each level through /proc/PID/clear_refs, so it is the peak of that
level and not of start-up; elsewhere it falls back to sampling RSS every 50 ms.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

SAMPLE_INTERVAL_S = 0.05


@dataclass(frozen=True)
class ProcessUsage:
    cpu_s: float
    wall_s: float
    peak_rss_bytes: int
    peak_rss_method: str  # "vmhwm" (exact kernel peak) or "sampled"

    @property
    def cpu_fraction(self) -> float:
        """CPU seconds per wall second: 1.0 is one core fully busy."""
        return self.cpu_s / self.wall_s if self.wall_s > 0 else 0.0


def _reset_peak_rss(pid: int) -> bool:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _read_vmhwm(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


class ProcessMonitor:
    """``start()`` at measurement start, ``stop()`` at its end."""

    def __init__(self, pid: int) -> None:
        self.process = psutil.Process(pid)
        self._cpu_start = 0.0
        self._wall_start = 0.0
        self._use_hwm = False
        self._sampled_peak = 0
        self._sampler: asyncio.Task[None] | None = None

    def _cpu(self) -> float:
        times = self.process.cpu_times()
        return times.user + times.system

    def start(self) -> None:
        self._cpu_start = self._cpu()
        self._wall_start = time.perf_counter()
        self._use_hwm = _reset_peak_rss(self.process.pid)
        self._sampled_peak = self.process.memory_info().rss
        if not self._use_hwm:
            self._sampler = asyncio.get_running_loop().create_task(self._sample())

    async def _sample(self) -> None:
        while True:
            with contextlib.suppress(psutil.Error):
                self._sampled_peak = max(self._sampled_peak, self.process.memory_info().rss)
            await asyncio.sleep(SAMPLE_INTERVAL_S)

    def stop(self) -> ProcessUsage:
        wall = time.perf_counter() - self._wall_start
        cpu = self._cpu() - self._cpu_start
        if self._sampler:
            self._sampler.cancel()
        hwm = _read_vmhwm(self.process.pid) if self._use_hwm else None
        return ProcessUsage(
            cpu_s=cpu,
            wall_s=wall,
            peak_rss_bytes=hwm if hwm is not None else self._sampled_peak,
            peak_rss_method="vmhwm" if hwm is not None else "sampled",
        )
