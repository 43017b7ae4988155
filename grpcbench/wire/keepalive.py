"""``--keepalive``: PINGs on an idle connection, throttled as grpc throttles them.

gRFC A8: a PING every interval, only while calls are open (grpc's
keepalive_permit_without_calls is off), and at most ``MAX_PINGS_WITHOUT_DATA``
before we send HEADERS or DATA again; grpc-go's default server policy answers more
with GOAWAY ENHANCE_YOUR_CALM "too_many_pings", after which the client pings half
as often. The peer's ACK needs no answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from grpcbench.wire import frames

MAX_PINGS_WITHOUT_DATA = 2  # grpc's grpc.http2.max_pings_without_data default
PING_PAYLOAD = b"grpcbnch"


class Keepalive:
    """One connection's keepalive timer; ``pings_without_data`` is reset by the
    connection whenever it sends HEADERS or DATA (an attribute, not a call: it is
    done for every call)."""

    __slots__ = ("loop", "interval_s", "write", "has_calls", "timer", "pings_without_data")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        interval_s: float,
        write: Callable[[bytes], None],
        has_calls: Callable[[], bool],
    ) -> None:
        self.loop = loop
        self.interval_s = interval_s  # 0: no keepalive
        self.write = write
        self.has_calls = has_calls
        self.timer: asyncio.TimerHandle | None = None
        self.pings_without_data = 0

    def start(self) -> None:
        if self.interval_s:
            self.timer = self.loop.call_later(self.interval_s, self._tick)

    def stop(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _tick(self) -> None:
        if self.has_calls() and self.pings_without_data < MAX_PINGS_WITHOUT_DATA:
            self.write(frames.frame(frames.PING, 0, 0, PING_PAYLOAD))
            self.pings_without_data += 1
        self.timer = self.loop.call_later(self.interval_s, self._tick)


def back_off(owner: Any, code: int, debug: str) -> None:
    """A GOAWAY that refused our pings (too_many_pings): the owner's next connections
    ping half as often."""
    refused = code == frames.ENHANCE_YOUR_CALM and "too_many_pings" in debug
    interval_s: float = getattr(owner, "keepalive_s", 0.0)
    if refused and interval_s:
        owner.keepalive_s = interval_s * 2
