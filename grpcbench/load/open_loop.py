"""The built-in open-loop (constant-rate) load engine, coordinated omission corrected.

Calls are scheduled on a pacer - uniform (every 1/R s) or Poisson (random
exponential gaps, mean 1/R), at a constant rate or on a ramp (``load.schedule``)
- and sent without waiting for earlier replies, up
to ``concurrency`` calls in flight (or as many as ghz's concurrency schedule has
workers: ``load.worker_turns``). As in wrk2, a call's latency is measured
from its *intended* send time, so a stall of the server (or of the generator)
shows up in the percentiles instead of being hidden by sending fewer calls.
Beside it: the service time (from the actual send) and the schedule lag
(actual minus intended send), which says whether the generator kept up.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterator
from functools import partial

from grpcbench.contract.calls import CallFunction
from grpcbench.load.calls import call_status
from grpcbench.load.closed_loop import (
    DURATION_STOP_MESSAGE,
    Budget,
    cancel_tasks,
    report_progress,
    watch_phase,
)
from grpcbench.load.recorders import LevelRecorders
from grpcbench.load.worker_turns import WorkerTurns
from grpcbench.model.load_result import GeneratorJob
from grpcbench.model.schedule import ConstantRate, Pacer, send_times
from grpcbench.rpc.templates import CURRENT_WORKER

# Do not sleep for less than this: fire every call that is due instead.
MIN_SLEEP_S = 0.0005


def share_pacer(spec: GeneratorJob) -> Pacer:
    """This generator's pace: the level's (``--rate`` or ``--rate-schedule``) at its
    share of the rate (``share.rate`` is its share of the pacer's peak)."""
    pacer: Pacer = spec.settings.rate_schedule or ConstantRate(spec.share.rate)
    return pacer.scaled(spec.share.rate / pacer.peak)


def share_send_times(
    spec: GeneratorJob, recorders: LevelRecorders | None = None
) -> Iterator[float]:
    """This generator's intended send times (each process draws its own Poisson gaps);
    counted into ``recorders.schedule`` when the phase keeps that count."""
    offsets = send_times(share_pacer(spec), spec.settings.arrivals)
    schedule = recorders.schedule if recorders is not None else None
    return schedule.counting(offsets) if schedule is not None else offsets


def constant_send_times(rate: float, arrivals: str, seed: int | None = None) -> Iterator[float]:
    """Intended send times in seconds from the start of the phase at a constant rate."""
    return send_times(ConstantRate(rate), arrivals, seed)


async def open_loop_phase(
    call: CallFunction,
    spec: GeneratorJob,
    budget: Budget,
    recorders: LevelRecorders | None,
    on_progress: Callable[[int], None] | None,
) -> None:
    clock = time.perf_counter
    turns = WorkerTurns(spec.share.concurrency, spec.settings.worker_schedule)
    running = [0]  # calls sent and not yet settled: the workers waiting for replies
    freed = asyncio.Event()
    in_flight: set[asyncio.Task[None]] = set()
    # A call that raised (a request that could not be built: a bad feeder line) ends
    # the phase with its error; a task's exception was otherwise never looked at.
    failures: list[BaseException] = []

    def settled(task: asyncio.Task[None]) -> None:
        in_flight.discard(task)
        if not task.cancelled() and (error := task.exception()) is not None:
            failures.append(error)
            budget.stopped = True

    async def one_call(intended: float, worker: int) -> None:
        CURRENT_WORKER.set(worker)  # this task's own context: ghz's --rps worker
        try:
            sent = clock()
            budget.in_flight += 1
            try:
                status, stats, message = await call_status(call, spec.settings.timeout_s)
            except asyncio.CancelledError:
                if not budget.closing:  # the phase's end, not --duration-stop's
                    raise
                status, stats, message = "Cancelled", None, DURATION_STOP_MESSAGE
            done = clock()
            budget.in_flight -= 1
            budget.done += 1
            if recorders is not None and not budget.ignoring:
                # From the intended send (coordinated omission corrected); but a call
                # due within MIN_SLEEP_S is sent at once, a little early, and counts
                # from when it was sent: a later intended time would understate it.
                origin = min(intended, sent)
                recorders.record_call(status, int((done - origin) * 1e6), stats, message)
                recorders.record_timing(int((done - sent) * 1e6), int((sent - origin) * 1e6))
        finally:
            running[0] -= 1
            freed.set()

    ticker = asyncio.create_task(report_progress(budget, on_progress)) if on_progress else None
    budget.end_at_duration(spec.settings.duration_stop, partial(cancel_tasks, in_flight))
    budget.arm()
    start = clock()
    try:
        for offset in share_send_times(spec, recorders):
            intended = start + offset
            delay = intended - clock()
            if delay > MIN_SLEEP_S:
                await asyncio.sleep(delay)
            # Every worker waiting for a reply makes the generator late; the lag shows it.
            now = max(offset, clock() - start)
            while turns.waits(now, running[0]) and not (failures or budget.stopped):
                freed.clear()
                change = turns.next_change_s  # the schedule may add workers before a reply
                wake = None if change is None else max(0.0, start + change - clock())
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(freed.wait(), wake)
                now = max(offset, clock() - start)
            if failures or not budget.take():
                break
            running[0] += 1
            task = asyncio.create_task(one_call(intended, turns.turn(now)))
            in_flight.add(task)
            task.add_done_callback(settled)
        if in_flight:
            await watch_phase(list(in_flight), budget, spec.settings.timeout_s, recorders)
        if failures:
            raise failures[0]
    finally:
        budget.disarm()
        for task in in_flight:
            task.cancel()
        if ticker:
            ticker.cancel()
