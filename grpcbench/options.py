"""``RunOptions``: every choice of a run, validated, frozen, and saved with its results.

The CLI only collects strings; ``build_run_options`` turns them into this object
(one clear ``UsageError`` per bad value), so the runner never sees raw input.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from grpcbench.errors import UsageError
from grpcbench.parsing import (
    parse_cpu_set,
    parse_duration,
    parse_host_port,
    parse_positive_int_list,
    parse_warmup,
)
from grpcbench.scenario import Scenario, load_scenario
from grpcbench.servers.spec import ServerSpec, parse_server_specs
from grpcbench.services.registry import load_service

DRIVERS = ("builtin", "ghz", "fake")
# Concurrent streams per client connection. grpclib's server allows 100 per
# connection; staying at half keeps every level well below that cap.
STREAMS_PER_CONNECTION = 50
DEFAULT_MAX_LEVEL_S = 300.0


@dataclass(frozen=True)
class Placement:
    """Which CPUs the server and the load generator may run on (empty = anywhere)."""

    server_cpus: tuple[int, ...]
    client_cpus: tuple[int, ...]


@dataclass(frozen=True)
class RunOptions:
    scenario: Scenario
    servers: tuple[ServerSpec, ...]
    concurrency: tuple[int, ...]
    requests: int
    duration_s: float
    warmup_requests: int
    warmup_s: float
    timeout_s: float
    drivers: tuple[str, ...]
    connections: int  # 0 = automatic, ceil(concurrency / STREAMS_PER_CONNECTION)
    client_processes: int
    ghz: str | None  # path to the ghz binary; None = from PATH
    placement: Placement
    target: str | None = None
    target_pid: int | None = None
    port: int = 0
    output: Path | None = None
    markdown: Path | None = None
    max_level_s: float = DEFAULT_MAX_LEVEL_S

    def connections_for(self, concurrency: int) -> int:
        if self.connections:
            return self.connections
        return max(1, math.ceil(concurrency / STREAMS_PER_CONNECTION))

    @property
    def column_labels(self) -> tuple[str, ...]:
        if self.target:
            return (self.target,)
        return tuple(spec.label for spec in self.servers)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["scenario"] = {"name": self.scenario.name, "path": self.scenario.path}
        data["servers"] = [spec.label for spec in self.servers]
        for key in ("output", "markdown"):
            data[key] = str(data[key]) if data[key] else None
        return data


def default_placement() -> Placement:
    """Server on the first allowed CPU, generator on the others (if there are others)."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except AttributeError:
        return Placement((), ())
    if len(cpus) < 2:
        return Placement((), ())
    return Placement((cpus[0],), tuple(cpus[1:]))


def build_placement(pin: bool, server_cpus: str | None, client_cpus: str | None) -> Placement:
    if not pin:
        if server_cpus or client_cpus:
            raise UsageError("--no-pin cannot be combined with --server-cpus/--client-cpus")
        return Placement((), ())
    default = default_placement()
    placement = Placement(
        parse_cpu_set(server_cpus, "--server-cpus") if server_cpus else default.server_cpus,
        parse_cpu_set(client_cpus, "--client-cpus") if client_cpus else default.client_cpus,
    )
    if hasattr(os, "sched_getaffinity"):
        allowed = os.sched_getaffinity(0)
        bad = sorted(set(placement.server_cpus + placement.client_cpus) - allowed)
        if bad:
            raise UsageError(f"CPU {bad[0]} is not available (allowed: {sorted(allowed)})")
    return placement


def build_run_options(
    *,
    scenario: str = "hello",
    servers: list[str] | None = None,
    concurrency: str | None = None,
    requests: int | None = None,
    duration: str | None = None,
    warmup: str | None = None,
    timeout: str | None = None,
    load: str = "builtin",
    connections: int = 0,
    client_processes: int = 1,
    ghz: str | None = None,
    target: str | None = None,
    target_pid: int | None = None,
    port: int = 0,
    output: Path | None = None,
    markdown: Path | None = None,
    pin: bool = True,
    server_cpus: str | None = None,
    client_cpus: str | None = None,
    max_level: str | None = None,
) -> RunOptions:
    chosen = load_scenario(scenario)
    load_service(chosen.service)  # fail here, not inside a server process
    drivers = tuple(d.strip() for d in load.split(",") if d.strip())
    unknown = [d for d in drivers if d not in DRIVERS]
    if unknown or not drivers:
        raise UsageError(f"unknown load driver {load!r} (known drivers: {', '.join(DRIVERS)})")
    if requests is not None and requests <= 0:
        raise UsageError(f"bad --requests {requests}: must be a positive integer")
    if requests is not None and duration:
        raise UsageError("give either --requests or --duration, not both")
    if connections < 0:
        raise UsageError(f"bad --connections {connections}: must be positive (0 = automatic)")
    if client_processes <= 0:
        raise UsageError(f"bad --client-processes {client_processes}: must be a positive integer")
    if not 0 <= port < 65536:
        raise UsageError(f"bad --port {port}")
    if target:
        parse_host_port(target)
        if servers:
            raise UsageError(
                "--target benchmarks an existing server; do not combine with --servers"
            )
    elif target_pid:
        raise UsageError("--target-pid needs --target")
    duration_s = parse_duration(duration, "--duration") if duration else 0.0
    warmup_requests, warmup_s = parse_warmup(warmup if warmup is not None else chosen.warmup)
    return RunOptions(
        scenario=chosen,
        servers=() if target else parse_server_specs(servers or list(chosen.servers)),
        concurrency=(
            parse_positive_int_list(concurrency, "concurrency")
            if concurrency is not None
            else chosen.concurrency
        ),
        requests=0 if duration_s else (requests or chosen.requests),
        duration_s=duration_s,
        warmup_requests=warmup_requests,
        warmup_s=warmup_s,
        timeout_s=parse_duration(timeout or chosen.timeout, "--timeout"),
        drivers=drivers,
        connections=connections,
        client_processes=client_processes,
        ghz=ghz,
        placement=build_placement(pin, server_cpus, client_cpus),
        target=target,
        target_pid=target_pid,
        port=port,
        output=output,
        markdown=markdown,
        max_level_s=parse_duration(max_level, "--max-level") if max_level else DEFAULT_MAX_LEVEL_S,
    )
