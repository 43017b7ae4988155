"""What a service plugin provides: servicers for every server kind and a client workload.

A service is the Python half of a scenario (the scenario file is the data half).
Keeping the grpcio, grpc.aio and grpclib servicers of one service in one module
lets a reader compare sync and async code of the same logic side by side.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

# One call of a workload: given the per-call deadline in seconds, perform the
# RPC and return normally on OK; raise grpc.aio.AioRpcError on any other status.
CallFunction = Callable[[float], Awaitable[None]]


class Workload(Protocol):
    """Client-side behaviour of one virtual user, bound to a grpc.aio channel."""

    def bind(self, channel: Any) -> CallFunction: ...


@dataclass(frozen=True)
class ServiceDefinition:
    name: str
    description: str
    # Fully-qualified gRPC service names, for the health and reflection services.
    service_names: tuple[str, ...]
    # The method ghz calls, e.g. "helloworld.Greeter.SayHello", and its proto
    # path relative to the protos/ directory.
    ghz_call: str
    proto: str
    # Server side: each receives the server and the scenario's server params.
    register_grpcio: Callable[[Any, Mapping[str, Any]], None]
    register_aio: Callable[[Any, Mapping[str, Any]], None]
    grpclib_handlers: Callable[[Mapping[str, Any]], list[Any]]
    # Client side: build a workload from the scenario's workload params.
    workload: Callable[[Mapping[str, Any]], Workload]
    # The request ghz sends (its --data JSON), from the same params; by default
    # the params are the request message's fields.
    ghz_data: Callable[[Mapping[str, Any]], dict[str, Any]] = dict
