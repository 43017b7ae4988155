"""Run events: how the runner tells the outside world what happens (locust-style).

The runner knows nothing about terminals; the CLI passes a console
implementation (progress bar), tests pass ``NullEvents`` or a recorder.
"""

from __future__ import annotations

from typing import Protocol

from grpcbench.model.intervals import IntervalFigures, LiveUsage
from grpcbench.model.results import LevelResult


class RunEvents(Protocol):
    # True: ``level_usage`` wants the processes' usage every interval (live telemetry);
    # reading it costs the runner a few psutil calls a second, so only then.
    wants_usage: bool

    # A column opens: its server starts (starts=False: a running target is reached).
    def server_starting(self, label: str, starts: bool = True) -> None: ...
    def server_ready(self, label: str, address: str, pid: int | None) -> None: ...
    def level_started(self, label: str, driver: str, level: str, total: int) -> None: ...
    def level_progress(self, done: int, errors: int) -> None: ...
    def level_interval(self, figures: IntervalFigures) -> None: ...
    def level_usage(self, usage: LiveUsage) -> None: ...
    def level_finished(self, level: LevelResult) -> None: ...
    # grpcbench capacity: a probe judged for an SLO ("pass", "fail", "generator"...; the
    # ceiling probe, judged by none, as "estimate"), numbered per server as the probes
    # table numbers it, and an SLO's capacity on a server once searched (and confirmed).
    def probe_judged(
        self, server: str, number: int, phase: str, rate: float, slo: str, outcome: str
    ) -> None: ...
    def capacity_found(self, server: str, slo: str, capacity: float | None,
                       confirmed: float | None) -> None: ...  # fmt: skip
    def warning(self, message: str) -> None: ...


class NullEvents:
    wants_usage = False

    def server_starting(self, label: str, starts: bool = True) -> None:
        pass

    def server_ready(self, label: str, address: str, pid: int | None) -> None:
        pass

    def level_started(self, label: str, driver: str, level: str, total: int) -> None:
        pass

    def level_progress(self, done: int, errors: int) -> None:
        pass

    def level_interval(self, figures: IntervalFigures) -> None:
        pass

    def level_usage(self, usage: LiveUsage) -> None:
        pass

    def level_finished(self, level: LevelResult) -> None:
        pass

    def probe_judged(
        self, server: str, number: int, phase: str, rate: float, slo: str, outcome: str
    ) -> None:
        pass

    def capacity_found(self, server: str, slo: str, capacity: float | None,
                       confirmed: float | None) -> None:  # fmt: skip
        pass

    def warning(self, message: str) -> None:
        pass
