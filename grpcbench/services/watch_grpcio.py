"""Seed 004's watch servicers for grpcio and grpc.aio (``services.watch`` has the store).

Both register by hand (``generic_handler``) to plug in the pass-through serializer:
pre-serialized responses leave as they are. Imported only where a grpcio or grpc.aio
server registers them, so a grpclib server child never imports grpc."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc

from grpcbench.proto import watch_pb2
from grpcbench.services.watch_store import FRAME, NOT_FRAMING, TWO_WRITES, FolderCache, serialize


class GrpcioWatch:
    """Sync grpcio: each stream occupies a worker thread while it sends."""

    def __init__(self, cache: FolderCache) -> None:
        self.cache = cache

    def _check(self, request: watch_pb2.WatchRequest, context: grpc.ServicerContext) -> None:
        if request.folder not in self.cache.objects:
            context.abort(grpc.StatusCode.NOT_FOUND, f"no folder {request.folder!r}")
        if request.cache in (FRAME, TWO_WRITES):
            context.abort(grpc.StatusCode.UNIMPLEMENTED, NOT_FRAMING)

    def Watch(
        self, request: watch_pb2.WatchRequest, context: grpc.ServicerContext
    ) -> Iterator[Any]:
        self._check(request, context)
        yield self.cache.watch(request)

    def WatchSeparated(
        self, request: watch_pb2.WatchRequest, context: grpc.ServicerContext
    ) -> Iterator[Any]:
        self._check(request, context)
        yield from self.cache.watch_separated(request)


class AioWatch:
    """grpc.aio: each stream is a coroutine; writes wait for flow control."""

    def __init__(self, cache: FolderCache) -> None:
        self.cache = cache

    async def _check(self, request: watch_pb2.WatchRequest, context: Any) -> None:
        if request.folder not in self.cache.objects:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no folder {request.folder!r}")
        if request.cache in (FRAME, TWO_WRITES):
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, NOT_FRAMING)

    async def Watch(self, request: watch_pb2.WatchRequest, context: Any) -> AsyncIterator[Any]:
        await self._check(request, context)
        yield self.cache.watch(request)

    async def WatchSeparated(
        self, request: watch_pb2.WatchRequest, context: Any
    ) -> AsyncIterator[Any]:
        await self._check(request, context)
        for message in self.cache.watch_separated(request):
            yield message


def generic_handler(servicer: GrpcioWatch | AioWatch) -> grpc.GenericRpcHandler:
    """Both grpcio APIs: registered by hand to plug in the pass-through serializer."""
    handlers = {
        name: grpc.unary_stream_rpc_method_handler(
            getattr(servicer, name),
            request_deserializer=watch_pb2.WatchRequest.FromString,
            response_serializer=serialize,
        )
        for name in ("Watch", "WatchSeparated")
    }
    return grpc.method_handlers_generic_handler("watch.StreamBench", handlers)
