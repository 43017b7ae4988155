"""helloworld.Greeter that logs every call it serves: the name, the metadata and the peer.

It runs in the test process (sync grpcio on threads, with reflection), so two
clients can be given the same command line and the calls each one made compared
as the server saw them, not as the clients report them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
from grpc_reflection.v1alpha import reflection

from grpcbench.proto import helloworld_pb2, helloworld_pb2_grpc
from tests.support.serving import served

# Metadata the transports add themselves, not what a command line asked for.
TRANSPORT_KEYS = ("user-agent", "grpc-accept-encoding", "grpc-encoding", "te", "content-type")


@dataclass(frozen=True)
class SeenCall:
    name: str
    metadata: dict[str, str]
    peer: str  # the connection: "ipv4:127.0.0.1:PORT"


@dataclass
class CallLog:
    calls: list[SeenCall] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self) -> list[SeenCall]:
        with self.lock:
            taken, self.calls = self.calls, []
        return taken


class _Greeter(helloworld_pb2_grpc.GreeterServicer):
    def __init__(self, log: CallLog) -> None:
        self.log = log

    def SayHello(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        metadata = {
            key: value
            for key, value in context.invocation_metadata()
            if key not in TRANSPORT_KEYS and isinstance(value, str)
        }
        with self.log.lock:
            self.log.calls.append(SeenCall(request.name, metadata, context.peer()))
        return helloworld_pb2.HelloReply(message=f"Hello {request.name}")


@contextmanager
def logging_greeter() -> Iterator[tuple[str, CallLog]]:
    """Serve helloworld.Greeter (with reflection) on 127.0.0.1; yields its address and log."""
    log = CallLog()
    names = (
        helloworld_pb2.DESCRIPTOR.services_by_name["Greeter"].full_name,
        reflection.SERVICE_NAME,
    )

    def register(server: grpc.Server) -> None:
        helloworld_pb2_grpc.add_GreeterServicer_to_server(_Greeter(log), server)
        reflection.enable_server_reflection(names, server)

    with served(register) as address:
        yield address, log
