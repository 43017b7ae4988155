"""The schema of a method to call: from a .proto, a protoset, or the server's reflection.

Whatever the source, the result is one serialized ``FileDescriptorSet`` (the
method's file and everything it imports). That one form crosses process
boundaries (generator processes build their messages from it) and goes to ghz
as ``--protoset``, so both drivers send exactly the same messages. Parsing is
protobuf's own: grpcio-tools' protoc, the descriptor pool, grpcio-reflection's
descriptor database. No home-made parser.
"""

from __future__ import annotations

import difflib
import json
import os
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FileDescriptor, MethodDescriptor

from grpcbench.base.errors import UsageError
from grpcbench.rpc.security import ChannelSecurity

MethodType = Literal["unary", "server-streaming", "client-streaming", "bidi"]
REFLECTION_TIMEOUT_S = 10.0


def parse_call_name(text: str) -> str:
    """``pkg.Service/Method`` or ghz's ``pkg.Service.Method`` -> ``pkg.Service/Method``."""
    value = text.strip().lstrip("/")
    if "/" in value:
        service, _, method = value.partition("/")
    else:
        service, _, method = value.rpartition(".")
    if not service or not method or "/" in method or " " in value:
        raise UsageError(
            f"bad --call {text!r}: expected package.Service/Method (or package.Service.Method)"
        )
    return f"{service}/{method}"


def compile_proto(proto: str, import_paths: Sequence[str] = (), source_info: bool = False) -> bytes:
    """A .proto compiled with grpcio-tools' protoc into a descriptor set (imports included;
    with ``source_info``, its comments too, for ``describe``)."""
    try:
        import grpc_tools
        from grpc_tools import protoc
    except ImportError:
        raise UsageError(
            "--proto needs grpcio-tools: pip install 'grpcbench[proto]' (or give --protoset)"
        ) from None
    for directory in import_paths:
        if not Path(directory).is_dir():
            raise UsageError(f"--import-paths {directory}: no such directory")
    # As ghz (and protoc) do: the path as given, else relative to an import path.
    candidates = [Path(proto), *(Path(d) / proto for d in import_paths)]
    path = next((c for c in candidates if c.is_file()), None)
    if path is None:
        searched = f" (nor under --import-paths {', '.join(import_paths)})" if import_paths else ""
        raise UsageError(f"--proto {proto}: no such file{searched}")
    # protoc wants the file relative to an import path: its own directory comes
    # first unless the user's paths already contain it (as ghz does).
    includes = [str(Path(d).resolve()) for d in import_paths]
    resolved = path.resolve()
    root = next((d for d in includes if resolved.is_relative_to(d)), None)
    if root is None:
        root = str(resolved.parent)
        includes.insert(0, root)
    well_known = Path(grpc_tools.__file__).parent / "_proto"
    with tempfile.TemporaryDirectory(prefix="grpcbench-proto-") as workdir:
        output = Path(workdir) / "set.pb"
        argv = [
            "protoc",
            *(f"-I{d}" for d in includes),
            f"-I{well_known}",
            f"--descriptor_set_out={output}",
            "--include_imports",
            *(["--include_source_info"] if source_info else []),
            str(resolved.relative_to(root)),
        ]
        errors = _capture_stderr(lambda: protoc.main(argv))
        if not output.is_file():
            first = next((line for line in errors.splitlines() if line.strip()), "protoc failed")
            raise UsageError(f"--proto {proto}: {first}")
        compiled: bytes = output.read_bytes()
        return compiled


def _capture_stderr(run: Any) -> str:
    """protoc writes its errors to file descriptor 2; keep them for the one-line message."""
    with tempfile.TemporaryFile() as captured:
        saved = os.dup(2)
        try:
            os.dup2(captured.fileno(), 2)
            run()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        return captured.read().decode(errors="replace")


def read_protoset(path: str) -> bytes:
    from grpcbench.base.input_files import read_input_bytes

    data = read_input_bytes(path, "--protoset")
    try:
        descriptor_pb2.FileDescriptorSet.FromString(data)
    except Exception:  # protobuf's DecodeError and friends
        raise UsageError(f"--protoset {path}: not a FileDescriptorSet") from None
    return data


def did_you_mean(name: str, names: list[str]) -> str:
    """ ", did you mean X?" for the closest of ``names``, or "" when none is close."""
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


@contextmanager
def reflection_database(
    address: str, security: ChannelSecurity, metadata: str = "{}"
) -> Iterator[tuple[Any, list[str]]]:
    """The server's reflection service as a descriptor database, and the services it
    lists (sorted), while the channel is open; ``metadata`` (a JSON object, ghz's
    --reflect-metadata) goes with its requests. Each failure is one line."""
    import grpc
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
        ProtoReflectionDescriptorDatabase,
    )

    from grpcbench.rpc.reflection_metadata import with_metadata

    raw = security.sync_channel(address)
    try:
        _wait_ready(raw, address, security)
        channel = with_metadata(raw, json.loads(metadata), REFLECTION_TIMEOUT_S)
        database = ProtoReflectionDescriptorDatabase(channel)
        try:
            services = sorted(database.get_services())
        except grpc.RpcError as error:
            raise _reflection_failed(address, error, "has no reflection service") from None
        try:
            yield database, services
        except grpc.RpcError as error:  # a lookup (a service's file) failed
            raise _reflection_failed(address, error, "'s reflection service failed") from None
    finally:
        raw.close()


def _wait_ready(raw: Any, address: str, security: ChannelSecurity) -> None:
    """Return once ``raw`` is connected. Its first failure asks whether TLS is the cause
    (a handshake of our own, milliseconds): a plaintext/TLS mismatch is then said at once,
    not after grpc's retries have run out the time."""
    import queue

    import grpc

    states: queue.Queue[Any] = queue.Queue()
    seen = states.put
    raw.subscribe(seen, try_to_connect=True)
    deadline = time.monotonic() + REFLECTION_TIMEOUT_S
    asked = False
    try:
        while (left := deadline - time.monotonic()) > 0:
            try:
                state = states.get(timeout=left)
            except queue.Empty:
                break
            if state is grpc.ChannelConnectivity.READY:
                return
            if state is grpc.ChannelConnectivity.TRANSIENT_FAILURE and not asked:
                asked = True
                trouble = _tls_trouble(address, security)
                if trouble:
                    raise UsageError(trouble)
    finally:
        raw.unsubscribe(seen)
    raise UsageError(
        (None if asked else _tls_trouble(address, security))
        or f"cannot reach target {address} to ask its reflection service"
        f" (no HTTP/2 answer within {REFLECTION_TIMEOUT_S:g} s)"
    )


def _reflection_failed(address: str, error: Any, what: str) -> UsageError:
    """One line for a reflection request that failed: that it met its deadline, else
    ``what`` happened, with the status, and what to give instead."""
    import grpc

    if error.code() is grpc.StatusCode.DEADLINE_EXCEEDED:
        return UsageError(
            f"the target {address} did not answer its reflection request within"
            f" {REFLECTION_TIMEOUT_S:g} s"
        )
    separator = "" if what.startswith("'") else " "
    return UsageError(
        f"the target {address}{separator}{what} ({error.code().name}): give --proto or --protoset"
    )


def _tls_trouble(address: str, security: ChannelSecurity) -> str | None:
    """Why a connection failed, when its TLS handshake (or its absence) says so (not
    asked inside a running event loop: there the pre-flight call explains it)."""
    import asyncio

    from grpcbench.rpc.security import tls_failure

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(tls_failure(address, security, ""))
    return None


def reflect(address: str, security: ChannelSecurity, service: str, metadata: str = "{}") -> bytes:
    """The service's files (and their imports) from the server's reflection service."""
    with reflection_database(address, security, metadata) as (database, services):
        if service not in services:
            listed = ", ".join(services) or "none"
            raise UsageError(
                f"the target does not offer service {service}{did_you_mean(service, services)}"
                f" (its reflection lists: {listed})"
            )
        pool = descriptor_pool.DescriptorPool(database)
        found = pool.FindServiceByName(service)
        serialized: bytes = _file_set(found.file).SerializeToString()
        return serialized


def _file_set(file: FileDescriptor) -> descriptor_pb2.FileDescriptorSet:
    """``file`` and everything it imports, dependencies first."""
    ordered: list[FileDescriptor] = []
    seen: set[str] = set()

    def visit(current: FileDescriptor) -> None:
        if current.name in seen:
            return
        seen.add(current.name)
        for dependency in current.dependencies:
            visit(dependency)
        ordered.append(current)

    visit(file)
    files = descriptor_pb2.FileDescriptorSet()
    for current in ordered:
        current.CopyToProto(files.file.add())
    return files


@dataclass(frozen=True)
class MethodSchema:
    """One method of a descriptor set: its method type and message classes."""

    call: str  # package.Service/Method
    descriptor_set: bytes

    @cached_property
    def _pool(self) -> descriptor_pool.DescriptorPool:
        files = descriptor_pb2.FileDescriptorSet.FromString(self.descriptor_set)
        pool = descriptor_pool.DescriptorPool()
        for file in files.file:
            pool.Add(file)
        return pool

    @cached_property
    def method(self) -> MethodDescriptor:
        service_name, _, method_name = self.call.partition("/")
        try:
            service = self._pool.FindServiceByName(service_name)
        except KeyError:
            services = [name.partition("/")[0] for name in self.known_methods().split(", ")]
            raise UsageError(
                f"no service {service_name} in the schema{did_you_mean(service_name, services)}"
                f" (methods there: {self.known_methods()})"
            ) from None
        found = service.methods_by_name.get(method_name)
        if found is None:
            raise UsageError(
                f"no method {method_name} in service {service_name}"
                f"{did_you_mean(method_name, list(service.methods_by_name))}"
                f" (methods there: {self.known_methods()})"
            )
        return found

    def known_methods(self) -> str:
        files = descriptor_pb2.FileDescriptorSet.FromString(self.descriptor_set)
        names = [
            f"{file.package + '.' if file.package else ''}{service.name}/{method.name}"
            for file in files.file
            for service in file.service
            for method in service.method
        ]
        return ", ".join(names) or "none"

    @property
    def method_type(self) -> MethodType:
        method = self.method
        client, server = method.client_streaming, method.server_streaming
        if client and server:
            return "bidi"
        if client:
            return "client-streaming"
        if server:
            return "server-streaming"
        return "unary"

    @property
    def path(self) -> str:
        """The HTTP/2 path a call goes to: ``/package.Service/Method``."""
        return "/" + self.call

    @cached_property
    def request_class(self) -> Any:
        return message_factory.GetMessageClass(self.method.input_type)

    @cached_property
    def reply_class(self) -> Any:
        return message_factory.GetMessageClass(self.method.output_type)
