"""What one level is, how every level is loaded, and where things run: plain frozen data.

Shared by the runner, the pytest plugin and the benchmarks, and saved with the
results; it imports nothing of grpcbench but the connection strategy, so any
module may use it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from grpcbench import defaults
from grpcbench.load.connections import ConnectionStrategy
from grpcbench.parsing import parse_duration, parse_warmup

Arrivals = Literal["uniform", "poisson"]
ARRIVALS: tuple[Arrivals, ...] = ("uniform", "poisson")


@dataclass(frozen=True)
class LevelPlan:
    """One level: a concurrency (or, open loop, a rate), maybe a swept channel count."""

    concurrency: int  # closed loop: virtual users; open loop: cap on calls in flight
    channels: int = 0  # 0 = not swept: the connection strategy decides
    rate: float = 0.0  # 0 = closed loop
    variant: str = ""  # the scenario's workload variant ("" when it has none)
    connection: str = ""  # the connection strategy's label (auto, shared, pool:N, ...)

    def describe(self) -> str:
        """The name of a level in tables and messages: "concurrency 10", "rate 500/s", ..."""
        text = f"rate {self.rate:g}/s" if self.rate else f"concurrency {self.concurrency}"
        text += f", channels {self.channels}" if self.channels else ""
        return text + (f", {self.variant}" if self.variant else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "concurrency": self.concurrency,
            "channels": self.channels,
            "rate": self.rate,
            "variant": self.variant,
            "connection": self.connection,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LevelPlan:
        return cls(
            concurrency=int(data["concurrency"]),
            channels=int(data.get("channels", 0)),
            rate=float(data.get("rate", 0.0)),
            variant=str(data.get("variant", "")),
            connection=str(data.get("connection", "")),
        )


@dataclass(frozen=True)
class Placement:
    """Which CPUs the server and the load generator may run on (empty = anywhere)."""

    server_cpus: tuple[int, ...] = ()
    client_cpus: tuple[int, ...] = ()

    @property
    def backing_cpus(self) -> tuple[int, ...]:
        """Where embedded S3 and MongoDB run: off the server's CPUs, beside the generator."""
        return self.client_cpus

    def describe(self) -> str:
        """In words, for headers and reports: "server on CPU 0, generator on CPU 1"."""

        def cpus(values: tuple[int, ...]) -> str:
            if not values:
                return "any CPU"
            return ("CPU " if len(values) == 1 else "CPUs ") + ",".join(map(str, values))

        return (
            f"server on {cpus(self.server_cpus)}, generator (and any embedded S3/MongoDB)"
            f" on {cpus(self.client_cpus)}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "server_cpus": list(self.server_cpus),
            "client_cpus": list(self.client_cpus),
            "backing_cpus": list(self.backing_cpus),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Placement:
        return cls(
            tuple(int(c) for c in data.get("server_cpus") or ()),
            tuple(int(c) for c in data.get("client_cpus") or ()),
        )


_DEFAULT_WARMUP = parse_warmup(defaults.WARMUP)


@dataclass(frozen=True)
class LoadSettings:
    """How every level of a run is loaded: its size, warm-up, deadline and connections."""

    requests: int = defaults.REQUESTS  # measured calls; 0 when levels are time-based
    duration_s: float = 0.0  # measured time; 0 when levels are count-based
    warmup_requests: int = _DEFAULT_WARMUP[0]
    warmup_s: float = _DEFAULT_WARMUP[1]
    timeout_s: float = parse_duration(defaults.TIMEOUT, "timeout")
    connections: ConnectionStrategy = field(default_factory=ConnectionStrategy)
    arrivals: Arrivals = "uniform"
    max_in_flight: int = defaults.MAX_IN_FLIGHT
    max_level_s: float = parse_duration(defaults.MAX_LEVEL, "max level")
    client_cpus: tuple[int, ...] = ()
    client_loop: str = defaults.CLIENT_LOOP  # the built-in generator's event loop
    client_stack: str = defaults.CLIENT_STACK  # the built-in generator's gRPC client
    # Timelines of CPU % and RSS (server, backing services, generator); 0 = none.
    sample_interval_s: float = parse_duration(defaults.SAMPLE_INTERVAL, "sample interval")

    def connections_for(self, plan: LevelPlan) -> int:
        """Connections a level opens: the swept count, else the strategy's pool size."""
        return plan.channels or self.connections.pool_size(plan.concurrency)

    def connection_label(self, channels: int) -> str:
        return f"pool:{channels}" if channels else self.connections.label

    def describe(self) -> str:
        """The size of a level, e.g. "5000 calls" or "10 s"."""
        return f"{self.requests} calls" if self.requests else f"{self.duration_s:g} s"
