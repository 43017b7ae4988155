"""Server kind ``grpcio``: the classic sync ``grpc.server`` on a thread pool.

``workers`` is the ThreadPoolExecutor size, the seed's "max N worker" columns.
``grpc.so_reuseport`` is switched off: grpcio enables it by default, which lets a
second server bind the same port silently and split the traffic.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from grpcbench.servers.child import STOP_GRACE_SECONDS, announce_ready, bind_error
from grpcbench.servers.spec import ServerSpec
from grpcbench.services.base import ServiceDefinition

SERVER_OPTIONS = [("grpc.so_reuseport", 0)]


def add_health_and_reflection(server: Any, service: ServiceDefinition, servicer: Any) -> None:
    """Register health (all SERVING) and reflection; shared with the grpc.aio kind."""
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    names = (
        *service.service_names,
        health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
        reflection.SERVICE_NAME,
    )
    reflection.enable_server_reflection(names, server)


def serve(
    service: ServiceDefinition, spec: ServerSpec, params: Mapping[str, Any], host: str, port: int
) -> None:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    server = grpc.server(
        ThreadPoolExecutor(max_workers=spec.option("workers")), options=SERVER_OPTIONS
    )
    service.register_grpcio(server, params)
    health_servicer = health.HealthServicer()
    for name in ("", *service.service_names):
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    add_health_and_reflection(server, service, health_servicer)
    try:
        bound = server.add_insecure_port(f"{host}:{port}")
    except RuntimeError as error:
        raise bind_error(host, port, error) from None
    if bound == 0:
        raise bind_error(host, port, RuntimeError("bind failed"))
    server.start()
    announce_ready(bound)
    stop.wait()
    server.stop(grace=STOP_GRACE_SECONDS).wait()
