"""A server for any schema: every method of the given .proto files, with reflection.

Conformance suites call ghz's documented methods (helloworld.Greeter's four
kinds, routeguide.RouteGuide, bytes.ImageService, wrapped.WrappedService) and
care only about what the server received, which the recording proxy in front of
this server sees. So each method answers with empty replies (valid for every
message type): one for a unary or client-streaming call, ``STREAM_REPLIES`` for a
server stream, one per request for a bidi stream.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc

from grpcbench.rpc.schema import compile_proto
from tests.support.serving import served

STREAM_REPLIES = 3


def _handler(client_streaming: bool, server_streaming: bool) -> grpc.RpcMethodHandler:
    def unary(request: bytes, context: Any) -> bytes:
        return b""

    def server_stream(request: bytes, context: Any) -> Iterator[bytes]:
        yield from [b""] * STREAM_REPLIES

    def client_stream(requests: Iterator[bytes], context: Any) -> bytes:
        for _ in requests:
            pass
        return b""

    def bidi(requests: Iterator[bytes], context: Any) -> Iterator[bytes]:
        for _ in requests:
            yield b""

    if client_streaming and server_streaming:
        return grpc.stream_stream_rpc_method_handler(bidi)
    if client_streaming:
        return grpc.stream_unary_rpc_method_handler(client_stream)
    if server_streaming:
        return grpc.unary_stream_rpc_method_handler(server_stream)
    return grpc.unary_unary_rpc_method_handler(unary)


class _Reflection(reflection.ReflectionServicer):  # type: ignore[misc]
    """grpcio's reflection, resolving a method's name to its service's file as
    grpc-go's does (ghz asks for ``pkg.Service.Method``; grpcio answers NOT_FOUND)."""

    def _file_containing_symbol(self, request: Any, name: str) -> Any:
        try:
            self._pool.FindFileContainingSymbol(name)
        except KeyError:
            service = name.rpartition(".")[0]
            try:
                self._pool.FindServiceByName(service).methods_by_name[name.rpartition(".")[2]]
            except KeyError:
                pass
            else:
                name = service
        return super()._file_containing_symbol(request, name)


def schema_pool(protos: Sequence[tuple[str, Sequence[str]]]) -> descriptor_pool.DescriptorPool:
    """The descriptor pool of (proto file, import paths) pairs, compiled by protoc."""
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()
    for proto, paths in protos:
        files = descriptor_pb2.FileDescriptorSet.FromString(compile_proto(proto, paths))
        for file in files.file:
            if file.name not in added:
                pool.Add(file)
                added.add(file.name)
    return pool


@contextmanager
def any_method_server(
    protos: Sequence[tuple[str, Sequence[str]]], services: Sequence[str]
) -> Iterator[tuple[str, descriptor_pool.DescriptorPool]]:
    """Serve ``services`` (full names) from ``protos`` on 127.0.0.1, with reflection;
    yields the address and the pool (to decode what was sent)."""
    pool = schema_pool(protos)

    def register(server: grpc.Server) -> None:
        for name in services:
            service = pool.FindServiceByName(name)
            handlers = {
                method.name: _handler(method.client_streaming, method.server_streaming)
                for method in service.methods
            }
            server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))
        servicer = _Reflection([*services, reflection.SERVICE_NAME], pool=pool)
        reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)

    with served(register) as address:
        yield address, pool
