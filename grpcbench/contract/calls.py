"""The call contract: what one call of a workload is, and what it reports.

Every layer that makes or counts calls reads these types: the services' workloads
build them, ``rpc`` (any method, mixes, flows) implements them, and ``load``'s loops
run and record them. They sit below all three, so none of those layers has to
import the plugin module (``services.base``) to speak of a call.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class CallStats:
    """What one call of a streaming (or multi-request) workload received."""

    messages: int  # response messages (stream messages, or pages)
    items: int  # records inside them (users, objects, pairs); 0 when not counted
    bytes: int  # serialized size of the response messages
    first_message_s: float  # from the start of the call to the first message
    sent: int = 0  # request messages of a client or bidi stream (0: a single request)
    # Microseconds from each reply message to the next, as the client got them; messages
    # that came in one read count as ``together`` (a gap under 1 us), not one by one.
    gaps_us: Sequence[int] = ()
    together: int = 0
    # --stream-round-trip: each request's round trip to the reply that answers it (the
    # n-th reply answers the n-th request, as an echo does), in microseconds.
    round_trips_us: Sequence[int] = ()
    # --stream-interval: how late each request message went out on its pacer (us).
    send_lags_us: Sequence[int] = ()


class ReplyCounter:
    """Counts the replies of one call as they arrive: messages, bytes, time to the first.

    Every streaming (or multi-page) workload feeds each reply to ``add`` and
    ends with ``stats(items)``, so all of them measure the same way.
    """

    def __init__(self, sent_at: deque[float] | None = None) -> None:
        self.started = time.perf_counter()
        self.messages = 0
        self.bytes = 0
        self.first_message_s = 0.0
        self.last_at = 0.0
        self.gaps_us: list[int] = []
        # --stream-round-trip: when each request not yet answered went out, oldest first.
        self.sent_at = sent_at
        self.round_trips_us: list[int] = []

    def add(self, reply: Any) -> None:
        now = time.perf_counter()
        if self.messages == 0:
            self.first_message_s = now - self.started
        else:
            self.gaps_us.append(int((now - self.last_at) * 1e6))
        self.last_at = now
        if self.sent_at:
            self.round_trips_us.append(int((now - self.sent_at.popleft()) * 1e6))
        self.messages += 1
        self.bytes += self.size(reply)

    @staticmethod
    def size(reply: Any) -> int:
        """A reply's serialized size (a message's; raw bytes override this)."""
        return int(reply.ByteSize())

    def stats(self, items: int, sent: int = 0) -> CallStats:
        return CallStats(
            self.messages, items, self.bytes, self.first_message_s, sent, self.gaps_us,
            round_trips_us=self.round_trips_us,
        )  # fmt: skip


class WorkloadError(Exception):
    """The reply was wrong (missing, repeated or foreign records): counted as DataLoss."""

    status = "DataLoss"
    preflight_verb = "got a wrong reply"  # how the pre-flight call's failure reads


# One call of a workload: given the per-call deadline in seconds, perform the
# RPC(s) and return normally on OK - with CallStats when there is more to say
# than "one reply" - or raise grpc.aio.AioRpcError with any other status.
CallFunction = Callable[[float], Awaitable[CallStats | None]]


class Workload(Protocol):
    """Client-side behaviour of one virtual user, bound to a channel: grpc.aio's, or
    the wire transport's ``WireChannel``, which has the same methods.

    A workload that is one unary call with a request known in advance (or a stream
    whose requests are fixed and unpaced) may also have ``unary_plan() -> UnaryPlan
    | None``: the wire transport then runs it on its callback loops, with no
    coroutine per call (``load.callback_loops``)."""

    def bind(self, channel: Any) -> CallFunction: ...


class UserLife(Protocol):
    """A workload whose virtual users live across calls (a ``--workload`` class): the
    closed loop starts each user before its first call and stops it after its last.
    Each is done through ``call``, so it runs on the connection the user's calls take."""

    async def start(self, call: CallFunction, timeout_s: float) -> None: ...

    async def stop(self, call: CallFunction, timeout_s: float) -> None: ...


Metadata = tuple[tuple[str, str | bytes], ...]


@dataclass(frozen=True)
class UnaryPlan:
    """A workload that is one call (unary, or a stream of fixed requests): its
    method, and its request.

    ``request``: the serialized request of every call (its frames are then
    encoded once); else ``next_request(user)`` gives each call's serialized
    request and metadata (templated data), ``user`` being the virtual user.
    A mix (``rpc.mix``) is a plan of ``parts``, each a plan with its own
    ``timeout_s`` (0: the level's), run in proportion to ``weights`` (the order is
    ``rpc.mix.weighted_order``'s)."""

    path: str
    request: bytes | None = None
    metadata: Metadata = ()
    next_request: Callable[[int], tuple[bytes, Metadata]] | None = None
    timeout_s: float = 0.0
    parts: tuple[UnaryPlan, ...] = ()
    weights: tuple[int, ...] = ()
    random_order: bool = False  # a mix's methods drawn by weight per call (--mix-order random)
    # A stream method whose requests are fixed and unpaced (alone or in a mix): its
    # method type and all its request messages, sent in one body (the callback loops count
    # the replies).
    method_type: str = "unary"
    requests: tuple[bytes, ...] = ()
