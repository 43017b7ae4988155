"""The built-in closed-loop load engine (runs inside a generator process).

C virtual users share a budget of N calls (or a deadline); each user sends its
next call as soon as the previous one finished. Every call is bounded by the
per-call deadline and every phase by ``max_level_s``, so a level always ends.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from grpcbench.load.calls import call_status
from grpcbench.load.model import LoadSpec
from grpcbench.load.recorders import LevelRecorders
from grpcbench.services.base import CallFunction

PROGRESS_INTERVAL_S = 0.2


@dataclass
class Budget:
    """Shared between the users of one phase: calls left, deadlines, progress."""

    calls_left: int | None
    ends_at: float | None
    hard_end: float
    done: int = 0
    truncated: bool = False

    @classmethod
    def for_phase(
        cls, requests: int, duration_s: float, max_level_s: float, start: float | None = None
    ) -> Budget:
        """``start``: the phase's time.perf_counter() origin, shared with its wall clock,
        so a time-based phase lasts at least its duration by that clock."""
        now = time.perf_counter() if start is None else start
        return cls(
            calls_left=requests if requests else None,
            ends_at=now + duration_s if duration_s else None,
            hard_end=now + max_level_s,
        )

    def take(self) -> bool:
        now = time.perf_counter()
        if now >= self.hard_end:
            self.truncated = self.calls_left is not None
            return False
        if self.ends_at is not None and now >= self.ends_at:
            return False
        if self.calls_left is not None:
            if self.calls_left <= 0:
                return False
            self.calls_left -= 1
        return True


async def report_progress(budget: Budget, on_progress: Callable[[int], None]) -> None:
    while True:
        await asyncio.sleep(PROGRESS_INTERVAL_S)
        on_progress(budget.done)


async def _user(
    call: CallFunction, budget: Budget, timeout_s: float, recorders: LevelRecorders | None
) -> None:
    clock = time.perf_counter_ns
    while budget.take():
        started = clock()
        status, stats = await call_status(call, timeout_s)
        elapsed_us = (clock() - started) // 1000
        budget.done += 1
        if recorders is not None:
            recorders.record_call(status, elapsed_us, stats)


async def closed_loop_phase(
    call: CallFunction,
    spec: LoadSpec,
    budget: Budget,
    recorders: LevelRecorders | None,
    on_progress: Callable[[int], None] | None,
) -> None:
    users = [
        asyncio.create_task(_user(call, budget, spec.timeout_s, recorders))
        for _ in range(spec.concurrency)
    ]
    ticker = asyncio.create_task(report_progress(budget, on_progress)) if on_progress else None
    try:
        await asyncio.gather(*users)
    finally:
        for task in users:
            task.cancel()
        if ticker:
            ticker.cancel()
