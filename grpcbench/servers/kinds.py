"""Catalogue of server kinds: what each is, its options, and where its code lives.

Only metadata lives here, so listing kinds and parsing specs never imports
grpcio, grpclib or uvloop; the implementation module is imported inside the
server subprocess.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServerKindInfo:
    name: str
    description: str
    module: str
    supports_uvloop: bool
    default_options: tuple[tuple[str, int], ...] = ()
    # Options shown in a spec's label even at their default (e.g. workers=10).
    always_shown: tuple[str, ...] = ()


KINDS: dict[str, ServerKindInfo] = {
    info.name: info
    for info in (
        ServerKindInfo(
            name="grpcio",
            description="sync grpc.server with a ThreadPoolExecutor of `workers` threads,"
            " in `processes` processes sharing the port (SO_REUSEPORT)",
            module="grpcbench.servers.grpcio_sync",
            supports_uvloop=False,
            default_options=(("workers", 10), ("processes", 1)),
            always_shown=("workers",),
        ),
        ServerKindInfo(
            name="grpclib",
            description="async grpclib server on asyncio (add +uvloop for uvloop)",
            module="grpcbench.servers.grpclib_async",
            supports_uvloop=True,
        ),
        ServerKindInfo(
            name="grpcio-aio",
            description="grpcio's asyncio API, grpc.aio.server (add +uvloop for uvloop)",
            module="grpcbench.servers.grpcio_aio",
            supports_uvloop=True,
        ),
    )
}
