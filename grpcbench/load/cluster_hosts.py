"""Which workers a cluster level may use: they run what this machine runs (versions),
they are spread over hosts, and they can dial the target (a loopback address is
this machine's only where a worker shares its loopback), checked from a worker
(``WorkerSite``)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable
from typing import Any, Protocol

from grpcbench.base.errors import OneLineError, UsageError


def refused_at_once(address: str) -> str | None:
    """Why a scheduler address refuses a TCP connection right now, or None. Dask's own
    connect retries a refused port until its timeout (10 s); a port nobody listens on
    is known at once."""
    _, _, rest = address.rpartition("://")
    host, _, port = rest.rstrip("/").rpartition(":")
    if not host or not port.isdigit():
        return None  # Dask's own parsing says what is wrong
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=2.0):
            return None
    except ConnectionRefusedError as error:
        return error.strerror or "connection refused"
    except OSError:
        return None  # slower failures (a timeout, no route): Dask's connect says them


def worker_version() -> dict[str, str]:
    """Runs on every worker (and here): what a worker's figures depend on - grpcbench,
    Python, grpcio, protobuf, distributed, and every service plugin installed."""
    import platform
    from importlib import metadata

    import grpcbench

    versions = {"grpcbench": grpcbench.__version__, "Python": platform.python_version()}
    for name in ("grpcio", "protobuf", "distributed"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[name] = metadata.version(name)
    for entry in metadata.entry_points(group="grpcbench.services"):
        dist = entry.dist
        if dist is not None:
            versions[f"plugin {dist.name}"] = dist.version
    return versions


def check_versions(
    versions: dict[str, dict[str, str] | str], expected: dict[str, str] | None = None
) -> None:
    """Every worker runs what this machine runs, or one line naming each difference."""
    mine = expected if expected is not None else worker_version()
    problems = []
    for address, theirs in sorted(versions.items()):
        if isinstance(theirs, str):  # a worker of an older grpcbench reports only its own
            theirs = {"grpcbench": theirs}
        for name, version in sorted(mine.items()):
            if theirs.get(name) != version:
                problems.append(f"{address} has {name} {theirs.get(name, 'missing')}")
    if problems:
        ours = ", ".join(f"{name} {version}" for name, version in sorted(mine.items()))
        raise UsageError(
            f"cluster workers run other versions than this machine ({ours}): " + "; ".join(problems)
        )


def loopback_identity() -> str:
    """Runs on every worker (and here): which loopback this process dials, its kernel's
    boot id and its network namespace. Two processes that share both reach the same
    127.0.0.1; a worker on another machine, or in another container, does not."""
    import os

    try:
        with open("/proc/sys/kernel/random/boot_id") as boot:
            kernel = boot.read().strip()
        namespace = str(os.stat("/proc/self/ns/net").st_ino)
    except OSError:  # not Linux: the host's name is the best one can say
        import socket

        return f"host:{socket.gethostname()}"
    return f"{kernel}/{namespace}"


def dials_this_machine(host: str) -> bool:
    """Whether ``host`` (as a target's) means this machine's own loopback: a loopback
    or wildcard address, or a name that resolves to one (``localhost``, a hosts entry)."""
    import ipaddress

    name = host.strip("[]")
    try:
        found = {info[4][0] for info in socket.getaddrinfo(name, None)}
    except (OSError, UnicodeError):
        return False  # the check that the target answers will say why
    for address in found:
        ip = ipaddress.ip_address(str(address).split("%", 1)[0])
        if ip.is_loopback or ip.is_unspecified:
            return True
    return False


def _host(address: str) -> str:
    """``tcp://10.0.0.1:4001`` -> ``10.0.0.1``."""
    return address.split("://", 1)[-1].rsplit(":", 1)[0]


def spread_over_hosts(addresses: list[str]) -> list[str]:
    """Workers ordered host by host in turn (tcp://A:1, tcp://B:1, tcp://A:2, ...), so
    --cluster-workers N takes them from every host rather than packing the first."""
    by_host: dict[str, list[str]] = {}
    for address in sorted(addresses):
        by_host.setdefault(_host(address), []).append(address)
    spread = []
    for turn in range(max((len(group) for group in by_host.values()), default=0)):
        spread += [group[turn] for group in by_host.values() if turn < len(group)]
    return spread


PROBE_TIMEOUT_S = 120.0  # reflection, a certificate fetch and one call, with margin


class Workers(Protocol):
    """What a check site needs of the driver: its Dask client and chosen workers."""

    client: Any
    addresses: list[str]


class WorkerSite:
    """Runs a target check (targets.check_site) on the cluster's first worker."""

    def __init__(self, driver: Workers) -> None:
        self.driver = driver

    @property
    def where(self) -> str:
        return f"cluster worker {self.driver.addresses[0]}"

    async def __call__(self, function: Callable[..., Any], *args: Any) -> Any:
        address = self.driver.addresses[0]
        future = self.driver.client.submit(
            function, *args, workers=[address], allow_other_workers=False, pure=False,
            retries=0,
        )  # fmt: skip
        try:
            return await asyncio.to_thread(future.result, PROBE_TIMEOUT_S)
        except OneLineError:
            raise  # the check's own line (PreflightError and its exit code included)
        except Exception as error:  # noqa: BLE001 - Dask's, or a bug in the check
            reason = " ".join(str(error).split())
            raise UsageError(
                f"checking the target from cluster worker {address} failed"
                f" ({type(error).__name__}: {reason})"
            ) from None
        finally:
            future.cancel()


def all_workers(client: Any) -> dict[str, Any]:
    """Every worker the scheduler knows: distributed 2025.4 to mid-2026 listed at most 5
    unless asked for all (dask/distributed#9045); older versions have no such argument."""
    try:
        info = client.scheduler_info(n_workers=-1)
    except TypeError:
        info = client.scheduler_info()
    workers: dict[str, Any] = info["workers"]
    return workers
