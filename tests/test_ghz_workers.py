"""ghz's concurrency schedule (--concurrency-schedule step|line on a ghz line,
--worker-schedule ghz:... here): ghz's own worker-ticker cases, the working workers
over time, which worker each open-loop call goes to, and ghz's checks."""

from __future__ import annotations

import pytest

from grpcbench.base.errors import UsageError
from grpcbench.load.worker_turns import WorkerTurns
from grpcbench.model.ghz_workers import GhzWorkers, parse_worker_schedule
from grpcbench.rpc.settings import CallArgs
from grpcbench.run.arguments import RunArgs
from grpcbench.run.ghz_compat import apply
from grpcbench.run.ghz_flags import GhzFlags


@pytest.mark.parametrize(
    ("schedule", "deltas"),
    [  # ghz v0.120's load/worker_ticker_test.go, TestStepWorkerTicker, case by case
        (GhzWorkers(5, 2, 2.0, end=0, max_s=5.0), [(0, 5), (2, 2), (4, 2)]),
        (GhzWorkers(5, 2, 2.0, end=15, max_s=5.0), [(0, 5), (2, 2), (4, 2), (6, 6)]),
        (GhzWorkers(10, -2, 2.0, end=0, max_s=5.0), [(0, 10), (2, -2), (4, -2)]),
        (GhzWorkers(10, -2, 2.0, end=4), [(0, 10), (2, -2), (4, -2), (6, -2)]),
        (GhzWorkers(12, -2, 2.0, end=3, max_s=5.0), [(0, 12), (2, -2), (4, -2), (6, -5)]),
        # a step due exactly at max is not taken (ghz races there: measured both ways)
        (GhzWorkers(20, 2, 1.0, max_s=1.0), [(0, 20)]),
        # no max: the count stops once it has reached end, a step may pass it
        (GhzWorkers(5, 10, 1.0, end=20), [(0, 5), (1, 10), (2, 10)]),
    ],
)
def test_the_workers_change_as_ghz_s_ticker_changes_them(
    schedule: GhzWorkers, deltas: list[tuple[float, int]]
) -> None:
    assert list(schedule.deltas()) == deltas


def test_the_oldest_workers_stop_first_and_an_open_ramp_never_ends() -> None:
    windows = GhzWorkers(6, -2, 1.0, end=2).windows()
    assert [(w.since_s, w.first, w.count) for w in windows] == [
        (0, 0, 6), (1, 2, 4), (2, 4, 2)
    ]  # fmt: skip
    ramp = GhzWorkers(1, 1, 1.0).windows()
    assert [next(ramp).count for _ in range(1000)][-1] == 1000


def test_each_call_goes_to_a_working_worker_in_turn_and_they_cap_the_calls_in_flight() -> None:
    constant = WorkerTurns(3)
    assert [constant.turn(t) for t in range(7)] == [0, 1, 2, 0, 1, 2, 0]
    assert not constant.waits(9.0, 2) and constant.waits(9.0, 3)
    turns = WorkerTurns(100, GhzWorkers(2, 2, 1.0, end=4))
    assert [turns.turn(0.1 * n) for n in range(4)] == [0, 1, 0, 1]
    assert turns.waits(0.5, 2) and turns.next_change_s == 1.0
    assert [turns.turn(1.0 + 0.1 * n) for n in range(4)] == [0, 1, 2, 3]
    assert not turns.waits(1.5, 3) and turns.waits(1.5, 4)
    down = WorkerTurns(100, GhzWorkers(4, -2, 1.0, end=2))
    assert [down.turn(t) for t in (0.0, 0.1, 1.0, 1.1, 1.2)] == [0, 1, 2, 3, 2]
    assert WorkerTurns(2, GhzWorkers(8, 1, 1.0, end=9)).waits(0.0, 2)  # the level's cap
    empty = WorkerTurns(10, GhzWorkers(0, 5, 1.0, end=10))  # ghz's default start
    assert empty.waits(0.5, 0) and not empty.waits(1.0, 0) and empty.turn(1.0) == 0


def test_the_schedule_text_is_checked_as_ghz_checks_it() -> None:
    schedule = parse_worker_schedule("ghz:start=5,step=5,every=5s,end=50")
    assert schedule == GhzWorkers(5, 5, 5.0, 50, text="ghz:start=5,step=5,every=5s,end=50")
    assert parse_worker_schedule("ghz:start=50,step=-5,every=5s,max=30s").max_s == 30.0
    for text, error in (
        ("ghz:start=5,step=5", "ghz:start=N,step=N,every=DURATION"),
        ("step:start=5,step=5,every=1s", "ghz:start=N"),
        ("ghz:start=5,step=5,every=1s,wave=2", "ghz:start=N"),
        ("ghz:start=5,step=0,every=1s", "step must not be 0"),
        ("ghz:start=5,step=1,every=1s,end=5", "start cannot equal end"),
        ("ghz:start=x,step=1,every=1s", "a whole number of workers"),
        ("ghz:start=5,step=1,every=1ns", "at least 1ms"),
        ("ghz:start=50,step=-5,every=1s", "no worker is left at 10 s"),
        ("ghz:start=50,step=-5,every=1s,max=20s", "no worker is left"),
    ):
        with pytest.raises(UsageError, match=error):
            parse_worker_schedule(text)
    parse_worker_schedule("ghz:start=50,step=-5,every=1s,max=10s")  # 5 workers left at 9 s


def _applied(**flags: str) -> RunArgs:
    call = CallArgs(call=("helloworld.Greeter.SayHello",))
    return apply(RunArgs(address="127.0.0.1:1", call=call, concurrency="10",
                         ghz_flags=GhzFlags(**flags)))  # type: ignore[arg-type]  # fmt: skip


def test_ghz_s_concurrency_flags_become_the_worker_schedule_and_its_checks_are_ghz_s() -> None:
    args = _applied(rps="200", concurrency_schedule="step", concurrency_start="5",
                    concurrency_step="5", concurrency_end="50",
                    concurrency_step_duration="5s")  # fmt: skip
    assert args.settings["worker_schedule"] == "ghz:start=5,step=5,every=5s,end=50"
    assert "max_in_flight" not in args.settings  # ghz ignores -c under a schedule
    line = _applied(rps="200", concurrency_schedule="line", concurrency_start="20",
                    concurrency_step="2", concurrency_max_duration="30s")  # fmt: skip
    assert line.settings["worker_schedule"] == "ghz:start=20,step=2,every=1s,max=30s"
    defaults = _applied(rps="9", concurrency_schedule="step", concurrency_end="4",
                        concurrency_step_duration="1s")  # fmt: skip
    assert defaults.settings["worker_schedule"] == "ghz:start=0,step=1,every=1s,end=4"
    for flags, error in (
        ({"concurrency_start": "5"}, "go with --concurrency-schedule step or line"),
        ({"rps": "9", "concurrency_schedule": "step", "concurrency_end": "9"},
         "--concurrency-step-duration"),
        ({"rps": "9", "concurrency_schedule": "line", "concurrency_start": "5",
          "concurrency_end": "5"}, "cannot equal"),
        ({"rps": "9", "concurrency_schedule": "line", "concurrency_step": "0",
          "concurrency_end": "5"}, "invalid --concurrency-step"),
        ({"rps": "9", "concurrency_schedule": "wave"}, '"const", "step" or "line"'),
        ({"concurrency_schedule": "line", "concurrency_end": "5"}, "needs --rps"),
    ):  # fmt: skip
        with pytest.raises(UsageError, match=error):
            _applied(**flags)
    assert "worker_schedule" not in _applied(concurrency_schedule="const").settings
