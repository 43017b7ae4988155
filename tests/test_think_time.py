"""Think time (--think-time): a closed loop's users pause between calls, as Locust's
wait_time and k6's sleep; the pause is seen at the server and is not latency."""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path

import pytest

from grpcbench.base.errors import UsageError
from grpcbench.load.closed_loop import Budget
from grpcbench.model.think_time import parse_think_time
from tests.conftest import REPO, run_grpcbench
from tests.support.logging_echo import logging_echo

PROTO = str(REPO / "examples" / "echo" / "echo.proto")


def test_the_three_forms_and_their_pauses() -> None:
    draw = random.Random(1)
    constant, between, pacing = map(parse_think_time, ("100ms", "50ms..150ms", "pace:1s"))
    assert constant.pause(0.3, draw) == 0.1
    assert all(0.05 <= between.pause(0.0, draw) <= 0.15 for _ in range(1000))
    assert pacing.pause(0.25, draw) == 0.75 and pacing.pause(2.0, draw) == 0.0


@pytest.mark.parametrize("text", ["", "fast", "5s..1s", "pace:", "0ms", "2h", "1s..x"])
def test_a_bad_think_time_is_one_line(text: str) -> None:
    with pytest.raises(UsageError, match="bad --think-time"):
        parse_think_time(text)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--rate", "100", "--think-time", "50ms"], "--think-time is a closed loop's"),
        (["--load", "ghz", "--think-time", "50ms"], "--load ghz cannot run --think-time"),
    ],
)
def test_think_time_where_no_user_thinks_is_refused(args: list[str], fragment: str) -> None:
    done = run_grpcbench("run", "-s", "grpclib", *args, "--dry-run")
    assert done.returncode == 2 and fragment in done.stderr and "Traceback" not in done.stderr


def test_a_pause_that_reaches_the_end_ends_the_phase_even_before_its_timer_fires() -> None:
    """The race CI once lost: a user woke from a pause cut at the duration's end a
    moment before the end's timer fired, and took one more call."""

    async def scenario() -> tuple[bool, bool, float, bool, float]:
        budget = Budget.for_phase(0, 0.05, 10.0)  # not armed: its timers never fire
        short = await budget.pause(0.01)
        assert budget.ends_at is not None
        cut = await budget.pause(5.0)
        return short, cut, time.perf_counter() - budget.ends_at, budget.take(), budget.stopped

    short, cut, after_end, took, stopped = asyncio.run(scenario())
    assert short and not cut and after_end >= 0 and not took and stopped


def _level(address: str, out: Path, *args: str) -> dict:
    done = run_grpcbench(
        "run", "--target", address, "--insecure", "--proto", PROTO, "--call", "echo.Echo/Say",
        "-d", '{"message": "hi"}', "--warmup", "0", "--output", str(out), *args,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (level,) = json.loads(out.read_text())["levels"]
    return level


@pytest.mark.integration
@pytest.mark.parametrize(
    ("stack", "extra"),
    [("wire", []), ("grpcio", []), ("wire", ["--client-processes", "2", "-c", "2"])],
)
def test_a_users_calls_arrive_a_think_time_apart_and_it_is_not_latency(
    tmp_path: Path, stack: str, extra: list[str]
) -> None:
    with logging_echo() as (address, log):
        level = _level(address, tmp_path / "r.json", "-n", "20", "--think-time", "50ms",
                       "--client-stack", stack, *(extra or ["-c", "1"]))  # fmt: skip
        arrivals = log.arrivals[1:]  # the pre-flight call first
    assert len(arrivals) == 20
    users = 2 if extra else 1
    # With one user, every gap is its pause; with two, each user's gaps are.
    gaps = [b - a for a, b in zip(arrivals, arrivals[users:], strict=False)]
    assert min(gaps) >= 0.049, gaps
    load = level["load"]
    assert load["statuses"] == {"OK": 20}
    assert load["latency"]["max_us"] < 50_000  # the pause is not in any call's latency
    assert load["wall_s"] >= 20 / users * 0.05 - 0.05


@pytest.mark.integration
def test_pacing_starts_calls_a_pace_apart_and_a_timed_level_ends_on_time(tmp_path: Path) -> None:
    with logging_echo() as (address, log):
        _level(address, tmp_path / "p.json", "-c", "1", "-n", "10", "--think-time", "pace:100ms")
        paced = log.arrivals[1:]
        timed = _level(address, tmp_path / "t.json", "-c", "1", "-z", "1s",
                       "--think-time", "5s")  # fmt: skip
    gaps = [b - a for a, b in zip(paced, paced[1:], strict=False)]
    assert all(0.095 <= gap <= 0.16 for gap in gaps), gaps
    # A time-based level ends on time, not when its thinking users wake.
    assert timed["load"]["wall_s"] < 1.6 and timed["load"]["statuses"] == {"OK": 1}
