"""Services used only by tests, loaded as ``tests.support.services:NAME``.

``SLOW`` answers SayHello after ``delay_ms`` (a known service time, so deadline
and latency expectations are computable); ``CRASHING`` fails while the server
registers it, to exercise start-up failure reporting.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import grpc

from grpcbench.proto import helloworld_pb2, helloworld_pb2_grpc
from grpcbench.services import hello
from grpcbench.services.base import ServiceDefinition
from grpcbench.services.params import Param


def _delay_s(params: Mapping[str, Any]) -> float:
    return float(params.get("delay_ms", 0)) / 1000


class SlowGrpcio(helloworld_pb2_grpc.GreeterServicer):
    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s

    def SayHello(self, request: Any, context: grpc.ServicerContext) -> Any:
        time.sleep(self.delay_s)
        return helloworld_pb2.HelloReply(message="slow")


class SlowAio(helloworld_pb2_grpc.GreeterServicer):
    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s

    async def SayHello(self, request: Any, context: Any) -> Any:  # type: ignore[override]
        await asyncio.sleep(self.delay_s)
        return helloworld_pb2.HelloReply(message="slow")


class SlowGrpclib(hello.GrpclibGreeter):
    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s

    async def SayHello(self, stream: Any) -> None:
        await stream.recv_message()
        await asyncio.sleep(self.delay_s)
        await stream.send_message(helloworld_pb2.HelloReply(message="slow"))


SLOW = replace(
    hello.SERVICE,
    name="slow",
    register_grpcio=lambda server, params: helloworld_pb2_grpc.add_GreeterServicer_to_server(
        SlowGrpcio(_delay_s(params)), server
    ),
    register_aio=lambda server, params: helloworld_pb2_grpc.add_GreeterServicer_to_server(
        SlowAio(_delay_s(params)), server
    ),
    grpclib_handlers=lambda params: [SlowGrpclib(_delay_s(params))],
    server_params={"delay_ms": Param(float, "service time of every call", minimum=0)},
)


def _crash(*_: Any) -> Any:
    raise RuntimeError("boom: this service fails on purpose during start-up")


CRASHING = replace(
    hello.SERVICE,
    name="crashing",
    register_grpcio=_crash,
    register_aio=_crash,
    grpclib_handlers=_crash,
)


class PeerLoggingGrpcio(helloworld_pb2_grpc.GreeterServicer):
    """Appends the caller's address (one per client connection) to a file, then waits."""

    def __init__(self, path: str, delay_s: float) -> None:
        self.path = path
        self.delay_s = delay_s
        self.lock = threading.Lock()

    def SayHello(self, request: Any, context: grpc.ServicerContext) -> Any:
        with self.lock, open(self.path, "a") as log:
            log.write(context.peer() + "\n")
        time.sleep(self.delay_s)
        return helloworld_pb2.HelloReply(message="logged")


# Sync grpcio only: the connection-strategy tests count connections by peer address.
PEERS = replace(
    hello.SERVICE,
    name="peers",
    register_grpcio=lambda server, params: helloworld_pb2_grpc.add_GreeterServicer_to_server(
        PeerLoggingGrpcio(str(params["peer_log"]), _delay_s(params)), server
    ),
    server_params={
        "peer_log": Param(str, "file the callers' addresses are appended to"),
        "delay_ms": Param(float, "service time of every call", minimum=0),
    },
)


# --- CPU burners, for the verdict tests ----------------------------------------------------


def burn(seconds: float) -> None:
    """Busy-wait on this thread's CPU for ``seconds`` (CPU time, not wall time)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


class BurningAio(helloworld_pb2_grpc.GreeterServicer):
    """Spends ``burn_ms`` of server CPU per call (the event loop is blocked meanwhile)."""

    def __init__(self, burn_s: float) -> None:
        self.burn_s = burn_s

    async def SayHello(self, request: Any, context: Any) -> Any:  # type: ignore[override]
        burn(self.burn_s)
        return helloworld_pb2.HelloReply(message="burnt")


class BurningGrpcio(helloworld_pb2_grpc.GreeterServicer):
    """The sync twin of ``BurningAio`` (its worker thread busy meanwhile)."""

    def __init__(self, burn_s: float) -> None:
        self.burn_s = burn_s

    def SayHello(self, request: Any, context: Any) -> Any:
        burn(self.burn_s)
        return helloworld_pb2.HelloReply(message="burnt")


# grpc.aio and sync grpcio: a servicer that burns server CPU on every call.
SERVER_BURNER = replace(
    hello.SERVICE,
    name="server-burner",
    register_aio=lambda server, params: helloworld_pb2_grpc.add_GreeterServicer_to_server(
        BurningAio(float(params.get("burn_ms", 2)) / 1000), server
    ),
    register_grpcio=lambda server, params: helloworld_pb2_grpc.add_GreeterServicer_to_server(
        BurningGrpcio(float(params.get("burn_ms", 2)) / 1000), server
    ),
    server_params={"burn_ms": Param(float, "server CPU per call", minimum=0)},
)


class BurningWorkload(hello.SayHelloWorkload):
    """SayHello, then ``burn_ms`` of generator CPU per call."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__({})
        self.burn_s = float(params.get("burn_ms", 2)) / 1000

    def bind(self, channel: grpc.aio.Channel) -> Any:
        call = super().bind(channel)

        async def burning(timeout: float) -> None:
            await call(timeout)
            burn(self.burn_s)

        return burning


CLIENT_BURNER = replace(
    hello.SERVICE,
    name="client-burner",
    workload=BurningWorkload,
    workload_params={"burn_ms": Param(float, "generator CPU per call", minimum=0)},
)


class NoisyWorkload(hello.SayHelloWorkload):
    """SayHello, and on every call a line on stdout, a log record and a raw write to fd 1:
    none of it may reach the generator's event pipe."""

    def bind(self, channel: grpc.aio.Channel) -> Any:
        import logging
        import os

        call = super().bind(channel)
        logging.basicConfig(level=logging.INFO, stream=sys.stdout)
        log = logging.getLogger("noisy")

        async def noisy(timeout: float) -> None:
            print('{"event": "result", "looks": "like ours"}')
            log.info("a call")
            os.write(1, b"raw bytes on fd 1\n")
            await call(timeout)

        return noisy


NOISY = replace(hello.SERVICE, name="noisy", workload=NoisyWorkload, workload_params={})


class RejectingAio(helloworld_pb2_grpc.GreeterServicer):
    """Ends every call with one status and message: an error path to benchmark."""

    async def SayHello(self, request: Any, context: Any) -> Any:  # type: ignore[override]
        await context.abort(grpc.StatusCode.UNAVAILABLE, "rejected by the test service")


# grpc.aio only: every call ends Unavailable (--expect-status).
REJECTING = replace(
    hello.SERVICE,
    name="rejecting",
    servicers={"grpcio-aio": lambda server, params: None},
    register_grpcio=None,
    grpclib_handlers=None,
    register_aio=lambda server, params: helloworld_pb2_grpc.add_GreeterServicer_to_server(
        RejectingAio(), server
    ),
)


# --- A server whose error rate rises above a known rate, for capacity's error budget --------


class RateLimitedGrpcio(helloworld_pb2_grpc.GreeterServicer):
    """Answers up to ``limit_rps`` calls per second (a token bucket holding 50 ms of
    calls); the calls beyond fail ResourceExhausted at once, as a rate limiter does."""

    def __init__(self, limit_rps: float) -> None:
        self.rate = limit_rps
        self.burst = max(1.0, limit_rps * 0.05)
        self.tokens = self.burst
        self.refilled = time.monotonic()
        self.lock = threading.Lock()

    def SayHello(self, request: Any, context: grpc.ServicerContext) -> Any:
        with self.lock:
            now = time.monotonic()
            self.tokens = min(self.burst, self.tokens + (now - self.refilled) * self.rate)
            self.refilled = now
            allowed = self.tokens >= 1
            if allowed:
                self.tokens -= 1
        if not allowed:
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "over the rate limit")
        return helloworld_pb2.HelloReply(message="ok")


RATE_LIMITED = replace(
    hello.SERVICE,
    name="rate-limited",
    register_grpcio=lambda server, params: helloworld_pb2_grpc.add_GreeterServicer_to_server(
        RateLimitedGrpcio(float(params["limit_rps"])), server
    ),
    server_params={"limit_rps": Param(float, "calls per second answered OK", minimum=1)},
)


# grpc.aio's servicers only: a kind that reuses grpcio's is refused for it.
AIO_ONLY = ServiceDefinition(
    name="aio-only",
    service_names=hello.SERVICE.service_names,
    servicers={"grpcio-aio": hello.SERVICE.servicers["grpcio-aio"]},
    workload=hello.SERVICE.workload,
)
