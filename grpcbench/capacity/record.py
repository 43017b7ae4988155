"""What a capacity run found, saved beside its levels in the results file.

A capacity run's results file is an ordinary ``RunRecord`` (every probe is a
level, so ``show``, ``report`` and ``compare`` read its levels as any run's)
with one more section, ``capacity``: the SLOs, every probe's judgement per
SLO (pointing at its level), and per server kind and SLO the capacity found
and why the search ended. ``RunRecord`` carries the section as plain JSON, so
the results layer knows nothing of searches.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Literal

from grpcbench.capacity.probe import Judgement, achieved_rate
from grpcbench.capacity.slo import Slo, parse_slo
from grpcbench.model.results import LevelResult, RunRecord

Phase = Literal["ceiling", "search", "confirm"]


STEP_DOWNS = 2  # confirmations below the search's capacity, at most (the runner's)


@dataclass(frozen=True)
class CapacitySettings:
    """``capacity``'s own options (the rest are `run`'s)."""

    slos: tuple[Slo, ...]
    max_error_rate: float = 0.001
    precision: float = 0.05
    probe_duration_s: float = 3.0
    probe_warmup_s: float = 1.0
    max_probes: int = 12
    confirmations: int = 3

    def to_json(self) -> dict[str, Any]:
        return {
            "slos": [slo.text for slo in self.slos],
            "max_error_rate": self.max_error_rate,
            "precision": self.precision,
            "probe_duration_s": self.probe_duration_s,
            "probe_warmup_s": self.probe_warmup_s,
            "max_probes": self.max_probes,
            "confirmations": self.confirmations,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CapacitySettings:
        return cls(
            slos=tuple(parse_slo(str(text)) for text in data["slos"]),
            max_error_rate=float(data["max_error_rate"]),
            precision=float(data["precision"]),
            probe_duration_s=float(data["probe_duration_s"]),
            probe_warmup_s=float(data["probe_warmup_s"]),
            max_probes=int(data["max_probes"]),
            confirmations=int(data["confirmations"]),
        )


@dataclass(frozen=True)
class Probe:
    """One measured probe: its level in the record and what each SLO made of it."""

    level: int  # index into RunRecord.levels
    server: str
    phase: Phase
    rate: float  # offered calls/s; 0 for the closed-loop ceiling probe
    judgements: dict[str, Judgement] = field(default_factory=dict)  # SLO text -> verdict

    def to_json(self) -> dict[str, Any]:
        return {
            "level": self.level, "server": self.server, "phase": self.phase, "rate": self.rate,
            "judgements": {slo: j.to_json() for slo, j in self.judgements.items()},
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Probe:
        phase: Phase = data["phase"]
        return cls(
            level=int(data["level"]), server=str(data["server"]), phase=phase,
            rate=float(data["rate"]),
            judgements={k: Judgement.from_json(v) for k, v in data["judgements"].items()},
        )  # fmt: skip


@dataclass(frozen=True)
class Found:
    """One server kind's capacity under one SLO (None: no rate passed)."""

    server: str
    slo: str
    capacity: float | None
    end: str  # why the search ended
    converged: bool
    generator_limited: bool  # the search stopped at a rate the generator could not offer
    # The highest rate from ``capacity`` down that passed every confirmation (None:
    # none did, or none ran).
    confirmed: float | None = None

    @property
    def reported(self) -> float | None:
        """The capacity to plan with: the confirmed rate, else the search's."""
        return self.confirmed if self.confirmed is not None else self.capacity

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Found:
        capacity, confirmed = data.get("capacity"), data.get("confirmed")
        return cls(
            server=str(data["server"]), slo=str(data["slo"]),
            capacity=None if capacity is None else float(capacity), end=str(data["end"]),
            converged=bool(data["converged"]), generator_limited=bool(data["generator_limited"]),
            confirmed=None if confirmed is None else float(confirmed),
        )  # fmt: skip


@dataclass
class CapacityRecord:
    """The ``capacity`` section of a results file, and views over it with its levels."""

    settings: CapacitySettings
    probes: list[Probe] = field(default_factory=list)
    found: list[Found] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "settings": self.settings.to_json(),
            "probes": [probe.to_json() for probe in self.probes],
            "found": [found.to_json() for found in self.found],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CapacityRecord:
        return cls(
            settings=CapacitySettings.from_json(data["settings"]),
            probes=[Probe.from_json(p) for p in data["probes"]],
            found=[Found.from_json(f) for f in data["found"]],
        )

    @classmethod
    def of(cls, run: RunRecord) -> CapacityRecord | None:
        """A results file's capacity section, if it is a capacity run."""
        return cls.from_json(run.capacity) if run.capacity else None

    def confirmations(
        self, run: RunRecord, found: Found, rate: float | None = None
    ) -> list[tuple[LevelResult, Judgement]]:
        """The confirmation probes of one capacity at ``rate`` (default: the reported
        capacity), each with its judgement."""
        rate = found.reported if rate is None else rate
        return [
            (run.levels[p.level], p.judgements[found.slo])
            for p in self.probes
            if p.phase == "confirm" and p.server == found.server and p.rate == rate
            and found.slo in p.judgements
        ]  # fmt: skip

    def server_probes(self, server: str) -> list[Probe]:
        """One server's probes in the order they ran: the probes table and the exported
        figures number them from 1 in this order (the ceiling probe first)."""
        return [p for p in self.probes if p.server == server]

    def search_probes(self, server: str) -> list[Probe]:
        return [p for p in self.probes if p.server == server and p.phase != "confirm"]


@dataclass(frozen=True)
class Confirmed:
    """Confirmation runs of one capacity: how many passed, and how steady they were.

    An open loop's achieved rate sits on the offered one whenever the server keeps
    up, so its spread alone says little; the spread of each objective's own
    statistic across the fresh servers (``objectives``: mean and sd, µs) says how
    much headroom the SLO had there."""

    runs: int
    passed: int
    achieved_mean: float
    achieved_sd: float
    objectives: tuple[tuple[str, float, float], ...] = ()

    @property
    def cv(self) -> float:
        return self.achieved_sd / self.achieved_mean if self.achieved_mean else 0.0

    @property
    def stable(self) -> bool:
        """Every confirmation passed (the search's pass was not luck)."""
        return self.passed == self.runs

    @classmethod
    def of(
        cls,
        runs: list[tuple[LevelResult, Judgement]],
        duration_s: float,
        slo: Slo | None = None,
    ) -> Confirmed | None:
        if not runs:
            return None
        achieved = [achieved_rate(level, duration_s) for level, _ in runs]
        spreads = []
        for objective in slo.objectives if slo is not None else ():
            values = [float(objective.value_us(level.measured.latency)) for level, _ in runs]
            sd = statistics.stdev(values) if len(values) > 1 else 0.0
            spreads.append((objective.statistic, statistics.fmean(values), sd))
        return cls(
            runs=len(runs),
            passed=sum(1 for _, judgement in runs if judgement.outcome == "pass"),
            achieved_mean=statistics.fmean(achieved),
            achieved_sd=statistics.stdev(achieved) if len(achieved) > 1 else 0.0,
            objectives=tuple(spreads),
        )
