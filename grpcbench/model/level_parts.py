"""The parts of a level's result that a level has only sometimes: each method of a mix
(``MethodFigures``), each check of a flow (``CheckFigures``), each Dask worker
(``WorkerFigures``) and a stream's message figures (``StreamSummary``); each merges
as the level's own figures do."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from grpcbench.base.merging import merge_optional
from grpcbench.stats.histogram import LatencySummary, merge_summaries

# A generator that used this share of its CPU budget (wall time x cores it
# could use) was the bottleneck, not the server.
SATURATION_THRESHOLD = 0.90


@dataclass(frozen=True)
class MethodFigures:
    """One method of a mix (``rpc.mix``): its calls, measured as the level's are (from the
    intended send in an open loop); the level's own figures are the whole mix's."""

    name: str  # its rows' label: the method, or the name the mix gave it
    method: str  # package.Service/Method
    weight: int
    statuses: dict[str, int]
    latency: LatencySummary
    errors: dict[str, int] = field(default_factory=dict)
    expected: tuple[str, ...] = ()  # its own successful statuses (() = the level's)

    @property
    def count(self) -> int:
        return sum(self.statuses.values())

    def merge(self, other: MethodFigures) -> MethodFigures:
        return replace(
            self,
            statuses=dict(Counter(self.statuses) + Counter(other.statuses)),
            latency=merge_summaries([self.latency, other.latency]),
            errors=dict(Counter(self.errors) + Counter(other.errors)),
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["latency"] = asdict(self.latency)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MethodFigures:
        return cls(
            name=str(data["name"]),
            method=str(data["method"]),
            weight=int(data["weight"]),
            statuses={str(k): int(v) for k, v in data["statuses"].items()},
            latency=LatencySummary.from_json(data["latency"]),
            errors={str(k): int(v) for k, v in (data.get("errors") or {}).items()},
            expected=tuple(str(s) for s in data.get("expected") or ()),
        )


@dataclass(frozen=True)
class CheckFigures:
    """One check of a flow (``client.check``, k6's ``check()``): how often it held. A
    failed check fails no call; it is counted here, by name."""

    name: str
    passed: int
    failed: int

    @property
    def count(self) -> int:
        return self.passed + self.failed

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CheckFigures:
        return cls(str(data["name"]), int(data["passed"]), int(data["failed"]))


def merge_checks(
    ours: tuple[CheckFigures, ...], theirs: tuple[CheckFigures, ...]
) -> tuple[CheckFigures, ...]:
    """Checks of processes that ran side by side, summed by name (a name only one saw
    is kept), in the order first seen."""
    merged: dict[str, CheckFigures] = {}
    for check in ours + theirs:
        seen = merged.get(check.name)
        merged[check.name] = (
            check if seen is None
            else CheckFigures(check.name, seen.passed + check.passed, seen.failed + check.failed)
        )  # fmt: skip
    return tuple(merged.values())


@dataclass(frozen=True)
class WorkerFigures:
    """One cluster worker's share of a level (``--cluster``), kept beside the merged result."""

    address: str
    calls: int
    wall_s: float
    cpu_s: float
    saturation: float  # share of its CPU budget used or lost to neighbours (1.0 = saturated)
    # Its measured phase (Unix time, its own clock), statuses and latency (0: not known,
    # from a file that predates them).
    started_unix: float = 0.0
    finished_unix: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)
    p50_us: int = 0
    p99_us: int = 0

    @property
    def saturated(self) -> bool:
        return self.saturation >= SATURATION_THRESHOLD


@dataclass(frozen=True)
class StreamSummary:
    """Streaming (or multi-page) calls: how many messages and items came back, how fast."""

    calls: int  # calls that returned statistics (completed streams)
    messages: int
    items: int
    bytes: int
    first_message: LatencySummary  # time to first message, per call
    sent: int = 0  # request messages of client and bidi streams
    gap: LatencySummary | None = None  # from each reply message to the next, per gap
    round_trip: LatencySummary | None = None  # --stream-round-trip: per request message
    # --stream-interval: how late each request message went out on its pacer.
    send_lag: LatencySummary | None = None

    def merge(self, other: StreamSummary) -> StreamSummary:
        return StreamSummary(
            calls=self.calls + other.calls,
            messages=self.messages + other.messages,
            items=self.items + other.items,
            bytes=self.bytes + other.bytes,
            first_message=self.first_message.merge(other.first_message),
            sent=self.sent + other.sent,
            gap=merge_optional(self.gap, other.gap, LatencySummary.merge),
            round_trip=merge_optional(self.round_trip, other.round_trip, LatencySummary.merge),
            send_lag=merge_optional(self.send_lag, other.send_lag, LatencySummary.merge),
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StreamSummary:
        summaries = {
            name: LatencySummary.from_json(data[name])
            for name in ("first_message", "gap", "round_trip", "send_lag")
            if data.get(name) is not None
        }
        return cls(**{**data, **summaries})
