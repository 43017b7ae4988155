"""The console's events, also fed to a live telemetry collector (``run --prometheus``)."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console

from grpcbench.model.intervals import IntervalFigures
from grpcbench.model.results import LevelResult
from grpcbench.telemetry.prometheus import PrometheusEndpoint, RunCollector


class TelemetryEvents:
    """Forwards every event to the console's events (``inner``) and feeds the
    collector; the endpoint serves from entering until ``linger_s`` after the run, so
    a scraper can read the last level's exact figures."""

    def __init__(self, inner: Any, endpoint: PrometheusEndpoint, err: Console,
                 linger_s: float = 0.0) -> None:  # fmt: skip
        self.inner = inner
        self.endpoint = endpoint
        self.collector: RunCollector = endpoint.collector
        self.err = err
        self.linger_s = linger_s

    def __enter__(self) -> TelemetryEvents:
        url = self.endpoint.start()
        self.err.print(f"prometheus: metrics at {url}", highlight=False)
        self.inner.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.inner.__exit__(*exc)
            if self.linger_s and exc[0] is None:
                self.err.print(f"prometheus: serving the final figures for {self.linger_s:g}s")
                time.sleep(self.linger_s)
        finally:
            self.endpoint.stop()

    def server_starting(self, label: str) -> None:
        self.inner.server_starting(label)

    def server_ready(self, label: str, address: str, pid: int | None) -> None:
        self.inner.server_ready(label, address, pid)

    def level_started(self, label: str, driver: str, level: str, total: int) -> None:
        self.collector.level_started(label, driver, level)
        self.inner.level_started(label, driver, level, total)

    def level_progress(self, done: int, errors: int) -> None:
        self.inner.level_progress(done, errors)

    def level_interval(self, figures: IntervalFigures) -> None:
        self.collector.interval(figures)
        self.inner.level_interval(figures)

    def level_finished(self, level: LevelResult) -> None:
        self.collector.level_finished(level)
        self.inner.level_finished(level)

    def warning(self, message: str) -> None:
        self.inner.warning(message)
