"""What a level measures: a ``Target`` (an address, maybe a pid to watch) and its plan.

The runner only sees these two protocols, so "a server grpcbench started"
(``targets.started``) and "a server somebody else runs" (``targets.external``)
differ in one module each, not in branches of the runner; a new type is one
module plus one entry in ``targets.TARGET_TYPES``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from grpcbench.base import defaults
from grpcbench.base.processes import BackgroundStops
from grpcbench.rpc.security import PLAINTEXT, ChannelSecurity
from grpcbench.targets.check_site import HERE, CheckSite


@dataclass(frozen=True)
class TargetContext:
    """What the run knows when a target opens (after the service prepared its data)."""

    service: str  # the service's registry name (or module:ATTRIBUTE)
    server_params: Mapping[str, Any] = field(default_factory=dict)
    server_cpus: tuple[int, ...] = ()
    port: int = defaults.PORT
    start_timeout_s: float = defaults.START_TIMEOUT_S  # to bind and answer SERVING
    security: ChannelSecurity = PLAINTEXT  # how the client reaches an external target
    host: str = "127.0.0.1"  # where started servers listen; another only with --bind
    # Where checks that touch an external target run: here, or on a cluster worker.
    check_site: CheckSite = HERE
    # An external target's pre-flight call checks it answers, on its own channel: the
    # open then makes no connection of its own (rpc.reachability).
    reached_by_preflight: bool = False
    # Where a started server's stop goes on while the next opens (None: awaited then).
    stops: BackgroundStops | None = None


class Target(Protocol):
    """An open target: where to send load, what to measure, whether it still lives."""

    @property
    def label(self) -> str: ...

    @property
    def address(self) -> str: ...

    @property
    def pid(self) -> int | None:
        """The process whose CPU and memory are measured; None = not measured."""
        ...

    @property
    def security(self) -> ChannelSecurity:
        """How clients reach it: TLS material read (and --skipTLS's certificate
        fetched) once, when the target opened; plaintext for the servers grpcbench starts."""
        ...

    def failure(self) -> str | None:
        """Why the target can no longer be measured (it died), else None."""
        ...


class TargetPlan(Protocol):
    """A column of the tables before it runs: opened once per repeat, closed after."""

    @property
    def target_type(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def server_kind(self) -> str | None:
        """The server kind grpcbench starts for this column; None when it starts none."""
        ...

    def open(self, context: TargetContext) -> AbstractAsyncContextManager[Target]:
        """Start (or reach) the target; it is stopped when the context ends."""
        ...


# How long a driver error waits for the server's exit to show: a server that is not
# whole (a forked worker killed) stops itself within servers.grpcio_sync.WATCH_S.
DEATH_SETTLE_S = 1.0


async def death_of(target: Target) -> str | None:
    """Why the target died, waiting up to DEATH_SETTLE_S for its process to be reaped;
    None at once for a target without a process of ours."""
    import asyncio  # here: the target types are named in the options' help

    deadline = time.monotonic() + DEATH_SETTLE_S
    while (failure := target.failure()) is None and target.pid is not None:
        if time.monotonic() >= deadline:
            return None
        await asyncio.sleep(0.05)
    return failure
