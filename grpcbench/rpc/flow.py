"""Chains: a user's workload as an async function, ``--workload module:flow``.

    async def flow(client):
        feature = await client.unary(
            "routeguide.RouteGuide/GetFeature", {"latitude": 409146138, "longitude": -746188906}
        )
        await client.server_stream(
            "routeguide.RouteGuide/ListFeatures", {"lo": feature.location, "hi": feature.location}
        )

A flow is to the loops what a call is: the closed loop runs one after another per
virtual user, the open loop starts one per tick, and the level's figures (count,
statuses, latency, req/s) are the flows'. Each call a flow makes is a *step*,
timed and counted under its own name (``name=``, else the method), so the table
shows a row group per step as it shows one per method of a mix.
``client.conversation`` (``grpcbench.rpc.conversation``) is a bidi step the flow
steers reply by reply. A step that fails raises ``grpc.aio.AioRpcError`` into the
flow (which may catch it); a flow that ends by that error has the step's status.
A flow that raises anything else ends as Unknown with the exception's text, and
one that makes no call at all is a mistake the pre-flight run reports.

The client runs on the level's channel, so on the wire stack by default
(``--client-stack grpcio`` for grpc.aio): requests are dicts (protobuf's JSON
mapping, the .proto's field names) or messages; replies are messages.
"""

from __future__ import annotations

import base64
import inspect
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property, partial
from typing import Any, Protocol

import grpc
from google.protobuf import json_format

from grpcbench.base.errors import UsageError
from grpcbench.contract.calls import CallFunction, WorkloadError
from grpcbench.rpc.conversation import Conversation
from grpcbench.rpc.feeder import FlowFeeders
from grpcbench.rpc.metadata_text import Metadata, parse_metadata
from grpcbench.rpc.schema import MethodSchema, parse_call_name
from grpcbench.rpc.status_names import status_name
from grpcbench.rpc.user_life import VirtualUsers, check_user_class

Flow = Callable[["FlowClient"], Awaitable[Any]]


# A step's metadata=: a dict, as users write it, or grpc's (key, value) pairs.
FlowMetadata = Metadata | Mapping[str, str | bytes]


def _pairs(metadata: FlowMetadata) -> Metadata:
    """``metadata=`` as grpc's pairs; a shape that is neither is said as such."""
    pairs = tuple(metadata.items()) if isinstance(metadata, Mapping) else tuple(metadata)
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str)):
            raise TypeError(
                f"metadata= takes a dict or (key, value) pairs, not {type(metadata).__name__}"
                f" holding {pair!r:.60}"
            )
    return pairs


class StepRecorder(Protocol):
    def record(self, status: str, latency_us: int, message: str) -> None: ...


class FlowFailed(WorkloadError):
    """A flow that raised something other than a call's error: counted as Unknown."""

    status = "Unknown"
    preflight_verb = "failed"


class NoCall(WorkloadError):
    """A flow that made no call (it never awaited the client): counted as Internal."""

    status = "Internal"
    preflight_verb = "failed"


@dataclass(frozen=True)
class PlannedFlow:
    """What a generator needs to run a flow: its reference, the schema, the metadata."""

    function: str  # package.module:function
    descriptor_set_b64: str
    metadata: str = "{}"  # JSON object sent with every step; may hold credentials
    # What the module's setup() returned for this server, as JSON (rpc.setup_teardown);
    # may hold credentials too: never printed or saved.
    setup_data: str = "null"

    def to_json(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "descriptor_set_b64": self.descriptor_set_b64,
            "metadata": self.metadata,
            "setup_data": self.setup_data,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PlannedFlow:
        return cls(str(data["function"]), str(data["descriptor_set_b64"]), str(data["metadata"]),
                   str(data.get("setup_data", "null")))  # fmt: skip

    @cached_property
    def descriptor_set(self) -> bytes:
        return base64.b64decode(self.descriptor_set_b64)


def load_flow(reference: str) -> Flow:
    """The user's flow function (or class of virtual users: ``rpc.user_life``), or one
    UsageError saying why not."""
    from grpcbench.services.registry import import_attribute

    if ":" not in reference:
        raise UsageError(f"bad --workload {reference!r}: give package.module:function")
    function = import_attribute(reference, f"workload {reference!r}")
    if inspect.isclass(function):
        check_user_class(function, reference)
    elif not callable(function):
        raise UsageError(f"workload {reference!r} is not a function or a class")
    return function  # type: ignore[no-any-return]


class _Step:
    """One method a flow calls: its path, method type and message classes, and its callable on
    the channel (made once per channel)."""

    def __init__(self, schema: MethodSchema, channel: Any) -> None:
        self.method_type = schema.method_type
        self.request_class = schema.request_class
        reply = schema.reply_class
        serialize, parse = self.request_class.SerializeToString, reply.FromString
        make = {
            "unary": channel.unary_unary,
            "server-streaming": channel.unary_stream,
            "client-streaming": channel.stream_unary,
            "bidi": channel.stream_stream,
        }[self.method_type]
        self.call = make(schema.path, request_serializer=serialize, response_deserializer=parse)

    def request(self, value: Any) -> Any:
        """A dict as protobuf's JSON mapping reads it. The message's own constructor
        is tried first, 15x faster (0.6 us, not 10): it takes the .proto's field names,
        nested dicts and enum names alike, and refuses with TypeError or ValueError
        what only the JSON mapping reads (camelCase names, int64 and bytes as text)."""
        if type(value) is dict or isinstance(value, Mapping):  # dict: no ABC check
            try:
                return self.request_class(**value)
            except (TypeError, ValueError):
                pass
            try:
                return json_format.ParseDict(value, self.request_class())
            except json_format.ParseError as error:
                name = self.request_class.DESCRIPTOR.full_name
                raise FlowFailed(f"the request does not fit {name}: {error}") from None
        return value


class FlowClient:
    """What a flow calls with: one method per method type, each a timed step. One per run
    of the flow (so its count of calls is that run's); the steps, made once per
    channel, are shared."""

    def __init__(
        self, channel: Any, workload: FlowWorkload, steps: dict[str, _Step], timeout_s: float
    ) -> None:
        self._channel = channel
        self._workload = workload
        self._steps = steps  # method -> its callable on the channel
        self.calls = 0  # steps this run made
        self.timeout_s = timeout_s  # the level's --timeout, per step

    @property
    def setup_data(self) -> Any:
        """What the module's ``setup(client)`` returned for this server (None without
        one): k6's ``data`` (rpc.setup_teardown)."""
        return self._workload.setup_data

    def _step(self, method: str, method_type: str) -> _Step:
        step = self._steps.get(method)
        if step is None:
            step = self._steps[method] = _Step(self._workload.schema(method), self._channel)
        if step.method_type != method_type:
            raise FlowFailed(
                f"{method} is {step.method_type}: call it with client.{_CALLS[step.method_type]}"
            )
        return step

    async def unary(
        self, method: str, request: Any, *, name: str = "", timeout: float | None = None,
        metadata: FlowMetadata = (),
    ) -> Any:  # fmt: skip
        step = self._step(method, "unary")
        return await self._timed(
            name or method, step.call(step.request(request), **self._options(timeout, metadata))
        )

    async def server_stream(
        self, method: str, request: Any, *, name: str = "", timeout: float | None = None,
        metadata: FlowMetadata = (),
    ) -> list[Any]:  # fmt: skip
        step = self._step(method, "server-streaming")
        replies = step.call(step.request(request), **self._options(timeout, metadata))
        collected: list[Any] = await self._timed(name or method, _collect(replies))
        return collected

    async def client_stream(
        self, method: str, requests: Iterable[Any], *, name: str = "",
        timeout: float | None = None, metadata: FlowMetadata = (),
    ) -> Any:  # fmt: skip
        step = self._step(method, "client-streaming")
        messages = [step.request(request) for request in requests]
        return await self._timed(
            name or method, step.call(iter(messages), **self._options(timeout, metadata))
        )

    async def bidi(
        self, method: str, requests: Iterable[Any], *, name: str = "",
        timeout: float | None = None, metadata: FlowMetadata = (),
    ) -> list[Any]:  # fmt: skip
        step = self._step(method, "bidi")
        messages = [step.request(request) for request in requests]
        replies = step.call(iter(messages), **self._options(timeout, metadata))
        collected: list[Any] = await self._timed(name or method, _collect(replies))
        return collected

    def check(self, name: str, passed: Any) -> bool:
        """k6's ``check()``: count whether ``passed`` held under ``name`` (the level's
        ``load.checks``, a row per check); a failed check fails no call. Returns it, for
        an ``if``."""
        held = bool(passed)
        checks = self._workload.checks
        if checks is not None:  # None while warming up
            checks.record(name, held)
        return held

    def row(self, path: str, *, order: str = "sequential") -> dict[str, Any]:
        """The next row of a feeder file (.jsonl, .ndjson or .csv) as a dict, for a step's
        request: in order, each generator process taking its own lines as -D's do, or
        ``order="random"``. A bad file or line ends the run with one line naming it."""
        return self._workload.feeders.row(path, order)

    def conversation(
        self, method: str, *, name: str = "", timeout: float | None = None,
        metadata: FlowMetadata = (),
    ) -> Conversation:  # fmt: skip
        """An interactive bidi call, used as ``async with``: send, receive, decide, send
        again (``grpcbench.rpc.conversation``); one step, timed until its status."""
        step = self._step(method, "bidi")
        options = self._options(timeout, metadata)
        self.calls += 1
        return Conversation(
            lambda requests: step.call(requests, **options), step.request,
            partial(self._record, name or method),
        )  # fmt: skip

    def _options(self, timeout: float | None, metadata: FlowMetadata) -> dict[str, Any]:
        level = self._workload.metadata  # a step's own come after the level's
        sent = level + _pairs(metadata) if metadata else level
        return {"timeout": timeout or self.timeout_s, "metadata": sent or None}

    async def _timed(self, name: str, awaitable: Awaitable[Any]) -> Any:
        self.calls += 1
        started = time.perf_counter_ns()
        status, message = "OK", ""
        try:
            return await awaitable
        except grpc.aio.AioRpcError as error:
            status, message = status_name(error.code()), error.details() or ""
            raise
        finally:
            steps = self._workload.steps
            if steps is not None:  # None while warming up (``_record``'s body, inline)
                steps[name].record(status, (time.perf_counter_ns() - started) // 1000, message)

    def _record(self, name: str, status: str, latency_us: int, message: str) -> None:
        steps = self._workload.steps
        if steps is not None:  # None while warming up
            steps[name].record(status, latency_us, message)


_CALLS = {
    "unary": "unary", "server-streaming": "server_stream",
    "client-streaming": "client_stream", "bidi": "bidi",
}  # fmt: skip


def _collect(replies: AsyncIterator[Any]) -> Awaitable[list[Any]]:
    """Every reply of a stream call: the wire stack's in one wait (``collect``), any
    other stack's (grpc.aio) read one by one."""
    collect = getattr(replies, "collect", None)
    return collect() if collect is not None else _read_all(replies)


async def _read_all(replies: AsyncIterator[Any]) -> list[Any]:
    return [reply async for reply in replies]


class FlowWorkload:
    """A flow as the loops' workload: each call runs the flow once."""

    def __init__(self, spec: PlannedFlow, index: int = 0, count: int = 1) -> None:
        """``index`` of ``count``: this generator process's share of a feeder's rows."""
        self.spec = spec
        self.feeders = FlowFeeders(index, count)
        target = load_flow(spec.function)
        # A class: its instances are virtual users with a life (rpc.user_life); the
        # closed loop reads ``life`` to start and stop them.
        self.life = VirtualUsers(target) if inspect.isclass(target) else None
        self.function = target
        self.metadata = parse_metadata(spec.metadata or "{}")
        self.setup_data = json.loads(spec.setup_data)
        self._schemas: dict[str, MethodSchema] = {}
        # Set by the engine while a phase is measured: a step name -> its recorder
        # (a mapping that makes one per new name); None while warming up.
        self.steps: Any = None
        self.checks: Any = None  # the same for checks: load.recorders.CheckRecorders

    def schema(self, method: str) -> MethodSchema:
        found = self._schemas.get(method)
        if found is None:
            try:
                found = MethodSchema(parse_call_name(method), self.spec.descriptor_set)
                found.method  # noqa: B018 - an unknown method fails here, in one line
            except UsageError as error:
                raise FlowFailed(str(error)) from None
            self._schemas[method] = found
        return found

    def bind(self, channel: grpc.aio.Channel) -> CallFunction:
        steps: dict[str, _Step] = {}
        function, users = self.function, self.life

        async def run(function: Callable[[FlowClient], Awaitable[Any]], timeout: float) -> int:
            client = FlowClient(channel, self, steps, timeout)
            try:
                await function(client)
            except Exception as error:  # noqa: BLE001 - the user's flow may raise anything
                raise _flow_error(error) from None
            return client.calls

        async def call(timeout: float) -> None:
            if users is not None:  # a user's start, flow or stop (rpc.user_life)
                made = await users.call(lambda hook: run(hook, timeout))
                if made is None:
                    return
            else:  # run's body inline: a coroutine less per flow, on its hot path
                client = FlowClient(channel, self, steps, timeout)
                try:
                    await function(client)
                except Exception as error:  # noqa: BLE001 - the user's flow may raise anything
                    raise _flow_error(error) from None
                made = client.calls
            if not made:
                raise NoCall("the flow made no call: it must await a client method")

        return call


def _flow_error(error: Exception) -> Exception:
    """What a flow's exception ends its call as: a call's own error, a WorkloadError, or
    a feeder's UsageError (client.row: it ends the run) as raised; anything else is
    the flow's failure, counted Unknown."""
    if isinstance(error, grpc.aio.AioRpcError | WorkloadError | UsageError):
        return error
    return FlowFailed(f"the flow raised {type(error).__name__}: {error}"[:300])
