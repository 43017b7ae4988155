"""Seed 004's watch servicer for grpclib (``services.watch`` has the store), with its
pass-through codec and the prepared frames' writer. Imported only where a grpclib
server registers them, so a grpcio or grpc.aio server child never imports grpclib."""

from __future__ import annotations

from typing import Any

from grpclib.const import Status
from grpclib.encoding.proto import ProtoCodec
from grpclib.exceptions import GRPCError
from grpclib.server import Stream

from grpcbench.proto import watch_pb2
from grpcbench.services.base import generated_routes
from grpcbench.services.watch_store import FRAME, TWO_WRITES, FolderCache


class PassThroughCodec(ProtoCodec):
    """grpclib: pre-serialized responses pass through, messages are encoded as usual."""

    def encode(self, message: Any, message_type: Any) -> bytes:
        if isinstance(message, bytes):
            return message
        return super().encode(message, message_type)


class GrpclibWatch:
    def __init__(self, cache: FolderCache) -> None:
        self.cache = cache

    def __mapping__(self) -> dict[str, Any]:
        return generated_routes("grpcbench.proto.watch_grpc", "StreamBenchBase", self)

    async def _request(self, stream: Stream[Any, Any]) -> watch_pb2.WatchRequest:
        request: watch_pb2.WatchRequest | None = await stream.recv_message()
        assert request is not None
        if request.folder not in self.cache.objects:
            raise GRPCError(Status.NOT_FOUND, f"no folder {request.folder!r}")
        return request

    async def Watch(self, stream: Stream[watch_pb2.WatchRequest, Any]) -> None:
        request = await self._request(stream)
        if request.cache in (FRAME, TWO_WRITES):
            await send_prepared(stream, self.cache.writes(request, separated=False))
            return
        await stream.send_message(self.cache.watch(request))

    async def WatchSeparated(self, stream: Stream[watch_pb2.WatchRequest, Any]) -> None:
        request = await self._request(stream)
        if request.cache in (FRAME, TWO_WRITES):
            await send_prepared(stream, self.cache.writes(request, separated=True))
            return
        for message in self.cache.watch_separated(request):
            await stream.send_message(message)


async def send_prepared(stream: Stream[Any, Any], messages: list[tuple[bytes, ...]]) -> None:
    """Write prepared gRPC frames (each message in one or two writes) on a grpclib stream.

    What ``Stream.send_message`` does after encoding, without encoding: grpclib's
    own ``send_message`` builds ``prefix + payload`` per call
    (grpclib/stream.py), so this is where the seed's frame cache plugs in. It
    uses grpclib internals (``_stream``, its counters); tests pin the bytes."""
    if not stream._send_initial_metadata_done:
        await stream.send_initial_metadata()
    h2_stream = stream._stream
    for writes in messages:
        for data in writes:
            await h2_stream.send_data(data)
        stream._messages_sent += 1
    stream._send_message_done = True
