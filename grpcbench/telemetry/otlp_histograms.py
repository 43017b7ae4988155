"""``--otlp``'s latency histograms, built from the run's HDR histograms, not by the SDK.

The SDK's histogram instrument takes one value per ``record()`` call, and has no
weight: fed from merged HDR histograms it was called once per call measured, on
the coordinator, which at 6,000 calls/s cost 7 s of CPU per 10 s level (issue 52).
Here each series (a histogram and its attributes) keeps a cumulative HDR
histogram, one addition per interval; at each push its cells are mapped onto the
OTLP exponential buckets the SDK would have made for the same values (the same
index mapping, scale at most 20, at most 160 buckets) and added to the SDK's own
metrics in the same export. At a level's end a series becomes the level's exact
histogram, so the totals pushed are the results file's.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Any

from hdrh.histogram import HdrHistogram

from grpcbench.stats.histogram import LatencySummary, new_hdr, recorded_counts

MAX_SCALE = 20  # the SDK's ExponentialBucketHistogramAggregation defaults
MAX_BUCKETS = 160
_MANTISSA_BITS = 52


def bucket_index(value: float, scale: int) -> int:
    """The OTLP exponential bucket of ``value`` (> 0) at ``scale``: bucket i holds
    (base**i, base**(i+1)], base = 2**(2**-scale); the SDK's mappings, exactly (an
    exact power of two is the upper bound of the bucket below it)."""
    mantissa, exponent = math.frexp(value)  # value = mantissa * 2**exponent, 0.5 <= m < 1
    power_of_two = mantissa == 0.5
    if scale <= 0:  # the SDK's ExponentMapping
        return (exponent - 1 - (1 if power_of_two else 0)) >> -scale
    if power_of_two:  # the SDK's LogarithmMapping
        return ((exponent - 1) << scale) - 1
    return int(math.floor(math.log(value) * (2**scale / math.log(2))))


def exponential_buckets(cells: list[tuple[float, int]]) -> tuple[int, int, list[int]]:
    """(scale, offset, counts) of positive values with their counts, at the largest scale
    (at most ``MAX_SCALE``) whose buckets span them in at most ``MAX_BUCKETS``."""
    if not cells:
        return MAX_SCALE, 0, []
    low = bucket_index(cells[0][0], MAX_SCALE)
    high = bucket_index(cells[-1][0], MAX_SCALE)
    shift = 0  # a bucket at scale s - 1 is two at scale s: its index is theirs >> 1
    while (high >> shift) - (low >> shift) + 1 > MAX_BUCKETS:
        shift += 1
    offset = low >> shift
    counts = [0] * ((high >> shift) - offset + 1)
    for value, count in cells:
        counts[(bucket_index(value, MAX_SCALE) >> shift) - offset] += count
    return MAX_SCALE - shift, offset, counts


@dataclass
class _Series:
    """One histogram with its attributes, cumulative since ``start_ns``."""

    start_ns: int
    hdr: HdrHistogram
    count: int = 0
    total_us: int = 0
    min_us: int = 0
    max_us: int = 0

    def add(self, summary: LatencySummary) -> None:
        self.hdr.add(summary._hdr)
        self.min_us = min(self.min_us, summary.min_us) if self.count else summary.min_us
        self.max_us = max(self.max_us, summary.max_us)
        self.count += summary.count
        self.total_us += summary.total_us


class PushedHistograms:
    """The run's latency histograms as OTLP exponential histograms, cumulative per
    series. ``add`` and ``settle`` run on the coordinator's loop, ``metrics`` on the
    SDK's export thread: a lock keeps each push whole."""

    def __init__(self, described: dict[str, str]) -> None:
        self.described = described  # instrument name -> description
        self.series: dict[tuple[str, tuple[tuple[str, Any], ...]], _Series] = {}
        self.lock = threading.Lock()

    def add(self, name: str, attributes: dict[str, Any], summary: LatencySummary) -> None:
        """An interval's calls."""
        if not summary.count:
            return
        with self.lock:
            self._series(name, attributes).add(summary)

    def settle(self, name: str, attributes: dict[str, Any], summary: LatencySummary) -> None:
        """The level's whole histogram: what the intervals pushed is replaced by it (the
        calls after the last interval closed are in it, so the totals are exact)."""
        with self.lock:
            series = self._series(name, attributes)
            series.hdr, series.count = new_hdr(), 0
            series.total_us = series.min_us = series.max_us = 0
            if summary.count:
                series.add(summary)

    def _series(self, name: str, attributes: dict[str, Any]) -> _Series:
        key = (name, tuple(sorted(attributes.items())))
        series = self.series.get(key)
        if series is None:
            series = self.series[key] = _Series(time.time_ns(), new_hdr())
        return series

    def metrics(self) -> list[Any]:
        """Every series as the SDK's export data (``opentelemetry.sdk.metrics.export``)."""
        from opentelemetry.sdk.metrics.export import (
            AggregationTemporality,
            Buckets,
            ExponentialHistogram,
            ExponentialHistogramDataPoint,
            Metric,
        )

        now = time.time_ns()
        points: dict[str, list[Any]] = {}
        with self.lock:
            for (name, attributes), series in self.series.items():
                if not series.count:
                    continue
                cells = [(value / 1e6, count) for value, count in recorded_counts(series.hdr)]
                scale, offset, counts = exponential_buckets(cells)
                points.setdefault(name, []).append(ExponentialHistogramDataPoint(
                    attributes=dict(attributes), start_time_unix_nano=series.start_ns,
                    time_unix_nano=now, count=series.count, sum=series.total_us / 1e6,
                    scale=scale, zero_count=0, positive=Buckets(offset, counts),
                    negative=Buckets(0, []), flags=0, min=series.min_us / 1e6,
                    max=series.max_us / 1e6,
                ))  # fmt: skip
        return [
            Metric(name, self.described.get(name, ""), "s",
                   ExponentialHistogram(data, AggregationTemporality.CUMULATIVE))
            for name, data in points.items()
        ]  # fmt: skip


def with_metrics(metrics_data: Any, extra: list[Any], resource: Any) -> Any:
    """The SDK's export data with ``extra`` metrics added to its "grpcbench" scope (made
    if the SDK had nothing to push)."""
    from opentelemetry.sdk.metrics.export import MetricsData, ResourceMetrics, ScopeMetrics
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    if not extra:
        return metrics_data
    resources = list(metrics_data.resource_metrics) if metrics_data is not None else []
    if not resources:
        scope = ScopeMetrics(InstrumentationScope("grpcbench"), extra, "")
        return MetricsData([ResourceMetrics(resource, [scope], "")])
    first = resources[0]
    scopes = list(first.scope_metrics)
    for index, scope in enumerate(scopes):
        if scope.scope.name == "grpcbench":
            scopes[index] = ScopeMetrics(scope.scope, [*scope.metrics, *extra], scope.schema_url)
            break
    else:
        scopes.append(ScopeMetrics(InstrumentationScope("grpcbench"), extra, ""))
    resources[0] = ResourceMetrics(first.resource, scopes, first.schema_url)
    return MetricsData(resources)
