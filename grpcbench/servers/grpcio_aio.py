"""Server kind ``grpcio-aio`` (and ``grpcio-aio+uvloop``): grpcio's asyncio API.

The same C-core as sync grpcio, with handlers as coroutines on one event loop
instead of threads; not in the seed, but the first thing users ask about.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import grpc
from grpc_health.v1 import health_pb2
from grpc_health.v1._async import HealthServicer

from grpcbench.servers.asyncio_loop import run, sigterm_event
from grpcbench.servers.child import STOP_GRACE_SECONDS, announce_ready, bind_error
from grpcbench.servers.grpcio_sync import SERVER_OPTIONS, add_health_and_reflection
from grpcbench.servers.spec import ServerSpec
from grpcbench.services.base import ServiceDefinition


async def _serve(
    service: ServiceDefinition, spec: ServerSpec, params: Mapping[str, Any], host: str, port: int
) -> None:
    stop = sigterm_event()
    register = service.servicer(spec.info.servicer_kind)
    server = grpc.aio.server(options=SERVER_OPTIONS)
    register(server, params)
    health_servicer = HealthServicer()
    for name in ("", *service.service_names):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    add_health_and_reflection(server, service, health_servicer)
    try:
        bound = server.add_insecure_port(f"{host}:{port}")
    except RuntimeError as error:
        raise bind_error(host, port, error) from None
    await server.start()
    announce_ready(bound)
    await stop.wait()
    await server.stop(STOP_GRACE_SECONDS)


def serve(
    service: ServiceDefinition, spec: ServerSpec, params: Mapping[str, Any], host: str, port: int
) -> None:
    run(_serve(service, spec, params, host, port), spec.uvloop)
