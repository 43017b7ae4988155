"""A level as a time series (``--interval 1s``): achieved rate, p50, p99 and errors
per interval of its measured phase.

A level's figures are one number per level; a ramp (``--rate-schedule``), a
server that degrades as it runs, or a GC pause needs the level over time. The
generator records each call into the current interval's HDR histogram beside
the level's own (one branch and one dict update per call), and a timer cuts
the interval on the phase's clock. Intervals are numbered from the start of
the measured phase, so the generators of one level (processes, cluster
workers) merge interval by interval, exactly, as levels do.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from typing import Any

from grpcbench.base.merging import merge_optional
from grpcbench.stats.histogram import LatencyRecorder, LatencySummary, merge_summaries


@dataclass(frozen=True)
class IntervalFigures:
    """One interval: calls that *ended* in it, and the rate the schedule offered."""

    index: int
    start_s: float  # from the start of the measured phase
    end_s: float
    ok: int
    failed: int
    latency: LatencySummary
    offered: float = 0.0  # open loop: calls/s the pacer asked for (0: closed loop)
    # Open loop: from the actual send, and actual minus intended send (None: closed loop).
    service: LatencySummary | None = None
    lag: LatencySummary | None = None
    in_flight: int = 0  # calls sent and not finished when it was cut (the live view's)

    @property
    def calls(self) -> int:
        return self.ok + self.failed

    @property
    def rate(self) -> float:
        length = self.end_s - self.start_s
        return self.calls / length if length > 0 else 0.0

    def merge(self, other: IntervalFigures) -> IntervalFigures:
        """Another generator's same interval."""
        return IntervalFigures(
            self.index, min(self.start_s, other.start_s), max(self.end_s, other.end_s),
            self.ok + other.ok, self.failed + other.failed,
            merge_summaries([self.latency, other.latency]), self.offered + other.offered,
            merge_optional(self.service, other.service, LatencySummary.merge),
            merge_optional(self.lag, other.lag, LatencySummary.merge),
            self.in_flight + other.in_flight,
        )  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "index": self.index, "start_s": round(self.start_s, 6), "end_s": round(self.end_s, 6),
            "ok": self.ok, "failed": self.failed, "offered": self.offered,
            "rate": round(self.rate, 3),
            "p50_us": self.latency.percentile_us(50), "p99_us": self.latency.percentile_us(99),
            "latency": asdict(self.latency),
        }  # fmt: skip
        # Optional keys (older files have none): an open loop's per-interval timings.
        if self.service is not None:
            data["service"] = asdict(self.service)
        if self.lag is not None:
            data["lag"] = asdict(self.lag)
        if self.in_flight:
            data["in_flight"] = self.in_flight
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> IntervalFigures:
        service, lag = data.get("service"), data.get("lag")
        return cls(
            int(data["index"]), float(data["start_s"]), float(data["end_s"]), int(data["ok"]),
            int(data["failed"]), LatencySummary.from_json(data["latency"]),
            float(data.get("offered", 0.0)),
            LatencySummary.from_json(service) if service else None,
            LatencySummary.from_json(lag) if lag else None,
            int(data.get("in_flight", 0)),
        )  # fmt: skip


@dataclass(frozen=True)
class LiveUsage:
    """The processes' usage so far in a level's measured phase, read every interval for
    the live view (telemetry); the level's own figures (``ProcessUsage``) replace it at
    its end. None: not measured (no server pid; a driver without generator processes)."""

    elapsed_s: float
    server_cpu_s: float | None = None  # CPU seconds since the measured phase began
    server_rss_bytes: int | None = None  # resident memory now (a tree's PSS summed)
    generator_cpu_s: float | None = None  # the generator processes' CPU seconds since
    backing_cpu_s: tuple[tuple[str, float], ...] = ()  # each backing service's, since


def merge_intervals(
    first: Iterable[IntervalFigures], second: Iterable[IntervalFigures]
) -> tuple[IntervalFigures, ...]:
    """Two generators' series, interval by interval (either may have fewer)."""
    merged = {figures.index: figures for figures in first}
    for figures in second:
        mine = merged.get(figures.index)
        merged[figures.index] = mine.merge(figures) if mine else figures
    return tuple(merged[index] for index in sorted(merged))


class IntervalRecorder:
    """The interval under way; ``cut`` closes it and starts the next.

    ``level`` (the level's latency, service-time and lag recorders): a call is then
    recorded here only, and each interval is added to the level's histograms when it
    is cut (``LatencyRecorder.absorb``), so ``--interval`` costs the generator no
    more per call than a level without it."""

    __slots__ = ("interval_s", "started", "index", "ok", "failed", "latency", "service", "lag",
                 "done", "level")  # fmt: skip

    def __init__(
        self,
        interval_s: float,
        started: float,
        level: tuple[LatencyRecorder, LatencyRecorder, LatencyRecorder] | None = None,
    ) -> None:
        self.level = level
        self.interval_s = interval_s
        self.started = started  # time.perf_counter() at the measured phase's start
        self.index = 0
        self.ok = 0
        self.failed = 0
        self.latency = LatencyRecorder()
        # Open loop only (made at its first call, so a closed loop's intervals have none).
        self.service: LatencyRecorder | None = None
        self.lag: LatencyRecorder | None = None
        self.done: list[IntervalFigures] = []

    def record(self, ok: bool, latency_us: int) -> None:
        if ok:
            self.ok += 1
        else:
            self.failed += 1
        self.latency.record(latency_us)

    def record_timing(self, service_us: int, lag_us: int) -> None:
        """An open-loop call's service time and send lag, for the live view."""
        if self.service is None or self.lag is None:
            self.service, self.lag = LatencyRecorder(), LatencyRecorder()
        self.service.record(service_us)
        self.lag.record(lag_us)

    def cut(self, now: float | None = None) -> IntervalFigures:
        """Close the current interval at ``now`` (the last one may be short)."""
        now = time.perf_counter() if now is None else now
        start_s = self.index * self.interval_s
        figures = IntervalFigures(
            self.index, start_s, max(start_s, now - self.started), self.ok, self.failed,
            self.latency.summary(), 0.0,
            self.service.summary() if self.service is not None else None,
            self.lag.summary() if self.lag is not None else None,
        )  # fmt: skip
        self.done.append(figures)
        if self.level is not None:
            latency, service, lag = self.level
            latency.absorb(self.latency)
            if self.service is not None and self.lag is not None:
                service.absorb(self.service)
                lag.absorb(self.lag)
        self.index += 1
        self.ok = self.failed = 0
        self.latency = LatencyRecorder()
        if self.service is not None:
            self.service, self.lag = LatencyRecorder(), LatencyRecorder()
        return figures


def finish(window: IntervalRecorder, now: float | None = None) -> tuple[IntervalFigures, ...]:
    """The series at the phase's end. The last interval is cut at ``now``; shorter
    than half an interval (the replies of calls in flight at the end), it joins the
    one before, so a sliver's few calls do not read as a rate."""
    last = window.cut(now)
    done = window.done
    if len(done) >= 2 and last.end_s - last.start_s < window.interval_s / 2:
        before = done[-2]
        done[-2:] = [
            IntervalFigures(
                before.index,
                before.start_s,
                last.end_s,
                before.ok + last.ok,
                before.failed + last.failed,
                merge_summaries([before.latency, last.latency]),
                0.0,
                merge_optional(before.service, last.service, LatencySummary.merge),
                merge_optional(before.lag, last.lag, LatencySummary.merge),
            )  # fmt: skip
        ]
    return tuple(done)


async def cut_every_interval(
    window: IntervalRecorder, on_interval: Callable[[IntervalFigures], None]
) -> None:
    """Cut ``window`` at each boundary of the phase's clock until cancelled."""
    while True:
        boundary = window.started + (window.index + 1) * window.interval_s
        delay = boundary - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        on_interval(window.cut(boundary))


def with_offered(
    intervals: Iterable[IntervalFigures], expected_calls: Callable[[float], float]
) -> tuple[IntervalFigures, ...]:
    """Each interval's offered rate: the pacer's calls due in it over its length."""
    return tuple(
        replace(
            figures,
            offered=(expected_calls(figures.end_s) - expected_calls(figures.start_s))
            / (figures.end_s - figures.start_s),
        )
        if figures.end_s > figures.start_s
        else figures
        for figures in intervals
    )
