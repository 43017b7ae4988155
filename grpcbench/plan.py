"""What one level is, how every level is loaded, and where things run: plain frozen data.

Shared by the runner, the pytest plugin and the benchmarks, and saved with the
results; it imports nothing of grpcbench but defaults, parsers, the connection
strategy and the settings declarations, so any module may use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from grpcbench import defaults
from grpcbench.load.connections import ConnectionStrategy, parse_connection_strategy
from grpcbench.parsing import parse_duration, parse_warmup
from grpcbench.settings import at_least, help_for, one_of, setting
from grpcbench.settings import check as check_settings
from grpcbench.settings import from_json as settings_from_json
from grpcbench.settings import to_json as settings_to_json

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
    """How every level of a run is loaded: its size, warm-up, deadline and connections.

    Each setting is declared once (``settings.setting``): its option, help, JSON
    name, what older results files meant without it, and its check, which runs
    here, so the CLI, the pytest plugin and the benchmarks obey the same rules."""

    requests: int = setting(
        defaults.REQUESTS, option="--requests", json="requests", before=0, load=int,
        help="Measured calls per level and server. Default: the scenario's ({default}"
        " unless it says otherwise).", check=at_least(0),
    )  # fmt: skip
    duration_s: float = setting(
        0.0, option="--duration", json="duration_s", before=0.0, check=at_least(0), load=float,
        help="Measure each level for a time (10s, 500ms) instead of --requests.",
    )  # fmt: skip
    warmup_requests: int = setting(
        _DEFAULT_WARMUP[0], option="--warmup", json="warmup_requests", before=0, load=int,
        help="Discarded warm-up per level: a call count (200) or a time (2s). Default: the"
        " scenario's ({default} unless it says otherwise).", check=at_least(0),
        default_text=defaults.WARMUP,
    )  # fmt: skip
    warmup_s: float = setting(
        _DEFAULT_WARMUP[1], option="--warmup", json="warmup_s", before=0.0, load=float,
        help="(the time form of --warmup)", check=at_least(0),
    )  # fmt: skip
    timeout_s: float = setting(
        parse_duration(defaults.TIMEOUT, "timeout"), option="--timeout", json="timeout_s",
        load=float,
        help="Per-call deadline, e.g. 20s. Default: the scenario's ({default} unless it says"
        " otherwise).", check=at_least(0, strict=True), default_text=defaults.TIMEOUT,
    )  # fmt: skip
    connections: ConnectionStrategy = setting(
        default_factory=ConnectionStrategy, option="--connections", json="connections",
        dump=lambda strategy: strategy.label,
        load=lambda label: parse_connection_strategy(str(label)),
        help="Client connections: auto (one per 50 concurrent calls), shared, N or pool:N"
        " (round-robin per call), pool:N:least-busy, per-request (a new connection per"
        " call; its set-up time is shown apart), per-user (one per virtual user, seed 003)"
        " or checkout:N (check out per call, open one when none is idle, keep N; seed 001).",
        default_text=defaults.CONNECTIONS,
    )  # fmt: skip
    arrivals: Arrivals = setting(
        "uniform", option="--arrivals", json="arrivals", check=one_of(*ARRIVALS),
        load=lambda value: "poisson" if value == "poisson" else "uniform",
        help="Open-loop arrivals: uniform or poisson.",
    )  # fmt: skip
    max_in_flight: int = setting(
        defaults.MAX_IN_FLIGHT, option="--max-in-flight", json="max_in_flight",
        help="Open loop: most calls in flight at once.", check=at_least(1), load=int,
    )  # fmt: skip
    max_level_s: float = setting(
        parse_duration(defaults.MAX_LEVEL, "max level"), option="--max-level",
        json="max_level_s", check=at_least(0, strict=True), load=float,
        help="Hard time limit of one level's measurement (default {default}).",
        default_text=defaults.MAX_LEVEL,
    )  # fmt: skip
    client_cpus: tuple[int, ...] = setting(
        (), option="--client-cpus", json="client_cpus", dump=list,
        load=lambda cpus: tuple(int(c) for c in cpus or ()),
        help="CPUs for the load generator, e.g. 1.",
    )  # fmt: skip
    client_loop: str = setting(
        defaults.CLIENT_LOOP, option="--client-loop", json="client_loop", before="asyncio",
        check=one_of("uvloop", "asyncio"), load=str,
        help="The built-in generator's event loop: uvloop (less CPU per call) or asyncio.",
    )  # fmt: skip
    client_stack: str = setting(
        defaults.CLIENT_STACK, option="--client-stack", json="client_stack", before="grpcio",
        check=one_of(*defaults.CLIENT_STACKS), load=str,
        help="The built-in generator's gRPC client: wire (grpcbench's own HTTP/2 frames,"
        " a few us of CPU per call) or grpcio (grpc.aio, the reference).",
    )  # fmt: skip
    # Timelines of CPU % and RSS (server, backing services, generator); 0 = none.
    sample_interval_s: float = setting(
        parse_duration(defaults.SAMPLE_INTERVAL, "sample interval"),
        option="--sample-interval", json="sample_interval_s", before=0.0, check=at_least(0),
        load=float,
        help="Sample CPU % and RSS of the server, backing services and generator this often"
        " (timelines in the JSON and charts); off for none.",
        default_text=defaults.SAMPLE_INTERVAL,
    )  # fmt: skip

    def __post_init__(self) -> None:
        check_settings(self)

    def to_json(self) -> dict[str, Any]:
        return settings_to_json(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LoadSettings:
        """From a results file of any age (a setting it lacks reads as it meant then)."""
        loaded: LoadSettings = settings_from_json(cls, data)
        return loaded

    @classmethod
    def help(cls, name: str) -> str:
        """A setting's help text, for the CLI."""
        return help_for(cls, name)

    def connections_for(self, plan: LevelPlan) -> int:
        """Connections a level opens: the swept count, else the strategy's pool size."""
        return plan.channels or self.connections.pool_size(plan.concurrency)

    def connection_label(self, channels: int) -> str:
        return f"pool:{channels}" if channels else self.connections.label

    def describe(self) -> str:
        """The size of a level, e.g. "5000 calls" or "10 s"."""
        return f"{self.requests} calls" if self.requests else f"{self.duration_s:g} s"
