import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grpcbench.stats.histogram import (
    FLUSH_AT,
    HIGHEST_US,
    LatencyRecorder,
    LatencySummary,
    merge_summaries,
    new_hdr,
    recorded_counts,
)


def _exact_percentile(values: list[int], percentile: float) -> int:
    ordered = sorted(values)
    index = max(0, int(round(percentile / 100 * len(ordered))) - 1)
    return ordered[index]


def test_percentiles_within_histogram_precision() -> None:
    rng = random.Random(1)
    values = [int(rng.lognormvariate(7, 1)) + 1 for _ in range(50_000)]
    recorder = LatencyRecorder()
    for value in values:
        recorder.record(value)
    summary = recorder.summary()
    assert summary.count == len(values)
    assert summary.min_us == min(values) and summary.max_us == max(values)
    assert summary.mean_us == pytest.approx(sum(values) / len(values))
    for p in (50, 90, 99, 99.9):
        assert summary.percentile_us(p) == pytest.approx(_exact_percentile(values, p), rel=2e-3)


def test_merge_is_exact() -> None:
    rng = random.Random(2)
    a, b, both = LatencyRecorder(), LatencyRecorder(), LatencyRecorder()
    for i in range(20_000):
        value = rng.randint(50, 200_000)
        (a if i % 3 else b).record(value)
        both.record(value)
    merged = merge_summaries([a.summary(), b.summary()])
    expected = both.summary()
    assert (merged.count, merged.total_us, merged.min_us, merged.max_us) == (
        expected.count, expected.total_us, expected.min_us, expected.max_us,
    )  # fmt: skip
    for p in (1, 50, 75, 99, 99.99):
        assert merged.percentile_us(p) == expected.percentile_us(p)
    assert a.summary().merge(b.summary()).percentile_us(90) == expected.percentile_us(90)


def test_memory_is_bounded_by_the_buffer() -> None:
    """HdrHistogram's counters are preallocated, so what could grow is the buffer of
    pending cells: it is flushed at FLUSH_AT and holds one entry per histogram cell
    (values below 2048 us, each its own cell, at most one each), so a million calls
    over a wide spread keep it small."""
    recorder = LatencyRecorder()
    rng = random.Random(3)
    most = 0
    for _ in range(1_000_000 // 50):
        for _ in range(50):
            recorder.record(int(rng.expovariate(1 / 5000)) + 1)
        most = max(most, len(recorder._pending) + len(recorder._exact))
    assert most <= FLUSH_AT + 2047
    assert recorder.summary().count == 1_000_000


@given(st.lists(st.integers(-5, HIGHEST_US * 2), min_size=1, max_size=300))
def test_buffering_by_cell_records_what_the_histogram_would(values: list[int]) -> None:
    """Rounding a value down to its cell's start is lossless: the same counts, every
    percentile the same, and count, sum, min and max exact."""
    direct = new_hdr()
    recorder = LatencyRecorder()
    for value in values:
        clamped = min(max(value, 1), HIGHEST_US)
        direct.record_value(clamped)
        recorder.record(value)
    summary = recorder.summary()
    clamped_values = [min(max(v, 1), HIGHEST_US) for v in values]
    assert summary.count == len(values)
    assert summary.total_us == sum(clamped_values)
    assert (summary.min_us, summary.max_us) == (min(clamped_values), max(clamped_values))
    assert list(recorder.hdr.counts) == list(direct.counts)


def test_out_of_range_values_are_clamped() -> None:
    recorder = LatencyRecorder()
    recorder.record(0)
    recorder.record(HIGHEST_US * 10)
    summary = recorder.summary()
    assert summary.count == 2
    assert summary.min_us == 1 and summary.max_us == HIGHEST_US


def test_empty_summary() -> None:
    empty = LatencySummary()
    assert empty.percentile_us(99) == 0 and empty.mean_us == 0
    assert merge_summaries([empty, empty]).count == 0


def test_cumulative_distribution() -> None:
    recorder = LatencyRecorder()
    for value in (100, 200, 300, 4000):
        recorder.record(value)
    points = dict(recorder.summary().cumulative())
    assert points[300] == 0.75  # 3 of 4 calls at or below 300 us
    assert max(points.values()) == 1.0 and LatencySummary().cumulative() == []


@given(
    st.lists(
        st.tuples(st.integers(0, HIGHEST_US + 10), st.integers(1, 1000)), min_size=1, max_size=60
    )
)
def test_recorded_counts_are_hdrhs_recorded_iterator(values: list[tuple[int, int]]) -> None:
    """The counts array read directly gives what hdrh's (slow) iterator gives: every
    cell with a count, as (its highest equivalent value, count), in order."""
    recorder = LatencyRecorder()
    for micros, times in values:
        recorder.record(micros, times)
    hdr = recorder.summary()._hdr
    expected = [
        (int(item.value_iterated_to), int(item.count_at_value_iterated_to))
        for item in hdr.get_recorded_iterator()
    ]
    assert recorded_counts(hdr) == expected
    assert sum(count for _, count in expected) == sum(times for _, times in values)
