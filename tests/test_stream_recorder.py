"""A stream's per-message figures: recorded exactly, merged across processes, saved."""

from __future__ import annotations

from grpcbench.contract.calls import CallStats
from grpcbench.load.recorders import StreamRecorder
from grpcbench.model.level_parts import StreamSummary


def test_gaps_round_trips_and_lags_are_counted_per_message() -> None:
    recorder = StreamRecorder()
    recorder.record(CallStats(5, 0, 50, 0.002, gaps_us=[300, 7000], together=2))
    recorder.record(
        CallStats(3, 0, 30, 0.001, sent=3, gaps_us=[4000, 4100], round_trips_us=[900, 800, 700],
                  send_lags_us=[120, 90])
    )  # fmt: skip
    summary = recorder.summary()
    assert summary is not None and summary.gap is not None
    assert summary.gap.count == 6 and summary.gap.max_us == 7000
    assert summary.gap.min_us == 1  # the two that came with another: under 1 us
    assert summary.round_trip is not None and summary.round_trip.count == 3
    assert summary.send_lag is not None and summary.send_lag.total_us == 210

    merged = summary.merge(summary)
    assert merged.gap is not None and merged.gap.count == 12
    assert StreamSummary.from_json(merged.to_json()) == merged


def test_a_stream_without_per_message_figures_saves_none() -> None:
    recorder = StreamRecorder()
    recorder.record(CallStats(1, 0, 10, 0.001))
    summary = recorder.summary()
    assert summary is not None
    assert (summary.gap, summary.round_trip, summary.send_lag) == (None, None, None)
    assert StreamSummary.from_json(summary.to_json()) == summary
    old = {k: v for k, v in summary.to_json().items() if k not in ("gap", "round_trip", "send_lag")}
    assert StreamSummary.from_json(old) == summary  # a file from before these figures
