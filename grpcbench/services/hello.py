"""The seed's hello server: ``helloworld.Greeter/SayHello`` with no I/O.

The three servicers below do the same thing in the three server APIs, so the
benchmark measures the frameworks, not the handlers. Two parameters serve the
seeds that vary the handler and the request:
- ``delay_ms`` (server): a handler that waits, as seed 001's second half
  (0.5 s): ``time.sleep`` in the sync servicer, ``asyncio.sleep`` in the async
  ones, so each kind waits the way its own code would;
- ``size`` (workload): the request's serialized size in bytes, as seed 003's
  581-byte request; ghz sends the same request.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from grpcbench.base.errors import UsageError
from grpcbench.contract.calls import CallFunction, UnaryPlan
from grpcbench.proto import helloworld_pb2
from grpcbench.services.base import ServiceDefinition, generated_routes
from grpcbench.services.params import Param

if TYPE_CHECKING:
    import grpc
    import grpclib.const
    from grpclib.server import Stream


def greeting(name: str) -> str:
    return f"Hello, {name}!"


def _delay_s(params: Mapping[str, Any]) -> float:
    return float(params.get("delay_ms", 0)) / 1000


# --- servers -----------------------------------------------------------------
# The servicers do not subclass the generated bases (``generated_routes`` says why).


class GrpcioGreeter:
    """Sync grpcio: runs in a thread of the server's ThreadPoolExecutor (a delay holds it)."""

    def __init__(self, delay_s: float = 0.0) -> None:
        self.delay_s = delay_s

    def SayHello(
        self, request: helloworld_pb2.HelloRequest, context: grpc.ServicerContext
    ) -> helloworld_pb2.HelloReply:
        if self.delay_s:
            time.sleep(self.delay_s)
        return helloworld_pb2.HelloReply(message=greeting(request.name))


class AioGreeter:
    """grpc.aio: a coroutine on the server's event loop (a delay frees it)."""

    def __init__(self, delay_s: float = 0.0) -> None:
        self.delay_s = delay_s

    async def SayHello(
        self, request: helloworld_pb2.HelloRequest, context: grpc.aio.ServicerContext
    ) -> helloworld_pb2.HelloReply:
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        return helloworld_pb2.HelloReply(message=greeting(request.name))


class GrpclibGreeter:
    """grpclib: a coroutine that reads the request from and writes the reply to a stream."""

    def __init__(self, delay_s: float = 0.0) -> None:
        self.delay_s = delay_s

    def __mapping__(self) -> dict[str, grpclib.const.Handler]:
        """The generated base's routes, bound to this servicer's SayHello."""
        return generated_routes("grpcbench.proto.helloworld_grpc", "GreeterBase", self)

    async def SayHello(
        self, stream: Stream[helloworld_pb2.HelloRequest, helloworld_pb2.HelloReply]
    ) -> None:
        request = await stream.recv_message()
        assert request is not None
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        await stream.send_message(helloworld_pb2.HelloReply(message=greeting(request.name)))


def _register(server: Any, servicer: GrpcioGreeter | AioGreeter) -> None:
    from grpcbench.proto import helloworld_pb2_grpc  # here: a grpclib child never imports grpc

    helloworld_pb2_grpc.add_GreeterServicer_to_server(servicer, server)


def _grpclib_handlers(params: Mapping[str, Any]) -> list[Any]:
    return [GrpclibGreeter(_delay_s(params))]


# --- client --------------------------------------------------------------------


def name_for_size(size: int) -> str:
    """A name whose HelloRequest serializes to exactly ``size`` bytes: one tag byte,
    the name's length as a varint, then the name (so 1, 2 and a few sizes where the
    varint grows, such as 130, cannot be made)."""
    for length in range(size + 1):
        serialized = len(helloworld_pb2.HelloRequest(name="x" * length).SerializeToString())
        if serialized == size:
            return "x" * length
        if serialized > size:
            break
    raise UsageError(
        f"bad workload param size={size}: no HelloRequest is exactly that big"
        " (sizes 0 and 3 or more can be made, except where the length's varint grows)"
    )


def request_name(params: Mapping[str, Any]) -> str:
    """The request's name: ``name``, or one that gives the request ``size`` bytes."""
    if "size" in params:
        return name_for_size(int(params["size"]))
    return str(params.get("name", "world"))


def _json_request(params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    return "helloworld.Greeter.SayHello", {"name": request_name(params)}


class SayHelloWorkload:
    """One unary SayHello per call. The request is serialized once and the reply
    is not parsed (raw bytes both ways): the generator's CPU goes to the calls."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.request = helloworld_pb2.HelloRequest(name=request_name(params)).SerializeToString()

    def bind(self, channel: grpc.aio.Channel) -> CallFunction:
        method = channel.unary_unary("/helloworld.Greeter/SayHello")
        request = self.request

        async def call(timeout: float) -> None:
            await method(request, timeout=timeout)

        return call

    def unary_plan(self) -> UnaryPlan | None:
        """The wire stack's callback loops run it, unless a subclass does more per call."""
        if type(self).bind is not SayHelloWorkload.bind:
            return None
        return UnaryPlan("/helloworld.Greeter/SayHello", self.request)


SERVICE = ServiceDefinition(
    name="hello",
    description="helloworld.Greeter/SayHello, no I/O (the seed's hello server)",
    service_names=("helloworld.Greeter",),
    proto="grpcbench/proto/helloworld.proto",
    register_grpcio=lambda server, params: _register(server, GrpcioGreeter(_delay_s(params))),
    register_aio=lambda server, params: _register(server, AioGreeter(_delay_s(params))),
    grpclib_handlers=_grpclib_handlers,
    workload=SayHelloWorkload,
    json_request=_json_request,
    server_params={
        "delay_ms": Param(float, "each call waits this long in the handler", minimum=0),
    },
    workload_params={
        "name": Param(str, "the HelloRequest's name"),
        "size": Param(
            int,
            "the request's serialized size in bytes (581: a typical small request)",
            minimum=0,
            validate=lambda size: name_for_size(int(size)),
        ),
    },
)
