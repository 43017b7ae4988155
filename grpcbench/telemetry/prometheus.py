"""``run --prometheus HOST:PORT``: a scrape endpoint that shows a run while it runs.

Live, every interval (``--interval``, 1 s unless given): calls by outcome, the
latency histogram in gRPC buckets (``telemetry.buckets``), an open loop's service
time and send lag in the same buckets, achieved and offered rate, and the
server's and generator's CPU seconds and the server's memory so far. At each
level's end, exactly: calls by status, the three histograms, and the server's
CPU and peak RSS and the generator's CPU. The HDR histograms stay the source of truth
for the JSON and the tables; this is a view of the same figures. Every series
carries the run's id, scenario, server, driver and level.

Why a collector of its own rather than prometheus-client's ``Histogram``: the
figures arrive as merged HDR histograms per interval from the generator
processes (or Dask workers), not one call at a time, and are added bucket by
bucket.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from grpcbench.base.errors import UsageError
from grpcbench.base.parsing import decimal
from grpcbench.model.intervals import IntervalFigures, LiveUsage
from grpcbench.model.results import LevelResult
from grpcbench.stats.histogram import LatencySummary
from grpcbench.telemetry.buckets import latency_bounds_s

LABELS = ("run_id", "scenario", "method", "server", "driver", "level")
CAPACITY_LABELS = ("run_id", "scenario", "server", "slo")
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
class Buckets:
    """One histogram in gRPC buckets, as Prometheus counts it (cumulative)."""

    counts: list[int] = field(default_factory=lambda: [0] * len(BOUNDS_S))
    count: int = 0
    sum_s: float = 0.0

    def add(self, summary: LatencySummary) -> None:
        if summary.count:
            added = summary.counts_at_or_below(BOUNDS_US)
            self.counts = [a + b for a, b in zip(self.counts, added, strict=True)]
            self.count += summary.count
            self.sum_s += summary.total_us / 1e6

    @classmethod
    def of(cls, summary: LatencySummary) -> Buckets:
        """Exactly ``summary`` (a finished level's histogram)."""
        buckets = cls()
        buckets.add(summary)
        return buckets

    def samples(self) -> list[tuple[str, float]]:
        return [*((f"{b:g}", c) for b, c in zip(BOUNDS_S, self.counts, strict=True)),
                ("+Inf", self.count)]  # fmt: skip


@dataclass
class Series:
    """One level's figures, accumulated as Prometheus counts them."""

    labels: tuple[str, ...]
    live: dict[str, int] = field(default_factory=lambda: {"ok": 0, "failed": 0})
    latency: Buckets = field(default_factory=Buckets)
    service: Buckets | None = None  # open loop: from the actual send
    lag: Buckets | None = None  # open loop: actual minus intended send
    # The processes' usage so far (live), then the level's own (at its end).
    cpu_s: dict[str, float] = field(default_factory=dict)  # "server", "generator"
    rss_bytes: float | None = None
    achieved: float = 0.0
    in_flight: int = 0
    offered: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)  # set at the level's end
    finished: LevelResult | None = None


class RunCollector:
    """prometheus-client's collector of a run: every level's series so far."""

    def __init__(self, run_id: str, scenario: str, method: str = "") -> None:
        self.run_id, self.scenario, self.method = run_id, scenario, method
        self.series: list[Series] = []
        self.current: Series | None = None
        # grpcbench capacity: each judged probe (its number, phase and outcome: its
        # offered rate), and each SLO's capacity per server (searched, confirmed).
        self.probes: list[tuple[tuple[str, ...], float]] = []
        self.capacities: dict[tuple[str, ...], float] = {}

    # --- fed by the run's events ------------------------------------------------------

    def level_started(self, server: str, driver: str, level: str) -> None:
        self.current = Series((self.run_id, self.scenario, self.method, server, driver, level))
        self.series.append(self.current)

    def interval(self, figures: IntervalFigures) -> None:
        series = self.current
        if series is None:
            return
        series.live["ok"] += figures.ok
        series.live["failed"] += figures.failed
        series.latency.add(figures.latency)
        if figures.service is not None:
            series.service = series.service or Buckets()
            series.service.add(figures.service)
        if figures.lag is not None:
            series.lag = series.lag or Buckets()
            series.lag.add(figures.lag)
        series.achieved = figures.rate
        series.offered = figures.offered
        series.in_flight = figures.in_flight

    def usage(self, usage: LiveUsage) -> None:
        series = self.current
        if series is None:
            return
        if usage.server_cpu_s is not None:
            series.cpu_s["server"] = usage.server_cpu_s
        if usage.generator_cpu_s is not None:
            series.cpu_s["generator"] = usage.generator_cpu_s
        if usage.server_rss_bytes is not None:
            series.rss_bytes = float(usage.server_rss_bytes)
        for name, seconds in usage.backing_cpu_s:
            series.cpu_s[f"backing:{name}"] = seconds

    def probe_judged(
        self, server: str, number: int, phase: str, rate: float, slo: str, outcome: str
    ) -> None:
        labels = (self.run_id, self.scenario, server, slo, str(number), phase, outcome)
        self.probes.append((labels, rate))

    def capacity_found(self, server: str, slo: str, capacity: float | None,
                       confirmed: float | None) -> None:  # fmt: skip
        base = (self.run_id, self.scenario, server, slo)
        for figure, value in (("searched", capacity), ("confirmed", confirmed)):
            if value is not None:
                self.capacities[(*base, figure)] = value

    def level_finished(self, level: LevelResult) -> None:
        """The level's exact figures replace the live ones (the calls after the last
        interval closed are in them too), so the final counts are the JSON's."""
        series = self.current
        if series is None:
            return
        load = level.measured
        series.statuses = dict(load.statuses)
        series.live = {"ok": load.ok, "failed": load.count - load.ok}
        series.latency = Buckets.of(load.latency)
        series.service = Buckets.of(load.service_latency) if load.service_latency else None
        series.lag = Buckets.of(load.schedule_lag) if load.schedule_lag else None
        series.cpu_s["generator"] = load.client_cpu_s
        # The level's own rates, as the JSON has them: the last interval's would be a
        # part of it (0 when the level ended before an interval closed).
        series.achieved, series.offered = load.rps, load.rate
        if level.server_usage is not None:
            series.cpu_s["server"] = level.server_usage.cpu_s
        for name, usage in level.backing_usage.items():
            series.cpu_s[f"backing:{name}"] = usage.cpu_s
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
        service = HistogramMetricFamily(
            "grpcbench_service_time_seconds",
            "Open loop: call latency from the actual send, by interval.",
            labels=list(LABELS),
        )
        lag = HistogramMetricFamily(
            "grpcbench_send_lag_seconds",
            "Open loop: how late each call was sent after its intended time, by interval.",
            labels=list(LABELS),
        )
        cpu = CounterMetricFamily(
            "grpcbench_cpu_seconds",
            "CPU seconds of the level's measured phase so far: server, generator, backing:NAME.",
            labels=[*LABELS, "side"],
        )  # fmt: skip
        in_flight = GaugeMetricFamily(
            "grpcbench_calls_in_flight", "Calls sent and not finished, at the last interval's end.",
            labels=list(LABELS),
        )  # fmt: skip
        rss = GaugeMetricFamily(
            "grpcbench_server_rss_bytes",
            "The server's resident memory now (a process tree's PSS summed), every interval.",
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
            latency.add_metric(labels, series.latency.samples(), series.latency.sum_s)
            if series.service is not None:
                service.add_metric(labels, series.service.samples(), series.service.sum_s)
            if series.lag is not None:
                lag.add_metric(labels, series.lag.samples(), series.lag.sum_s)
            for side, seconds in series.cpu_s.items():
                cpu.add_metric([*labels, side], seconds)
            if series.rss_bytes is not None:
                rss.add_metric(labels, series.rss_bytes)
            in_flight.add_metric(labels, 0 if series.finished else series.in_flight)
            rates.add_metric([*labels, "achieved"], series.achieved)
            if series.offered:  # an open loop's (a closed loop offers no rate)
                rates.add_metric([*labels, "offered"], series.offered)
            for figure, amount in _usage(series.finished):
                usage.add_metric([*labels, figure], amount)
        yield from (live, calls, latency, service, lag, rates, in_flight, cpu, rss, usage)
        yield from self._capacity()

    def _capacity(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        if not self.probes and not self.capacities:
            return
        probes = GaugeMetricFamily(
            "grpcbench_capacity_probe_rate",
            "grpcbench capacity: each judged probe's offered rate (0: the closed-loop ceiling).",
            labels=[*CAPACITY_LABELS, "probe", "phase", "outcome"],
        )
        for labels, rate in self.probes:
            probes.add_metric(list(labels), rate)
        found = GaugeMetricFamily(
            "grpcbench_capacity", "grpcbench capacity: an SLO's capacity on a server, calls/s.",
            labels=[*CAPACITY_LABELS, "figure"],
        )  # fmt: skip
        for labels, value in self.capacities.items():
            found.add_metric(list(labels), value)
        yield from (probes, found)


def _usage(level: LevelResult | None) -> list[tuple[str, float]]:
    if level is None:
        return []
    figures = [("generator_cpu_seconds", level.measured.client_cpu_s)]
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

    def usage(self, usage: LiveUsage) -> None:
        self.collector.usage(usage)

    def probe_judged(
        self, server: str, number: int, phase: str, rate: float, slo: str, outcome: str
    ) -> None:
        self.collector.probe_judged(server, number, phase, rate, slo, outcome)

    def capacity_found(self, server: str, slo: str, capacity: float | None,
                       confirmed: float | None) -> None:  # fmt: skip
        self.collector.capacity_found(server, slo, capacity, confirmed)

    def level_finished(self, level: LevelResult) -> None:
        self.collector.level_finished(level)

    def start(self, warn: Callable[[str], None]) -> str:
        """Listen; a port that cannot be had (taken, not this machine's) is one warning
        line and the run goes on without the endpoint: its results file keeps every
        figure, and a long run should not die of its view."""
        client = require_prometheus_client()
        registry = client.CollectorRegistry(auto_describe=False)
        registry.register(self.collector)
        try:
            self.server, _ = client.start_http_server(self.port, addr=self.host, registry=registry)
        except OSError as error:
            warn(f"--prometheus {self.host}:{self.port}: cannot listen"
                 f" ({error.strerror or error}); the run goes on without it")  # fmt: skip
            return ""
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
    number = decimal(port)
    if number is None or not 0 <= number < 65536:
        raise UsageError(f"bad --prometheus {text[:80]!r}: HOST:PORT or PORT (0: any free port)")
    return host.strip("[]") or "127.0.0.1", number
