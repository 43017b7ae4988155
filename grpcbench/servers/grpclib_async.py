"""Server kind ``grpclib`` (and ``grpclib+uvloop``): the pure-Python async server.

grpclib's HTTP/2 layer (h2) advertises at most 100 concurrent streams per
connection; the built-in load generator spreads high concurrency over several
connections so this limit does not cap a level.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any, cast

from grpclib.health.service import Health
from grpclib.reflection.service import ServerReflection
from grpclib.server import Server

from grpcbench.servers.asyncio_loop import run, sigterm_event
from grpcbench.servers.child import STOP_GRACE_SECONDS, announce_ready, bind_error
from grpcbench.servers.spec import ServerSpec
from grpcbench.services.base import ServiceDefinition


async def _serve(
    service: ServiceDefinition, spec: ServerSpec, params: Mapping[str, Any], host: str, port: int
) -> None:
    stop = sigterm_event()
    handlers = service.servicer(spec.info.servicer_kind)(params)
    health = Health({handler: [] for handler in handlers})
    codec = service.grpclib_codec() if service.grpclib_codec else None
    server = Server(ServerReflection.extend([*handlers, health]), codec=codec)
    try:
        await server.start(host, port, reuse_port=False)
    except OSError as error:
        raise bind_error(host, port, error) from None
    # grpclib does not expose the bound port; its asyncio server does.
    listener = cast(asyncio.Server, server._server)
    announce_ready(listener.sockets[0].getsockname()[1])
    await stop.wait()
    server.close()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(server.wait_closed(), STOP_GRACE_SECONDS)


def serve(
    service: ServiceDefinition, spec: ServerSpec, params: Mapping[str, Any], host: str, port: int
) -> None:
    run(_serve(service, spec, params, host, port), spec.uvloop)
