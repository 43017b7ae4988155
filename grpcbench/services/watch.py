"""Seed 004: an etcd-like watch over an in-memory key-value store.

Folders hold ``pairs`` key-value pairs (1000 by default) of ~500 B ("small"),
~5 KB ("medium") or ~50 KB ("large") values. ``Watch`` sends a folder in one
message ("mono"); ``WatchSeparated`` sends one message per pair with part/parts
counters ("separated"). The request picks the server's cache mode:

- ``OBJECTS``: key-value objects turned into messages and serialized per call;
- ``SERIALIZED``: every response serialized once at start-up and its bytes
  sent as they are - through a pass-through serializer for grpcio and
  grpc.aio, through a pass-through codec for grpclib;
- ``FRAME``: the whole gRPC message (5-byte length prefix + payload) built once
  at start-up and written as prepared bytes, one write per message;
- ``TWO_WRITES``: the prefix and the pre-serialized payload written separately
  (two writes per message, no concatenation copy).

The last two exist only where the server writes its own frames: grpclib.
grpcio and grpc.aio frame messages inside C-core, so on those kinds the
variants are "not available on this kind" (``unavailable``), never replaced
by something else under their name. The bytes on the wire (the gRPC message
stream the client reads) are the same in every mode.

The store is ``watch_store``; the servicers are in ``watch_grpcio`` (grpcio,
grpc.aio) and ``watch_grpclib``, each imported where its server kind registers them.

Unlike etcd, a stream ends once the folder is sent, so a call has an end to
time. The seed's headline figures are the server's CPU-seconds and peak RSS.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import psutil

from grpcbench.base.errors import UsageError
from grpcbench.contract.calls import CallStats, ReplyCounter, WorkloadError
from grpcbench.proto import watch_pb2
from grpcbench.services.base import ServiceDefinition
from grpcbench.services.params import Param
from grpcbench.services.watch_store import (
    DEFAULT_PAIRS,
    FRAME,
    SERIALIZED,
    TWO_WRITES,
    VALUE_SIZES,
    FolderCache,
)

if TYPE_CHECKING:
    import grpc

CACHE_MODES = {
    "objects": watch_pb2.CacheMode.OBJECTS,
    "serialized": SERIALIZED,
    "frame": FRAME,
    "two-writes": TWO_WRITES,
}
# Cache modes that write prepared frames, and the server kinds that can.
FRAMED_MODES = ("frame", "two-writes")
FRAMING_KINDS = ("grpclib",)
# A level may use at most this share of the memory available when it starts.
MEMORY_BUDGET = 0.8


# --- servers --------------------------------------------------------------------------


NEEDS_FRAMING = "needs a server that writes its own frames (grpclib); C-core frames messages itself"


def unavailable(kind: str, workload_params: Mapping[str, Any]) -> str | None:
    """Why a level cannot run on a server kind (the framed cache modes need grpclib)."""
    cache = str(workload_params.get("cache", "objects"))
    if cache in FRAMED_MODES and kind not in FRAMING_KINDS:
        return f"cache {cache} {NEEDS_FRAMING}"
    return None


# --- client ------------------------------------------------------------------------------


class WatchWorkload:
    """One call = one folder received completely, checked pair by pair."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.separated = str(params.get("message", "mono")) == "separated"
        cache = str(params.get("cache", "objects"))
        if cache not in CACHE_MODES:
            raise ValueError(f"unknown cache {cache!r} ({', '.join(CACHE_MODES)})")
        self.request = watch_pb2.WatchRequest(
            folder=str(params.get("folder", "small")), cache=CACHE_MODES[cache]
        )

    def bind(self, channel: grpc.aio.Channel) -> Any:
        name = "WatchSeparated" if self.separated else "Watch"
        response = watch_pb2.SeparatedWatchResponse if self.separated else watch_pb2.WatchResponse
        method = channel.unary_stream(
            f"/watch.StreamBench/{name}",
            request_serializer=watch_pb2.WatchRequest.SerializeToString,
            response_deserializer=response.FromString,
        )

        async def call(timeout: float) -> CallStats:
            replies = ReplyCounter()
            items = 0
            async for reply in method(self.request, timeout=timeout):
                replies.add(reply)
                pairs = [reply.kv] if self.separated else list(reply.kv)
                for kv in pairs:
                    items += 1
                    if kv.revision != items:
                        raise WorkloadError(f"pair {kv.revision} arrived as number {items}")
                if self.separated and (reply.part != items or reply.parts < items):
                    raise WorkloadError(f"part {reply.part}/{reply.parts} arrived as {items}")
            if self.separated and replies.messages and items != reply.parts:
                raise WorkloadError(f"received {items} of {reply.parts} parts")
            return replies.stats(items=items)

        return call


def json_request(params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    request = WatchWorkload(params)
    method = "WatchSeparated" if request.separated else "Watch"
    cache = watch_pb2.CacheMode.Name(request.request.cache)
    return f"watch.StreamBench.{method}", {"folder": request.request.folder, "cache": cache}


def check_level(
    server_params: Mapping[str, Any], workload_params: Mapping[str, Any], concurrency: int
) -> None:
    """Refuse a level that would not fit in memory, instead of meeting the OOM killer.

    Each stream may hold a serialized copy of its folder on the server and a
    received and a parsed copy on the client at once.
    """
    folder = str(workload_params.get("folder", "small"))
    pairs = int(server_params.get("pairs", DEFAULT_PAIRS))
    folder_bytes = pairs * VALUE_SIZES.get(folder, 0)
    copies = 1 if workload_params.get("message") == "separated" else 3
    need = concurrency * folder_bytes * copies
    available = psutil.virtual_memory().available
    if need > available * MEMORY_BUDGET:
        raise UsageError(
            f"{concurrency} concurrent watches of the {folder} folder"
            f" ({folder_bytes / 2**20:.0f} MiB each) need about {need / 2**30:.1f} GiB,"
            f" more than {MEMORY_BUDGET:.0%} of the {available / 2**30:.1f} GiB available:"
            " lower --concurrency or use a smaller folder"
        )


# Each server kind's servicers are in their own module, imported where that kind
# registers them: a server child imports its own framework only.


def _register(server: Any, params: Mapping[str, Any], asynchronous: bool) -> None:
    from grpcbench.services.watch_grpcio import AioWatch, GrpcioWatch, generic_handler

    servicer = (AioWatch if asynchronous else GrpcioWatch)(FolderCache(params))
    server.add_generic_rpc_handlers((generic_handler(servicer),))


def _grpclib_handlers(params: Mapping[str, Any]) -> list[Any]:
    from grpcbench.services.watch_grpclib import GrpclibWatch

    return [GrpclibWatch(FolderCache(params, frames=True))]


def _pass_through_codec() -> Any:
    from grpcbench.services.watch_grpclib import PassThroughCodec

    return PassThroughCodec()


SERVICE = ServiceDefinition(
    name="watch",
    description="watch.StreamBench: a KV folder in one message or one message per pair",
    service_names=("watch.StreamBench",),
    proto="grpcbench/proto/watch.proto",
    register_grpcio=lambda server, params: _register(server, params, asynchronous=False),
    register_aio=lambda server, params: _register(server, params, asynchronous=True),
    grpclib_handlers=_grpclib_handlers,
    grpclib_codec=_pass_through_codec,
    workload=WatchWorkload,
    json_request=json_request,
    check_level=check_level,
    unavailable=unavailable,
    server_params={
        "pairs": Param(int, "key-value pairs per folder", minimum=1),
        "folders": Param(list, "folders to build (small, medium, large)"),
    },
    workload_params={
        "message": Param(str, "one big message or one per pair", ("mono", "separated")),
        "folder": Param(str, "the folder to watch", ("small", "medium", "large")),
        "cache": Param(
            str,
            "per-call objects, pre-serialized, whole frames or prefix and payload in two writes"
            " (frame and two-writes: grpclib only)",
            tuple(CACHE_MODES),
        ),
    },
)
