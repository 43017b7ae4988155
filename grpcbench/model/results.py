"""Versioned run results: what was measured, with what, and whether the run finished.

The JSON file is rewritten (atomically) after every level, so a run that is
interrupted or fails keeps everything it measured; ``status`` says which.
The layout is versioned: ``results_format`` holds its history and the upgrade
chain that lets every older file load as the current one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, get_args

from grpcbench.base.errors import UsageError
from grpcbench.base.secrets import redact, redact_all
from grpcbench.model.allocations import ClientAllocations
from grpcbench.model.failures import level_failures
from grpcbench.model.level_scenarios import describe_parts
from grpcbench.model.load_result import LoadResult
from grpcbench.model.placement import Placement
from grpcbench.model.plan import LevelPlan, LoadSettings
from grpcbench.model.results_format import FORMAT_VERSION
from grpcbench.model.schedule import mean_rate
from grpcbench.model.verdict import Verdict, judge
from grpcbench.model.warmup import Warmup
from grpcbench.observe.monitor import ProcessUsage

RunStatus = Literal["running", "complete", "interrupted", "failed"]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class LevelResult:
    """One target (column) at one level, driven by one driver, in one repeat."""

    scenario: str
    server: str  # the column: a server kind's label, or an external target's address
    plan: LevelPlan
    measured: LoadResult  # what the driver measured (it names the driver)
    server_usage: ProcessUsage | None
    started_at: str
    finished_at: str
    repeat: int = 0  # which of the --repeat runs (0-based); each in fresh server processes
    # Backing services the run started (embedded S3, MongoDB, PostgreSQL), measured like
    # the server.
    backing_usage: dict[str, ProcessUsage] = field(default_factory=dict)
    # The statuses that count as success (--expect-status; OK unless told otherwise).
    expected: tuple[str, ...] = ("OK",)
    # --profile: the cell's collapsed stacks and top functions (grpcbench.profile.pyspy).
    profile: dict[str, Any] | None = None
    # --profile generator: the same for the built-in generator's processes.
    generator_profile: dict[str, Any] | None = None
    # --client-allocations: the client's bytes and allocations per call (untimed pass).
    client_allocations: ClientAllocations | None = None
    # The warm-up this level had (``model.warmup``); None in files from before it was
    # saved per level (then the run's --warmup, on every level).
    warmup: Warmup | None = None

    @property
    def unexpected(self) -> int:
        """Calls that ended with a status not in ``expected``: the level's failures."""
        return level_failures(self.measured, self.expected)

    @property
    def driver(self) -> str:
        return self.measured.driver

    @property
    def concurrency(self) -> int:
        return self.plan.concurrency

    @property
    def channels(self) -> int:
        return self.plan.channels

    @property
    def rate(self) -> float:
        return self.plan.rate

    @property
    def variant(self) -> str:
        return self.plan.variant

    @property
    def connection(self) -> str:
        return self.plan.connection

    def describe(self) -> str:
        """The level's name in tables: "concurrency 10", "rate 500/s, channels 2", ..."""
        return self.plan.describe()

    @property
    def offered_rate(self) -> float:
        """Calls/s an open loop's pacer offered, averaged over a schedule (0: closed loop)."""
        pacer = self.plan.pacer()
        return mean_rate(pacer) if pacer and pacer.duration_s else self.measured.rate

    @property
    def server_cpu_us_per_call(self) -> float | None:
        """The server's CPU per finished call: its efficiency, whoever limited the rate."""
        usage, count = self.server_usage, self.measured.count
        return usage.cpu_s / count * 1e6 if usage and count else None

    @property
    def generator_cpu_us_per_call(self) -> float | None:
        count = self.measured.count
        return self.measured.client_cpu_s / count * 1e6 if count else None

    @property
    def verdict(self) -> Verdict:
        """Which side limited this level's figures (see ``verdict``)."""
        return judge(self)

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "server": self.server,
            "plan": self.plan.to_json(),
            "repeat": self.repeat,
            # Per-call records go to the formats that list calls (ghz's), not here.
            "load": {**self.measured.to_json(), "details": None},
            "server_usage": self.server_usage.to_json() if self.server_usage else None,
            "backing_usage": {name: u.to_json() for name, u in self.backing_usage.items()},
            "verdict": self.verdict,  # derived from the figures above; recomputed on load
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "expected_statuses": list(self.expected),
            **({"warmup": self.warmup.to_json()} if self.warmup else {}),
            **({"profile": self.profile} if self.profile else {}),
            **({"generator_profile": self.generator_profile} if self.generator_profile else {}),
            **(
                {"client_allocations": self.client_allocations.to_json()}
                if self.client_allocations
                else {}
            ),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LevelResult:
        usage = data.get("server_usage")
        return cls(
            scenario=str(data["scenario"]),
            server=_name(data["server"], "server"),
            plan=LevelPlan.from_json(data["plan"]),
            measured=LoadResult.from_json(data["load"]),
            server_usage=ProcessUsage.from_json(usage) if usage else None,
            started_at=str(data["started_at"]),
            finished_at=str(data["finished_at"]),
            repeat=int(data.get("repeat", 0)),
            backing_usage={
                str(name): ProcessUsage.from_json(usage)
                for name, usage in (data.get("backing_usage") or {}).items()
            },
            expected=tuple(str(s) for s in data.get("expected_statuses") or ("OK",)),
            profile=data.get("profile"),
            generator_profile=data.get("generator_profile"),
            warmup=Warmup.from_json(data["warmup"]) if data.get("warmup") else None,
            client_allocations=(
                ClientAllocations.from_json(data["client_allocations"])
                if data.get("client_allocations")
                else None
            ),
        )


@dataclass(frozen=True)
class LevelError:
    """A level (or, with no plan, a whole column) that could not be measured, and why."""

    server: str
    driver: str
    plan: LevelPlan | None
    message: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "message", redact(self.message))

    def describe(self) -> str:
        where = " ".join(
            part
            for part in (
                self.server,
                f"[{self.driver}]" if self.driver else "",
                self.plan.describe() if self.plan else "",
            )
            if part
        )
        return f"{where}: {self.message}" if where else self.message

    def to_json(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "driver": self.driver,
            "plan": self.plan.to_json() if self.plan else None,
            "message": self.message,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LevelError:
        plan = data.get("plan")
        return cls(
            server=str(data.get("server", "")),
            driver=str(data.get("driver", "")),
            plan=LevelPlan.from_json(plan) if plan else None,
            message=str(data["message"]),
        )


@dataclass(frozen=True)
class RecordedOptions:
    """The choices of a run that its results depend on, as saved beside them."""

    scenario: str = ""
    service: str = ""
    server_params: dict[str, Any] = field(default_factory=dict)
    workload_params: dict[str, Any] = field(default_factory=dict)
    targets: tuple[str, ...] = ()  # column labels: server specs or external addresses
    drivers: tuple[str, ...] = ()
    levels: tuple[LevelPlan, ...] = ()
    settings: LoadSettings = field(default_factory=LoadSettings)
    placement: Placement = field(default_factory=Placement)
    client_processes: int = 1
    repeat: int = 1
    # --call: method, schema source, data, metadata keys (never values), TLS.
    call: dict[str, Any] = field(default_factory=dict)
    name: str = ""  # --name: the run's name (ghz's), shown in the header and reports
    tags: dict[str, str] = field(default_factory=dict)  # --tags (ghz's), likewise
    thresholds: tuple[str, ...] = ()  # --threshold, as typed (grpcbench.model.thresholds parses)

    def describe_run(self) -> str:
        """--name and --tags, for headers: "nightly (env=ci)", or ""."""
        tags = ", ".join(f"{k}={v}" for k, v in self.tags.items())
        return f"{self.name} ({tags})" if self.name and tags else self.name or tags

    def describe_params(self) -> str:
        """The scenario parameters that change the numbers, for headers (secrets masked)."""
        call = self.call.get("method") or self.call.get("workload")
        parts = [
            f"{where} {', '.join(f'{k}={v}' for k, v in sorted(params.items()))}"
            for where, params in (
                ("server", self.server_params),
                ("workload", {} if call else self.workload_params),  # --call replaces it
            )
            if params
        ]
        mix = self.call.get("mix")
        if self.call.get("workload"):
            parts.append(f"workload {self.call['workload']} (your flow)")
        elif mix:
            parts.append(f"{describe_parts(mix)} (schema from {self.call.get('schema')})")
        elif call:
            data = str(self.call.get("data", ""))
            data = data if len(data) <= 80 else data[:79] + "…"
            data = data or _digested(self.call)
            parts.append(f"call {call} (schema from {self.call.get('schema')}), data {data}")
        if self.call.get("security", "plaintext") != "plaintext":
            parts.append(str(self.call["security"]))
        return redact("; ".join(parts)) if parts else "none"

    def to_json(self) -> dict[str, Any]:
        load = self.settings
        return {
            "scenario": self.scenario,
            "service": self.service,
            "server_params": self.server_params,
            "workload_params": self.workload_params,
            "targets": list(self.targets),
            "drivers": list(self.drivers),
            "levels": [plan.to_json() for plan in self.levels],
            "load": load.to_json(),
            "placement": self.placement.to_json(),
            "client_processes": self.client_processes,
            "repeat": self.repeat,
            "call": self.call,
            "name": self.name,
            "tags": self.tags,
            "thresholds": list(self.thresholds),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RecordedOptions:
        load = dict(data.get("load") or {})
        return cls(
            scenario=str(data.get("scenario", "")),
            service=str(data.get("service", "")),
            server_params=dict(data.get("server_params") or {}),
            workload_params=dict(data.get("workload_params") or {}),
            targets=tuple(str(t) for t in data.get("targets") or ()),
            drivers=tuple(str(d) for d in data.get("drivers") or ()),
            levels=tuple(LevelPlan.from_json(p) for p in data.get("levels") or ()),
            settings=LoadSettings.from_json(load),
            placement=Placement.from_json(data.get("placement") or {}),
            client_processes=int(data.get("client_processes", 1)),
            repeat=int(data.get("repeat", 1)),
            call=dict(data.get("call") or {}),
            name=str(data.get("name", "")),
            tags={str(k): str(v) for k, v in (data.get("tags") or {}).items()},
            thresholds=tuple(str(t) for t in data.get("thresholds") or ()),
        )


@dataclass
class RunRecord:
    """A run in progress or finished; the only mutable result object."""

    options: RecordedOptions
    metadata: dict[str, Any]
    started_at: str = field(default_factory=now_iso)
    finished_at: str | None = None
    status: RunStatus = "running"
    error: str | None = None
    levels: list[LevelResult] = field(default_factory=list)
    level_errors: list[LevelError] = field(default_factory=list)
    # Levels a server kind cannot run (e.g. grpclib-only cache modes): reported, not run.
    unavailable: list[LevelError] = field(default_factory=list)
    # A capacity run's searches (grpcbench.capacity.record), kept as plain JSON here.
    capacity: dict[str, Any] | None = None
    # Where the run is kept (history.options.RunKeeper): project, run id, masked URL.
    stored: dict[str, Any] | None = None

    def finish(self, status: RunStatus, error: str | None = None) -> None:
        self.status = status
        self.error = redact(error) if error else error
        self.finished_at = now_iso()

    def to_json(self) -> dict[str, Any]:
        """The results file's content; any credential that slipped into a string is masked."""
        data = {
            "format_version": FORMAT_VERSION,
            "tool": "grpcbench",
            "status": self.status,
            "error": self.error,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "metadata": self.metadata,
            "options": self.options.to_json(),
            "levels": [level.to_json() for level in self.levels],
            "level_errors": [error.to_json() for error in self.level_errors],
            "unavailable": [entry.to_json() for entry in self.unavailable],
        }
        if self.capacity is not None:
            data["capacity"] = self.capacity
        if self.stored is not None:
            data["stored"] = self.stored
        masked: dict[str, Any] = redact_all(data)
        return masked

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunRecord:
        """A record of the current format; older formats go through ``results_format``."""
        version = data.get("format_version")
        if version != FORMAT_VERSION:
            raise UsageError(f"unsupported results format version {version!r}")
        status = data["status"]
        if status not in get_args(RunStatus):
            raise UsageError(f"unknown run status {status!r}")
        return cls(
            options=RecordedOptions.from_json(data["options"]),
            metadata=dict(data["metadata"]),
            started_at=str(data["started_at"]),
            finished_at=data.get("finished_at"),
            status=status,
            error=data.get("error"),
            levels=[LevelResult.from_json(level) for level in data["levels"]],
            level_errors=[LevelError.from_json(e) for e in data.get("level_errors") or ()],
            unavailable=[LevelError.from_json(e) for e in data.get("unavailable") or ()],
            capacity=data.get("capacity"),
            stored=data.get("stored"),
        )


def _name(value: Any, field: str) -> str:
    """A name a results file must give as text (``str(None)`` would make "None")."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"{field} is {value!r}, not a name")
    return value


def _digested(call: dict[str, Any]) -> str:
    """Large request data, which results keep as its digest and file (run.recorded)."""
    where = f" from {os.path.basename(call['data_path'])}" if call.get("data_path") else ""
    digest = call.get("data_sha256", "")
    return f"of {call.get('data_bytes', 0):,} bytes{where} (sha256 {digest[:12]})" if digest else ""
