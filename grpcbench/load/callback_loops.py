"""The callback loops: closed- and open-loop load with no coroutine per call.

A workload that is one unary call with a request known in advance (the hello
service, ``--call`` on a unary method), or a stream whose requests are fixed and
unpaced, describes itself as a ``contract.calls.UnaryPlan``. Then a call is a
``WireStream`` whose body is framed once and whose header block comes from its
connection's cache, and its ``on_done`` callback records it and starts the next
one: no task, future, timer or ``await`` per call. The phase rules are the
engine's own (``closed_loop.Budget``: counts, time limits, the watchdog), and so
is what is recorded (``LevelRecorders``), so a level reads the same on either path.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from grpcbench.load.closed_loop import (
    WATCHDOG_GRACE_S,
    Budget,
    report_progress,
)
from grpcbench.load.open_loop import share_send_times
from grpcbench.load.recorders import LevelRecorders
from grpcbench.load.wire_calls import WireUnaryCalls
from grpcbench.load.wire_issuer import IGNORED, CallIssuer
from grpcbench.load.worker_turns import WorkerTurns
from grpcbench.model.load_result import GeneratorJob
from grpcbench.wire import status
from grpcbench.wire.stream import WireStream

MIN_TIMER_S = 0.001  # the shortest timer the open loop sets (see wire_open_loop_phase)

status_name = status.name  # the recorded name of a wire status code


async def _finish(
    finished: asyncio.Future[None], budget: Budget, timeout_s: float, issuer: CallIssuer
) -> None:
    """Wait for the last call; past the time limit plus a deadline, end what is left."""
    limit = budget.hard_end - time.perf_counter() + timeout_s + WATCHDOG_GRACE_S
    try:
        await asyncio.wait_for(asyncio.shield(finished), max(limit, 0.0))
    except TimeoutError:
        budget.truncated = True
        budget.stopped = True
        issuer.cancel_all()


async def wire_closed_loop_phase(
    calls: WireUnaryCalls,
    spec: GeneratorJob,
    budget: Budget,
    recorders: LevelRecorders | None,
    on_progress: Callable[[int], None] | None,
) -> None:
    """C virtual users, each starting its next call from the last one's callback."""
    loop = asyncio.get_running_loop()
    finished: asyncio.Future[None] = loop.create_future()
    clock = time.perf_counter_ns
    record = recorders.record_call if recorders is not None else None
    record_ok = recorders.record_ok if recorders is not None and recorders.parts is None else None
    record_ok_part = recorders.record_ok_part if recorders is not None else None
    take = budget.take

    def next_call(user: int) -> None:
        """The user's next call, or ``none_left``."""
        if take():
            budget.in_flight += 1
            send(user, clock())
        else:
            none_left(user)

    def none_left(user: int) -> None:
        """No call left here for the user: it waits for the shared pool
        (``Budget.park``) or, when no more will come, may end the phase."""
        if budget.park(lambda: next_call(user)):
            pass
        elif budget.in_flight == 0 and not budget.parked and not finished.done():
            finished.set_result(None)

    def on_done(stream: WireStream) -> None:
        now = clock()
        elapsed_us = (now - stream.started) // 1000
        budget.done += 1
        if record is not None:
            if stream.status == status.OK and stream.messages < 2 and unary_parts[stream.part]:
                if record_ok is not None:  # unary_outcome's OK, outside a mix
                    record_ok(elapsed_us)
                else:  # in a mix
                    record_ok_part(elapsed_us, stream.part)  # type: ignore[misc]
            else:
                code, message, stats = outcome(stream)
                if code != IGNORED:
                    record(status_name(code), elapsed_us, stats, message, stream.part)
        if take():  # next_call, inline: the user's next call, still in flight
            send(stream.tag, now)
        else:
            budget.in_flight -= 1
            none_left(stream.tag)

    def fatal(error: Exception) -> None:
        budget.stopped = True  # no more calls start
        if not finished.done():
            finished.set_exception(error)

    issuer = CallIssuer(calls, on_done, fatal)
    send, outcome, unary_parts = issuer.send, issuer.outcome, issuer.unary_parts
    stop = spec.settings.duration_stop
    budget.end_at_duration(stop, lambda: issuer.end_in_flight(stop))
    budget.arm()
    ticker = asyncio.create_task(report_progress(budget, on_progress)) if on_progress else None
    try:
        for user in range(spec.share.concurrency):
            next_call(user)
            if finished.done():
                break
        if finished.done():
            finished.result()  # a request that could not be built raises here
            return
        if budget.in_flight == 0 and not budget.parked:
            return
        await _finish(finished, budget, spec.settings.timeout_s, issuer)
    finally:
        budget.disarm()
        if ticker:
            ticker.cancel()


async def wire_open_loop_phase(
    calls: WireUnaryCalls,
    spec: GeneratorJob,
    budget: Budget,
    recorders: LevelRecorders | None,
    on_progress: Callable[[int], None] | None,
) -> None:
    """Calls on a pacer, at most ``concurrency`` in flight (``load.worker_turns``);
    latency from the intended send (coordinated omission corrected), as
    ``open_loop.open_loop_phase`` records it.

    Sending is a callback too: ``pump`` sends every call whose time has come, and
    runs from a loop timer set for the next one *and* after each reply. uvloop's
    timers are whole milliseconds (so no timer is set for less than one), but replies
    arrive every few microseconds under load, so the pacer is kept to well under
    a millisecond; no call is sent before its time."""
    loop = asyncio.get_running_loop()
    finished: asyncio.Future[None] = loop.create_future()
    clock = time.perf_counter_ns
    turns = WorkerTurns(spec.share.concurrency, spec.settings.worker_schedule)
    offsets = share_send_times(spec, recorders)
    start = clock()
    intended_of: dict[int, int] = {}  # call number -> intended send (ns)
    state = {"next": start + int(next(offsets) * 1e9), "number": 0, "sending": True}
    timer: list[asyncio.TimerHandle | None] = [None]

    def on_done(stream: WireStream) -> None:
        done = clock()
        budget.in_flight -= 1
        budget.done += 1
        intended = intended_of.pop(stream.tag)
        if recorders is not None:
            code, message, stats = issuer.outcome(stream)
            if code != IGNORED:
                recorders.record_call(
                    status_name(code), (done - intended) // 1000, stats, message, stream.part
                )
                recorders.record_timing(
                    (done - stream.started) // 1000, (stream.started - intended) // 1000
                )
        if state["sending"]:
            if done >= state["next"]:
                pump()
        elif budget.in_flight == 0 and not finished.done():
            finished.set_result(None)

    def on_timer() -> None:
        timer[0] = None
        pump()

    def pump() -> None:
        now = clock()
        intended = state["next"]
        while intended <= now:
            # Every worker waiting for a reply: late, and the lag shows it. The next
            # reply runs the pump again, or, with none in flight, the schedule's next
            # change of workers (it started at none).
            since_s = (now - start) / 1e9
            if turns.waits(since_s, budget.in_flight):
                change = turns.next_change_s
                if budget.in_flight == 0 and change is not None and timer[0] is None:
                    delay = max((start + int(change * 1e9) - now) / 1e9, MIN_TIMER_S)
                    timer[0] = loop.call_later(delay, on_timer)
                return
            if not budget.take():
                stop_sending()
                return
            budget.in_flight += 1
            number = state["number"] = state["number"] + 1
            intended_of[number] = intended
            # ghz's --rps workers: the call goes to one of the level's c workers.
            issuer.send(turns.turn(since_s), now, tag=number)
            if not state["sending"]:  # the request could not be built (``fatal``)
                return
            intended = state["next"] = start + int(next(offsets) * 1e9)
            now = clock()
        if timer[0] is None:
            # At least a millisecond: uvloop rounds shorter timers down to 0, which
            # fires at once and again, a busy loop that burns the generator's CPU
            # (100% at 2,000 calls/s). A call due sooner waits for this timer or
            # for the next reply's pump, and its send lag says how long.
            delay = max((intended - now) / 1e9, MIN_TIMER_S)
            timer[0] = loop.call_later(delay, on_timer)

    def stop_sending() -> None:
        state["sending"] = False
        if timer[0] is not None:
            timer[0].cancel()
            timer[0] = None
        if budget.in_flight == 0 and not finished.done():
            finished.set_result(None)

    def fatal(error: Exception) -> None:
        state["sending"] = False
        if not finished.done():
            finished.set_exception(error)

    issuer = CallIssuer(calls, on_done, fatal)
    ticker = asyncio.create_task(report_progress(budget, on_progress)) if on_progress else None
    stop = spec.settings.duration_stop
    budget.end_at_duration(stop, lambda: issuer.end_in_flight(stop))
    budget.arm()
    # The phase's end (a timer of Budget's) must stop the pacer even when no
    # call is due: watch for it as often as the progress ticker would.
    try:
        pump()
        while not finished.done() and state["sending"]:
            await asyncio.wait([finished], timeout=0.05)
            if budget.stopped and state["sending"]:
                stop_sending()
        if finished.done():
            finished.result()  # a request that could not be built raises here
        elif budget.in_flight:
            await _finish(finished, budget, spec.settings.timeout_s, issuer)
    finally:
        state["sending"] = False
        if timer[0] is not None:
            timer[0].cancel()
        budget.disarm()
        if ticker:
            ticker.cancel()
