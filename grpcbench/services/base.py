"""What a service plugin provides: servicers for every server kind and a client workload.

A service is the Python half of a scenario (the scenario file is the data half).
Keeping the grpcio, grpc.aio and grpclib servicers of one service in one module
lets a reader compare sync and async code of the same logic side by side.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from grpcbench.services.params import Params


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
    # --stream-interval: how late each request message went out on its timetable (us).
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


Metadata = tuple[tuple[str, str | bytes], ...]


@dataclass(frozen=True)
class UnaryPlan:
    """A workload that is one call (unary, or a stream of fixed requests): its
    method, and its request.

    ``request``: the serialized request of every call (its frames are then
    encoded once); else ``next_request(user)`` gives each call's serialized
    request and metadata (templated data), ``user`` being the virtual user.
    A mix (``rpc.mix``) is a plan of ``parts``, each a plan with its own
    ``timeout_s`` (0: the level's), run in the order of ``cycle``."""

    path: str
    request: bytes | None = None
    metadata: Metadata = ()
    next_request: Callable[[int], tuple[bytes, Metadata]] | None = None
    timeout_s: float = 0.0
    parts: tuple[UnaryPlan, ...] = ()
    cycle: tuple[int, ...] = ()
    # A stream method whose requests are fixed and unpaced (alone or in a mix): its
    # kind and all its request messages, sent in one body (the callback loops count
    # the replies).
    kind: str = "unary"
    requests: tuple[bytes, ...] = ()


@dataclass(frozen=True)
class ServiceDefinition:
    """A service plugin. Only ``name`` is required: a plugin provides what it has.

    Servicers are keyed by server kind in ``servicers`` (``"grpcio"``,
    ``"grpcio-aio"``, ``"grpclib"``, or any kind added to ``servers.kinds``): for
    the gRPC Python kinds a ``register(server, params)``, for grpclib a
    ``handlers(params) -> list``; each kind's module says what it calls. The
    fields ``register_grpcio``, ``register_aio`` and ``grpclib_handlers`` are
    shorthands for the three bundled kinds, folded into ``servicers``.

    A user's own servicers need only the kinds they exist for (asking another
    kind is one clear error), plus ``service_names`` for health and reflection;
    requests can then come from ``--call``/``--data`` instead of a ``workload``.
    """

    name: str
    description: str = ""
    # Fully-qualified gRPC service names, for the health and reflection services.
    service_names: tuple[str, ...] = ()
    # Server side: each receives the server and the scenario's server params.
    # Server side, keyed by server kind (see the class docstring).
    servicers: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    register_grpcio: Callable[[Any, Mapping[str, Any]], None] | None = None  # servicers["grpcio"]
    register_aio: Callable[[Any, Mapping[str, Any]], None] | None = None  # ["grpcio-aio"]
    grpclib_handlers: Callable[[Mapping[str, Any]], list[Any]] | None = None  # ["grpclib"]
    # Client side: build a workload from the scenario's workload params
    # (None: the requests come from --call).
    workload: Callable[[Mapping[str, Any]], Workload] | None = None
    # The .proto an external client (ghz) is given, relative to the protos/ directory.
    proto: str = ""
    # The call as one external client's call expresses it: the method
    # ("helloworld.Greeter.SayHello") and its request as JSON, for these
    # workload params; raises UsageError for a workload one call cannot express
    # (a paging loop). None: only --call runs on an external client.
    json_request: Callable[[Mapping[str, Any]], tuple[str, dict[str, Any]]] | None = None

    def __post_init__(self) -> None:
        servicers = dict(self.servicers)
        for kind, shorthand in (
            ("grpcio", self.register_grpcio),
            ("grpcio-aio", self.register_aio),
            ("grpclib", self.grpclib_handlers),
        ):
            if shorthand is not None:  # set: it wins (``dataclasses.replace`` of one changes it)
                servicers[kind] = shorthand
        object.__setattr__(self, "servicers", servicers)

    def kinds_served(self) -> tuple[str, ...]:
        """The server kinds this service has servicers for."""
        return tuple(self.servicers)

    def servicer(self, kind: str) -> Callable[..., Any]:
        """What serves ``kind`` (a server child exits with this line without one)."""
        found = self.servicers.get(kind)
        if found is None:
            raise SystemExit(f"service {self.name} has no servicer for server kind {kind}")
        return found

    # Run once per run before any server starts (build a database in
    # ``workdir``, start backing services whose stop it registers on the exit
    # stack); returns the server params to use, so every server kind starts
    # from the same data.
    prepare: Callable[[Mapping[str, Any], Path, ExitStack], dict[str, Any]] | None = None
    # Server params completed from what is installed (which database runs), when
    # options are built: the header and the results then name what ran.
    complete_params: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None
    # Run before each server kind starts, with the prepared params (e.g. empty
    # a collection), so each starts from the same state.
    reset: Callable[[Mapping[str, Any]], None] | None = None
    # Workload params derived from the prepared server params (e.g. how many
    # objects were seeded, so the client can check it got them all).
    workload_context: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None
    # grpclib only: the codec for the whole server (e.g. one that passes
    # pre-serialized bytes through); None = grpclib's protobuf codec.
    grpclib_codec: Callable[[], Any] | None = None
    # Called before each level with (server params, workload params,
    # concurrency); raises UsageError when the level cannot run (e.g. memory).
    check_level: Callable[[Mapping[str, Any], Mapping[str, Any], int], None] | None = None
    # Called with (server kind, workload params): why a level cannot run on that
    # kind (e.g. a feature only grpclib has), or None. Such a level is reported
    # "not available on this kind" instead of run.
    unavailable: Callable[[str, Mapping[str, Any]], str | None] | None = None
    # The parameters the servicers and the workload read (name -> kind, limits,
    # help): scenario files and --server-param/--workload-param are checked
    # against them. None = not declared (anything passes, for older plugins).
    server_params: Params | None = None
    workload_params: Params | None = None
