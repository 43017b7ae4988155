"""``RunOptions``: every choice of a run, validated, frozen, and saved with its results.

The CLI only collects strings; ``build_run_options`` turns them into this object
(one clear ``UsageError`` per bad value), so the runner never sees raw input.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from grpcbench.errors import UsageError
from grpcbench.load.connections import ConnectionStrategy, parse_connection_strategy
from grpcbench.parsing import (
    parse_cpu_set,
    parse_duration,
    parse_host_port,
    parse_params,
    parse_positive_float_list,
    parse_positive_int_list,
    parse_warmup,
)
from grpcbench.scenario import Scenario, Variant, load_scenario
from grpcbench.servers.spec import ServerSpec, parse_server_specs
from grpcbench.services.registry import load_service

DRIVERS = ("builtin", "ghz", "fake")
ARRIVALS = ("uniform", "poisson")
DEFAULT_MAX_LEVEL_S = 300.0
DEFAULT_MAX_IN_FLIGHT = 1000


@dataclass(frozen=True)
class LevelPlan:
    """One level: a concurrency (or, open loop, a rate), maybe a swept channel count."""

    concurrency: int  # closed loop: virtual users; open loop: cap on calls in flight
    channels: int = 0  # 0 = not swept: the connection strategy decides
    rate: float = 0.0  # 0 = closed loop
    variant: str = ""  # the scenario's workload variant ("" when it has none)

    def describe(self) -> str:
        return describe_level(self.concurrency, self.channels, self.rate, self.variant)


def describe_level(concurrency: int, channels: int, rate: float, variant: str = "") -> str:
    """The name of a level in tables and messages: "concurrency 10", "rate 500/s", ..."""
    text = f"rate {rate:g}/s" if rate else f"concurrency {concurrency}"
    text += f", channels {channels}" if channels else ""
    return text + (f", {variant}" if variant else "")


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
    connections: ConnectionStrategy
    client_processes: int
    ghz: str | None  # path to the ghz binary; None = from PATH
    placement: Placement
    target: str | None = None
    target_pid: int | None = None
    port: int = 0
    output: Path | None = None
    markdown: Path | None = None
    csv: Path | None = None
    max_level_s: float = DEFAULT_MAX_LEVEL_S
    channels: tuple[int, ...] = ()  # swept channel counts (a pool of N per level)
    rates: tuple[float, ...] = ()  # open-loop target rates; empty = closed loop
    arrivals: str = "uniform"
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT
    repeat: int = 1  # every level this many times, each time in fresh server processes
    variants: tuple[Variant, ...] = ()  # the scenario's workload variants chosen to run

    def level_plans(self) -> list[LevelPlan]:
        """Every level of a server, in the order they run."""
        channel_counts = self.channels or (0,)
        variants = [variant.name for variant in self.variants] or [""]
        loads = (
            [(self.max_in_flight, rate) for rate in self.rates]
            if self.rates
            else [(concurrency, 0.0) for concurrency in self.concurrency]
        )
        return [
            LevelPlan(concurrency, channels, rate, variant)
            for concurrency, rate in loads
            for channels in channel_counts
            for variant in variants
        ]

    def workload_params(self, plan: LevelPlan) -> dict[str, Any]:
        """The scenario's workload params, overridden by the level's variant."""
        params = dict(self.scenario.workload_params)
        for variant in self.variants:
            if variant.name == plan.variant:
                params.update(variant.params)
        return params

    def connections_for(self, plan: LevelPlan) -> int:
        """Connections a level opens: the swept count, else the strategy's pool size."""
        return plan.channels or self.connections.pool_size(plan.concurrency)

    @property
    def column_labels(self) -> tuple[str, ...]:
        if self.target:
            return (self.target,)
        return tuple(spec.label for spec in self.servers)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["scenario"] = {
            "name": self.scenario.name,
            "path": self.scenario.path,
            "server_params": self.scenario.server_params,
            "workload_params": self.scenario.workload_params,
        }
        data["servers"] = [spec.label for spec in self.servers]
        data["connections"] = self.connections.label
        data["variants"] = [{"name": v.name, **v.params} for v in self.variants]
        for key in ("output", "markdown", "csv"):
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
    connections: str = "auto",
    channels: str | None = None,
    rate: str | None = None,
    arrivals: str = "uniform",
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    client_processes: str = "auto",
    repeat: int = 1,
    variants: str | None = None,
    server_params: list[str] | None = None,
    workload_params: list[str] | None = None,
    ghz: str | None = None,
    target: str | None = None,
    target_pid: int | None = None,
    port: int = 0,
    output: Path | None = None,
    markdown: Path | None = None,
    csv: Path | None = None,
    pin: bool = True,
    server_cpus: str | None = None,
    client_cpus: str | None = None,
    max_level: str | None = None,
) -> RunOptions:
    chosen = load_scenario(scenario)
    overrides = parse_params(server_params or [], "--server-param")
    workload_overrides = parse_params(workload_params or [], "--workload-param")
    if overrides or workload_overrides:
        chosen = replace(
            chosen,
            server_params={**chosen.server_params, **overrides},
            workload_params={**chosen.workload_params, **workload_overrides},
        )
    service = load_service(chosen.service)  # fail here, not inside a server process
    drivers = tuple(d.strip() for d in load.split(",") if d.strip())
    unknown = [d for d in drivers if d not in DRIVERS]
    if unknown or not drivers:
        raise UsageError(f"unknown load driver {load!r} (known drivers: {', '.join(DRIVERS)})")
    if requests is not None and requests <= 0:
        raise UsageError(f"bad --requests {requests}: must be a positive integer")
    if requests is not None and duration:
        raise UsageError("give either --requests or --duration, not both")
    strategy = parse_connection_strategy(connections)
    channel_counts = parse_positive_int_list(channels, "--channels") if channels else ()
    if channel_counts and strategy.mode != "auto":
        raise UsageError("--channels sweeps pool sizes; do not combine it with --connections")
    rates = parse_positive_float_list(rate, "--rate") if rate else ()
    if rates and concurrency is not None:
        raise UsageError(
            "--rate replaces --concurrency (open loop); cap calls in flight with --max-in-flight"
        )
    if arrivals not in ARRIVALS:
        raise UsageError(f"bad --arrivals {arrivals!r} (choose uniform or poisson)")
    if max_in_flight <= 0:
        raise UsageError(f"bad --max-in-flight {max_in_flight}: must be a positive integer")
    if "ghz" in drivers and (
        rates or strategy.mode == "per-request" or strategy.policy != "round-robin"
    ):
        raise UsageError(
            "ghz runs closed loops over a fixed set of connections: use --load builtin for"
            " --rate, --connections per-request and pool:N:least-busy"
        )
    if repeat <= 0:
        raise UsageError(f"bad --repeat {repeat}: must be a positive integer")
    placement = build_placement(pin, server_cpus, client_cpus)
    processes = resolve_client_processes(client_processes, placement)
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
    options = RunOptions(
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
        connections=strategy,
        client_processes=processes,
        ghz=ghz,
        placement=placement,
        target=target,
        target_pid=target_pid,
        port=port,
        output=output,
        markdown=markdown,
        csv=csv,
        max_level_s=parse_duration(max_level, "--max-level") if max_level else DEFAULT_MAX_LEVEL_S,
        channels=channel_counts,
        rates=rates,
        arrivals=arrivals,
        max_in_flight=max_in_flight,
        repeat=repeat,
        variants=choose_variants(chosen, variants),
    )
    if "ghz" in drivers:
        for plan in options.level_plans():  # ghz cannot run every workload: say so now
            service.ghz_call_and_data(options.workload_params(plan))
    return options


def choose_variants(scenario: Scenario, names: str | None) -> tuple[Variant, ...]:
    if not names:
        return scenario.variants
    known = {variant.name: variant for variant in scenario.variants}
    chosen = []
    for name in (n.strip() for n in names.split(",")):
        if name not in known:
            listed = ", ".join(known) or "none"
            raise UsageError(f"unknown variant {name!r} of {scenario.name} (variants: {listed})")
        chosen.append(known[name])
    return tuple(chosen)


def resolve_client_processes(text: str, placement: Placement) -> int:
    """``auto``: one generator process per client CPU (each is one Python thread)."""
    if text.strip() == "auto":
        return max(1, len(placement.client_cpus) or (os.cpu_count() or 2) // 2)
    if not text.strip().isdigit() or int(text) <= 0:
        raise UsageError(f"bad --client-processes {text!r}: a positive integer or auto")
    return int(text)
