"""--rate-schedule (a level whose rate ramps) and --interval (a level over time)."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from grpcbench.base.errors import UsageError
from grpcbench.model.intervals import IntervalFigures, IntervalRecorder, finish, merge_intervals
from grpcbench.model.schedule import parse_rate_schedule, send_times
from grpcbench.run.arguments import RunArgs
from grpcbench.run.options import build_run_options
from grpcbench.stats.histogram import LatencySummary
from tests.conftest import GRPCBENCH


def test_a_step_schedule_offers_each_steps_rate_for_its_time() -> None:
    schedule = parse_rate_schedule("step:start=500,step=500,every=5s,end=5000")
    assert (schedule.steps, schedule.duration_s, schedule.peak) == (10, 50.0, 5000.0)
    assert [schedule.rate_at(t) for t in (0, 4.99, 5, 49.9, 60)] == [500, 500, 1000, 5000, 5000]
    times = list(itertools.takewhile(lambda t: t < 50, send_times(schedule, "uniform")))
    per_step = [sum(1 for t in times if 5 * k <= t < 5 * (k + 1)) for k in range(10)]
    assert per_step == [2500 * (k + 1) for k in range(10)]  # exactly rate x 5 s each
    assert schedule.expected_calls(50) == sum(per_step)


def test_a_line_schedule_and_a_step_down() -> None:
    line = parse_rate_schedule("line:start=100,end=5000,over=60s")
    assert line.duration_s == 60 and line.rate_at(30) == pytest.approx(2550)
    for calls in (0, 1, 999, 50_000, 153_000, 160_000):
        assert line.expected_calls(line.time_of(calls)) == pytest.approx(calls, abs=1e-6)
    down = parse_rate_schedule("step:start=1000,step=-250,every=1s,end=250")
    assert down.steps == 4 and down.peak == 1000 and down.expected_calls(4) == 2500


def test_poisson_arrivals_follow_the_ramp() -> None:
    schedule = parse_rate_schedule("line:start=1000,end=3000,over=10s")
    times = list(itertools.takewhile(lambda t: t < 10, send_times(schedule, "poisson", seed=7)))
    first, last = sum(1 for t in times if t < 1), sum(1 for t in times if t >= 9)
    assert first == pytest.approx(1100, rel=0.1) and last == pytest.approx(2900, rel=0.1)
    assert len(times) == pytest.approx(20_000, rel=0.03)


def test_a_generators_share_scales_the_schedule() -> None:
    schedule = parse_rate_schedule("step:start=100,step=100,every=1s,end=300")
    half = schedule.scaled(0.5)
    assert half.expected_calls(3) * 2 == schedule.expected_calls(3) == 600
    assert half.duration_s == schedule.duration_s


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ramp:start=1", "step:... or line:..."),
        ("step:start=500,step=500,end=5000", "missing every"),
        ("step:start=500,step=-500,every=1s,end=5000", "from start toward end"),
        ("step:start=500,step=300,every=1s,end=1000", "whole steps"),
        ("line:start=0,end=100,over=10s", "start must be above 0"),
        ("line:start=10,end=100,over=0s", "over .0s.: must be greater than zero"),
        ("line:start=10,end=abc,over=1s", "end must be a number"),
        ("line:start=10,end=100,over=1s,every=2s", "line takes start, end, over"),
    ],
)
def test_a_bad_schedule_is_one_line(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_rate_schedule(text)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (RunArgs(rate="100", settings={"rate_schedule": "line:start=1,end=2,over=1s"}),
         "drop --rate/--concurrency"),
        (RunArgs(settings={"rate_schedule": "line:start=1,end=2,over=1s", "requests": "10"}),
         "drop --requests/--duration"),
        (RunArgs(settings={"rate_schedule": "line:start=1,end=2,over=400s", "max_level": "5m"}),
         "raise --max-level"),
        (RunArgs(load="ghz", settings={"rate_schedule": "line:start=1,end=2,over=1s"}),
         "--rate or --rate-schedule"),
        (RunArgs(settings={"interval_s": "10ms"}), "at least 100ms"),
    ],
)  # fmt: skip
def test_schedule_options_that_cannot_work_are_refused(args: RunArgs, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        build_run_options(args)


def test_a_schedule_is_one_level_lasting_the_schedule() -> None:
    options = build_run_options(
        RunArgs(settings={"rate_schedule": "step:start=100,step=100,every=2s,end=300"})
    )
    (level,) = options.levels
    assert level.rate == 300 and level.schedule.startswith("step:")
    assert level.describe() == "ramp 100/s to 300/s in 3 steps of 2 s"
    assert options.settings.duration_s == 6 and options.settings.requests == 0


def _figures(index: int, ok: int, latency_us: int) -> IntervalFigures:
    from grpcbench.stats.histogram import LatencyRecorder

    recorder = LatencyRecorder()
    for _ in range(ok):
        recorder.record(latency_us)
    return IntervalFigures(index, float(index), index + 1.0, ok, 0, recorder.summary())


def test_intervals_merge_index_by_index_and_round_trip() -> None:
    merged = merge_intervals([_figures(0, 10, 1000), _figures(1, 10, 1000)],
                             [_figures(1, 30, 3000), _figures(2, 5, 500)])  # fmt: skip
    assert [(f.index, f.calls) for f in merged] == [(0, 10), (1, 40), (2, 5)]
    assert merged[1].latency.percentile_us(50) == 3000 and merged[1].rate == 40
    again = IntervalFigures.from_json(json.loads(json.dumps(merged[1].to_json())))
    assert again == merged[1]


def test_an_open_loops_intervals_carry_service_time_and_send_lag() -> None:
    """Each interval of an open loop has its calls' service time and send lag (the live
    view's); they merge over generators, survive the sliver's join and the JSON, and a
    closed loop's intervals have none (older files read the same)."""
    window = IntervalRecorder(1.0, started=0.0)
    window.record(True, 1000)
    window.record_timing(800, 200)
    first = window.cut(1.0)
    window.record(True, 3000)
    window.record_timing(2500, 500)
    window.cut(2.0)
    window.record(True, 900)
    window.record_timing(700, 200)
    *_, last = finish(window, now=2.1)
    assert first.service is not None and first.lag is not None
    assert (first.service.count, first.lag.max_us) == (1, 200)
    assert last.service is not None and last.service.count == 2  # the sliver joined
    other = IntervalRecorder(1.0, started=0.0)
    other.record(True, 1000)
    other.record_timing(600, 400)
    (merged,) = merge_intervals([first], [other.cut(1.0)])
    assert merged.service is not None and merged.service.count == 2
    assert IntervalFigures.from_json(json.loads(json.dumps(merged.to_json()))) == merged
    closed = _figures(0, 10, 1000)
    assert closed.service is None and "service" not in closed.to_json()
    assert IntervalFigures.from_json(closed.to_json()) == closed


def test_with_intervals_each_call_is_recorded_once_and_the_level_is_exact() -> None:
    """--interval records a call into its interval only; each cut adds the interval to
    the level's histograms, so the level's figures equal a level recorded call by
    call (count, sum, min, max, percentiles), service time and send lag too."""
    from grpcbench.load.recorders import LevelRecorders

    values = [120, 450, 900, 5_000, 70_000, 333, 12, 2_500_000] * 25
    direct, windowed = LevelRecorders(), LevelRecorders()
    window = windowed.open_window(1.0, started=0.0)
    for number, value in enumerate(values):
        for recorders in (direct, windowed):
            recorders.record_call("OK" if number % 7 else "Unavailable", value, None, "x")
            recorders.record_timing(value // 2, value // 10)
        if number in (40, 90, 91):
            window.cut(float(number))
    finish(window, now=200.0)
    for name in ("latency", "service", "lag"):
        one, other = getattr(direct, name).summary(), getattr(windowed, name).summary()
        assert (other.count, other.total_us, other.min_us, other.max_us) == (
            one.count, one.total_us, one.min_us, one.max_us)  # fmt: skip
        assert [other.percentile_us(q) for q in (50, 90, 99, 99.9)] == [
            one.percentile_us(q) for q in (50, 90, 99, 99.9)]  # fmt: skip
    assert windowed.statuses == direct.statuses
    assert sum(f.calls for f in window.done) == len(values)


def test_the_last_sliver_joins_the_interval_before() -> None:
    window = IntervalRecorder(1.0, started=100.0)
    window.record(True, 1000)
    window.cut(101.0)
    window.record(False, 2000)
    window.record(True, 1500)
    (only,) = finish(window, now=101.2)  # 0.2 s: the replies of calls in flight
    assert (only.start_s, only.ok, only.failed) == (0.0, 2, 1)
    assert only.end_s == pytest.approx(1.2)
    window = IntervalRecorder(1.0, started=0.0)
    window.cut(1.0)
    assert len(finish(window, now=1.6)) == 2  # over half an interval: its own
    assert LatencySummary().count == 0


@pytest.mark.integration
def test_a_ramp_runs_on_its_pacer_and_shows_over_time(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    done = subprocess.run(
        [*GRPCBENCH, "run", "-s", "grpcio:workers=4", "--rate-schedule",
         "step:start=100,step=100,every=1s,end=300", "--interval", "500ms", "--warmup", "0",
         "--client-processes", "2", "--output", str(out), "--report", str(tmp_path / "r.html")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (level,) = json.loads(out.read_text())["levels"]
    assert level["plan"]["schedule"] == "step:start=100,step=100,every=1s,end=300"
    intervals = level["load"]["intervals"]
    assert [i["index"] for i in intervals] == list(range(6))
    assert [round(i["offered"]) for i in intervals] == [100, 100, 200, 200, 300, 300]
    for interval in intervals:  # a server far from its limit keeps up with every step
        assert interval["rate"] == pytest.approx(interval["offered"], rel=0.15), intervals
    assert level["load"]["statuses"]["OK"] == pytest.approx(600, abs=10)
    # Live: one line per interval, both generator processes merged into it, each
    # within one interval of its end (lateness measured as each arrived).
    assert done.stderr.count(" req/s of ") == 6
    assert 0 <= level["load"]["interval_late_s"] < 0.5, level["load"]["interval_late_s"]
    assert "live intervals reached grpcbench" not in done.stderr
    # The last interval's line: its offered rate exactly, its achieved one as above (a
    # reply late by a moment on a loaded machine is counted in the interval it came in).
    last = re.search(r"2\.5-3\.0 s: (\d+) req/s of 300/s offered", done.stderr)
    assert last is not None, done.stderr
    assert int(last.group(1)) == pytest.approx(300, rel=0.15), done.stderr
    # The chart over time is in the report, beside the CPU/RSS timeline.
    assert "Rate and latency over time" in (tmp_path / "r.html").read_text()


def test_an_interval_s_lateness_is_from_its_end_to_its_arrival_and_the_worst_is_kept() -> None:
    from grpcbench.run.measure import IntervalLateness

    lateness, seen = IntervalLateness(), []
    deliver = lateness.watching(seen.append)
    early = IntervalFigures(0, 0.0, 0.0, 1, 0, LatencySummary())
    deliver(early)  # before the phase started: delivered, not timed
    assert lateness.worst is None and seen == [early]
    lateness.phase_started()
    time.sleep(0.2)
    deliver(IntervalFigures(1, 0.0, 0.1, 1, 0, LatencySummary()))  # ~0.1 s late
    deliver(IntervalFigures(2, 0.1, 5.0, 1, 0, LatencySummary()))  # not yet due: 0
    assert lateness.worst is not None and 0.09 < lateness.worst < 0.5 and len(seen) == 3


def test_every_pacer_paces_an_open_loop_the_same_way() -> None:
    """A constant rate is a pacer like a schedule: the open loop, the offered rate and a
    level's name ask any of them the same questions."""
    from grpcbench.model.plan import LevelPlan
    from grpcbench.model.schedule import ConstantRate, mean_rate

    pacers = [
        ConstantRate(100.0),
        parse_rate_schedule("step:start=10,step=10,every=1s,end=30"),
        parse_rate_schedule("line:start=10,end=50,over=2s"),
    ]
    for pacer in pacers:
        times = list(itertools.islice(send_times(pacer, "uniform"), 50))
        assert times == [pacer.time_of(n) for n in range(50)]
        assert all(abs(pacer.expected_calls(t) - n) < 1e-6 for n, t in enumerate(times))
        assert pacer.scaled(0.5).peak == pacer.peak / 2
        assert pacer.rate_at(0.5) <= pacer.peak
    assert mean_rate(pacers[0]) == 100.0 and pacers[0].duration_s == 0
    assert mean_rate(pacers[1]) == 20.0 and mean_rate(pacers[2]) == 30.0
    assert LevelPlan(1, rate=250.0).describe() == "rate 250/s"
    assert LevelPlan(1, rate=30.0, schedule=pacers[1].text).pacer() == pacers[1]
    assert LevelPlan(4).pacer() is None


def test_a_timed_pacer_counts_what_it_scheduled_per_half() -> None:
    """Draw by draw, and to its end when the phase stopped drawing early (its slots
    full): what the capacity probe holds the second half's completions to."""
    from grpcbench.load.schedule_count import ScheduleCount

    count = ScheduleCount(2.0)
    offsets = count.counting(iter([0.1 * n for n in range(100)]))
    drawn = [next(offsets) for _ in range(5)]  # 0.0 .. 0.4: the phase stopped here
    assert drawn[-1] == 0.4 and (count.before_middle, count.before_end) == (5, 5)
    count.drain()
    assert (count.before_middle, count.before_end) == (10, 20)  # 0.0-0.9, 0.0-1.9


def test_a_new_shape_is_its_pacer_plus_one_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """An exponential ramp added as a contributor would: one pacer class and one entry
    in SHAPES. The parser takes it, the option's help and its errors name it."""
    import math
    from dataclasses import dataclass, replace

    from grpcbench.model import schedule
    from grpcbench.model.plan import LoadSettings

    @dataclass(frozen=True)
    class Exponential:
        start: float
        end: float
        over_s: float
        text: str = ""

        @property
        def peak(self) -> float:
            return max(self.start, self.end)

        @property
        def duration_s(self) -> float:
            return self.over_s

        def _k(self) -> float:
            return math.log(self.end / self.start) / self.over_s

        def rate_at(self, t: float) -> float:
            return self.start * math.exp(self._k() * min(t, self.over_s))

        def expected_calls(self, t: float) -> float:
            k, s = self._k(), min(t, self.over_s)
            return self.start * math.expm1(k * s) / k + self.end * max(0.0, t - self.over_s)

        def time_of(self, calls: float) -> float:
            k, total = self._k(), self.expected_calls(self.over_s)
            if calls > total:
                return self.over_s + (calls - total) / self.end
            return math.log1p(calls * k / self.start) / k

        def scaled(self, factor: float) -> Exponential:
            return replace(self, start=self.start * factor, end=self.end * factor)

        def describe(self) -> str:
            return f"exponential {self.start:g}/s to {self.end:g}/s over {self.over_s:g} s"

    def build(fields: schedule.ShapeFields) -> Exponential:
        return Exponential(fields.rate("start"), fields.rate("end"), fields.duration("over"),
                           fields.text)  # fmt: skip

    shape = schedule.ScheduleShape(
        "exp", ("start", "end", "over"), "exp:start=10,end=1000,over=30s", build
    )
    monkeypatch.setitem(schedule.SHAPES, "exp", shape)
    ramp = schedule.parse_rate_schedule("exp:start=10,end=1000,over=30s")
    assert isinstance(ramp, Exponential) and ramp.peak == 1000
    assert ramp.time_of(ramp.expected_calls(12.5)) == pytest.approx(12.5)
    times = list(itertools.takewhile(lambda t: t < 30, send_times(ramp, "uniform")))
    assert len(times) == pytest.approx(ramp.expected_calls(30), abs=1)
    assert "exp:start=10,end=1000,over=30s" in LoadSettings.help("rate_schedule")
    with pytest.raises(
        UsageError, match="step:... or line:... or ghz:... or exp:..., e.g. .*exp:start"
    ):
        schedule.parse_rate_schedule("cosine:start=1")
    with pytest.raises(UsageError, match="exp takes start, end, over once each"):
        schedule.parse_rate_schedule("exp:start=1,every=2s")
    settings = LoadSettings(rate_schedule=ramp, duration_s=30, requests=0)
    assert LoadSettings.from_json(settings.to_json()).rate_schedule == ramp


# ghz's own table (load/pacer_test.go, TestStepPacer_Rate, v0.120.0): start, step,
# step duration (s), stop (0: none), max duration (s, 0: none), elapsed (s), its rate.
GHZ_STEP_RATES = [
    (1, 5, 4, 0, 0, 0, 1), (1, 5, 4, 0, 0, 1, 1), (1, 5, 4, 0, 0, 3, 1), (1, 5, 4, 0, 0, 4, 6),
    (1, 5, 4, 0, 0, 5, 6), (5, 5, 4, 25, 0, 9, 15), (5, 5, 4, 25, 0, 12, 20),
    (5, 5, 4, 25, 0, 22, 25), (5, 5, 4, 0, 25, 0, 5), (5, 5, 4, 0, 25, 19, 25),
    (5, 5, 4, 0, 25, 20, 30), (5, 5, 4, 0, 25, 21, 30), (5, 5, 4, 0, 25, 26, 35),
    (5, 5, 4, 0, 25, 31, 35), (15, -5, 4, 0, 0, 0, 15), (15, -5, 4, 0, 0, 3, 15),
    (15, -5, 4, 0, 0, 4, 10), (15, -5, 4, 0, 0, 5, 10), (15, -5, 4, 0, 0, 11, 5),
    (15, -5, 4, 0, 0, 12, 0), (15, -5, 4, 0, 0, 17, 0), (20, -5, 4, 5, 0, 0, 20),
    (20, -5, 4, 5, 0, 11, 10), (20, -5, 4, 5, 0, 12, 5), (20, -5, 4, 5, 0, 13, 5),
    (20, -5, 4, 5, 0, 22, 5), (20, -5, 4, 0, 10, 0, 20), (20, -5, 4, 0, 10, 9, 10),
    (20, -5, 4, 0, 10, 10, 10), (20, -5, 4, 0, 10, 11, 10), (20, -5, 4, 0, 10, 15, 10),
    (20, -5, 4, 0, 10, 22, 10),
]  # fmt: skip


@pytest.mark.parametrize(("start", "step", "every", "stop", "max_s", "t", "rate"), GHZ_STEP_RATES)
def test_the_ghz_shape_paces_as_ghz_s_step_pacer(
    start: int, step: int, every: float, stop: int, max_s: float, t: float, rate: float
) -> None:
    from grpcbench.model.ghz_schedule import GhzSchedule

    pacer = GhzSchedule(start, step, every, stop, max_s, horizon_s=30)
    assert pacer.rate_at(t) == rate
    if pacer.rate_at(t) > 0:  # the send times invert the calls due, as ghz's hits()
        assert pacer.time_of(pacer.expected_calls(t)) == pytest.approx(t)


def test_the_ghz_shape_refuses_a_ramp_that_reaches_nothing() -> None:
    with pytest.raises(UsageError, match="a step down needs end or max"):
        parse_rate_schedule("ghz:start=15,step=-5,every=4s")
    with pytest.raises(UsageError, match="reaches 0/s before max"):
        parse_rate_schedule("ghz:start=15,step=-5,every=4s,max=20s")
    ramp = parse_rate_schedule("ghz:start=50,step=10,every=5s,end=150")
    assert not ramp.sets_level_length and ramp.peak == 150
    assert ramp.expected_calls(55) == pytest.approx(sum(range(50, 151, 10)) * 5)
