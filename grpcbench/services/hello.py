"""The seed's hello server: ``helloworld.Greeter/SayHello`` with no I/O.

The three servicers below do the same thing in the three server APIs, so the
benchmark measures the frameworks, not the handlers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import grpc
from grpclib.server import Stream

from grpcbench.proto import helloworld_grpc, helloworld_pb2, helloworld_pb2_grpc
from grpcbench.services.base import CallFunction, ServiceDefinition
from grpcbench.services.params import Param


def greeting(name: str) -> str:
    return f"Hello, {name}!"


# --- servers -----------------------------------------------------------------


class GrpcioGreeter(helloworld_pb2_grpc.GreeterServicer):
    """Sync grpcio: runs in a thread of the server's ThreadPoolExecutor."""

    def SayHello(
        self, request: helloworld_pb2.HelloRequest, context: grpc.ServicerContext
    ) -> helloworld_pb2.HelloReply:
        return helloworld_pb2.HelloReply(message=greeting(request.name))


class AioGreeter(helloworld_pb2_grpc.GreeterServicer):
    """grpc.aio: a coroutine on the server's event loop."""

    async def SayHello(
        self, request: helloworld_pb2.HelloRequest, context: grpc.aio.ServicerContext
    ) -> helloworld_pb2.HelloReply:
        return helloworld_pb2.HelloReply(message=greeting(request.name))


class GrpclibGreeter(helloworld_grpc.GreeterBase):
    """grpclib: a coroutine that reads the request from and writes the reply to a stream."""

    async def SayHello(
        self, stream: Stream[helloworld_pb2.HelloRequest, helloworld_pb2.HelloReply]
    ) -> None:
        request = await stream.recv_message()
        assert request is not None
        await stream.send_message(helloworld_pb2.HelloReply(message=greeting(request.name)))


def _register_grpcio(server: Any, params: Mapping[str, Any]) -> None:
    helloworld_pb2_grpc.add_GreeterServicer_to_server(GrpcioGreeter(), server)


def _register_aio(server: Any, params: Mapping[str, Any]) -> None:
    helloworld_pb2_grpc.add_GreeterServicer_to_server(AioGreeter(), server)


def _grpclib_handlers(params: Mapping[str, Any]) -> list[Any]:
    return [GrpclibGreeter()]


# --- client --------------------------------------------------------------------


class SayHelloWorkload:
    """One unary SayHello per call, with a request built once."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.request = helloworld_pb2.HelloRequest(name=str(params.get("name", "world")))

    def bind(self, channel: grpc.aio.Channel) -> CallFunction:
        method = channel.unary_unary(
            "/helloworld.Greeter/SayHello",
            request_serializer=helloworld_pb2.HelloRequest.SerializeToString,
            response_deserializer=helloworld_pb2.HelloReply.FromString,
        )
        request = self.request

        async def call(timeout: float) -> None:
            await method(request, timeout=timeout)

        return call


SERVICE = ServiceDefinition(
    name="hello",
    description="helloworld.Greeter/SayHello, no I/O (the seed's hello server)",
    service_names=("helloworld.Greeter",),
    ghz_call="helloworld.Greeter.SayHello",
    proto="grpcbench/proto/helloworld.proto",
    register_grpcio=_register_grpcio,
    register_aio=_register_aio,
    grpclib_handlers=_grpclib_handlers,
    workload=SayHelloWorkload,
    server_params={},
    workload_params={"name": Param(str, "the HelloRequest's name")},
)
