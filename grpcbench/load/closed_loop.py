"""The built-in closed-loop load engine (runs inside a generator process).

C virtual users share a budget of N calls (or a deadline); each user sends its
next call as soon as the previous one finished. Every call is bounded by the
per-call deadline and every phase by ``max_level_s``, so a level always ends.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial

import grpc

from grpcbench.contract.calls import CallFunction, UserLife, WorkloadError
from grpcbench.load.recorders import LevelRecorders, error_key
from grpcbench.load.shared_calls import SharedCalls
from grpcbench.model.load_result import GeneratorJob
from grpcbench.model.think_time import ThinkTime
from grpcbench.rpc.status_names import status_name

PROGRESS_INTERVAL_S = 0.2
# The watchdog's margin past a phase's time limit and one call deadline.
WATCHDOG_GRACE_S = 2.0


# A call in flight when the duration ended, under --duration-stop close (ghz's words:
# "grpc: the client connection is closing").
DURATION_STOP_MESSAGE = "the duration ended (--duration-stop close)"


@dataclass
class Budget:
    """Shared between the users of one phase: calls left, deadlines, progress.

    The deadlines are timers on the event loop (``arm``), so taking a call is
    a counter update, not a clock read per call."""

    calls_left: int | None
    ends_at: float | None  # time.perf_counter() values
    hard_end: float
    done: int = 0
    truncated: bool = False
    stopped: bool = False
    in_flight: int = 0  # calls taken and not finished
    shared: SharedCalls | None = None  # more calls to take as this runs (work stealing)
    exhausted: bool = False  # the shared pool said it is empty
    _timers: list[asyncio.TimerHandle] = field(default_factory=list)
    _claiming: asyncio.Task[None] | None = None
    _parked: list[Callable[[], None]] = field(default_factory=list)
    # --duration-stop close|ignore: what ends the calls in flight when the duration
    # ends (``end_at_duration``); "" waits for them.
    closing: str = ""
    on_end: Callable[[], None] | None = None
    # A workload whose users live across calls (a --workload class): each user of the
    # closed loop starts before its first call and stops after its last.
    life: UserLife | None = None

    @classmethod
    def for_phase(
        cls, requests: int, duration_s: float, max_level_s: float, start: float | None = None,
        shared: SharedCalls | None = None,
    ) -> Budget:  # fmt: skip
        """``start``: the phase's time.perf_counter() origin, shared with its wall clock,
        so a time-based phase lasts at least its duration by that clock. ``shared``:
        a pool to take more calls from once ``requests`` run low (work stealing)."""
        now = time.perf_counter() if start is None else start
        counted = bool(requests) or shared is not None
        return cls(
            calls_left=requests if counted else None,
            ends_at=now + duration_s if duration_s else None,
            hard_end=now + max_level_s,
            shared=shared if counted else None,
        )

    def arm(self) -> None:
        """Start the phase's timers on the running loop (call once, inside it)."""
        if self.ends_at is not None:
            self._at(self.ends_at, self._end)
        self._at(self.hard_end, self._hard_end)

    def _at(self, when: float, action: Callable[[], None]) -> None:
        """Run ``action`` once ``time.perf_counter()`` reaches ``when``. Loop timers
        may fire a little early (uvloop rounds to milliseconds): then wait again."""

        def fire() -> None:
            if time.perf_counter() < when:
                self._at(when, action)
            else:
                action()

        delay = when - time.perf_counter()
        if delay <= 0:
            action()
            return
        self._timers.append(asyncio.get_running_loop().call_later(delay, fire))

    def disarm(self) -> None:
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()
        if self._claiming is not None:
            self._claiming.cancel()

    def _end(self) -> None:
        if self.stopped:  # already ended by a user's pause (``pause``) or the time limit
            return
        self.stopped = True
        self._resume_parked()
        if self.on_end is not None:
            self.on_end()

    def end_at_duration(self, action: str, end_in_flight: Callable[[], None]) -> None:
        """--duration-stop: at the duration's end, ``end_in_flight`` ends the calls in
        flight (close: each counted Cancelled; ignore: not counted); wait: nothing."""
        if action != "wait" and self.ends_at is not None:
            self.closing = action
            self.on_end = end_in_flight

    @property
    def ignoring(self) -> bool:
        """--duration-stop ignore, and the duration over: a call ending now is not
        recorded."""
        return self.closing == "ignore" and self.stopped

    def _hard_end(self) -> None:
        """The level's time limit: stop taking calls; a count not reached is truncated."""
        self.stopped = True
        self.truncated = bool(self.calls_left) or (self.shared is not None and not self.exhausted)
        self._resume_parked()

    def take(self) -> bool:
        if self.stopped:
            return False
        if self.calls_left is not None:
            if self.shared is not None and self.calls_left <= self.shared.chunk:
                self._claim()  # before running out, so the chunk is here in time
            if self.calls_left <= 0:
                return False
            self.calls_left -= 1
        return True

    def park(self, resume: Callable[[], None]) -> bool:
        """No call left here, but the shared pool may have more: ``resume`` runs when
        the claim under way returns. False when no more calls will come."""
        if self.stopped or self.shared is None or self.exhausted:
            return False
        self._claim()
        self._parked.append(resume)
        return True

    async def pause(self, seconds: float) -> bool:
        """A user's think time, never past the phase's end (a time-based phase ends on
        time, not when its users wake). False when the pause reaches that end: the
        user takes no more calls, even if it wakes before the end's timer fires."""
        end, at_end = self.hard_end, self._hard_end
        if self.ends_at is not None and self.ends_at <= self.hard_end:
            end, at_end = self.ends_at, self._end
        left = end - time.perf_counter()
        if seconds < left:
            if seconds > 0:
                await asyncio.sleep(seconds)
            return not self.stopped
        while left > 0 and not self.stopped:  # a loop's sleep may end a little early
            await asyncio.sleep(left)
            left = end - time.perf_counter()
        if not self.stopped:  # the end's timer has not fired yet: the end is now, for all
            at_end()
        return False

    @property
    def parked(self) -> int:
        return len(self._parked)

    async def take_after_claim(self) -> bool:
        """For a coroutine user whose ``take`` failed: wait for the shared pool, then
        take; False when no more calls will come."""
        while True:
            claimed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

            def wake(claimed: asyncio.Future[None] = claimed) -> None:
                if not claimed.done():
                    claimed.set_result(None)

            if not self.park(wake):
                return False
            await claimed
            if self.take():
                return True

    def _claim(self) -> None:
        if self._claiming is None and not self.exhausted and self.shared is not None:
            self._claiming = asyncio.get_running_loop().create_task(self._claimed(self.shared))

    async def _claimed(self, shared: SharedCalls) -> None:
        try:
            granted = await shared.claim()
        except Exception:  # noqa: BLE001 - the pool is gone: what was taken is all there is
            granted = 0
        self._claiming = None
        if granted > 0 and self.calls_left is not None:
            self.calls_left += granted
        else:
            self.exhausted = True
        self._resume_parked()

    def _resume_parked(self) -> None:
        parked, self._parked = self._parked, []
        for resume in parked:
            resume()


async def report_progress(budget: Budget, on_progress: Callable[[int], None]) -> None:
    while True:
        await asyncio.sleep(PROGRESS_INTERVAL_S)
        on_progress(budget.done)


async def _user(
    call: CallFunction, budget: Budget, timeout_s: float, recorders: LevelRecorders | None,
    think: ThinkTime | None = None,
) -> None:  # fmt: skip
    """One virtual user: its next call as soon as the previous one ends, or after its
    think time (``--think-time``: not in the call's latency, cut short by the phase's end).

    The hot path of the generator, so ``call_status`` is inlined: no task or
    timer per call. Every RPC carries its own deadline (``timeout_s``), and
    the phase's watchdog bounds anything else."""
    clock = time.perf_counter_ns
    record = recorders.record_call if recorders is not None else None
    rpc_error = grpc.aio.AioRpcError
    draw = random.Random()
    life = budget.life
    living = life is None  # a user with a life starts on its first turn (rpc.user_life)
    while budget.take() or await budget.take_after_claim():
        budget.in_flight += 1
        started = clock()
        message = ""
        try:
            if life is not None and not living:
                await life.start(call, timeout_s)  # a failure is this turn's status
                living = True
                started = clock()  # its start is not its first call's latency
            stats = await call(timeout_s)
            status = "OK"
        except rpc_error as error:
            status, stats, message = status_name(error.code()), None, error.details() or ""
        except TimeoutError:  # a deadline outside the RPC itself (connecting)
            status, stats = "DeadlineExceeded", None
        except WorkloadError as error:
            status, stats, message = error.status, None, str(error)
        except asyncio.CancelledError:
            if not budget.closing:  # the phase's end, not --duration-stop's
                raise
            status, stats, message = "Cancelled", None, DURATION_STOP_MESSAGE
        elapsed_us = (clock() - started) // 1000
        budget.in_flight -= 1
        budget.done += 1
        if record is not None and not budget.ignoring:
            record(status, elapsed_us, stats, message)
        if think is not None and not await budget.pause(think.pause(elapsed_us / 1e6, draw)):
            break
    if life is not None and living:
        await life.stop(call, timeout_s)


def cancel_tasks(tasks: Iterable[asyncio.Task[None]]) -> None:
    """--duration-stop close|ignore on the coroutine loops: each call in flight is
    cancelled, and its loop counts it (``Budget.closing``)."""
    for task in list(tasks):
        task.cancel()


async def watch_phase(
    tasks: list[asyncio.Task[None]], budget: Budget, timeout_s: float,
    recorders: LevelRecorders | None,
) -> None:  # fmt: skip
    """Wait for the phase's tasks, at most until its time limit plus one call deadline.

    Only a call that ignores its deadline (a workload's own code) can outlive
    that: its task is cancelled and the call counted as DeadlineExceeded, so
    the level ends and every call taken has a status."""
    limit = budget.hard_end - time.perf_counter() + timeout_s + WATCHDOG_GRACE_S
    _, pending = await asyncio.wait(tasks, timeout=max(limit, 0.0))
    if pending:
        for task in pending:
            task.cancel()
        await asyncio.wait(pending)
        budget.truncated = True
        if recorders is not None:
            recorders.statuses["DeadlineExceeded"] += budget.in_flight
            recorders.errors[error_key("DeadlineExceeded", "ended by the level's watchdog")] += (
                budget.in_flight
            )
        budget.done += budget.in_flight
        budget.in_flight = 0
    for task in tasks:  # a bug in the engine surfaces here
        if not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]


async def closed_loop_phase(
    call: CallFunction,
    spec: GeneratorJob,
    budget: Budget,
    recorders: LevelRecorders | None,
    on_progress: Callable[[int], None] | None,
) -> None:
    users: list[asyncio.Task[None]] = []
    budget.end_at_duration(spec.settings.duration_stop, partial(cancel_tasks, users))
    budget.arm()
    users += [
        asyncio.create_task(
            _user(call, budget, spec.settings.timeout_s, recorders, spec.settings.think_time)
        )
        for _ in range(spec.share.concurrency)
    ]
    ticker = asyncio.create_task(report_progress(budget, on_progress)) if on_progress else None
    try:
        await watch_phase(users, budget, spec.settings.timeout_s, recorders)
    finally:
        budget.disarm()
        for task in users:
            task.cancel()
        if ticker:
            ticker.cancel()
