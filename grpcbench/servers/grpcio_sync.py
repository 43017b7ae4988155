"""Server kind ``grpcio``: the classic sync ``grpc.server`` on a thread pool.

``workers`` is the ThreadPoolExecutor size, the seed's "max N worker" columns.
``grpc.so_reuseport`` is switched off: grpcio enables it by default, which lets a
second server bind the same port silently and split the traffic.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from grpcbench.base.child_setup import child_environment, setup_child
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


def _sigterm_event() -> threading.Event:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    return stop


def _start_server(
    service: ServiceDefinition,
    spec: ServerSpec,
    params: Mapping[str, Any],
    address: str,
    options: list[tuple[str, int]],
    compression: grpc.Compression | None = None,
) -> tuple[grpc.Server, int]:
    register = service.servicer(spec.info.servicer_kind)
    server = grpc.server(
        ThreadPoolExecutor(max_workers=spec.count("workers")),
        options=options,
        compression=compression,
    )
    register(server, params)
    health_servicer = health.HealthServicer()
    for name in ("", *service.service_names):
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    add_health_and_reflection(server, service, health_servicer)
    host, _, port = address.rpartition(":")
    try:
        bound = server.add_insecure_port(address)
    except RuntimeError as error:
        raise bind_error(host, int(port), error) from None
    if bound == 0:
        raise bind_error(host, int(port), RuntimeError("bind failed"))
    server.start()
    return server, bound


def serve(
    service: ServiceDefinition,
    spec: ServerSpec,
    params: Mapping[str, Any],
    host: str,
    port: int,
    compression: grpc.Compression | None = None,
) -> None:
    """Serve until SIGTERM. A variant kind (its own entry, ``servicers_from="grpcio"``)
    calls this with what it changes, e.g. ``compression``."""
    if spec.count("processes") > 1:
        serve_processes(service, spec, params, host, port, compression)
        return
    stop = _sigterm_event()
    server, bound = _start_server(
        service, spec, params, f"{host}:{port}", SERVER_OPTIONS, compression
    )
    announce_ready(bound)
    stop.wait()
    server.stop(grace=STOP_GRACE_SECONDS).wait()


# --- processes=N: grpcio's multiprocessing example ---------------------------
# Python threads share one GIL, so a sync server scales across cores only with
# processes. They are forked before any gRPC object exists (grpcio does not
# survive a fork of a running server) and share one port through SO_REUSEPORT;
# the kernel spreads incoming connections over them.


def _worker(
    service: ServiceDefinition,
    spec: ServerSpec,
    params: Mapping[str, Any],
    address: str,
    ready: Any,
    compression: grpc.Compression | None,
) -> None:
    setup_child(None)  # die with the server's main process, ignore the terminal's Ctrl-C
    stop = _sigterm_event()
    server, _ = _start_server(
        service, spec, params, address, [("grpc.so_reuseport", 1)], compression
    )
    ready.set()
    stop.wait()
    server.stop(grace=STOP_GRACE_SECONDS).wait()


WATCH_S = 0.2  # how often the main process checks that every worker still runs


def _check_port_free(host: str, port: int) -> None:
    """A port other processes hold, with SO_REUSEPORT too (another run's workers), is
    refused: binding it without SO_REUSEPORT fails where they listen. With it, two runs
    would both bind and measure each other's load."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        probe.bind((host, port))
    except OSError as error:
        raise bind_error(host, port, error) from None
    finally:
        probe.close()


def serve_processes(
    service: ServiceDefinition,
    spec: ServerSpec,
    params: Mapping[str, Any],
    host: str,
    port: int,
    compression: grpc.Compression | None = None,
) -> None:
    stop = _sigterm_event()
    if port:
        _check_port_free(host, port)
    # Reserve the port with SO_REUSEPORT, so the workers can all bind it and an
    # address already used by someone else fails here, with a clear message.
    reservation = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    reservation.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        reservation.bind((host, port))
    except OSError as error:
        raise bind_error(host, port, error) from None
    address = f"{host}:{reservation.getsockname()[1]}"
    context = multiprocessing.get_context("fork")
    os.environ.update(child_environment())  # the workers' parent is this process
    workers = []
    whole = True
    try:
        for _ in range(spec.count("processes")):
            ready = context.Event()
            worker = context.Process(
                target=_worker,
                args=(service, spec, params, address, ready, compression),
                daemon=True,
            )
            worker.start()
            workers.append((worker, ready))
        for worker, ready in workers:
            while not ready.wait(0.1):
                if not worker.is_alive():
                    raise SystemExit(f"server worker process exited with code {worker.exitcode}")
        announce_ready(int(address.rpartition(":")[2]))
        while not stop.wait(WATCH_S):
            for worker, _ in workers:
                if not worker.is_alive():  # one worker killed: the server is not whole
                    whole = False
                    raise SystemExit(
                        f"server worker process {worker.pid} exited with code {worker.exitcode}"
                    )
    finally:
        for worker, _ in workers:
            if worker.is_alive():
                # A stop: graceful (SIGTERM). A broken server: at once, so the runner
                # sees it die while the level still runs, not after a grace period.
                if whole:
                    worker.terminate()
                else:
                    worker.kill()
        for worker, _ in workers:
            worker.join(STOP_GRACE_SECONDS + 1)
            if worker.is_alive():
                worker.kill()
        reservation.close()
