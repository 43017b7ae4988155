"""A level's recorders: in a mix each call's latency is recorded once, in its method's
histogram, and the level's is made of them when the phase ends (recording each call in
both cost a mix 16% more instructions per call than its methods alone)."""

from __future__ import annotations

from grpcbench.load.recorders import level_recorders


def test_a_mixs_level_latency_is_its_methods_merged_once() -> None:
    measure = level_recorders(call_details=0, mix_parts=2)
    for latency_us in (100, 200, 300):
        measure.record_ok_part(latency_us, 0)
    measure.record_call("UNAVAILABLE", 5000, None, "gone", part=1)
    assert measure.parts is not None
    assert [part.latency.count for part in measure.parts] == [3, 1]
    level = measure.level_latency()
    assert level.count == 4 and level.summary().max_us >= 5000
    assert measure.level_latency().count == 4  # asked twice, counted once
    assert dict(measure.statuses) == {"OK": 3, "UNAVAILABLE": 1} and measure.failed == 1


def test_a_single_method_level_records_as_it_goes() -> None:
    measure = level_recorders(call_details=0)
    measure.record_ok(150)
    measure.record_call("OK", 250, None)
    assert measure.latency.count == 2 and measure.level_latency() is measure.latency


def test_with_call_details_a_mix_is_counted_once_too() -> None:
    measure = level_recorders(call_details=10, mix_parts=2)
    measure.record_ok_part(100, 1)
    measure.record_ok_part(120, 0)
    assert measure.level_latency().count == 2
