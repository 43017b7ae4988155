"""What one level is and how every level is loaded: plain frozen data (where things run
is ``model.placement``).

Shared by the runner, the pytest plugin and the benchmarks, and saved with the
results; it imports only the ``base`` layer (defaults, parsers, declarations) and
its own layer's connection strategies and rate schedules, so any module above
the model may use it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.util import find_spec
from typing import Any, Literal

from grpcbench.base import defaults
from grpcbench.base.declarations import at_least, help_for, one_of, setting
from grpcbench.base.declarations import check as check_settings
from grpcbench.base.declarations import from_json as settings_from_json
from grpcbench.base.declarations import to_json as settings_to_json
from grpcbench.base.errors import UsageError
from grpcbench.base.panels import LOAD_MODEL, OUTPUT, WHAT_TO_RUN
from grpcbench.base.parsing import (
    decimal,
    duration_seconds,
    parse_duration,
    parse_size,
    parse_warmup,
)
from grpcbench.model.connections import ConnectionStrategy, parse_connection_strategy
from grpcbench.model.ghz_workers import GhzWorkers, parse_worker_schedule
from grpcbench.model.schedule import (
    ConstantRate,
    Pacer,
    RateSchedule,
    parse_rate_schedule,
    shape_examples,
)
from grpcbench.model.think_time import ThinkTime, parse_think_time
from grpcbench.rpc.client_stacks import known_stack, stacks_help

Arrivals = Literal["uniform", "poisson"]
ARRIVALS: tuple[Arrivals, ...] = ("uniform", "poisson")
DurationStop = Literal["wait", "close", "ignore"]
DURATION_STOPS: tuple[DurationStop, ...] = ("wait", "close", "ignore")


@dataclass(frozen=True)
class LevelPlan:
    """One level: a concurrency (or, open loop, a rate), maybe a swept channel count."""

    concurrency: int  # closed loop: virtual users; open loop: cap on calls in flight
    channels: int = 0  # 0 = not swept: the connection strategy decides
    rate: float = 0.0  # 0 = closed loop
    variant: str = ""  # the scenario's workload variant ("" when it has none)
    connection: str = ""  # the connection strategy's label (auto, shared, pool:N, ...)
    schedule: str = ""  # --rate-schedule as given: the rate ramps (``rate`` is its peak)
    # Several scenarios at once (``model.level_scenarios``): their names; each runs its
    # own plan, side by side.
    scenarios: tuple[str, ...] = ()

    def pacer(self) -> Pacer | None:
        """An open loop's pace (its rate, or its schedule); None for a closed loop."""
        if self.schedule:
            return parse_rate_schedule(self.schedule)
        return ConstantRate(self.rate) if self.rate else None

    def describe(self) -> str:
        """The name of a level in tables and messages: "concurrency 10", "rate 500/s", ..."""
        if self.scenarios:
            return "scenarios " + " + ".join(self.scenarios)
        pacer = self.pacer()
        text = pacer.describe() if pacer else f"concurrency {self.concurrency}"
        text += f", channels {self.channels}" if self.channels else ""
        return text + (f", {self.variant}" if self.variant else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "concurrency": self.concurrency,
            "channels": self.channels,
            "rate": self.rate,
            "variant": self.variant,
            "connection": self.connection,
            **({"schedule": self.schedule} if self.schedule else {}),
            **({"scenarios": list(self.scenarios)} if self.scenarios else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LevelPlan:
        return cls(
            concurrency=int(data["concurrency"]),
            channels=int(data.get("channels", 0)),
            rate=float(data.get("rate", 0.0)),
            variant=str(data.get("variant", "")),
            connection=str(data.get("connection", "")),
            schedule=str(data.get("schedule", "")),
            scenarios=tuple(str(name) for name in data.get("scenarios") or ()),
        )


_DEFAULT_WARMUP = parse_warmup(defaults.WARMUP)
MIN_INTERVAL_S = 0.1  # --interval: each interval holds an HDR histogram (~200 KiB)

NO_TIMEOUT = 0.0  # -t 0, ghz's "no timeout": replaced by the level's time limit


def parse_timeout(text: str) -> float:
    """``--timeout``: a duration, or 0 for none (ghz's -t 0)."""
    if duration_seconds(text) == 0:
        return NO_TIMEOUT
    return parse_duration(text, "--timeout")


def parse_positive_int(text: str, option: str) -> int:
    value = decimal(text)
    if value is None or value <= 0:
        raise UsageError(f"bad {option} {text[:40]!r}: must be a positive integer")
    return value


def keepalive_problem(value: float) -> str | None:
    """Off (0) or at least a second: shorter is a PING flood that servers answer with
    GOAWAY (grpc-go itself raises a client's keepalive under 10 s to 10 s)."""
    if value == 0 or (math.isfinite(value) and value >= 1.0):
        return None
    return "0 (off) or at least 1s"


def authority_problem(value: str) -> str | None:
    """An :authority is printable ASCII without spaces (a host, a port): CR, LF or any
    control character would be a header injection on the wire stack."""
    if all("\x21" <= char <= "\x7e" for char in value):
        return None
    return "a host name (and port) of printable ASCII, no spaces or control characters"


def available_loop(name: str) -> str:
    """uvloop (less CPU per call) where it is installed; asyncio on request or without it."""
    if name not in ("uvloop", "asyncio"):
        raise UsageError(f"bad --client-loop {name!r}: uvloop or asyncio")
    return "asyncio" if name == "uvloop" and find_spec("uvloop") is None else name


def parse_interval(text: str) -> float:
    off = text.strip() in ("off", "0")
    return 0.0 if off else parse_duration(text, "--sample-interval")


@dataclass(frozen=True)
class LoadSettings:
    """How every level of a run is loaded: its size, warm-up, deadline and connections.

    Each setting is declared once (``settings.setting``): its option (generated
    into `run` by ``cli_options``), help, JSON name, what older results files
    meant without it, and its check, which runs here, so the CLI, the pytest
    plugin and the benchmarks obey the same rules."""

    requests: int = setting(
        defaults.REQUESTS, option="--requests", short="-n", metavar="N", panel=WHAT_TO_RUN,
        json="requests", before=0, load=int, check=at_least(0),
        parse=lambda text: parse_positive_int(text, "--requests"),
        help="Measured calls per level and server. Default: the scenario's ({default}"
        " unless it says otherwise).",
    )  # fmt: skip
    duration_s: float = setting(
        0.0, option="--duration", short="-z", metavar="DURATION", panel=WHAT_TO_RUN,
        json="duration_s", before=0.0, load=float, check=at_least(0),
        parse=lambda text: parse_duration(text, "--duration"), default_text="none",
        help="Measure each level for a time (10s, 500ms) instead of --requests.",
    )  # fmt: skip
    warmup_requests: int = setting(
        _DEFAULT_WARMUP[0], option="--warmup", metavar="N|DURATION", panel=WHAT_TO_RUN,
        json="warmup_requests", before=0, load=int, check=at_least(0),
        parse=parse_warmup, sets=("warmup_requests", "warmup_s"), default_text=defaults.WARMUP,
        help="Discarded warm-up before a server's first level: calls (200) or a time (2s); later"
        f" levels on it: at most {defaults.WARM_SERVER_CALLS_PER_USER} calls per user. Default:"
        " the scenario's ({default} unless it says otherwise).",
    )  # fmt: skip
    warmup_s: float = setting(
        _DEFAULT_WARMUP[1], option="--warmup", cli=False, json="warmup_s", before=0.0,
        load=float, check=at_least(0), help="(the time form of --warmup)",
    )  # fmt: skip
    timeout_s: float = setting(
        parse_duration(defaults.TIMEOUT, "timeout"), option="--timeout", short="-t",
        metavar="DURATION", panel=WHAT_TO_RUN, json="timeout_s", load=float,
        check=at_least(0, strict=True), parse=parse_timeout, default_text=defaults.TIMEOUT,
        help="Per-call deadline, e.g. 20s; 0 (ghz's: none) lets a call take the level's"
        " time limit (--max-level). Default: the scenario's ({default} unless it says"
        " otherwise).",
    )  # fmt: skip
    connections: ConnectionStrategy = setting(
        default_factory=ConnectionStrategy, option="--connections", metavar="STRATEGY",
        panel=LOAD_MODEL, json="connections", dump=lambda strategy: strategy.label,
        load=lambda label: parse_connection_strategy(str(label)),
        default_text=defaults.CONNECTIONS,
        help="Client connections: auto (one per 50 concurrent calls), shared, N or pool:N"
        " (round-robin per call), pool:N:least-busy, per-request (a new connection per"
        " call; its set-up time is shown apart), per-user (one per virtual user)"
        " or checkout:N (check out per call, open one when none is idle, keep N).",
    )  # fmt: skip
    arrivals: Arrivals = setting(
        "uniform", option="--arrivals", metavar="uniform|poisson", panel=LOAD_MODEL,
        json="arrivals", check=one_of(*ARRIVALS),
        load=lambda value: "poisson" if value == "poisson" else "uniform",
        parse=lambda value: value,  # checked as it is, not folded into uniform
        help="Open-loop arrivals: uniform or poisson.",
    )  # fmt: skip
    rate_schedule: RateSchedule | None = setting(
        None, option="--rate-schedule", metavar="SHAPE:FIELDS", panel=LOAD_MODEL,
        json="rate_schedule", dump=lambda schedule: schedule.text if schedule else None,
        load=lambda value: (
            parse_rate_schedule(value) if isinstance(value, str) and value else value or None
        ),
        parse=parse_rate_schedule, default_text="none",
        help=lambda: "Open loop, one level whose rate ramps (ghz's --load-schedule, k6's"
        f" stages): {shape_examples()}. The level lasts a step: or line: schedule; ghz:"
        " (ghz's own, with optional end and max) holds its last rate until -n or -z ends"
        " the level. See it over time with --interval.",
    )  # fmt: skip
    duration_stop: DurationStop = setting(
        "wait", option="--duration-stop", metavar="wait|close|ignore", panel=LOAD_MODEL,
        json="duration_stop", check=one_of(*DURATION_STOPS),
        load=lambda value: value if value in DURATION_STOPS else "wait",
        parse=lambda value: value,
        help="At the end of --duration (ghz's -z): wait for the calls in flight; close:"
        " cancel them, each counted Cancelled (ghz's default); ignore: cancel them, not"
        " counted.",
    )  # fmt: skip
    think_time: ThinkTime | None = setting(
        None, option="--think-time", metavar="T|LOW..HIGH|pace:T", panel=LOAD_MODEL,
        json="think_time", dump=lambda think: think.text if think else None,
        load=lambda value: parse_think_time(str(value)) if value else None,
        parse=parse_think_time, default_text="none",
        help="Closed loop: each virtual user waits between its calls, not counted as"
        " latency: 100ms after each call (Locust's constant), 50ms..150ms a uniform draw"
        " (between), or pace:1s, calls started at least that far apart (constant_pacing).",
    )  # fmt: skip
    worker_schedule: GhzWorkers | None = setting(
        None, option="--worker-schedule", metavar="ghz:FIELDS", panel=LOAD_MODEL,
        json="worker_schedule", dump=lambda schedule: schedule.text if schedule else None,
        load=lambda value: parse_worker_schedule(str(value)) if value else None,
        parse=parse_worker_schedule, default_text="none",
        help="Open loop: the workers over time, ghz's --concurrency-schedule exactly"
        " (ghz:start=5,step=5,every=5s[,end=50][,max=30s]): which worker's id each call"
        " carries ({{.WorkerID}}) and how many calls wait for replies at once.",
    )  # fmt: skip
    interval_s: float = setting(
        0.0, option="--interval", metavar="DURATION|off", panel=OUTPUT, json="interval_s",
        before=0.0, load=float,
        check=lambda value: None if value == 0 or value >= MIN_INTERVAL_S else (
            f"must be off or at least {MIN_INTERVAL_S * 1000:g}ms"),
        parse=lambda text: 0.0 if text.strip() in ("off", "0") else parse_duration(
            text, "--interval"),
        default_text="off",
        help="Each level as a time series: achieved rate, p50, p99 and errors per interval"
        " (1s), live in the terminal, in the JSON and as a chart.",
    )  # fmt: skip
    max_in_flight: int = setting(
        defaults.MAX_IN_FLIGHT, option="--max-in-flight", metavar="N", panel=LOAD_MODEL,
        json="max_in_flight", load=int, check=at_least(1),
        parse=lambda text: parse_positive_int(text, "--max-in-flight"),
        help="Open loop: most calls in flight at once.",
    )  # fmt: skip
    max_level_s: float = setting(
        parse_duration(defaults.MAX_LEVEL, "max level"), option="--max-level",
        metavar="DURATION", panel=LOAD_MODEL, json="max_level_s", load=float,
        check=at_least(0, strict=True), parse=lambda text: parse_duration(text, "--max-level"),
        default_text=defaults.MAX_LEVEL,
        help="Hard time limit of one level's measurement (default {default}).",
    )  # fmt: skip
    connect_timeout_s: float = setting(
        10.0, option="--connect-timeout", metavar="DURATION", panel=LOAD_MODEL,
        json="connect_timeout_s", load=float, check=at_least(0, strict=True),
        parse=lambda text: parse_duration(text, "--connect-timeout"), default_text="10s",
        help="How long a connection may take to open (TCP, TLS and HTTP/2 settings).",
    )  # fmt: skip
    stall_limit_s: float = setting(
        parse_duration(defaults.STALL_LIMIT, "stall limit"), option="--stall-limit",
        metavar="DURATION", panel=LOAD_MODEL, json="stall_limit_s", load=float,
        check=at_least(0, strict=True), parse=lambda text: parse_duration(text, "--stall-limit"),
        default_text=defaults.STALL_LIMIT,
        help="User code (a flow, a workload) that holds a generator's event loop this long"
        " ends its level in one line that names it (default {default}).",
    )  # fmt: skip
    generator_memory_bytes: int = setting(
        defaults.GENERATOR_MEMORY_LIMIT, option="--generator-memory-limit", metavar="SIZE",
        panel=LOAD_MODEL, json="generator_memory_bytes", load=int, check=at_least(1),
        parse=lambda text: parse_size(text, "--generator-memory-limit"), default_text="4 GiB",
        help="A generator (or the pre-flight call) grown past this ends its level in one"
        " line: user code that keeps what it allocates.",
    )  # fmt: skip
    # ghz's channel flags (rpc.client_options.ClientOptions is what channels read).
    authority: str = setting(
        "", option="--authority", metavar="NAME", panel=LOAD_MODEL, json="authority", load=str,
        default_text="the target's address", check=authority_problem,
        help="The :authority the calls carry (an HTTP/2 virtual host), as ghz's --authority.",
    )  # fmt: skip
    keepalive_s: float = setting(
        0.0, option="--keepalive", metavar="DURATION", panel=LOAD_MODEL, json="keepalive_s",
        load=float, check=keepalive_problem, default_text="off",
        parse=lambda text: parse_duration(text, "--keepalive"),
        help="Send an HTTP/2 PING on every connection this often (ghz's --keepalive).",
    )  # fmt: skip
    gzip: bool = setting(
        False, option="--enable-compression", short="-e", flag=True, panel=LOAD_MODEL,
        json="gzip", load=bool, parse=lambda text: text.lower() in ("true", "1", "yes"),
        default_text="off",
        help="Compress every request message with gzip (grpc-encoding: gzip), as ghz's -e.",
    )  # fmt: skip
    max_recv_bytes: int = setting(
        defaults.MAX_RECV_BYTES, option="--max-recv-message-size", metavar="SIZE",
        panel=LOAD_MODEL, json="max_recv_bytes", before=0, load=int, check=at_least(0),
        default_text="4 MiB, grpc's",
        parse=lambda text: parse_size(text, "--max-recv-message-size"),
        help="A reply message larger than this ends its call ResourceExhausted (42 MB, 16 MiB;"
        " 0: no limit).",
    )  # fmt: skip
    max_send_bytes: int = setting(
        0, option="--max-send-message-size", metavar="SIZE", panel=LOAD_MODEL,
        json="max_send_bytes", load=int, check=at_least(0), default_text="no limit",
        parse=lambda text: parse_size(text, "--max-send-message-size"),
        help="A request message larger than this fails its call ResourceExhausted, unsent.",
    )  # fmt: skip
    call_details: int = setting(
        0, option="--call-details", cli=False, json="call_details", before=0, load=int,
        check=at_least(0),
        help="Per-call records each generator keeps (ghz's details; 0: none). Set when an"
        " output lists calls one by one (ghz's -O json, csv, influx-details).",
    )  # fmt: skip
    client_cpus: tuple[int, ...] = setting(
        (), option="--client-cpus", cli=False, json="client_cpus", dump=list,
        load=lambda cpus: tuple(int(c) for c in cpus or ()),
        help="CPUs for the load generator, e.g. 1.",
    )  # fmt: skip
    client_loop: str = setting(
        defaults.CLIENT_LOOP, option="--client-loop", metavar="uvloop|asyncio",
        panel=LOAD_MODEL, json="client_loop", before="asyncio", load=str,
        check=one_of("uvloop", "asyncio"), parse=available_loop,
        help="The built-in generator's event loop: uvloop (less CPU per call) or asyncio.",
    )  # fmt: skip
    client_stack: str = setting(
        defaults.CLIENT_STACK, option="--client-stack", metavar="STACK",
        panel=LOAD_MODEL, json="client_stack", before="grpcio", load=str,
        check=known_stack, help=stacks_help,
    )  # fmt: skip
    cooldown_s: float = setting(
        0.0, option="--cooldown", metavar="DURATION", panel=WHAT_TO_RUN, json="cooldown_s",
        before=0.0, load=float, check=at_least(0), default_text="none",
        parse=lambda text: parse_duration(text, "--cooldown"),
        help="After each level's load, keep watching the server this long with no load:"
        " the memory it holds after the burst and the CPU it still spends, in"
        " the tables and the timeline.",
    )  # fmt: skip
    client_allocations: int = setting(
        0, option="--client-allocations", metavar="N", panel=OUTPUT,
        json="client_allocations", before=0, load=int, check=at_least(0), default_text="off",
        parse=lambda text: parse_positive_int(text, "--client-allocations"),
        help="After each level, N more calls, untimed, in a process of their own with"
        " memray recording every allocation: the client's bytes and allocations per call"
        " (Go's B/op and allocs/op).",
    )  # fmt: skip
    # Timelines of CPU % and RSS (server, backing services, generator); 0 = none.
    sample_interval_s: float = setting(
        parse_duration(defaults.SAMPLE_INTERVAL, "sample interval"),
        option="--sample-interval", metavar="DURATION|off", panel=OUTPUT,
        json="sample_interval_s", before=0.0, load=float, check=at_least(0),
        parse=parse_interval, default_text=defaults.SAMPLE_INTERVAL,
        help="Sample CPU % and RSS of the server, backing services and generator this often"
        " (timelines in the JSON and charts); off for none.",
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
