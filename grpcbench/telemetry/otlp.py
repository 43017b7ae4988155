"""``run --otlp URL``: the run's figures pushed with the OpenTelemetry SDK over OTLP/HTTP.

Every ``--interval`` (1 s unless given) the SDK exports what the run has measured
so far to a collector (the OTel Collector, Grafana Alloy, Mimir's or Prometheus's
OTLP receiver): ``rpc.client.duration`` as an exponential-bucket histogram (which
they store as a native histogram), calls by outcome and, at each level's end,
by gRPC status, and the level's CPU and memory. Headers for authentication come
from ``--otlp-header`` (masked wherever the command line is shown) or the
standard ``OTEL_EXPORTER_OTLP_*`` variables, which the SDK reads.

The figures arrive as merged HDR histograms per interval; each recorded value is
given to the SDK's histogram as many times as it was counted (the coordinator's
work, never the generator's). At a level's end the calls the intervals did not
cover (those after the last one closed) are recorded too, so the exported totals
are the JSON's.
"""

from __future__ import annotations

from typing import Any

from grpcbench.base.errors import UsageError
from grpcbench.model.intervals import IntervalFigures
from grpcbench.model.results import LevelResult
from grpcbench.stats.histogram import LatencySummary, merge_summaries

DURATION = "rpc.client.duration"


def require_otel() -> None:
    try:
        import opentelemetry.exporter.otlp.proto.http.metric_exporter  # noqa: F401
        import opentelemetry.sdk.metrics  # noqa: F401
    except ImportError:
        raise UsageError(
            "--otlp needs the OpenTelemetry SDK: pip install 'grpcbench[telemetry]'"
        ) from None


def otlp_headers(items: tuple[str, ...]) -> dict[str, str]:
    """``--otlp-header KEY=VALUE`` items as a dict (a bad one is one line, value unsaid)."""
    headers = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"bad --otlp-header {key.strip()!r}=***: expected KEY=VALUE")
        headers[key.strip().lower()] = value.strip()
    return headers


def check_url(url: str, headers: dict[str, str]) -> None:
    """An http(s) URL; headers (credentials) only over https, or to this machine."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"bad --otlp {url!r}: an http:// or https:// URL, e.g."
                         " http://127.0.0.1:4318/v1/metrics")  # fmt: skip
    local = parts.hostname in ("127.0.0.1", "localhost", "::1")
    if headers and parts.scheme == "http" and not local:
        raise UsageError(
            f"--otlp-header would cross to {parts.hostname} in plaintext: give an https:// URL"
        )


class OtlpPush:
    """A MeterProvider that pushes every ``interval_s`` to ``url``; fed by the events."""

    def __init__(self, url: str, headers: dict[str, str], interval_s: float, run_id: str,
                 scenario: str) -> None:  # fmt: skip
        require_otel()
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.metrics.view import ExponentialBucketHistogramAggregation, View
        from opentelemetry.sdk.resources import Resource

        exporter = OTLPMetricExporter(endpoint=url, headers=headers or None)
        reader = PeriodicExportingMetricReader(
            exporter, export_interval_millis=max(100.0, interval_s * 1000)
        )
        self.provider = MeterProvider(
            metric_readers=[reader],
            resource=Resource.create({"service.name": "grpcbench", "grpcbench.run_id": run_id}),
            views=[View(instrument_name=DURATION,
                        aggregation=ExponentialBucketHistogramAggregation())],
        )  # fmt: skip
        meter = self.provider.get_meter("grpcbench")
        self.duration = meter.create_histogram(DURATION, unit="s", description="Call latency")
        self.live = meter.create_counter("grpcbench.calls.live", description="Calls by outcome")
        self.calls = meter.create_counter("grpcbench.calls", description="Calls by gRPC status")
        self.usage = meter.create_gauge("grpcbench.level.usage", description="CPU and memory")
        self.base = {"grpcbench.run_id": run_id, "grpcbench.scenario": scenario}
        self.attributes: dict[str, Any] = {}
        self.recorded: list[LatencySummary] = []
        self.live_ok = self.live_failed = 0
        self.url = url

    def start(self) -> str:
        return f"otlp: pushing metrics to {self.url}"

    def stop(self) -> None:
        """Export what is left, then stop (the SDK flushes on shutdown)."""
        self.provider.shutdown()

    def level_started(self, server: str, driver: str, level: str) -> None:
        self.attributes = {**self.base, "grpcbench.server": server,
                           "grpcbench.driver": driver, "grpcbench.level": level}  # fmt: skip
        self.recorded = []
        self.live_ok = self.live_failed = 0

    def _record(self, summary: LatencySummary) -> None:
        for value_us, count in summary.value_counts():
            seconds = value_us / 1e6
            for _ in range(count):
                self.duration.record(seconds, self.attributes)

    def interval(self, figures: IntervalFigures) -> None:
        if not self.attributes:
            return
        self.live.add(figures.ok, {**self.attributes, "outcome": "ok"})
        self.live.add(figures.failed, {**self.attributes, "outcome": "failed"})
        self.live_ok += figures.ok
        self.live_failed += figures.failed
        if figures.latency.count:
            self._record(figures.latency)
            self.recorded.append(figures.latency)

    def level_finished(self, level: LevelResult) -> None:
        """The calls the intervals did not cover, and the level's exact statuses."""
        load = level.load
        seen = merge_summaries(self.recorded) if self.recorded else None
        live = dict(seen.value_counts()) if seen is not None else {}
        for value_us, count in load.latency.value_counts():
            missing = count - live.get(value_us, 0)
            for _ in range(max(0, missing)):
                self.duration.record(value_us / 1e6, self.attributes)
        tail_ok, tail_failed = load.ok - self.live_ok, load.count - load.ok - self.live_failed
        self.live.add(max(0, tail_ok), {**self.attributes, "outcome": "ok"})
        self.live.add(max(0, tail_failed), {**self.attributes, "outcome": "failed"})
        for status, count in load.statuses.items():
            self.calls.add(count, {**self.attributes, "rpc.grpc.status": status})
        self.usage.set(load.client_cpu_s, {**self.attributes, "figure": "generator_cpu_seconds"})
        if level.server_usage is not None:
            self.usage.set(level.server_usage.cpu_s,
                           {**self.attributes, "figure": "server_cpu_seconds"})  # fmt: skip
            self.usage.set(float(level.server_usage.peak_rss_bytes),
                           {**self.attributes, "figure": "server_peak_rss_bytes"})  # fmt: skip
        self.attributes = {}
