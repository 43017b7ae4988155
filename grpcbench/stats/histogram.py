"""Latency histograms: constant memory, any percentile, exactly mergeable.

Backed by HdrHistogram (the ``hdrhistogram`` package): log-bucketed counts with
3 significant digits, so a 10 ms latency is known to +-10 us whatever the
number of requests. Count, sum, min and max are kept exactly beside it, so
Fastest/Slowest/Average are not rounded to a bucket.

Two types: ``LatencyRecorder`` is the mutable hot-path object inside a load
generator; ``LatencySummary`` is its frozen, JSON-friendly snapshot that
results, exporters and merges use.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from hdrh.histogram import HdrHistogram

# Microseconds: 1 us .. 1 hour, 3 significant digits (~200 KiB of counters).
LOWEST_US = 1
HIGHEST_US = 3_600_000_000
SIGNIFICANT_DIGITS = 3


def new_hdr() -> HdrHistogram:
    return HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_DIGITS)


# Distinct histogram cells a recorder buffers before it adds them to the histogram.
FLUSH_AT = 4096
# With 3 significant digits HdrHistogram keeps every value below 2048 exactly and,
# above, cells 2^(bit_length - 11) wide: a value rounded down to its cell's start
# is recorded in the same cell, so buffering by cell loses nothing.
_EXACT_BELOW = 2048


class LatencyRecorder:
    """Records latencies in microseconds; values are clamped into the histogram range.

    On the generator's hot path a call costs one dict update and a few integer
    operations: latencies are counted per histogram cell and added in batches, one
    ``record_value(cell, n)`` per distinct cell. Below 2048 us a value is its own
    cell, so those are counted as they are (``_exact``: at most 2047 entries, so it
    needs no size check) and their count, sum and extremes are taken from the
    counts at ``flush``. Above, a value is rounded down to its cell's start (which
    HdrHistogram records identically) and its sum and extremes are kept per call.
    A batch is a few hundred cells at most for any real spread of latencies, so a
    flush never stalls the generator's loop (buffering raw microseconds did:
    thousands of distinct values each flush, 20 ms in one go, which an open loop
    shows as send lag)."""

    __slots__ = ("hdr", "_count", "_total_us", "_min_us", "_max_us", "_exact", "_pending")

    def __init__(self) -> None:
        self.hdr = new_hdr()
        self._count = 0
        self._total_us = 0
        self._min_us = HIGHEST_US
        self._max_us = 0
        self._exact: dict[int, int] = {}  # value below 2048 us -> calls
        self._pending: dict[int, int] = {}  # cell at or above 2048 us -> calls

    def record(self, micros: int, times: int = 1) -> None:
        """Record ``micros`` (``times`` times: messages that arrived together)."""
        if micros < _EXACT_BELOW:
            exact = self._exact
            if micros < LOWEST_US:
                micros = LOWEST_US
            exact[micros] = exact.get(micros, 0) + times
            return
        if micros > HIGHEST_US:
            micros = HIGHEST_US
        shift = micros.bit_length() - 11
        cell = micros >> shift << shift
        self._total_us += micros * times
        if micros > self._max_us:
            self._max_us = micros
        if micros < self._min_us:
            self._min_us = micros
        pending = self._pending
        pending[cell] = pending.get(cell, 0) + times
        if len(pending) >= FLUSH_AT:
            self.flush()

    def flush(self) -> None:
        """Add the buffered cells to the histogram."""
        record = self.hdr.record_value
        exact = self._exact
        if exact:
            for value, times in exact.items():
                record(value, times)
                self._count += times
                self._total_us += value * times
            self._min_us = min(self._min_us, min(exact))
            self._max_us = max(self._max_us, max(exact))
            exact.clear()
        for cell, times in self._pending.items():
            record(cell, times)
            self._count += times
        self._pending.clear()

    def absorb(self, other: LatencyRecorder) -> None:
        """Add everything ``other`` recorded (an interval's calls into its level's: one
        array addition a second, where recording each call twice cost the generator)."""
        other.flush()
        if not other._count:
            return
        self.flush()
        self.hdr.add(other.hdr)
        self._count += other._count
        self._total_us += other._total_us
        self._min_us = min(self._min_us, other._min_us)
        self._max_us = max(self._max_us, other._max_us)

    @property
    def count(self) -> int:
        self.flush()
        return self._count

    def summary(self) -> LatencySummary:
        self.flush()
        encoded = self.hdr.encode().decode("ascii") if self._count else ""
        return LatencySummary(
            count=self._count,
            total_us=self._total_us,
            min_us=self._min_us if self._count else 0,
            max_us=self._max_us,
            encoded=encoded,
        )


@dataclass(frozen=True)
class LatencySummary:
    """Frozen latency distribution; ``encoded`` is HdrHistogram's base64 form."""

    count: int = 0
    total_us: int = 0
    min_us: int = 0
    max_us: int = 0
    encoded: str = field(default="", repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LatencySummary:
        """From a results file; the histogram is decoded now, so a corrupt one fails here."""
        summary = cls(
            count=int(data["count"]),
            total_us=int(data["total_us"]),
            min_us=int(data["min_us"]),
            max_us=int(data["max_us"]),
            encoded=str(data.get("encoded", "")),
        )
        try:
            summary._hdr  # noqa: B018 - decoding is the check
        except Exception as error:  # base64, zlib or HdrHistogram's own errors
            raise ValueError(f"corrupt latency histogram ({error})") from None
        return summary

    @cached_property
    def _hdr(self) -> HdrHistogram:
        return HdrHistogram.decode(self.encoded) if self.encoded else new_hdr()

    @property
    def mean_us(self) -> float:
        return self.total_us / self.count if self.count else 0.0

    def percentile_us(self, percentile: float) -> int:
        """Value at ``percentile`` (0-100), to the histogram's 3 significant digits."""
        if not self.count:
            return 0
        value = int(self._hdr.get_value_at_percentile(percentile))
        # A bucket's reported value may exceed the exact extremes; clamp to them.
        return min(max(value, self.min_us), self.max_us)

    def value_counts(self) -> list[tuple[int, int]]:
        """(latency us, calls) of each recorded bucket, exact: for exporters that count
        calls per bucket (ghz's per-value records, telemetry's buckets)."""
        return recorded_counts(self._hdr) if self.count else []

    def counts_at_or_below(self, bounds_us: Iterable[float]) -> list[int]:
        """Calls at or below each of ``bounds_us`` (ascending), counted bucket by bucket:
        ghz's histogram marks, telemetry's latency buckets."""
        buckets = self.value_counts()
        counts, index, below = [], 0, 0
        for bound in bounds_us:
            while index < len(buckets) and buckets[index][0] <= bound:
                below += buckets[index][1]
                index += 1
            counts.append(below)
        return counts

    def cumulative(self) -> list[tuple[int, float]]:
        """(latency us, share of calls at or below it), one point per recorded bucket."""
        points: list[tuple[int, float]] = []
        seen = 0
        for value, count in self.value_counts():
            seen += count
            points.append((value, seen / self.count))
        return points

    def merge(self, other: LatencySummary) -> LatencySummary:
        return merge_summaries([self, other])


def recorded_counts(hdr: HdrHistogram) -> list[tuple[int, int]]:
    """(highest value of the cell, count) of every cell with a count, in order: what
    hdrh's recorded iterator gives. The iterator steps through every cell up to the
    largest value with several Python calls each (about 65 ms for a histogram whose
    largest value is 100 ms), and live telemetry reads each histogram every interval
    (issue 52); here the counts array is scanned once, and only the cells with a count
    are turned into values, by hdrh's own functions."""
    first = hdr.get_counts_array_index(hdr.get_min_value())
    last = hdr.get_counts_array_index(hdr.get_max_value())
    counts = array("Q")  # the cells from the smallest value's to the largest's, copied once
    counts.frombytes(memoryview(hdr.counts).cast("B")[first * 8 : (last + 1) * 8])
    highest, value_at = hdr.get_highest_equivalent_value, hdr.get_value_from_index
    return [
        (int(highest(value_at(first + offset))), count)
        for offset, count in enumerate(counts)
        if count
    ]


def merge_summaries(summaries: Iterable[LatencySummary]) -> LatencySummary:
    """Exact merge: counts add bucket by bucket, extremes combine."""
    parts = [s for s in summaries if s.count]
    if not parts:
        return LatencySummary()
    hdr = new_hdr()
    for part in parts:
        hdr.add(part._hdr)
    return LatencySummary(
        count=sum(p.count for p in parts),
        total_us=sum(p.total_us for p in parts),
        min_us=min(p.min_us for p in parts),
        max_us=max(p.max_us for p in parts),
        encoded=hdr.encode().decode("ascii"),
    )
