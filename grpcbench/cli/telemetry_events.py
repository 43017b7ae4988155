"""The console's events, also fed to the run's telemetry sinks (``--prometheus``, ``--otlp``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from rich.console import Console

from grpcbench.model.intervals import IntervalFigures, LiveUsage
from grpcbench.model.results import LevelResult


class TelemetrySink(Protocol):
    """``telemetry.prometheus.PrometheusEndpoint`` or ``telemetry.otlp.OtlpPush``."""

    # The line that says where the figures go ("" when it cannot serve: ``warn`` said
    # why in one line, and the run goes on without it). ``warn`` may be called later,
    # from an exporter's thread, once, when pushes start failing.
    def start(self, warn: Callable[[str], None]) -> str: ...
    def stop(self) -> None: ...
    def level_started(self, server: str, driver: str, level: str) -> None: ...
    def interval(self, figures: IntervalFigures) -> None: ...
    def usage(self, usage: LiveUsage) -> None: ...
    def probe_judged(
        self, server: str, number: int, phase: str, rate: float, slo: str, outcome: str
    ) -> None: ...
    def capacity_found(self, server: str, slo: str, capacity: float | None,
                       confirmed: float | None) -> None: ...  # fmt: skip
    def level_finished(self, level: LevelResult) -> None: ...


class TelemetryEvents:
    """Forwards every event to the console's events (``inner``) and feeds the sinks;
    they start when the run starts and stop ``linger_s`` after it (a scraper can then
    read the last level's exact figures; a push exporter flushes them)."""

    wants_usage = True

    def __init__(self, inner: Any, sinks: list[TelemetrySink], err: Console,
                 linger_s: float = 0.0) -> None:  # fmt: skip
        self.inner = inner
        self.sinks = sinks
        self.err = err
        self.linger_s = linger_s

    @property
    def unwritten(self) -> str | None:
        """Why the console's log (--debug) could not be written, if it could not."""
        return getattr(self.inner, "unwritten", None)

    def __enter__(self) -> TelemetryEvents:
        started: list[TelemetrySink] = []
        try:
            for sink in self.sinks:
                line = sink.start(self.inner.warning)
                if line:
                    self.err.print(line, highlight=False)
                started.append(sink)
        except BaseException:
            for sink in started:
                sink.stop()
            raise
        self.inner.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.inner.__exit__(*exc)
            if self.linger_s and exc[0] is None:
                self.err.print(f"telemetry: serving the final figures for {self.linger_s:g}s")
                time.sleep(self.linger_s)
        finally:
            for sink in self.sinks:
                sink.stop()

    def server_starting(self, label: str, starts: bool = True) -> None:
        self.inner.server_starting(label, starts)

    def server_ready(self, label: str, address: str, pid: int | None) -> None:
        self.inner.server_ready(label, address, pid)

    def level_started(self, label: str, driver: str, level: str, total: int) -> None:
        for sink in self.sinks:
            sink.level_started(label, driver, level)
        self.inner.level_started(label, driver, level, total)

    def level_progress(self, done: int, errors: int) -> None:
        self.inner.level_progress(done, errors)

    def level_interval(self, figures: IntervalFigures) -> None:
        for sink in self.sinks:
            sink.interval(figures)
        self.inner.level_interval(figures)

    def level_usage(self, usage: LiveUsage) -> None:
        for sink in self.sinks:
            sink.usage(usage)
        self.inner.level_usage(usage)

    def level_finished(self, level: LevelResult) -> None:
        for sink in self.sinks:
            sink.level_finished(level)
        self.inner.level_finished(level)

    def probe_judged(
        self, server: str, number: int, phase: str, rate: float, slo: str, outcome: str
    ) -> None:
        for sink in self.sinks:
            sink.probe_judged(server, number, phase, rate, slo, outcome)
        self.inner.probe_judged(server, number, phase, rate, slo, outcome)

    def capacity_found(self, server: str, slo: str, capacity: float | None,
                       confirmed: float | None) -> None:  # fmt: skip
        for sink in self.sinks:
            sink.capacity_found(server, slo, capacity, confirmed)
        self.inner.capacity_found(server, slo, capacity, confirmed)

    def warning(self, message: str) -> None:
        self.inner.warning(message)
