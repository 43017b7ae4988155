"""A generator held by user code: said in one line, and the level ended.

A flow (``--workload``) or a workload that blocks (``time.sleep``, a lock, a busy loop)
stops every call of its generator: no deadline can fire and no event reaches the
parent, which waited for the level forever. One that keeps what it allocates grows the
generator until the machine swaps. A thread of its own watches the loop's heartbeat and
the process's memory; once the loop has not turned for ``--stall-limit``, or the memory
passed ``--generator-memory-limit`` (both on ``model.plan.LoadSettings``, which callers
pass), it names the user's frame, reports the level's error and ends the process (the
loop cannot be given back; the parent stops the level as for any generator error)."""

from __future__ import annotations

import asyncio
import os
import sys
import sysconfig
import threading
import time
from collections.abc import Awaitable, Callable
from types import FrameType
from typing import TypeVar

from grpcbench.observe.memory_peak import current_rss_bytes

T = TypeVar("T")

TICK_S = 0.25
EXIT_BLOCKED = 2  # as a generator's other one-line errors

_OURS = (
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),  # grpcbench's own code
    sysconfig.get_paths()["stdlib"],
    sysconfig.get_paths()["platstdlib"],
)


def user_frame(frame: FrameType | None) -> str:
    """``file:line in function`` of the innermost frame that is neither grpcbench's nor
    the standard library's: the user's code that holds the loop."""
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_OURS):
            return f"{os.path.basename(path)}:{frame.f_lineno} in {frame.f_code.co_name}"
        frame = frame.f_back
    return "code that is not grpcbench's"


class LoopWatchdog:
    """Watches ``loop`` from a daemon thread; ``report(message)`` once it is held."""

    def __init__(self, loop: asyncio.AbstractEventLoop, report: Callable[[str], None],
                 blocked_s: float, memory_bytes: int,
                 end: Callable[[], None] = lambda: os._exit(EXIT_BLOCKED)) -> None:  # fmt: skip
        self.loop = loop
        self.report = report
        self.blocked_s = blocked_s
        self.memory_bytes = memory_bytes
        self.end = end
        self.last = time.monotonic()
        self.loop_thread = threading.get_ident()
        self.stopped = threading.Event()

    def start(self) -> None:
        self.loop.call_soon(self._tick)
        threading.Thread(target=self._watch, name="grpcbench-watchdog", daemon=True).start()

    def stop(self) -> None:
        self.stopped.set()

    def _tick(self) -> None:
        self.last = time.monotonic()
        if not self.stopped.is_set():
            self.loop.call_later(TICK_S, self._tick)

    def _watch(self) -> None:
        while not self.stopped.wait(TICK_S):
            held = time.monotonic() - self.last
            rss = current_rss_bytes()
            if held < self.blocked_s and rss < self.memory_bytes:
                continue
            where = user_frame(sys._current_frames().get(self.loop_thread))
            if held >= self.blocked_s:
                self.report(
                    f"{where} held the generator's event loop for {held:.0f} s (--stall-limit):"
                    " a flow or workload must await (time.sleep, a lock or a busy loop stops"
                    " every call of its generator)"
                )
            else:
                self.report(
                    f"the generator's memory passed {self.memory_bytes / 1024**3:g} GiB"
                    f" (--generator-memory-limit; {rss / 1024**3:.1f} GiB, last at {where}):"
                    " user code that keeps what it allocates"
                )
            self.stopped.set()
            self.end()


async def watched(
    awaitable: Awaitable[T], report: Callable[[str], None], blocked_s: float,
    memory_bytes: int, end: Callable[[], None] = lambda: os._exit(EXIT_BLOCKED),
) -> T:  # fmt: skip
    """Await ``awaitable`` with the loop watched; ``end`` ends the process once it is held
    (a Dask worker's watchdog first gives the scheduler time to carry the line)."""
    dog = LoopWatchdog(asyncio.get_running_loop(), report, blocked_s, memory_bytes, end)
    dog.start()
    try:
        return await awaitable
    finally:
        dog.stop()
