"""The built-in open-loop (constant-rate) load engine, coordinated omission corrected.

Calls are scheduled on a timetable - uniform (every 1/R s) or Poisson (random
exponential gaps, mean 1/R), at a constant rate or on a ramp (``load.schedule``)
- and sent without waiting for earlier replies, up
to ``concurrency`` calls in flight. As in wrk2, a call's latency is measured
from its *intended* send time, so a stall of the server (or of the generator)
shows up in the percentiles instead of being hidden by sending fewer calls.
Beside it: the service time (from the actual send) and the schedule lag
(actual minus intended send), which says whether the generator kept up.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Iterator

from grpcbench.load.calls import call_status
from grpcbench.load.closed_loop import Budget, report_progress, watch_phase
from grpcbench.load.recorders import LevelRecorders
from grpcbench.model.load_result import LoadSpec
from grpcbench.model.schedule import RateSchedule, schedule_timetable
from grpcbench.services.base import CallFunction

# Do not sleep for less than this: fire every call that is due instead.
MIN_SLEEP_S = 0.0005


def share_schedule(spec: LoadSpec) -> RateSchedule | None:
    """This generator's part of ``--rate-schedule``: the schedule at its share of the
    rate (``share.rate`` is its share of the schedule's peak)."""
    schedule = spec.settings.rate_schedule
    return schedule.scaled(spec.share.rate / schedule.peak) if schedule else None


def spec_timetable(spec: LoadSpec) -> Iterator[float]:
    """A level's timetable: constant at its rate, or on its rate schedule."""
    schedule = share_schedule(spec)
    if schedule is not None:
        return schedule_timetable(schedule, spec.settings.arrivals)
    return timetable(spec.share.rate, spec.settings.arrivals)


def timetable(rate: float, arrivals: str, seed: int | None = None) -> Iterator[float]:
    """Intended send times in seconds from the start of the phase (seed: for tests;
    by default each generator process draws its own Poisson gaps)."""
    rng = random.Random(seed)
    offset = 0.0
    index = 0
    while True:
        yield offset
        index += 1
        offset = index / rate if arrivals == "uniform" else offset + rng.expovariate(rate)


async def open_loop_phase(
    call: CallFunction,
    spec: LoadSpec,
    budget: Budget,
    recorders: LevelRecorders | None,
    on_progress: Callable[[int], None] | None,
) -> None:
    clock = time.perf_counter
    slots = asyncio.Semaphore(spec.share.concurrency)
    in_flight: set[asyncio.Task[None]] = set()

    async def one_call(intended: float) -> None:
        try:
            sent = clock()
            budget.in_flight += 1
            status, stats, message = await call_status(call, spec.settings.timeout_s)
            done = clock()
            budget.in_flight -= 1
            budget.done += 1
            if recorders is not None:
                recorders.record_call(status, int((done - intended) * 1e6), stats, message)
                recorders.service.record(int((done - sent) * 1e6))
                recorders.lag.record(int((sent - intended) * 1e6))
        finally:
            slots.release()

    ticker = asyncio.create_task(report_progress(budget, on_progress)) if on_progress else None
    budget.arm()
    start = clock()
    try:
        for offset in spec_timetable(spec):
            intended = start + offset
            delay = intended - clock()
            if delay > MIN_SLEEP_S:
                await asyncio.sleep(delay)
            # A full set of slots makes the generator late; the lag shows it.
            await slots.acquire()
            if not budget.take():
                slots.release()
                break
            task = asyncio.create_task(one_call(intended))
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)
        if in_flight:
            await watch_phase(list(in_flight), budget, spec.settings.timeout_s, recorders)
    finally:
        budget.disarm()
        for task in in_flight:
            task.cancel()
        if ticker:
            ticker.cancel()
