"""A cluster's live intervals: each shown once, whole, in order (load.interval_merger)."""

from __future__ import annotations

from grpcbench.load.interval_merger import IntervalMerger
from grpcbench.model.intervals import IntervalFigures
from grpcbench.stats.histogram import LatencyRecorder


def _figures(index: int, ok: int) -> IntervalFigures:
    recorder = LatencyRecorder()
    for _ in range(ok):
        recorder.record(1000)
    return IntervalFigures(index, float(index), index + 1.0, ok, 0, recorder.summary(), 50.0)


def test_an_interval_is_shown_once_every_worker_sent_it() -> None:
    merger = IntervalMerger(shares=2)
    merger.add(0, _figures(0, 10))
    assert merger.ready() == []  # the other worker's half is still on its way
    merger.add(1, _figures(0, 30))
    (whole,) = merger.ready()
    assert (whole.index, whole.ok, whole.offered, whole.latency.count) == (0, 40, 100.0, 40)
    assert merger.ready() == []


def test_a_share_that_moved_past_an_interval_does_not_hold_it_back() -> None:
    merger = IntervalMerger(shares=2)
    merger.add(0, _figures(0, 10))
    merger.add(0, _figures(1, 10))
    merger.add(1, _figures(1, 20))  # its interval 0 was lost: 1 came, 0 is not waited for
    assert [(f.index, f.ok) for f in merger.ready()] == [(0, 10), (1, 30)]
    merger.add(1, _figures(0, 5))  # too late: interval 0 was shown without it
    assert merger.ready() == []


def test_intervals_come_out_in_order() -> None:
    merger = IntervalMerger(shares=2)
    for index in (1, 0):
        merger.add(0, _figures(index, 1))
        merger.add(1, _figures(index, 1))
    assert [f.index for f in merger.ready()] == [0, 1]
