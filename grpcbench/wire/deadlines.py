"""Call deadlines on one connection: one timer, due at the earliest open deadline.

No timer exists per call (a benchmark's calls would each pay for one). The
connection's one timer is set for the earliest deadline of its open and pending
calls; when it fires it ends every call whose deadline has passed and is set
again for the next one. While each call's deadline is no earlier than the last
one watched (one timeout for every call, the common case), calls expire in the
order they started, so the earliest is the oldest open one and finding it is
O(1); once one is earlier (mixed timeouts, a call resent from another
connection) it is a scan, done only when the timer fires. A deadline fires within
the event loop's timer resolution of its time (a millisecond on uvloop), where a
fixed 10 ms sweep let a 1 ms deadline pass unseen.

Deadlines are ``time.perf_counter()`` values (the clock the callback loops read a
call's start from, so a deadline is that start plus the timeout, with no clock read
of its own), not ``loop.time()``: uvloop's is cached
per loop iteration and cut to milliseconds, so a deadline read from it could
expire up to a millisecond early.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Iterable

from grpcbench.wire.stream import WireStream


class Deadlines:
    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        live: Callable[[], tuple[Iterable[WireStream], Iterable[WireStream]]],
        expire: Callable[[WireStream], None],
    ) -> None:
        """``live``: the open and the pending calls, each in the order they started;
        ``expire``: ends one call whose deadline passed."""
        self.loop = loop
        self.live = live
        self.expire = expire
        self.timer: asyncio.TimerHandle | None = None
        self.due = math.inf  # when the timer fires, as a deadline
        self.latest = -math.inf  # the latest deadline watched so far
        self.ordered = True  # no call's deadline was earlier than one watched before it

    def watch(self, stream: WireStream) -> None:
        """A call opened or queued (once, in the order calls start): the timer is due
        no later than its deadline."""
        deadline = stream.deadline
        if deadline >= self.latest:
            self.latest = deadline
        else:
            self.ordered = False
        if deadline < self.due:
            self._set(deadline)

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.due = math.inf

    def _set(self, deadline: float) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.due = deadline
        if deadline == math.inf:
            self.timer = None
            return
        self.timer = self.loop.call_later(max(0.0, deadline - time.perf_counter()), self._fire)

    def _fire(self) -> None:
        self.timer = None
        self.due = math.inf
        now = time.perf_counter()
        ordered = self.ordered
        open_calls, pending = self.live()
        expired: list[WireStream] = []
        earliest = math.inf
        for calls in (open_calls, pending):
            for stream in calls:
                if stream.deadline <= now:
                    expired.append(stream)
                    continue
                earliest = min(earliest, stream.deadline)
                if ordered:
                    break  # every later call started later: its deadline is later
        for stream in expired:
            self.expire(stream)
        if earliest < self.due:
            self._set(earliest)
