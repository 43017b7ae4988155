"""Everything a generator records during a measured phase, in constant memory (per-call
records, which a format that lists calls asks for, are bounded by their limit)."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from grpcbench.contract.calls import CallStats
from grpcbench.load.schedule_count import ScheduleCount
from grpcbench.model.call_details import CallDetails
from grpcbench.model.intervals import IntervalRecorder
from grpcbench.model.level_parts import CheckFigures, MethodFigures, StreamSummary
from grpcbench.rpc.mix import CURRENT_PART
from grpcbench.stats.histogram import LatencyRecorder


@dataclass
class StreamRecorder:
    """Totals, time to first message, gaps between messages, (--stream-round-trip)
    round trips and (--stream-interval) send lag of calls that reported CallStats."""

    calls: int = 0
    messages: int = 0
    items: int = 0
    bytes: int = 0
    sent: int = 0
    first_message: LatencyRecorder = field(default_factory=LatencyRecorder)
    gap: LatencyRecorder = field(default_factory=LatencyRecorder)
    round_trip: LatencyRecorder = field(default_factory=LatencyRecorder)
    send_lag: LatencyRecorder = field(default_factory=LatencyRecorder)

    def record(self, stats: CallStats) -> None:
        self.calls += 1
        self.messages += stats.messages
        self.items += stats.items
        self.bytes += stats.bytes
        self.sent += stats.sent
        self.first_message.record(int(stats.first_message_s * 1e6))
        record_gap = self.gap.record
        for gap_us in stats.gaps_us:
            record_gap(gap_us)
        if stats.together:
            record_gap(0, stats.together)
        record_round_trip = self.round_trip.record
        for round_trip_us in stats.round_trips_us:
            record_round_trip(round_trip_us)
        record_lag = self.send_lag.record
        for lag_us in stats.send_lags_us:
            record_lag(lag_us)

    def summary(self) -> StreamSummary | None:
        if not self.calls:
            return None
        return StreamSummary(
            calls=self.calls,
            messages=self.messages,
            items=self.items,
            bytes=self.bytes,
            first_message=self.first_message.summary(),
            sent=self.sent,
            gap=self.gap.summary() if self.gap.count else None,
            round_trip=self.round_trip.summary() if self.round_trip.count else None,
            send_lag=self.send_lag.summary() if self.send_lag.count else None,
        )


# Distinct error messages kept per level; the rest are counted together (a message
# carrying a request id would otherwise grow the table by one entry per call).
MAX_ERROR_MESSAGES = 100
OTHER_MESSAGES = "(other messages)"


def error_key(status: str, message: str) -> str:
    """How a failed call's status and message are counted (ghz's errorDistribution)."""
    return f"{status}: {message}" if message else status


@dataclass
class PartRecorder:
    """One method of a mix: its calls' statuses, latency and errors, recorded with the
    level's own latency (from the intended send in an open loop)."""

    latency: LatencyRecorder = field(default_factory=LatencyRecorder)
    statuses: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)

    def record(self, status: str, latency_us: int, message: str) -> None:
        self.latency.record(latency_us)
        self.statuses[status] += 1
        if status != "OK":
            _count_error(self.errors, status, message)

    def figures(
        self, name: str, method: str, weight: int, expected: tuple[str, ...] = ()
    ) -> MethodFigures:
        return MethodFigures(
            name=name, method=method, weight=weight, statuses=dict(self.statuses),
            latency=self.latency.summary(), errors=dict(self.errors), expected=expected,
        )  # fmt: skip


def _count_error(errors: Counter[str], status: str, message: str) -> None:
    key = error_key(status, message)
    if key not in errors and len(errors) >= MAX_ERROR_MESSAGES:
        key = error_key(status, OTHER_MESSAGES)
    errors[key] += 1


class StepRecorders(dict[str, PartRecorder]):
    """A flow's steps by name, each recorder made when its name first comes."""

    def __missing__(self, name: str) -> PartRecorder:
        recorder = self[name] = PartRecorder()
        return recorder


class CheckRecorders(dict[str, list[int]]):
    """A flow's checks by name (``client.check``): [passed, failed], made when a name
    first comes."""

    def record(self, name: str, passed: bool) -> None:
        counts = self.get(name)
        if counts is None:
            counts = self[name] = [0, 0]
        counts[0 if passed else 1] += 1

    def figures(self) -> tuple[CheckFigures, ...]:
        return tuple(CheckFigures(name, passed, failed) for name, (passed, failed) in self.items())


@dataclass
class LevelRecorders:
    latency: LatencyRecorder = field(default_factory=LatencyRecorder)
    statuses: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)  # error_key -> calls
    streams: StreamRecorder = field(default_factory=StreamRecorder)
    # Open loop only: from the actual send, and actual minus intended send.
    service: LatencyRecorder = field(default_factory=LatencyRecorder)
    lag: LatencyRecorder = field(default_factory=LatencyRecorder)
    window: IntervalRecorder | None = None  # --interval: the interval under way
    parts: list[PartRecorder] | None = None  # a mix: one per method (rpc.mix)
    steps: StepRecorders | None = None  # a flow: one per step name (rpc.flow)
    checks: CheckRecorders | None = None  # a flow: its checks (client.check)
    # A timed open loop: what its pacer scheduled per half (schedule_count).
    schedule: ScheduleCount | None = None
    parts_absorbed: bool = False  # a mix's latencies made the level's (level_latency)

    @property
    def failed(self) -> int:
        """Calls so far that did not end OK (for progress displays)."""
        return sum(self.statuses.values()) - self.statuses["OK"]

    def record_call(
        self, status: str, latency_us: int, stats: CallStats | None, message: str = "",
        part: int | None = None,
    ) -> None:  # fmt: skip
        """One finished call; ``part``: which method of a mix (None: the current
        task's, ``rpc.mix.CURRENT_PART``). With ``--interval`` it goes to the interval
        only, which adds itself to the level's histogram when cut (``open_window``); in a
        mix, to its method's only, which the level's histogram is made of at its end
        (``level_latency``): one record a call, not two."""
        self.statuses[status] += 1
        if self.window is not None:
            self.window.record(status == "OK", latency_us)
        elif self.parts is None:
            self.latency.record(latency_us)
        if stats is not None:
            self.streams.record(stats)
        if status != "OK":
            self.record_error(status, message)
        if self.parts is not None:
            self.parts[CURRENT_PART.get() if part is None else part].record(
                status, latency_us, message
            )

    def record_ok(self, latency_us: int) -> None:
        """``record_call("OK", latency_us, None)`` outside a mix: the callback loops'
        common case, with only what it needs."""
        self.statuses["OK"] += 1
        if self.window is not None:
            self.window.record(True, latency_us)
        else:
            self.latency.record(latency_us)

    def record_ok_part(self, latency_us: int, part: int) -> None:
        """``record_call("OK", latency_us, None, part=part)``: a mix's common case on the
        callback loops, with only what it needs."""
        self.statuses["OK"] += 1
        if self.window is not None:
            self.window.record(True, latency_us)
        recorder = self.parts[part]  # type: ignore[index]
        recorder.latency.record(latency_us)  # without intervals, the level's (level_latency)
        recorder.statuses["OK"] += 1

    def level_latency(self) -> LatencyRecorder:
        """The level's latencies: recorded as they came, or (a mix without intervals)
        made of its methods' (``record_call``)."""
        if self.parts is None or self.window is not None or self.parts_absorbed:
            return self.latency
        self.parts_absorbed = True  # once: twice would count every call twice
        for part in self.parts:
            self.latency.absorb(part.latency)
        return self.latency

    def record_timing(self, service_us: int, lag_us: int) -> None:
        """An open-loop call's time from its actual send, and its send's lag."""
        if self.window is not None:
            self.window.record_timing(service_us, lag_us)
        else:
            self.service.record(service_us)
            self.lag.record(lag_us)

    def open_window(self, interval_s: float, started: float) -> IntervalRecorder:
        """``--interval``: from now on calls are recorded per interval, each interval
        added to this level's histograms as it is cut (the last one by ``finish``)."""
        self.window = IntervalRecorder(interval_s, started, (self.latency, self.service, self.lag))
        return self.window

    def record_error(self, status: str, message: str) -> None:
        _count_error(self.errors, status, message)


@dataclass
class DetailedLevelRecorders(LevelRecorders):
    """``LevelRecorders`` that also keep one record per call (``CallDetails``), for the
    formats that list calls; a subclass, so runs without them pay nothing per call."""

    details: CallDetails = field(default_factory=CallDetails)

    def record_call(
        self, status: str, latency_us: int, stats: CallStats | None, message: str = "",
        part: int | None = None,
    ) -> None:  # fmt: skip
        super().record_call(status, latency_us, stats, message, part)
        latency_ns = latency_us * 1000
        self.details.add(time.time_ns() - latency_ns, latency_ns, status, message)

    def record_ok(self, latency_us: int) -> None:
        self.record_call("OK", latency_us, None)

    def record_ok_part(self, latency_us: int, part: int) -> None:
        self.record_call("OK", latency_us, None, part=part)


def level_recorders(call_details: int, mix_parts: int = 0) -> LevelRecorders:
    """Recorders for one measured phase; ``call_details``: per-call records to keep (0:
    none); ``mix_parts``: a mix's methods (0: not a mix)."""
    parts = [PartRecorder() for _ in range(mix_parts)] if mix_parts else None
    if call_details:
        return DetailedLevelRecorders(details=CallDetails(limit=call_details), parts=parts)
    return LevelRecorders(parts=parts)
