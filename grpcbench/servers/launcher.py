"""Start a server subprocess, wait until it is really ready, stop it gracefully.

Ready means: the child printed its port (it binds 127.0.0.1 unless ``--bind``
says otherwise, port 0 by default, so there is no race for a free port) *and*
the standard gRPC health service answers SERVING. A child that dies first is
reported with its stderr.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from grpcbench.base import defaults
from grpcbench.base.child_setup import parse_ready_line
from grpcbench.base.errors import ServerStartError
from grpcbench.base.processes import Child, start_python_module
from grpcbench.rpc.reachability import wait_ready
from grpcbench.rpc.security import PLAINTEXT, ChannelSecurity
from grpcbench.servers.spec import ServerSpec

READY_TIMEOUT_S = defaults.START_TIMEOUT_S
HOST = "127.0.0.1"


@dataclass
class RunningServer:
    spec: ServerSpec
    child: Child
    port: int
    host: str = HOST

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int:
        return self.child.pid

    async def stop(self) -> None:
        await self.child.stop()


def _start_failure(spec: ServerSpec, child: Child, what: str) -> ServerStartError:
    tail = child.stderr_tail()
    return ServerStartError(
        f"server {spec.label} {what}" + (f"; its stderr:\n{tail}" if tail else "")
    )


async def start_server(
    spec: ServerSpec,
    service: str,
    params: Mapping[str, Any],
    cpus: Sequence[int] = (),
    port: int = 0,
    ready_timeout_s: float = READY_TIMEOUT_S,
    host: str = HOST,
) -> RunningServer:
    """Start a server child and wait until it answers SERVING (or fail with its stderr).

    ``host``: 127.0.0.1 unless the user explicitly asked otherwise (``--bind``)."""
    args = [
        "--spec", spec.label,
        "--service", service,
        "--host", host,
        "--port", str(port),
        "--cpus", ",".join(map(str, cpus)),
    ]  # fmt: skip
    child = await start_python_module("grpcbench.servers.child", args)
    try:
        assert child.process.stdout is not None and child.process.stdin is not None
        child.process.stdin.write((json.dumps(dict(params)) + "\n").encode())
        await child.process.stdin.drain()
        child.process.stdin.close()
        deadline = time.monotonic() + ready_timeout_s
        try:
            line = await asyncio.wait_for(child.process.stdout.readline(), ready_timeout_s)
        except TimeoutError:
            raise _start_failure(
                spec, child, f"did not bind within {ready_timeout_s:g}s (see --start-timeout)"
            ) from None
        bound = parse_ready_line(line)
        if bound is None:
            code = await child.process.wait()
            if port and code == 3:
                raise ServerStartError(f"port {port} on {host} is in use (server {spec.label})")
            raise _start_failure(spec, child, f"exited during start-up (exit code {code})")
        server = RunningServer(spec, child, bound, host)
        await wait_until_serving(server.address, deadline, child)
        return server
    except BaseException:
        await child.stop()
        raise


async def wait_until_serving(address: str, deadline: float, child: Child | None = None) -> None:
    """Poll the health service until SERVING; fail if the deadline passes or the child dies."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        last_error = "no answer"
        while time.monotonic() < deadline:
            if child is not None and child.process.returncode is not None:
                raise ServerStartError(
                    f"server at {address} exited during start-up;"
                    f" its stderr:\n{child.stderr_tail()}"
                )
            try:
                reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1.0)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
                last_error = f"health status {reply.status}"
            except grpc.aio.AioRpcError as error:
                last_error = f"{error.code().name}: {error.details()}"
            await asyncio.sleep(0.05)
    raise ServerStartError(f"server at {address} did not report SERVING in time ({last_error})")


async def check_reachable(
    address: str, security: ChannelSecurity = PLAINTEXT, timeout_s: float = 5.0
) -> None:
    """For ``--target``: one clear error if nothing gRPC answers at ``address``,
    naming a plaintext/TLS mismatch when that is the cause (rpc.reachability: one
    channel, no bare TCP connect first; a refused address is said at once, as ghz
    does, instead of after grpc's reconnect back-off)."""
    async with security.aio_channel(address) as channel:
        await wait_ready(channel, address, security, timeout_s)
