"""CPU % and memory over a level, sampled at a fixed interval, in bounded memory.

Seed 004's findings were read off time series ("~35% CPU for 0.75 min, ~2.75 GB
RAM"), not totals, so grpcbench samples the server, each backing service and
the generator every ``--sample-interval`` (100 ms) through the measured phase.
A timeline keeps at most ``MAX_POINTS`` samples: past that, neighbouring
samples merge in pairs (CPU % averaged, RSS the larger) and the interval
doubles, so an hour-long level costs as much as a short one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MAX_POINTS = 2000


@dataclass(frozen=True)
class Timeline:
    interval_s: float  # time between samples (a multiple of the requested one)
    cpu_percent: tuple[float, ...]  # 100 = one core busy for the whole interval
    rss_bytes: tuple[int, ...]

    @property
    def times_s(self) -> list[float]:
        """Seconds since the measured phase began, at the end of each sample."""
        return [(index + 1) * self.interval_s for index in range(len(self.cpu_percent))]

    def plus(self, other: Timeline) -> Timeline:
        """Two processes side by side (generator processes): summed sample by sample,
        over the samples both have, at the coarser of the two intervals."""
        coarse, fine = (self, other) if self.interval_s >= other.interval_s else (other, self)
        while fine.interval_s < coarse.interval_s and len(fine.cpu_percent) > 1:
            fine = _halved(fine)
        return Timeline(
            coarse.interval_s,
            tuple(a + b for a, b in zip(coarse.cpu_percent, fine.cpu_percent, strict=False)),
            tuple(a + b for a, b in zip(coarse.rss_bytes, fine.rss_bytes, strict=False)),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "interval_s": self.interval_s,
            "cpu_percent": [round(value, 2) for value in self.cpu_percent],
            "rss_bytes": list(self.rss_bytes),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Timeline:
        return cls(
            float(data["interval_s"]),
            tuple(float(v) for v in data["cpu_percent"]),
            tuple(int(v) for v in data["rss_bytes"]),
        )


def _halved(timeline: Timeline) -> Timeline:
    """Neighbouring samples merged in pairs: CPU % averaged, RSS the larger."""
    cpu, rss = timeline.cpu_percent, timeline.rss_bytes
    pairs = len(cpu) // 2
    return Timeline(
        timeline.interval_s * 2,
        tuple((cpu[2 * i] + cpu[2 * i + 1]) / 2 for i in range(pairs)),
        tuple(max(rss[2 * i], rss[2 * i + 1]) for i in range(pairs)),
    )


class TimelineRecorder:
    """Collects samples from cumulative CPU seconds and current RSS readings."""

    def __init__(self, interval_s: float, max_points: int = MAX_POINTS) -> None:
        self.interval_s = interval_s
        self.max_points = max_points
        self.cpu: list[float] = []
        self.rss: list[int] = []
        self._pending_cpu = 0.0  # a sample being built from several ticks (after halving)
        self._pending_rss = 0
        self._pending_ticks = 0
        self._ticks_per_sample = 1

    def add(self, cpu_s: float, wall_s: float, rss_bytes: int) -> None:
        """One tick: the CPU seconds used over ``wall_s`` seconds, and the RSS now."""
        self._pending_cpu += 100.0 * cpu_s / wall_s if wall_s > 0 else 0.0
        self._pending_rss = max(self._pending_rss, rss_bytes)
        self._pending_ticks += 1
        if self._pending_ticks < self._ticks_per_sample:
            return
        self.cpu.append(self._pending_cpu / self._pending_ticks)
        self.rss.append(self._pending_rss)
        self._pending_cpu, self._pending_rss, self._pending_ticks = 0.0, 0, 0
        if len(self.cpu) >= self.max_points:
            halved = _halved(self.timeline())
            self.cpu, self.rss = list(halved.cpu_percent), list(halved.rss_bytes)
            self._ticks_per_sample *= 2

    def timeline(self) -> Timeline:
        return Timeline(self.interval_s * self._ticks_per_sample, tuple(self.cpu), tuple(self.rss))


async def sample(
    timeline: TimelineRecorder, cpu_s: Callable[[], float], rss_bytes: Callable[[], int]
) -> None:
    """Every interval until cancelled: the CPU used since the last tick (``cpu_s`` is
    cumulative seconds) and the RSS now. The monitor samples the server and backing
    services with it, the generator samples itself."""
    last_cpu, last_wall = cpu_s(), time.perf_counter()
    while True:
        await asyncio.sleep(timeline.interval_s)
        cpu, wall = cpu_s(), time.perf_counter()
        timeline.add(cpu - last_cpu, wall - last_wall, rss_bytes())
        last_cpu, last_wall = cpu, wall
