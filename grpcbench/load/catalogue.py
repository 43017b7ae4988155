"""Catalogue of load drivers: what each is, what it can do, and where its code lives.

Like ``servers.kinds``, only metadata lives here, so listing drivers, checking
options and labelling tables never imports a driver. Adding a driver is one
module with a ``create(settings)`` function plus one entry below.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from grpcbench.base.errors import UsageError
from grpcbench.base.references import load_reference
from grpcbench.load.driver import DriverSettings, LoadDriver
from grpcbench.model.connections import ConnectionStrategy


@dataclass(frozen=True)
class DriverInfo:
    name: str
    description: str
    factory: str  # "module:function" taking DriverSettings, imported only when used
    open_loop: bool = False  # can run --rate
    per_request: bool = False  # can open connections per call (per-request, checkout:N)
    least_busy: bool = False  # can pick the least busy connection of a pool
    # "module:function" taking (service, workload params), raising UsageError for a
    # workload this driver cannot run; "" = it runs every workload.
    workload_check: str = ""


DRIVERS: dict[str, DriverInfo] = {
    info.name: info
    for info in (
        DriverInfo(
            name="builtin",
            description="grpcbench's own generator (its wire client stack, or grpc.aio with"
            " --client-stack grpcio), in --client-processes processes",
            factory="grpcbench.load.builtin:create",
            open_loop=True,
            per_request=True,
            least_busy=True,
        ),
        DriverInfo(
            name="ghz",
            description="the ghz Go tool (github.com/bojand/ghz), a second, independent client",
            factory="grpcbench.load.ghz:create",
            workload_check="grpcbench.load.ghz:check_workload",
        ),
        DriverInfo(
            name="dask",
            description="the built-in engine on Dask distributed workers (--cluster), merged",
            factory="grpcbench.load.cluster:create",
            open_loop=True,
            per_request=True,
            least_busy=True,
        ),
        DriverInfo(
            name="fake",
            description="synthetic, seeded results without network traffic (for tests)",
            factory="grpcbench.load.fake:create",
            open_loop=True,
            per_request=True,
            least_busy=True,
        ),
    )
}


def driver_info(name: str) -> DriverInfo:
    if name not in DRIVERS:
        raise UsageError(f"unknown load driver {name!r} (known drivers: {', '.join(DRIVERS)})")
    return DRIVERS[name]


def parse_drivers(text: str) -> tuple[str, ...]:
    """``"builtin,ghz"`` -> ("builtin", "ghz"), every name checked."""
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    if not names:
        raise UsageError(f"no load driver in {text!r} (known drivers: {', '.join(DRIVERS)})")
    for name in names:
        driver_info(name)
    return names


def check_load_model(
    names: Sequence[str], open_loop: bool, connections: ConnectionStrategy
) -> None:
    """One clear error, before anything starts, for a load model a driver cannot run."""
    for name in names:
        info = driver_info(name)
        missing = [
            what
            for what, needed, able in (
                ("--rate or --rate-schedule", open_loop, info.open_loop),
                ("--connections per-request", connections.mode == "per-request", info.per_request),
                ("--connections checkout:N", connections.mode == "checkout", info.per_request),
                ("pool:N:least-busy", connections.policy == "least-busy", info.least_busy),
            )
            if needed and not able
        ]
        if missing:
            raise UsageError(
                f"the {name} driver runs closed loops over a fixed set of connections: use"
                f" --load builtin for {', '.join(missing)}"
            )


def check_workload(name: str, service: str, workload_params: Mapping[str, Any]) -> None:
    """One clear error, before anything starts, for a workload the driver cannot run."""
    info = driver_info(name)
    if info.workload_check:
        load_reference(info.workload_check)(service, workload_params)


def make_driver(name: str, settings: DriverSettings | None = None) -> LoadDriver:
    driver: LoadDriver = load_reference(driver_info(name).factory)(settings or DriverSettings())
    return driver
