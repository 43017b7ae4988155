"""Plain data that crosses process boundaries: what to run and what was measured.

A driver takes a ``LoadSpec`` (JSON-serialisable, so generator processes - and
later other machines - can receive it) and returns a ``LoadResult``, which
merges exactly with results of other processes running the same spec.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from grpcbench.stats.histogram import LatencySummary, merge_summaries

# A generator that used this share of its CPU budget (wall time x cores it
# could use) was the bottleneck, not the server.
SATURATION_THRESHOLD = 0.90


@dataclass(frozen=True)
class LoadSpec:
    target: str  # host:port
    service: str
    concurrency: int
    requests: int = 0  # measured requests; 0 when the level is time-based
    duration_s: float = 0.0  # measured duration; 0 when the level is count-based
    warmup_requests: int = 0
    warmup_s: float = 0.0
    timeout_s: float = 20.0  # per-call deadline
    connections: int = 1
    max_level_s: float = 300.0  # hard cap on a level's measured phase
    workload_params: dict[str, Any] = field(default_factory=dict)
    cpus: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LoadSpec:
        data = dict(data)
        data["cpus"] = tuple(data.get("cpus", ()))
        return cls(**data)


@dataclass(frozen=True)
class LoadResult:
    """What one or more generator processes measured for one level."""

    driver: str
    concurrency: int
    connections: int
    statuses: dict[str, int]  # gRPC status name -> calls, "OK" included
    latency: LatencySummary  # every finished call, OK or not (like ghz --count-errors)
    wall_s: float  # measured phase, first call start to last call end
    client_cpu_s: float = 0.0
    processes: int = 1
    # Cores the generator could use: 1 per built-in process (Python's GIL), the
    # CPUs given to ghz (Go uses them all).
    cpu_cores: float = 1.0
    truncated: bool = False  # the level hit max_level_s before its request count
    # Set when the latency histogram covers fewer calls than were counted (ghz
    # keeps at most 1,000,000 per-call records).
    latency_note: str = ""

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
    def client_saturated(self) -> bool:
        return self.client_cpu_fraction >= SATURATION_THRESHOLD

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
            processes=self.processes + other.processes,
            cpu_cores=self.cpu_cores + other.cpu_cores,
            truncated=self.truncated or other.truncated,
            latency_note="; ".join(n for n in (self.latency_note, other.latency_note) if n),
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["latency"] = asdict(self.latency)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LoadResult:
        data = dict(data)
        data["latency"] = LatencySummary(**data["latency"])
        return cls(**data)
