"""Your own service on every server kind: the echo example of grpcbench's README.

    cd examples/echo
    grpcbench run --service echo_service:SERVICE -s grpcio:workers=4 -s grpcio-aio -s grpclib \\
        --call echo.Echo/Say -d '{"message": "hi"}'

grpcbench imports this module in each server process it starts and registers
the servicer of that kind. The three servicers below do the same thing in the
three server APIs, side by side. Only ``name``, ``service_names`` and the
servicers of the kinds you want are needed; the requests come from
``--call``/``-d`` (or the ``[call]`` table of ``echo.toml``).

The server param ``token`` (``--server-param token=...``) makes every method
demand the metadata ``authorization: Bearer <token>``, as an authenticated
service would; server params reach the servers on stdin, never their command line.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

import echo_grpc
import echo_pb2
import echo_pb2_grpc
import grpc
from grpclib import GRPCError
from grpclib.const import Status
from grpclib.server import Stream

from grpcbench.services.base import ServiceDefinition
from grpcbench.services.params import Param


def _expected(params: Mapping[str, Any]) -> str | None:
    token = params.get("token")
    return f"Bearer {token}" if token else None


def _reply(message: str, index: int = 0) -> echo_pb2.EchoReply:
    return echo_pb2.EchoReply(message=message, index=index)


# --- sync grpcio: a thread of the server's pool per call ----------------------


class GrpcioEcho(echo_pb2_grpc.EchoServicer):
    def __init__(self, params: Mapping[str, Any]) -> None:
        self.expected = _expected(params)

    def _check(self, context: grpc.ServicerContext) -> None:
        if (
            self.expected
            and dict(context.invocation_metadata()).get("authorization") != self.expected
        ):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")

    def Say(
        self, request: echo_pb2.EchoRequest, context: grpc.ServicerContext
    ) -> echo_pb2.EchoReply:
        self._check(context)
        return _reply(request.message)

    def Expand(
        self, request: echo_pb2.EchoRequest, context: grpc.ServicerContext
    ) -> Iterator[echo_pb2.EchoReply]:
        self._check(context)
        for index in range(request.repeat):
            yield _reply(request.message, index)

    def Collect(
        self, requests: Iterator[echo_pb2.EchoRequest], context: grpc.ServicerContext
    ) -> echo_pb2.CollectReply:
        self._check(context)
        messages = [request.message for request in requests]
        return echo_pb2.CollectReply(count=len(messages), joined=" ".join(messages))

    def Chat(
        self, requests: Iterator[echo_pb2.EchoRequest], context: grpc.ServicerContext
    ) -> Iterator[echo_pb2.EchoReply]:
        self._check(context)
        for index, request in enumerate(requests):
            yield _reply(request.message, index)


# --- grpc.aio: coroutines on one event loop ------------------------------------


class AioEcho(echo_pb2_grpc.EchoServicer):
    def __init__(self, params: Mapping[str, Any]) -> None:
        self.expected = _expected(params)

    async def _check(self, context: grpc.aio.ServicerContext) -> None:
        if (
            self.expected
            and dict(context.invocation_metadata() or ()).get("authorization") != self.expected
        ):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")

    async def Say(
        self, request: echo_pb2.EchoRequest, context: grpc.aio.ServicerContext
    ) -> echo_pb2.EchoReply:
        await self._check(context)
        return _reply(request.message)

    async def Expand(
        self, request: echo_pb2.EchoRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[echo_pb2.EchoReply]:
        await self._check(context)
        for index in range(request.repeat):
            yield _reply(request.message, index)

    async def Collect(
        self, requests: AsyncIterator[echo_pb2.EchoRequest], context: grpc.aio.ServicerContext
    ) -> echo_pb2.CollectReply:
        await self._check(context)
        messages = [request.message async for request in requests]
        return echo_pb2.CollectReply(count=len(messages), joined=" ".join(messages))

    async def Chat(
        self, requests: AsyncIterator[echo_pb2.EchoRequest], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[echo_pb2.EchoReply]:
        await self._check(context)
        index = 0
        async for request in requests:
            yield _reply(request.message, index)
            index += 1


# --- grpclib: coroutines that read and write a stream ----------------------------


class GrpclibEcho(echo_grpc.EchoBase):
    def __init__(self, params: Mapping[str, Any]) -> None:
        self.expected = _expected(params)

    def _check(self, stream: Stream[Any, Any]) -> None:
        if self.expected and stream.metadata.get("authorization") != self.expected:
            raise GRPCError(Status.UNAUTHENTICATED, "missing or wrong bearer token")

    async def Say(self, stream: Stream[echo_pb2.EchoRequest, echo_pb2.EchoReply]) -> None:
        self._check(stream)
        request = await stream.recv_message()
        assert request is not None
        await stream.send_message(_reply(request.message))

    async def Expand(self, stream: Stream[echo_pb2.EchoRequest, echo_pb2.EchoReply]) -> None:
        self._check(stream)
        request = await stream.recv_message()
        assert request is not None
        for index in range(request.repeat):
            await stream.send_message(_reply(request.message, index))

    async def Collect(self, stream: Stream[echo_pb2.EchoRequest, echo_pb2.CollectReply]) -> None:
        self._check(stream)
        messages = [request.message async for request in stream]
        await stream.send_message(
            echo_pb2.CollectReply(count=len(messages), joined=" ".join(messages))
        )

    async def Chat(self, stream: Stream[echo_pb2.EchoRequest, echo_pb2.EchoReply]) -> None:
        self._check(stream)
        index = 0
        async for request in stream:
            await stream.send_message(_reply(request.message, index))
            index += 1


SERVICE = ServiceDefinition(
    name="echo",
    description="the README's example: echo.Echo, one method of each RPC kind",
    service_names=("echo.Echo",),  # health and reflection are registered too
    register_grpcio=lambda server, params: echo_pb2_grpc.add_EchoServicer_to_server(
        GrpcioEcho(params), server
    ),
    register_aio=lambda server, params: echo_pb2_grpc.add_EchoServicer_to_server(
        AioEcho(params), server
    ),
    grpclib_handlers=lambda params: [GrpclibEcho(params)],
    server_params={
        "token": Param(str, "demand the metadata authorization: Bearer TOKEN", secret=True)
    },
)
