"""Plain data that crosses process boundaries: what to run and what was measured.

A driver takes a ``GeneratorJob`` (JSON-serialisable, so generator processes and
cluster workers receive it) and returns a ``LoadResult``, which
merges exactly with results of other processes running the same spec.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from grpcbench.base.merging import merge_optional
from grpcbench.model.call_details import CallDetails
from grpcbench.model.intervals import IntervalFigures, merge_intervals
from grpcbench.model.level_parts import (
    SATURATION_THRESHOLD,
    CheckFigures,
    MethodFigures,
    StreamSummary,
    WorkerFigures,
    merge_checks,
)
from grpcbench.model.plan import LevelPlan, LoadSettings
from grpcbench.observe.cpu_share import shares
from grpcbench.observe.timeline import Timeline
from grpcbench.stats.histogram import LatencySummary, merge_summaries

# An open-loop generator whose p99 send delay exceeds this is behind its schedule.
SCHEDULE_LAG_LIMIT_US = 10_000


@dataclass(frozen=True)
class Share:
    """One generator's part of a level: what is split among processes and cluster
    workers (everything else is the level's plan and the run's settings, whole)."""

    concurrency: int  # closed loop: virtual users; open loop: cap on calls in flight
    requests: int  # measured calls; 0 when the level is time-based
    warmup_requests: int
    connections: int  # pool size (0 per-request; users per-user; most idle for checkout)
    rate: float = 0.0  # calls/s on a pacer (open loop); 0 = closed loop
    index: int = 0  # this generator's place among the level's (request numbers stay unique)
    of: int = 1

    @classmethod
    def whole(cls, plan: LevelPlan, settings: LoadSettings) -> Share:
        """The whole level, for one generator."""
        return cls(
            concurrency=plan.concurrency,
            requests=settings.requests,
            warmup_requests=settings.warmup_requests,
            connections=settings.connections_for(plan),
            rate=plan.rate,
        )


@dataclass(frozen=True)
class GeneratorJob:
    """What one generator runs: the level's plan and the run's load settings as they
    are (never copied field by field), its share of the level, and the calls."""

    target: str  # host:port
    service: str
    plan: LevelPlan
    settings: LoadSettings
    share: Share
    workload_params: dict[str, Any] = field(default_factory=dict)
    # --call: the method call (rpc.call.MethodCall as JSON) replacing the service's
    # workload; it may carry credentials, so a spec is never saved or printed.
    call: dict[str, Any] | None = None
    security: dict[str, Any] | None = None  # rpc.security.ChannelSecurity as JSON; None = plaintext
    # --workload: the user's flow (rpc.flow.PlannedFlow as JSON); may carry credentials.
    flow: dict[str, Any] | None = None
    # Several scenarios at once (model.level_scenarios): each one's own job, run side by
    # side by a driver that declares "scenarios"; this job's settings are theirs.
    parts: tuple[GeneratorJob, ...] = ()

    @classmethod
    def for_level(
        cls, target: str, service: str, plan: LevelPlan, settings: LoadSettings, **rest: Any
    ) -> GeneratorJob:
        """The whole level for one generator (drivers split it: ``split_share``)."""
        return cls(target, service, plan, settings, Share.whole(plan, settings), **rest)

    @property
    def connection_mode(self) -> str:
        """ "pool", "per-request", "per-user" or "checkout" ("auto" is a pool)."""
        mode = self.settings.connections.mode
        return "pool" if mode == "auto" else mode

    @property
    def pool_policy(self) -> str:
        return self.settings.connections.policy

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "service": self.service,
            "plan": self.plan.to_json(),
            "settings": self.settings.to_json(),
            "share": asdict(self.share),
            "workload_params": self.workload_params,
            "call": self.call,
            "security": self.security,
            "flow": self.flow,
            **({"parts": [part.to_json() for part in self.parts]} if self.parts else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GeneratorJob:
        return cls(
            target=data["target"],
            service=data["service"],
            plan=LevelPlan.from_json(data["plan"]),
            settings=LoadSettings.from_json(data["settings"]),
            share=Share(**data["share"]),
            workload_params=dict(data.get("workload_params") or {}),
            call=data.get("call"),
            security=data.get("security"),
            flow=data.get("flow"),
            parts=tuple(cls.from_json(part) for part in data.get("parts") or ()),
        )


_SUMMARY_FIELDS = ("latency", "connect_latency", "service_latency", "schedule_lag")


@dataclass(frozen=True)
class LoadResult:
    """What one or more generator processes measured for one level."""

    driver: str
    concurrency: int
    connections: int
    statuses: dict[str, int]  # gRPC status name -> calls, "OK" included
    # Every finished call, OK or not (like ghz --count-errors). In an open loop,
    # measured from each call's intended send time (coordinated omission corrected).
    latency: LatencySummary
    wall_s: float  # measured phase, first call start to last call end
    client_cpu_s: float = 0.0
    # Run-queue wait of the generator's threads, and the CPU other processes took
    # from its CPUs meanwhile (set by the driver, which sees all its processes):
    # the smaller is what it lost to neighbours (see cpu_share).
    client_wait_s: float = 0.0
    client_others_s: float = 0.0
    client_steal_share: float = 0.0  # the share of its CPUs' time the host took (see cpu_share)
    processes: int = 1
    # Cores the generator could use: 1 per built-in process (Python's GIL), the
    # CPUs given to ghz (Go uses them all).
    cpu_cores: float = 1.0
    truncated: bool = False  # the level hit max_level_s before its request count
    # Set when the latency histogram covers fewer calls than were counted (ghz
    # keeps at most 1,000,000 per-call records).
    latency_note: str = ""
    connect_latency: LatencySummary | None = None  # per-request set-up times
    rate: float = 0.0  # target calls/s of an open loop
    service_latency: LatencySummary | None = None  # open loop: from actual send
    schedule_lag: LatencySummary | None = None  # open loop: actual - intended send
    stream: StreamSummary | None = None  # calls that reported messages and items
    # The generator processes' memory (summed): when measuring began, and at the
    # peak; flat over millions of calls, or the generator leaks (0: not measured).
    client_rss_start_bytes: int = 0
    client_peak_rss_bytes: int = 0
    workers: tuple[WorkerFigures, ...] = ()  # --cluster: every worker's own figures
    client_timeline: Timeline | None = None  # the generator's CPU % and RSS (summed)
    # Failed calls by "Status: message" (ghz's errorDistribution), at most
    # recorders.MAX_ERROR_MESSAGES distinct messages per generator.
    errors: dict[str, int] = field(default_factory=dict)
    # --interval: the measured phase as a time series (merged interval by interval).
    intervals: tuple[IntervalFigures, ...] = ()
    # --interval: the most any interval reached the coordinator (its live view and
    # exporters) after it closed, in seconds (run.measure.IntervalLateness).
    interval_late_s: float | None = None
    # A timed open loop: calls finished by the middle and by the end of its pacer
    # (summed over processes), so the rate the server completed is measured in the
    # second half of the window, whatever the latency (capacity.probe.achieved_rate);
    # then the calls its pacer scheduled before the middle and before the end (files
    # from before have the first two only).
    window_calls: tuple[int, ...] = ()
    # Per-call records, kept only when a format that lists calls asks for them
    # (LoadSettings.call_details): ghz's details.
    details: CallDetails | None = None
    # A mix: each method's own figures, in the mix's order (the fields above: the whole).
    methods: tuple[MethodFigures, ...] = ()
    # A --workload flow: each step's own figures, by name (the fields above: the flows').
    steps: tuple[MethodFigures, ...] = ()
    # A flow's checks (client.check), by name: how often each held.
    checks: tuple[CheckFigures, ...] = ()
    # Several scenarios at once: each one's own figures (the fields above: all of them).
    scenarios: tuple[ScenarioFigures, ...] = ()

    @property
    def count(self) -> int:
        return sum(self.statuses.values())

    @property
    def ok(self) -> int:
        return self.statuses.get("OK", 0)

    @property
    def rps(self) -> float:
        """Finished calls per second of the measured phase (ghz counts errors too)."""
        return self.count / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def client_cpu_fraction(self) -> float:
        """Share of the generator processes' CPU budget they used (1.0 = saturated)."""
        budget = self.wall_s * self.cpu_cores
        return self.client_cpu_s / budget if budget > 0 else 0.0

    @property
    def client_saturation(self) -> float:
        """Share of its CPU budget the generator used or lost to neighbours (1.0 = saturated)."""
        return sum(self.client_shares)

    @property
    def client_shares(self) -> tuple[float, float]:
        """Its CPU budget's shares used and lost waiting for neighbours (``shares``)."""
        return shares(
            self.client_cpu_s, self.wall_s, self.cpu_cores, self.client_wait_s,
            self.client_others_s, self.client_steal_share,
        )  # fmt: skip

    @property
    def client_saturated(self) -> bool:
        return self.client_saturation >= SATURATION_THRESHOLD

    @property
    def behind_schedule(self) -> bool:
        """An open loop that could not send its calls on time (see schedule_lag)."""
        lag = self.schedule_lag
        return bool(lag and lag.count and lag.percentile_us(99) > SCHEDULE_LAG_LIMIT_US)

    def merge(self, other: LoadResult) -> LoadResult:
        """Combine results of processes that ran side by side on the same level."""
        return LoadResult(
            driver=self.driver,
            concurrency=self.concurrency + other.concurrency,
            connections=self.connections + other.connections,
            statuses=dict(Counter(self.statuses) + Counter(other.statuses)),
            latency=merge_summaries([self.latency, other.latency]),
            wall_s=max(self.wall_s, other.wall_s),
            client_cpu_s=self.client_cpu_s + other.client_cpu_s,
            client_wait_s=self.client_wait_s + other.client_wait_s,
            client_others_s=self.client_others_s + other.client_others_s,
            client_steal_share=max(self.client_steal_share, other.client_steal_share),
            processes=self.processes + other.processes,
            cpu_cores=self.cpu_cores + other.cpu_cores,
            truncated=self.truncated or other.truncated,
            latency_note="; ".join(n for n in (self.latency_note, other.latency_note) if n),
            connect_latency=merge_optional(
                self.connect_latency, other.connect_latency, LatencySummary.merge
            ),
            rate=self.rate + other.rate,
            service_latency=merge_optional(
                self.service_latency, other.service_latency, LatencySummary.merge
            ),
            schedule_lag=merge_optional(
                self.schedule_lag, other.schedule_lag, LatencySummary.merge
            ),
            stream=merge_optional(self.stream, other.stream, StreamSummary.merge),
            client_rss_start_bytes=self.client_rss_start_bytes + other.client_rss_start_bytes,
            client_peak_rss_bytes=self.client_peak_rss_bytes + other.client_peak_rss_bytes,
            workers=self.workers + other.workers,
            client_timeline=merge_optional(
                self.client_timeline, other.client_timeline, Timeline.plus
            ),
            errors=dict(Counter(self.errors) + Counter(other.errors)),
            intervals=merge_intervals(self.intervals, other.intervals),
            interval_late_s=merge_optional(self.interval_late_s, other.interval_late_s, max),
            window_calls=(
                tuple(a + b for a, b in zip(self.window_calls, other.window_calls, strict=True))
                if self.window_calls and other.window_calls
                else ()
            ),
            details=merge_optional(self.details, other.details, CallDetails.merge),
            methods=_merge_methods(self.methods, other.methods),
            steps=_merge_methods(self.steps, other.steps, union=True),
            checks=merge_checks(self.checks, other.checks),
            scenarios=_merge_scenarios(self.scenarios, other.scenarios),
        )

    def to_json(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in _SUMMARY_FIELDS:
            summary = data[name]
            data[name] = asdict(summary) if summary is not None else None
        data["stream"] = self.stream.to_json() if self.stream else None
        data["workers"] = [asdict(worker) for worker in self.workers]
        data["client_timeline"] = self.client_timeline.to_json() if self.client_timeline else None
        data["intervals"] = [figures.to_json() for figures in self.intervals]
        data["window_calls"] = list(self.window_calls)
        data["details"] = self.details.to_json() if self.details else None
        data["methods"] = [figures.to_json() for figures in self.methods]
        data["steps"] = [figures.to_json() for figures in self.steps]
        data["checks"] = [asdict(check) for check in self.checks]
        data["scenarios"] = [scenario.to_json() for scenario in self.scenarios]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LoadResult:
        data = dict(data)
        for name in _SUMMARY_FIELDS:
            if data.get(name) is not None:
                data[name] = LatencySummary.from_json(data[name])
        if data.get("stream") is not None:
            data["stream"] = StreamSummary.from_json(data["stream"])
        data["workers"] = tuple(WorkerFigures(**worker) for worker in data.get("workers") or ())
        timeline = data.get("client_timeline")
        data["client_timeline"] = Timeline.from_json(timeline) if timeline else None
        data["errors"] = {str(k): int(v) for k, v in (data.get("errors") or {}).items()}
        data["intervals"] = tuple(
            IntervalFigures.from_json(figures) for figures in data.get("intervals") or ()
        )
        data["window_calls"] = tuple(int(n) for n in data.get("window_calls") or ())
        details = data.get("details")
        data["details"] = CallDetails.from_json(details) if details else None
        data["methods"] = tuple(MethodFigures.from_json(m) for m in data.get("methods") or ())
        data["steps"] = tuple(MethodFigures.from_json(m) for m in data.get("steps") or ())
        data["checks"] = tuple(CheckFigures.from_json(c) for c in data.get("checks") or ())
        data["scenarios"] = tuple(ScenarioFigures.from_json(s) for s in data.get("scenarios") or ())
        return cls(**data)


@dataclass(frozen=True)
class ScenarioFigures:
    """One of several scenarios run at once (``model.level_scenarios``): its executor
    and everything it measured, as a level's own figures."""

    name: str
    executor: str  # "concurrency 5", "rate 200/s"
    expected: tuple[str, ...]  # its own successful statuses (() = the level's)
    load: LoadResult

    def merge(self, other: ScenarioFigures) -> ScenarioFigures:
        return replace(self, load=self.load.merge(other.load))

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "executor": self.executor,
            "expected": list(self.expected),
            "load": self.load.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ScenarioFigures:
        return cls(
            str(data["name"]),
            str(data["executor"]),
            tuple(str(s) for s in data.get("expected") or ()),
            LoadResult.from_json(data["load"]),
        )


def _merge_scenarios(
    ours: tuple[ScenarioFigures, ...], theirs: tuple[ScenarioFigures, ...]
) -> tuple[ScenarioFigures, ...]:
    """Each scenario with its namesake (processes that ran the same scenarios)."""
    if not (ours and theirs):
        return ours or theirs
    by_name = {scenario.name: scenario for scenario in theirs}
    return tuple(s.merge(by_name[s.name]) if s.name in by_name else s for s in ours)


def _merge_methods(
    ours: tuple[MethodFigures, ...], theirs: tuple[MethodFigures, ...], union: bool = False
) -> tuple[MethodFigures, ...]:
    """A mix's methods (or a flow's steps) over processes that ran side by side, by
    name; ``union``: a name only one process saw is kept (a flow's rare branch)."""
    if not theirs:
        return ours
    if not ours:
        return theirs
    by_name = {figures.name: figures for figures in theirs}
    merged = tuple(
        figures.merge(by_name[figures.name]) if figures.name in by_name else figures
        for figures in ours
    )
    ours_names = {figures.name for figures in ours}
    extra = tuple(f for f in theirs if f.name not in ours_names) if union else ()
    return merged + extra
