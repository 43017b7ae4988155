"""Client connection strategies of the built-in driver (``--connections``).

- ``auto`` (default): a pool of ceil(C / 50) connections, so no connection
  carries more than 50 concurrent calls (grpclib's server allows 100 per connection);
- ``shared``: one connection for every call (a pool of 1);
- ``pool:N`` (or just ``N``): N connections, handed out per call round-robin,
  or with ``pool:N:least-busy`` to the one with the fewest calls in flight;
- ``per-request``: a new connection for every call, closed afterwards; its
  set-up time is measured separately (the "Connect" rows);
- ``per-user``: every virtual user owns one connection for the whole level,
  so C users are C connections with one call in flight each (seed 003's
  clients);
- ``checkout:N``: a pool that checks a connection out per call, opens a new one
  when none is idle, and keeps at most N idle afterwards (closing the rest):
  seed 001's "fixed-size pool", whose extra connections cost a set-up each
  (the "Connect" rows).

Every connection is a grpc.aio channel with its own subchannel pool, so grpcio
cannot quietly multiplex several "channels" over one TCP connection.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from grpcbench.base.errors import UsageError
from grpcbench.base.parsing import decimal

STREAMS_PER_CONNECTION = 50

Mode = Literal["auto", "pool", "per-request", "per-user", "checkout"]
Policy = Literal["round-robin", "least-busy"]


@dataclass(frozen=True)
class ConnectionStrategy:
    mode: Mode = "auto"
    size: int = 0  # pool size; 0 with mode "auto"
    policy: Policy = "round-robin"

    @property
    def label(self) -> str:
        if self.mode == "checkout":
            return f"checkout:{self.size}"
        if self.mode == "pool":
            suffix = ":least-busy" if self.policy == "least-busy" else ""
            return "shared" if self.size == 1 and not suffix else f"pool:{self.size}{suffix}"
        return self.mode

    def pool_size(self, concurrency: int) -> int:
        """Connections a level opens up front (0 for per-request; for checkout:N,
        the most kept idle)."""
        if self.mode == "per-request":
            return 0
        if self.mode == "per-user":
            return concurrency
        if self.mode == "auto":
            return max(1, math.ceil(concurrency / STREAMS_PER_CONNECTION))
        return self.size


def parse_connection_strategy(text: str) -> ConnectionStrategy:
    value = text.strip().lower()
    if value in ("auto", "0", ""):
        return ConnectionStrategy()
    if value == "shared":
        return ConnectionStrategy("pool", 1)
    if value == "per-request":
        return ConnectionStrategy("per-request")
    if value == "per-user":
        return ConnectionStrategy("per-user")
    checkout = decimal(value[9:]) if value.startswith("checkout:") else None
    if checkout:
        return ConnectionStrategy("checkout", checkout)
    if (count := decimal(value)) is not None:
        return ConnectionStrategy("pool", count)
    parts = value.split(":")
    pooled = decimal(parts[1]) if parts[0] == "pool" and len(parts) in (2, 3) else None
    if pooled:
        policy = parts[2] if len(parts) == 3 else "round-robin"
        if policy in ("round-robin", "least-busy"):
            return ConnectionStrategy("pool", pooled, policy)  # type: ignore[arg-type]
    raise UsageError(
        f"bad --connections {text!r}: expected auto, shared, per-request, per-user, N, pool:N,"
        " pool:N:least-busy or checkout:N"
    )
