"""Seed 002's network-I/O scenarios: S3 object listing (unary, streaming) and S3 + MongoDB.

- ``ListObjects``: every object of the bucket/prefix (key, size, etag,
  last-modified) in one reply;
- ``StreamObjects``: the same listing, one message per object;
- ``SaveObjects``: the listing saved into MongoDB; replies how many were written.

Sync grpcio uses boto3 and PyMongo; the async servers use aioboto3 and PyMongo's
``AsyncMongoClient`` (or Motor, ``mongo_driver = "motor"``, as in the seed).
Clients are created once per server process, never per request, with
connection pools sized by ``pool_size`` (aiobotocore's default of 10 would cap
concurrency silently). ``io_delay_ms`` adds a simulated upstream round trip
before each S3 call: a blocking sleep in sync servers, an awaited one in async
servers - what a slow, far-away S3 does to each model.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import AsyncExitStack, ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grpcbench.base.errors import UsageError
from grpcbench.contract.calls import CallStats, ReplyCounter, WorkloadError
from grpcbench.proto import objects_pb2
from grpcbench.services.base import ServiceDefinition, generated_routes
from grpcbench.services.params import Param

if TYPE_CHECKING:
    import grpc
    from grpclib.server import Stream

DEFAULT_POOL_SIZE = 100


def _info(item: Mapping[str, Any]) -> objects_pb2.ObjectInfo:
    return objects_pb2.ObjectInfo(
        key=item["Key"],
        size=int(item["Size"]),
        etag=str(item.get("ETag", "")).strip('"'),
        last_modified=int(item["LastModified"].timestamp()),
    )


def _document(info: objects_pb2.ObjectInfo) -> dict[str, Any]:
    return {
        "key": info.key,
        "size": info.size,
        "etag": info.etag,
        "last_modified": info.last_modified,
    }


def _bucket(request: objects_pb2.ListObjectsRequest, params: Mapping[str, Any]) -> str:
    return request.bucket or str(params["s3_bucket"])


def _botocore_config(params: Mapping[str, Any]) -> Any:
    from botocore.config import Config

    return Config(max_pool_connections=int(params.get("pool_size", DEFAULT_POOL_SIZE)))


def _credentials(params: Mapping[str, Any]) -> dict[str, str]:
    from grpcbench.backing.s3 import EMBEDDED_CREDENTIALS

    return dict(EMBEDDED_CREDENTIALS) if params.get("s3_embedded") else {}


# --- sync grpcio: boto3 + PyMongo ------------------------------------------------------


class SyncBackends:
    def __init__(self, params: Mapping[str, Any]) -> None:
        import boto3
        from pymongo import MongoClient

        from grpcbench.backing.s3 import REGION

        self.params = params
        self.delay_s = float(params.get("io_delay_ms", 0)) / 1000
        self.s3 = boto3.client(
            "s3", endpoint_url=params["s3_endpoint"], region_name=REGION,
            config=_botocore_config(params), **_credentials(params),
        )  # fmt: skip
        self.mongo: Any = (
            MongoClient(params["mongo_uri"], maxPoolSize=int(params.get("pool_size", 100)))
            if params.get("mongo_uri")
            else None
        )

    def list_objects(
        self, request: objects_pb2.ListObjectsRequest
    ) -> Iterator[objects_pb2.ObjectInfo]:
        if self.delay_s:
            time.sleep(self.delay_s)
        pages = self.s3.get_paginator("list_objects_v2").paginate(
            Bucket=_bucket(request, self.params), Prefix=request.prefix
        )
        for page in pages:
            for item in page.get("Contents", []):
                yield _info(item)

    def save_objects(self, infos: list[objects_pb2.ObjectInfo]) -> int:
        assert self.mongo is not None, "SaveObjects needs a MongoDB (mongo_uri)"
        from grpcbench.backing.mongo import COLLECTION, DATABASE

        if infos:
            self.mongo[DATABASE][COLLECTION].insert_many([_document(i) for i in infos])
        return len(infos)


class GrpcioObjects:
    def __init__(self, params: Mapping[str, Any]) -> None:
        self.backends = SyncBackends(params)

    def ListObjects(self, request: Any, context: grpc.ServicerContext) -> Any:
        return objects_pb2.ListObjectsResponse(objects=list(self.backends.list_objects(request)))

    def StreamObjects(self, request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        yield from self.backends.list_objects(request)

    def SaveObjects(self, request: Any, context: grpc.ServicerContext) -> Any:
        return objects_pb2.SaveObjectsResponse(
            saved=self.backends.save_objects(list(self.backends.list_objects(request)))
        )


# --- async servers: aioboto3 + AsyncMongoClient (or Motor) -------------------------------


class AsyncBackends:
    """Created on the server's event loop at the first call, then shared by all calls."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.params = params
        self.delay_s = float(params.get("io_delay_ms", 0)) / 1000
        self.lock = threading.Lock()
        self.ready: asyncio.Future[None] | None = None
        self.stack = AsyncExitStack()
        self.s3: Any = None
        self.mongo: Any = None

    async def _open(self) -> None:
        import aioboto3

        from grpcbench.backing.s3 import REGION

        session = aioboto3.Session()
        self.s3 = await self.stack.enter_async_context(
            session.client(
                "s3",
                endpoint_url=self.params["s3_endpoint"],
                region_name=REGION,
                config=_botocore_config(self.params),
                **_credentials(self.params),
            )  # fmt: skip
        )
        uri = self.params.get("mongo_uri")
        if uri:
            pool = int(self.params.get("pool_size", 100))
            if self.params.get("mongo_driver", "pymongo") == "motor":
                from motor.motor_asyncio import AsyncIOMotorClient

                self.mongo = AsyncIOMotorClient(uri, maxPoolSize=pool)
            else:
                from pymongo import AsyncMongoClient

                self.mongo = AsyncMongoClient(uri, maxPoolSize=pool)

    async def open(self) -> None:
        if self.ready is None:
            self.ready = asyncio.ensure_future(self._open())
        await asyncio.shield(self.ready)

    async def list_objects(self, request: objects_pb2.ListObjectsRequest) -> AsyncIterator[Any]:
        await self.open()
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        paginator = self.s3.get_paginator("list_objects_v2")
        async for page in paginator.paginate(
            Bucket=_bucket(request, self.params), Prefix=request.prefix
        ):
            for item in page.get("Contents", []):
                yield _info(item)

    async def save_objects(self, infos: list[objects_pb2.ObjectInfo]) -> int:
        assert self.mongo is not None, "SaveObjects needs a MongoDB (mongo_uri)"
        from grpcbench.backing.mongo import COLLECTION, DATABASE

        if infos:
            await self.mongo[DATABASE][COLLECTION].insert_many([_document(i) for i in infos])
        return len(infos)


class AioObjects:
    def __init__(self, params: Mapping[str, Any]) -> None:
        self.backends = AsyncBackends(params)

    async def ListObjects(self, request: Any, context: Any) -> Any:
        return objects_pb2.ListObjectsResponse(
            objects=[info async for info in self.backends.list_objects(request)]
        )

    async def StreamObjects(self, request: Any, context: Any) -> AsyncIterator[Any]:
        async for info in self.backends.list_objects(request):
            yield info

    async def SaveObjects(self, request: Any, context: Any) -> Any:
        infos = [info async for info in self.backends.list_objects(request)]
        return objects_pb2.SaveObjectsResponse(saved=await self.backends.save_objects(infos))


class GrpclibObjects:
    def __init__(self, params: Mapping[str, Any]) -> None:
        self.backends = AsyncBackends(params)

    def __mapping__(self) -> dict[str, Any]:
        return generated_routes("grpcbench.proto.objects_grpc", "ObjectStoreBase", self)

    async def ListObjects(self, stream: Stream[Any, Any]) -> None:
        request = await stream.recv_message()
        assert request is not None
        infos = [info async for info in self.backends.list_objects(request)]
        await stream.send_message(objects_pb2.ListObjectsResponse(objects=infos))

    async def StreamObjects(self, stream: Stream[Any, Any]) -> None:
        request = await stream.recv_message()
        assert request is not None
        async for info in self.backends.list_objects(request):
            await stream.send_message(info)

    async def SaveObjects(self, stream: Stream[Any, Any]) -> None:
        request = await stream.recv_message()
        assert request is not None
        infos = [info async for info in self.backends.list_objects(request)]
        saved = await self.backends.save_objects(infos)
        await stream.send_message(objects_pb2.SaveObjectsResponse(saved=saved))


# --- client ------------------------------------------------------------------------------


class ObjectsWorkload:
    """``mode``: list (unary), stream, or save; checks the count it gets back."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.mode = str(params.get("mode", "list"))
        if self.mode not in ("list", "stream", "save"):
            raise ValueError(f"unknown objects workload mode {self.mode!r} (list, stream, save)")
        self.expected = int(params["objects"]) if "objects" in params else None
        self.request = objects_pb2.ListObjectsRequest(prefix=str(params.get("prefix", "")))

    def _check(self, count: int) -> None:
        if self.expected is not None and count != self.expected:
            raise WorkloadError(f"got {count} objects, the bucket holds {self.expected}")

    def bind(self, channel: grpc.aio.Channel) -> Any:
        serialize = objects_pb2.ListObjectsRequest.SerializeToString
        if self.mode == "stream":
            method: Any = channel.unary_stream(
                "/objects.ObjectStore/StreamObjects", request_serializer=serialize,
                response_deserializer=objects_pb2.ObjectInfo.FromString,
            )  # fmt: skip

            async def stream_call(timeout: float) -> CallStats:
                replies = ReplyCounter()
                async for info in method(self.request, timeout=timeout):
                    replies.add(info)
                self._check(replies.messages)
                return replies.stats(items=replies.messages)

            return stream_call
        name, reply = (
            ("ListObjects", objects_pb2.ListObjectsResponse)
            if self.mode == "list"
            else ("SaveObjects", objects_pb2.SaveObjectsResponse)
        )
        unary = channel.unary_unary(
            f"/objects.ObjectStore/{name}", request_serializer=serialize,
            response_deserializer=reply.FromString,
        )  # fmt: skip

        async def unary_call(timeout: float) -> CallStats:
            replies = ReplyCounter()
            response = await unary(self.request, timeout=timeout)
            replies.add(response)
            count = len(response.objects) if self.mode == "list" else response.saved
            self._check(count)
            return replies.stats(items=count)

        return unary_call


# --- backing services -------------------------------------------------------------------------


def json_request(params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    mode = ObjectsWorkload(params).mode
    method = {"list": "ListObjects", "stream": "StreamObjects", "save": "SaveObjects"}[mode]
    return f"objects.ObjectStore.{method}", {"prefix": str(params.get("prefix", ""))}


def prepare(params: Mapping[str, Any], workdir: Path, stack: ExitStack) -> dict[str, Any]:
    from grpcbench.backing.mongo import provide_mongo
    from grpcbench.backing.s3 import provide_s3

    if params.get("mongo_uri") and not params.get("needs_mongo"):
        raise UsageError("--mongo-uri: this scenario does not use MongoDB (s3-mongo does)")
    provided = provide_s3(dict(params), stack)
    if params.get("needs_mongo"):
        provided = provide_mongo(provided, stack)
    return provided


def reset(params: Mapping[str, Any]) -> None:
    if params.get("needs_mongo") and params.get("mongo_uri"):
        from grpcbench.backing.mongo import reset_collection

        reset_collection(dict(params))


def _register(server: Any, servicer: GrpcioObjects | AioObjects) -> None:
    from grpcbench.proto import objects_pb2_grpc  # here: a grpclib child never imports grpc

    objects_pb2_grpc.add_ObjectStoreServicer_to_server(servicer, server)


SERVICE = ServiceDefinition(
    name="objects",
    description="objects.ObjectStore: S3 listing (unary, streaming) and S3 + MongoDB save",
    service_names=("objects.ObjectStore",),
    proto="grpcbench/proto/objects.proto",
    register_grpcio=lambda server, params: _register(server, GrpcioObjects(params)),
    register_aio=lambda server, params: _register(server, AioObjects(params)),
    grpclib_handlers=lambda params: [GrpclibObjects(params)],
    workload=ObjectsWorkload,
    json_request=json_request,
    prepare=prepare,
    reset=reset,
    workload_context=lambda params: (
        {"objects": int(params.get("objects", 893))} if params.get("s3_embedded") else {}
    ),
    server_params={
        "objects": Param(int, "objects seeded into the embedded S3 bucket", minimum=0),
        "pool_size": Param(int, "S3 and MongoDB connection pools per server process", minimum=1),
        "io_delay_ms": Param(float, "simulated upstream round trip before each S3 call", minimum=0),
        "needs_mongo": Param(bool, "the scenario saves into MongoDB"),
        "s3_endpoint": Param(
            str, "an S3 (or MinIO) URL instead of the embedded moto", pattern=r"https?://[^/\s]+.*"
        ),
        "s3_bucket": Param(str, "the bucket at s3_endpoint"),
        "mongo_uri": Param(str, "a MongoDB URI instead of the embedded mongo-java-server"),
        "mongo_driver": Param(str, "the async servers' MongoDB driver", ("pymongo", "motor")),
    },
    workload_params={
        "mode": Param(str, "what a call does", ("list", "stream", "save")),
        "prefix": Param(str, "list the objects under this prefix"),
    },
)
