"""``run --otlp URL``: the run's figures pushed with the OpenTelemetry SDK over OTLP/HTTP.

Every ``--interval`` (1 s unless given) the SDK exports what the run has measured
so far to a collector (the OTel Collector, Grafana Alloy, Mimir's or Prometheus's
OTLP receiver): ``rpc.client.duration`` as an exponential-bucket histogram (which
they store as a native histogram), an open loop's service time and send lag the
same way, calls by outcome and, at each level's end, by gRPC status, the
processes' CPU and memory so far, and the level's own at its end. Headers for authentication come
from ``--otlp-header`` (masked wherever the command line is shown) or the
standard ``OTEL_EXPORTER_OTLP_*`` variables, which the SDK reads.

The figures arrive as merged HDR histograms per interval. The histograms are kept
as HDR histograms and mapped onto OTLP's exponential buckets at each push
(``otlp_histograms``), never given to the SDK one call at a time (that cost the
coordinator most of a core at a few thousand calls a second). At a level's end each
becomes the level's whole histogram, with the calls after the last interval, so
the exported totals are the JSON's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from grpcbench.base.errors import UsageError
from grpcbench.base.secrets import redact
from grpcbench.model.intervals import IntervalFigures, LiveUsage
from grpcbench.model.results import LevelResult
from grpcbench.telemetry.otlp_environment import SDK_PARSER_LOGGER, environment_headers
from grpcbench.telemetry.otlp_histograms import PushedHistograms, with_metrics

DURATION = "rpc.client.duration"
SERVICE_TIME = "grpcbench.service_time"  # open loop: from the actual send
SEND_LAG = "grpcbench.send_lag"  # open loop: actual minus intended send
HISTOGRAMS = {  # name -> description
    DURATION: "Call latency",
    SERVICE_TIME: "Open loop: latency from the actual send",
    SEND_LAG: "Open loop: send time after the intended",
}


# One export (the SDK retries within it) may take this long: a collector that does not
# answer then costs the run's end at most this, not the SDK's default of 10 s a try.
EXPORT_TIMEOUT_S = 2.0
# The SDK's own loggers: a collector that is down would print a line per retry.
SDK_LOGGERS = ("opentelemetry.exporter.otlp.proto.http.metric_exporter",
               "opentelemetry.exporter.otlp.proto.http", "opentelemetry.exporter.http",
               "opentelemetry.sdk.metrics._internal.export")  # fmt: skip


def _reporting_exporter(base: type) -> type:
    """``base`` (the SDK's OTLP/HTTP exporter) that says its first failure in one line,
    through the run's warnings, instead of the SDK's log line per retry."""
    import logging

    for name in (*SDK_LOGGERS, SDK_PARSER_LOGGER):
        logging.getLogger(name).setLevel(logging.CRITICAL)

    class ReportingExporter(base):
        warn: Callable[[str], None] = staticmethod(lambda message: None)
        failed = False
        histograms: PushedHistograms | None = None  # pushed with the SDK's own metrics
        resource: Any = None

        def export(self, metrics_data: Any, timeout_millis: float | None = 10_000,
                   **kwargs: Any) -> Any:  # fmt: skip
            from opentelemetry.sdk.metrics.export import MetricExportResult

            if self.histograms is not None:
                extra = self.histograms.metrics()
                metrics_data = with_metrics(metrics_data, extra, self.resource)
            result = super().export(metrics_data, timeout_millis, **kwargs)
            if result != MetricExportResult.SUCCESS and not self.failed:
                self.failed = True
                self.warn(f"--otlp: a push to {redact(self._endpoint)} failed (the collector"
                          " is down or refused it); the run goes on, its results file keeps"
                          " every figure")  # fmt: skip
            return result

    return ReportingExporter


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
        if not sep or not key.strip() or ":" in key:
            # Only the header's name is said: the rest may be a secret (curl's
            # 'authorization: Bearer TOKEN' form has no '=' before it).
            name, colon, _ = key.partition(":")
            shown = f" {name.strip()[:40]!r}" if colon and name.strip() else ""
            raise UsageError(f"bad --otlp-header{shown} (not shown): expected KEY=VALUE")
        headers[key.strip().lower()] = value.strip()
    return headers


def check_url(url: str, headers: dict[str, str]) -> None:
    """An http(s) URL; credentials (``--otlp-header``, the environment's headers, a user
    and password in the URL, which the SDK sends as basic auth) only over https, or to
    this machine. The URL is never shown with its password."""
    from urllib.parse import urlsplit

    bad = UsageError(f"bad --otlp {redact(url)!r}: an http:// or https:// URL, e.g."
                     " http://127.0.0.1:4318/v1/metrics")  # fmt: skip
    try:
        parts = urlsplit(url)
        hostname, _ = parts.hostname, parts.port  # a bad port is a ValueError here
    except ValueError:
        raise bad from None
    if parts.scheme not in ("http", "https") or not hostname:
        raise bad
    variable, from_environment = environment_headers()
    if parts.scheme == "https" or hostname in ("127.0.0.1", "localhost", "::1"):
        return
    userinfo = parts.username or parts.password
    for given, what in ((headers, "--otlp-header"), (from_environment, variable),
                        (userinfo, "--otlp's user and password")):  # fmt: skip
        if given:
            raise UsageError(f"{what} would cross to {hostname} in plaintext: give an https:// URL")


class OtlpPush:
    """A MeterProvider that pushes every ``interval_s`` to ``url``; fed by the events."""

    def __init__(self, url: str, headers: dict[str, str], interval_s: float, run_id: str,
                 scenario: str, method: str = "") -> None:  # fmt: skip
        require_otel()
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import Resource

        exporter = _reporting_exporter(OTLPMetricExporter)(
            endpoint=url, headers=headers or None, timeout=EXPORT_TIMEOUT_S
        )
        self.exporter = exporter
        resource = Resource.create({"service.name": "grpcbench", "grpcbench.run_id": run_id})
        self.histograms = PushedHistograms(HISTOGRAMS)
        exporter.histograms, exporter.resource = self.histograms, resource
        reader = PeriodicExportingMetricReader(
            exporter, export_interval_millis=max(100.0, interval_s * 1000)
        )
        self.provider = MeterProvider(metric_readers=[reader], resource=resource)
        meter = self.provider.get_meter("grpcbench")
        self.probe_rate = meter.create_gauge(
            "grpcbench.capacity.probe", unit="1/s", description="A judged probe's offered rate"
        )
        self.capacity = meter.create_gauge(
            "grpcbench.capacity", unit="1/s", description="An SLO's capacity on a server"
        )
        self.in_flight = meter.create_gauge(
            "grpcbench.calls.in_flight", description="Calls sent and not finished"
        )
        self.live_usage = meter.create_gauge(
            "grpcbench.live.usage", description="CPU seconds and memory so far in the level"
        )
        self.live = meter.create_counter("grpcbench.calls.live", description="Calls by outcome")
        self.calls = meter.create_counter("grpcbench.calls", description="Calls by gRPC status")
        self.level_usage = meter.create_gauge("grpcbench.level.usage", description="CPU and memory")
        self.base = {"grpcbench.run_id": run_id, "grpcbench.scenario": scenario,
                     "rpc.method": method}  # fmt: skip
        self.attributes: dict[str, Any] = {}
        self.live_ok = self.live_failed = 0
        self.url = url

    def start(self, warn: Callable[[str], None]) -> str:
        self.exporter.warn = warn
        return f"otlp: pushing metrics to {redact(self.url)}"

    def stop(self) -> None:
        """Export what is left, then stop (the SDK flushes on shutdown)."""
        self.provider.shutdown()

    def level_started(self, server: str, driver: str, level: str) -> None:
        self.attributes = {**self.base, "grpcbench.server": server,
                           "grpcbench.driver": driver, "grpcbench.level": level}  # fmt: skip
        self.live_ok = self.live_failed = 0

    def interval(self, figures: IntervalFigures) -> None:
        if not self.attributes:
            return
        self.live.add(figures.ok, {**self.attributes, "outcome": "ok"})
        self.live.add(figures.failed, {**self.attributes, "outcome": "failed"})
        self.live_ok += figures.ok
        self.live_failed += figures.failed
        self.in_flight.set(figures.in_flight, self.attributes)
        self.histograms.add(DURATION, self.attributes, figures.latency)
        if figures.service is not None:
            self.histograms.add(SERVICE_TIME, self.attributes, figures.service)
        if figures.lag is not None:
            self.histograms.add(SEND_LAG, self.attributes, figures.lag)

    def usage(self, usage: LiveUsage) -> None:
        if not self.attributes:
            return
        for figure, value in (("server_cpu_seconds", usage.server_cpu_s),
                              ("server_rss_bytes", usage.server_rss_bytes),
                              ("generator_cpu_seconds", usage.generator_cpu_s)):  # fmt: skip
            if value is not None:
                self.live_usage.set(float(value), {**self.attributes, "figure": figure})
        for name, seconds in usage.backing_cpu_s:
            self.live_usage.set(
                seconds, {**self.attributes, "figure": f"backing:{name}_cpu_seconds"}
            )

    def probe_judged(
        self, server: str, number: int, phase: str, rate: float, slo: str, outcome: str
    ) -> None:
        self.probe_rate.set(rate, {**self.base, "grpcbench.server": server, "grpcbench.slo": slo,
                                   "grpcbench.probe": number, "grpcbench.phase": phase,
                                   "grpcbench.outcome": outcome})  # fmt: skip

    def capacity_found(self, server: str, slo: str, capacity: float | None,
                       confirmed: float | None) -> None:  # fmt: skip
        where = {**self.base, "grpcbench.server": server, "grpcbench.slo": slo}
        for figure, value in (("searched", capacity), ("confirmed", confirmed)):
            if value is not None:
                self.capacity.set(value, {**where, "figure": figure})

    def level_finished(self, level: LevelResult) -> None:
        """The calls the intervals did not cover, and the level's exact statuses; the
        live gauges become the level's own figures (no call is in flight once it ended,
        and its usage is the JSON's), as Prometheus's do."""
        load = level.measured
        self.in_flight.set(0, self.attributes)
        final = [("generator_cpu_seconds", load.client_cpu_s)]
        if level.server_usage is not None:
            final.append(("server_cpu_seconds", level.server_usage.cpu_s))
        final += [(f"backing:{name}_cpu_seconds", usage.cpu_s)
                  for name, usage in level.backing_usage.items()]  # fmt: skip
        for figure, value in final:
            self.live_usage.set(value, {**self.attributes, "figure": figure})
        self.histograms.settle(DURATION, self.attributes, load.latency)
        if load.service_latency is not None:
            self.histograms.settle(SERVICE_TIME, self.attributes, load.service_latency)
        if load.schedule_lag is not None:
            self.histograms.settle(SEND_LAG, self.attributes, load.schedule_lag)
        tail_ok, tail_failed = load.ok - self.live_ok, load.count - load.ok - self.live_failed
        self.live.add(max(0, tail_ok), {**self.attributes, "outcome": "ok"})
        self.live.add(max(0, tail_failed), {**self.attributes, "outcome": "failed"})
        for status, count in load.statuses.items():
            self.calls.add(count, {**self.attributes, "rpc.grpc.status": status})
        self.level_usage.set(
            load.client_cpu_s, {**self.attributes, "figure": "generator_cpu_seconds"}
        )
        if level.server_usage is not None:
            self.level_usage.set(level.server_usage.cpu_s,
                           {**self.attributes, "figure": "server_cpu_seconds"})  # fmt: skip
            self.level_usage.set(float(level.server_usage.peak_rss_bytes),
                           {**self.attributes, "figure": "server_peak_rss_bytes"})  # fmt: skip
        self.attributes = {}
