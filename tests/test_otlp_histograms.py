"""--otlp's histograms, built from HDR histograms, are what the OpenTelemetry SDK makes
of the same values: the same bucket index per value at every scale, the same scale,
offset and counts for a whole distribution, and totals that are the level's."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grpcbench.stats.histogram import HIGHEST_US, LatencyRecorder, LatencySummary
from grpcbench.telemetry.otlp_histograms import PushedHistograms, bucket_index

pytest.importorskip("opentelemetry.sdk.metrics")
from opentelemetry.sdk.metrics._internal.exponential_histogram.mapping.exponent_mapping import (  # noqa: E402
    ExponentMapping,
)
from opentelemetry.sdk.metrics._internal.exponential_histogram.mapping.logarithm_mapping import (  # noqa: E402
    LogarithmMapping,
)

LATENCIES = st.lists(
    st.tuples(st.integers(1, HIGHEST_US), st.integers(1, 50)), min_size=1, max_size=40
)


@given(st.floats(1e-9, 1e9, allow_nan=False), st.integers(-10, 20))
def test_a_values_bucket_is_the_sdks_at_every_scale(value: float, scale: int) -> None:
    mapping = LogarithmMapping(scale) if scale > 0 else ExponentMapping(scale)
    assert bucket_index(value, scale) == mapping.map_to_index(value)


@pytest.mark.parametrize("value", [2.0**k for k in range(-30, 30)])
def test_a_power_of_two_is_the_upper_bound_of_its_bucket(value: float) -> None:
    for scale in (-3, 0, 1, 5, 20):
        mapping = LogarithmMapping(scale) if scale > 0 else ExponentMapping(scale)
        assert bucket_index(value, scale) == mapping.map_to_index(value)


def _summary(latencies: list[tuple[int, int]]) -> LatencySummary:
    recorder = LatencyRecorder()
    for micros, times in latencies:
        recorder.record(micros, times)
    return recorder.summary()


def _sdk_point(summary: LatencySummary) -> Any:
    """What the SDK's exponential histogram makes of the summary's values, each
    recorded as many times as it was counted (how --otlp once fed it)."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.metrics.view import ExponentialBucketHistogramAggregation, View

    reader = InMemoryMetricReader()
    provider = MeterProvider(
        metric_readers=[reader],
        views=[View(instrument_name="h", aggregation=ExponentialBucketHistogramAggregation())],
    )
    histogram = provider.get_meter("t").create_histogram("h", unit="s")
    for value_us, count in summary.value_counts():
        for _ in range(count):
            histogram.record(value_us / 1e6)
    data = reader.get_metrics_data()
    provider.shutdown()
    assert data is not None
    (point,) = data.resource_metrics[0].scope_metrics[0].metrics[0].data.data_points
    return point


def _trimmed(counts: Any) -> list[int]:
    counts = list(counts)
    while counts and not counts[-1]:
        counts.pop()
    return counts


@settings(max_examples=40, deadline=None)
@given(LATENCIES)
def test_a_distribution_gets_the_sdks_scale_offset_and_counts(
    latencies: list[tuple[int, int]],
) -> None:
    summary = _summary(latencies)
    histograms = PushedHistograms({"h": "a histogram"})
    histograms.add("h", {"level": "c=1"}, summary)
    (metric,) = histograms.metrics()
    (point,) = metric.data.data_points
    expected = _sdk_point(summary)
    assert (point.scale, point.positive.offset) == (expected.scale, expected.positive.offset)
    # (the SDK's array may run on in empty buckets, which say nothing)
    assert _trimmed(point.positive.bucket_counts) == _trimmed(expected.positive.bucket_counts)
    assert point.count == expected.count == summary.count
    # Exact, where the SDK summed each cell's highest value: the results file's figures.
    assert math.isclose(point.sum, summary.total_us / 1e6)
    assert (point.min, point.max) == (summary.min_us / 1e6, summary.max_us / 1e6)
    assert dict(point.attributes) == {"level": "c=1"} and metric.unit == "s"


def test_intervals_add_up_and_the_level_settles_them_exactly() -> None:
    histograms = PushedHistograms({"h": ""})
    first, second = _summary([(100, 5)]), _summary([(3000, 2)])
    histograms.add("h", {}, first)
    histograms.add("h", {}, second)
    (point,) = histograms.metrics()[0].data.data_points
    assert point.count == 7 and math.isclose(point.sum, (500 + 6000) / 1e6)
    start = point.start_time_unix_nano
    level = _summary([(100, 5), (3000, 2), (90_000, 1)])  # a call after the last interval
    histograms.settle("h", {}, level)
    (point,) = histograms.metrics()[0].data.data_points
    assert point.count == 8 and point.max == 0.09 and point.start_time_unix_nano == start
