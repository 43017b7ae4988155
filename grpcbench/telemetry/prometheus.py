"""``run --prometheus HOST:PORT``: a scrape endpoint that shows a run while it runs.

Live, every interval (``--interval``, 1 s unless given): calls by outcome, the
latency histogram in gRPC buckets (``telemetry.buckets``), achieved and offered
rate. At each level's end, exactly: calls by status, and the server's CPU and
peak RSS and the generator's CPU. The HDR histograms stay the source of truth
for the JSON and the tables; this is a view of the same figures. Every series
carries the run's id, scenario, server, driver and level.

Why a collector of its own rather than prometheus-client's ``Histogram``: the
figures arrive as merged HDR histograms per interval from the generator
processes (or Dask workers), not one call at a time, and are added bucket by
bucket.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from grpcbench.base.errors import UsageError
from grpcbench.model.intervals import IntervalFigures
from grpcbench.model.results import LevelResult
from grpcbench.telemetry.buckets import latency_bounds_s

LABELS = ("run_id", "scenario", "server", "driver", "level")
BOUNDS_S = latency_bounds_s()
BOUNDS_US = tuple(bound * 1e6 for bound in BOUNDS_S)


def require_prometheus_client() -> Any:
    try:
        import prometheus_client
    except ImportError:
        raise UsageError(
            "--prometheus needs prometheus-client: pip install 'grpcbench[telemetry]'"
        ) from None
    return prometheus_client


@dataclass
class Series:
    """One level's figures, accumulated as Prometheus counts them."""

    labels: tuple[str, ...]
    live: dict[str, int] = field(default_factory=lambda: {"ok": 0, "failed": 0})
    buckets: list[int] = field(default_factory=lambda: [0] * len(BOUNDS_S))
    count: int = 0
    sum_s: float = 0.0
    achieved: float = 0.0
    offered: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)  # set at the level's end
    finished: LevelResult | None = None


class RunCollector:
    """prometheus-client's collector of a run: every level's series so far."""

    def __init__(self, run_id: str, scenario: str) -> None:
        self.run_id, self.scenario = run_id, scenario
        self.series: list[Series] = []
        self.current: Series | None = None

    # --- fed by the run's events ------------------------------------------------------

    def level_started(self, server: str, driver: str, level: str) -> None:
        self.current = Series((self.run_id, self.scenario, server, driver, level))
        self.series.append(self.current)

    def interval(self, figures: IntervalFigures) -> None:
        series = self.current
        if series is None:
            return
        series.live["ok"] += figures.ok
        series.live["failed"] += figures.failed
        latency = figures.latency
        if latency.count:
            added = latency.counts_at_or_below(BOUNDS_US)
            series.buckets = [a + b for a, b in zip(series.buckets, added, strict=True)]
            series.count += latency.count
            series.sum_s += latency.total_us / 1e6
        series.achieved = figures.rate
        series.offered = figures.offered

    def level_finished(self, level: LevelResult) -> None:
        """The level's exact figures replace the live ones (the calls after the last
        interval closed are in them too), so the final counts are the JSON's."""
        series = self.current
        if series is None:
            return
        load, latency = level.load, level.load.latency
        series.statuses = dict(load.statuses)
        series.live = {"ok": load.ok, "failed": load.count - load.ok}
        series.buckets = latency.counts_at_or_below(BOUNDS_US)
        series.count, series.sum_s = latency.count, latency.total_us / 1e6
        series.finished = level
        self.current = None

    # --- read by prometheus-client on each scrape ------------------------------------

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import (
            CounterMetricFamily,
            GaugeMetricFamily,
            HistogramMetricFamily,
        )

        live = CounterMetricFamily(
            "grpcbench_live_calls", "Calls finished so far, by outcome (every interval).",
            labels=[*LABELS, "outcome"],
        )  # fmt: skip
        calls = CounterMetricFamily(
            "grpcbench_calls", "Calls of a finished level by gRPC status (exact: the JSON's).",
            labels=[*LABELS, "status"],
        )  # fmt: skip
        latency = HistogramMetricFamily(
            "grpcbench_rpc_client_duration_seconds",
            "Call latency (from the intended send in an open loop), by interval.",
            labels=list(LABELS),
        )
        rates = GaugeMetricFamily(
            "grpcbench_rate", "Calls per second in the last interval.",
            labels=[*LABELS, "kind"],
        )  # fmt: skip
        usage = GaugeMetricFamily(
            "grpcbench_level_usage", "A finished level's CPU seconds and peak memory.",
            labels=[*LABELS, "figure"],
        )  # fmt: skip
        for series in self.series:
            labels = list(series.labels)
            for outcome, value in series.live.items():
                live.add_metric([*labels, outcome], value)
            for status, value in series.statuses.items():
                calls.add_metric([*labels, status], value)
            buckets = [(f"{b:g}", c) for b, c in zip(BOUNDS_S, series.buckets, strict=True)]
            latency.add_metric(labels, [*buckets, ("+Inf", series.count)], series.sum_s)
            rates.add_metric([*labels, "achieved"], series.achieved)
            rates.add_metric([*labels, "offered"], series.offered)
            for figure, amount in _usage(series.finished):
                usage.add_metric([*labels, figure], amount)
        yield from (live, calls, latency, rates, usage)


def _usage(level: LevelResult | None) -> list[tuple[str, float]]:
    if level is None:
        return []
    figures = [("generator_cpu_seconds", level.load.client_cpu_s)]
    if level.server_usage is not None:
        figures += [
            ("server_cpu_seconds", level.server_usage.cpu_s),
            ("server_peak_rss_bytes", float(level.server_usage.peak_rss_bytes)),
        ]
    return figures


class PrometheusEndpoint:
    """The scrape endpoint of one run, on its own registry (never the process's
    global one), listening on 127.0.0.1 unless another host is given."""

    def __init__(self, address: str, collector: RunCollector) -> None:
        self.host, self.port = parse_listen_address(address)
        self.collector = collector
        self.server: Any = None

    def level_started(self, server: str, driver: str, level: str) -> None:
        self.collector.level_started(server, driver, level)

    def interval(self, figures: IntervalFigures) -> None:
        self.collector.interval(figures)

    def level_finished(self, level: LevelResult) -> None:
        self.collector.level_finished(level)

    def start(self) -> str:
        client = require_prometheus_client()
        registry = client.CollectorRegistry(auto_describe=False)
        registry.register(self.collector)
        try:
            self.server, _ = client.start_http_server(self.port, addr=self.host, registry=registry)
        except OSError as error:
            raise UsageError(
                f"--prometheus {self.host}:{self.port}: cannot listen ({error.strerror or error})"
            ) from None
        self.port = self.server.server_port
        return f"prometheus: metrics at http://{self.host}:{self.port}/metrics"

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


def parse_listen_address(text: str) -> tuple[str, int]:
    """``PORT``, ``:PORT`` or ``HOST:PORT``; the host is 127.0.0.1 unless given."""
    given = text.strip()
    host, sep, port = given.rpartition(":")
    if not sep:
        host, port = "", given
    if not port.isdecimal() or not 0 <= int(port) < 65536:
        raise UsageError(f"bad --prometheus {text!r}: HOST:PORT or PORT (0: any free port)")
    return host.strip("[]") or "127.0.0.1", int(port)
