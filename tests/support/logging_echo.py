"""examples/echo's echo.Echo, served generically and logging every call it serves.

Each call is logged as (method, request message bytes), so a test can count what
the server saw per method and per data line, not what a client reports. A unary
``Say`` replies with its request's message (so a chain can read it back), and one
whose request holds ``fail`` ends NotFound, so a mix can have one method whose
calls fail on purpose; ``Chat`` does the same per message, and logs each stream's
requests in order. It runs in the test process (sync grpcio on threads).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import grpc

from tests.support.serving import served

EXPAND_REPLIES = 3


class EchoLog:
    def __init__(self) -> None:
        self.calls: list[tuple[str, bytes]] = []
        self.arrivals: list[float] = []  # time.monotonic() of each call, in order
        self.metadata: list[dict[str, str]] = []  # each Say call's, in order
        self.chats: list[list[bytes]] = []  # each Chat stream's requests, in order
        self.lock = threading.Lock()

    def add(self, method: str, request: bytes) -> None:
        with self.lock:
            self.calls.append((method, request))
            self.arrivals.append(time.monotonic())

    def methods(self) -> Counter[str]:
        with self.lock:
            return Counter(method for method, _ in self.calls)

    def requests(self, method: str) -> Counter[bytes]:
        with self.lock:
            return Counter(request for name, request in self.calls if name == method)


def _handlers(log: EchoLog) -> grpc.GenericRpcHandler:
    def say(request: bytes, context: grpc.ServicerContext) -> bytes:
        log.add("Say", request)
        with log.lock:
            log.metadata.append({k: str(v) for k, v in context.invocation_metadata()})
        if b"fail" in request:
            context.abort(grpc.StatusCode.NOT_FOUND, "no such message")
        return request  # EchoReply's field 1 is EchoRequest's: the message comes back

    def expand(request: bytes, context: grpc.ServicerContext) -> Iterator[bytes]:
        log.add("Expand", request)
        yield from (b"" for _ in range(EXPAND_REPLIES))

    def collect(requests: Iterator[bytes], context: grpc.ServicerContext) -> bytes:
        log.add("Collect", b"".join(requests))
        return b""

    def chat(requests: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[bytes]:
        conversation: list[bytes] = []
        with log.lock:
            log.chats.append(conversation)
        for request in requests:
            log.add("Chat", request)
            conversation.append(request)
            if b"fail" in request:
                context.abort(grpc.StatusCode.NOT_FOUND, "no such message")
            yield request  # each message back as it comes, as Say's

    identity: Any = None
    return grpc.method_handlers_generic_handler(
        "echo.Echo",
        {
            "Say": grpc.unary_unary_rpc_method_handler(say, identity, identity),
            "Expand": grpc.unary_stream_rpc_method_handler(expand, identity, identity),
            "Collect": grpc.stream_unary_rpc_method_handler(collect, identity, identity),
            "Chat": grpc.stream_stream_rpc_method_handler(chat, identity, identity),
        },
    )


@contextmanager
def logging_echo() -> Iterator[tuple[str, EchoLog]]:
    """Serve echo.Echo on 127.0.0.1 (no reflection: give --proto); yields its address and log."""
    log = EchoLog()
    with served(lambda server: server.add_generic_rpc_handlers((_handlers(log),))) as address:
        yield address, log
