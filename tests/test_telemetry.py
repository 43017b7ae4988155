"""run --prometheus: live figures while the run runs, and final figures that are the JSON's."""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest

from grpcbench.model.intervals import IntervalFigures, LiveUsage
from grpcbench.model.results import LevelResult
from grpcbench.stats.histogram import LatencyRecorder
from grpcbench.telemetry.buckets import latency_bounds_s
from grpcbench.telemetry.prometheus import RunCollector, parse_listen_address
from tests.conftest import GRPCBENCH
from tests.support.factories import level
from tests.support.telemetry_peers import metrics_url, otlp_receiver

prometheus_client = pytest.importorskip("prometheus_client")
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402


def test_grpc_buckets_run_from_10us_to_10s_three_per_octave() -> None:
    bounds = latency_bounds_s()
    assert bounds[0] == 1e-05 and 9.9 < bounds[-1] <= 10.1
    assert bounds[-1] == 10.0 and len(bounds) == 61
    assert all(1.19 < b / a < 1.28 for a, b in zip(bounds, bounds[1:], strict=False))
    recorder = LatencyRecorder()
    for value in (15, 40, 1000, 1000):
        recorder.record(value)
    assert recorder.summary().counts_at_or_below((10.0, 15.0, 100.0, 5000.0)) == [0, 1, 2, 4]


def _scrape(collector: RunCollector) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    registry = prometheus_client.CollectorRegistry(auto_describe=False)
    registry.register(collector)
    text = prometheus_client.generate_latest(registry).decode()
    found: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            key = tuple(sorted((k, v) for k, v in sample.labels.items() if k not in (
                "run_id", "scenario", "method", "server", "driver", "level")))  # fmt: skip
            found.setdefault(sample.name, {})[key] = sample.value
    return found


def test_the_final_figures_are_the_levels_exactly() -> None:
    latencies = [120, 450, 900, 5_000, 70_000] * 40
    finished = level("grpclib", statuses={"OK": 190, "Unavailable": 10}, latencies_us=latencies)
    collector = RunCollector("run1", "hello")
    collector.level_started("grpclib", "builtin", "concurrency 10")
    recorder = LatencyRecorder()
    for value in latencies[:120]:  # the intervals saw the first 120 calls only
        recorder.record(value)
    collector.interval(IntervalFigures(0, 0.0, 1.0, 115, 5, recorder.summary()))
    live = _scrape(collector)
    assert live["grpcbench_live_calls_total"][(("outcome", "ok"),)] == 115
    assert live["grpcbench_rpc_client_duration_seconds_count"][()] == 120
    collector.level_finished(finished)
    final = _scrape(collector)
    assert final["grpcbench_calls_total"] == {
        (("status", "OK"),): 190,
        (("status", "Unavailable"),): 10,
    }
    assert (
        final["grpcbench_rpc_client_duration_seconds_count"][()] == 200 == finished.measured.count
    )
    buckets = final["grpcbench_rpc_client_duration_seconds_bucket"]
    below = max(b for b in latency_bounds_s() if b < 120e-6)
    above = min(b for b in latency_bounds_s() if b >= 120e-6)
    by_bound = {float(dict(key)["le"]): value for key, value in buckets.items()}
    assert by_bound[below] == 0 and by_bound[above] == 40
    assert buckets[(("le", "+Inf"),)] == 200
    assert final["grpcbench_level_usage"][(("figure", "server_cpu_seconds"),)] == 0.8


def _open_loop_level(server: str, calls: int) -> LevelResult:
    """A finished open-loop level: its calls' service time and send lag too."""
    timings = LatencyRecorder()
    for _ in range(calls):
        timings.record(450)
    finished = level(server, statuses={"OK": calls}, latencies_us=[500] * calls)
    load = replace(finished.measured, service_latency=timings.summary(),
                   schedule_lag=timings.summary())  # fmt: skip
    return replace(finished, measured=load)


def test_open_loop_timings_and_usage_are_live_then_the_levels_exactly() -> None:
    """Service time and send lag come interval by interval, CPU and memory so far every
    interval; at the level's end its own figures replace them (a closed loop serves
    no timings)."""
    collector = RunCollector("run1", "hello")
    collector.level_started("grpclib", "builtin", "rate 100/s")
    service, lag = LatencyRecorder(), LatencyRecorder()
    for value in (200, 300, 400):
        service.record(value)
        lag.record(value // 10)
    collector.interval(IntervalFigures(0, 0.0, 1.0, 3, 0, service.summary(), 100.0,
                                       service.summary(), lag.summary(), in_flight=7))  # fmt: skip
    backing = (("postgres", 0.5),)
    collector.usage(LiveUsage(1.0, server_cpu_s=0.25, server_rss_bytes=41_000_000,
                              generator_cpu_s=0.05, backing_cpu_s=backing))  # fmt: skip
    live = _scrape(collector)
    assert live["grpcbench_service_time_seconds_count"][()] == 3
    assert live["grpcbench_send_lag_seconds_count"][()] == 3
    assert live["grpcbench_cpu_seconds_total"] == {
        (("side", "server"),): 0.25, (("side", "generator"),): 0.05,
        (("side", "backing:postgres"),): 0.5}  # fmt: skip
    assert live["grpcbench_calls_in_flight"][()] == 7
    assert live["grpcbench_server_rss_bytes"][()] == 41_000_000
    collector.level_finished(_open_loop_level("grpclib", calls=10))
    final = _scrape(collector)
    assert final["grpcbench_service_time_seconds_count"][()] == 10
    assert final["grpcbench_send_lag_seconds_count"][()] == 10
    assert final["grpcbench_cpu_seconds_total"][(("side", "server"),)] == 0.8
    assert final["grpcbench_calls_in_flight"][()] == 0  # a finished level has none

    closed = RunCollector("run2", "hello")
    closed.level_started("grpclib", "builtin", "concurrency 2")
    closed.interval(IntervalFigures(0, 0.0, 1.0, 3, 0, service.summary()))
    assert "grpcbench_service_time_seconds_count" not in _scrape(closed)


def test_capacity_probes_are_served_as_they_are_judged() -> None:
    collector = RunCollector("run1", "hello")
    collector.probe_judged("grpclib", 2, "search", 500.0, "p99<=10ms", "pass")
    collector.probe_judged("grpclib", 3, "search", 1000.0, "p99<=10ms", "fail")
    collector.capacity_found("grpclib", "p99<=10ms", 500.0, None)
    collector.capacity_found("grpclib", "p99<=10ms", 500.0, 490.0)
    scraped = _scrape(collector)
    assert scraped["grpcbench_capacity_probe_rate"] == {
        (("outcome", "pass"), ("phase", "search"), ("probe", "2"), ("slo", "p99<=10ms")): 500.0,
        (("outcome", "fail"), ("phase", "search"), ("probe", "3"), ("slo", "p99<=10ms")): 1000.0,
    }
    assert scraped["grpcbench_capacity"] == {
        (("figure", "searched"), ("slo", "p99<=10ms")): 500.0,
        (("figure", "confirmed"), ("slo", "p99<=10ms")): 490.0,
    }


def test_a_taken_port_is_one_warning_and_no_endpoint() -> None:
    """--prometheus on a port another process holds: one warning line, the run goes on."""
    import socket

    from grpcbench.telemetry.prometheus import PrometheusEndpoint

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        warnings: list[str] = []
        endpoint = PrometheusEndpoint(str(port), RunCollector("r", "s"))
        assert endpoint.start(warnings.append) == ""
        endpoint.stop()
    assert len(warnings) == 1 and "cannot listen" in warnings[0] and "goes on" in warnings[0]


@pytest.mark.integration
def test_a_collector_that_is_down_is_one_warning_line_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    pytest.importorskip("opentelemetry.sdk.metrics")
    import socket

    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    out = tmp_path / "r.json"
    done = subprocess.run(
        [*GRPCBENCH, "run", "-s", "grpclib", "-c", "2", "-z", "3s", "--warmup", "0",
         "--otlp", f"http://127.0.0.1:{port}/v1/metrics", "--output", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["status"] == "complete"
    said = [line for line in done.stderr.splitlines() if "otlp" in line.lower()]
    assert len(said) == 2, said  # where it pushes, and one warning
    assert "failed" in said[1] and "goes on" in said[1]
    assert "Traceback" not in done.stderr and "Transient error" not in done.stderr


def test_the_endpoint_stops_with_the_run_and_leaves_no_thread_or_port() -> None:
    """TelemetryEvents starts the endpoint with the run and stops it at its end: its
    port refuses connections then, and its serving thread is gone."""
    import socket
    import threading

    from rich.console import Console

    from grpcbench.cli.telemetry_events import TelemetryEvents
    from grpcbench.model.events import NullEvents
    from grpcbench.telemetry.prometheus import PrometheusEndpoint

    class Inner(NullEvents):
        def __enter__(self) -> Inner:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

    before = set(threading.enumerate())
    endpoint = PrometheusEndpoint("0", RunCollector("r", "s"))
    with TelemetryEvents(Inner(), [endpoint], Console(quiet=True)):
        port = endpoint.port
        assert urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).status == 200
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port)):
        pass
    for thread in set(threading.enumerate()) - before:
        thread.join(timeout=5)
        assert not thread.is_alive(), thread


def test_listen_addresses() -> None:
    assert parse_listen_address("9464") == ("127.0.0.1", 9464)
    assert parse_listen_address(":0") == ("127.0.0.1", 0)
    assert parse_listen_address("0.0.0.0:9464") == ("0.0.0.0", 9464)
    with pytest.raises(Exception, match="bad --prometheus"):
        parse_listen_address("x:y")


@pytest.mark.integration
def test_a_run_is_scraped_live_and_its_final_figures_are_the_jsons(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    process = subprocess.Popen(
        [*GRPCBENCH, "run", "-s", "grpclib", "-c", "2", "-z", "3s", "--warmup", "0",
         "--prometheus", "0", "--prometheus-linger", "4s", "--output", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    url = metrics_url(process)
    live: list[float] = []
    while not out.exists() or json.loads(out.read_text() or "{}").get("status") != "complete":
        text = urllib.request.urlopen(url, timeout=5).read().decode()
        live += [float(v) for v in re.findall(
            r'grpcbench_live_calls_total\{[^}]*outcome="ok"[^}]*\} (\S+)', text)]  # fmt: skip
        time.sleep(0.5)
    text = urllib.request.urlopen(url, timeout=5).read().decode()  # lingering: final figures
    process.communicate(timeout=60)
    assert process.returncode == 0
    (measured,) = json.loads(out.read_text())["levels"]
    calls = sum(measured["load"]["statuses"].values())
    assert any(0 < value < calls for value in live)  # seen while it ran
    count = re.search(r"grpcbench_rpc_client_duration_seconds_count\{[^}]*\} (\S+)", text)
    ok = re.search(r'grpcbench_calls_total\{[^}]*status="OK"[^}]*\} (\S+)', text)
    assert count and ok and float(count.group(1)) == calls == float(ok.group(1))


def test_a_missing_extra_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    from grpcbench.base.errors import UsageError
    from grpcbench.telemetry.prometheus import require_prometheus_client

    real_import = builtins.__import__

    def no_client(name: str, *args: object, **kwargs: object) -> object:
        if name == "prometheus_client":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_client)
    with pytest.raises(UsageError, match=r"pip install 'grpcbench\[telemetry\]'"):
        require_prometheus_client()


def test_the_grafana_dashboard_reads_only_series_that_are_served() -> None:
    """docs/grafana/grpcbench.json: valid JSON, and every query names a metric the
    exporter serves (a renamed metric would leave a panel empty)."""
    dashboard = json.loads(
        (Path(__file__).resolve().parents[1] / "docs/grafana/grpcbench.json").read_text()
    )
    served = {"grpcbench_live_calls_total", "grpcbench_rpc_client_duration_seconds_bucket",
              "grpcbench_rate", "grpcbench_calls_total", "grpcbench_level_usage",
              "grpcbench_service_time_seconds_bucket", "grpcbench_send_lag_seconds_bucket",
              "grpcbench_cpu_seconds_total", "grpcbench_server_rss_bytes",
              "grpcbench_capacity_probe_rate", "grpcbench_capacity",
              "grpcbench_calls_in_flight"}  # fmt: skip
    collector = RunCollector("r", "s")
    collector.level_started("x", "builtin", "rate 100/s")
    recorder = LatencyRecorder()
    recorder.record(300)
    summary = recorder.summary()
    collector.interval(IntervalFigures(0, 0.0, 1.0, 1, 0, summary, 100.0, summary, summary))
    collector.usage(LiveUsage(1.0, 0.2, 40_000_000, 0.1))
    collector.level_finished(_open_loop_level("x", calls=4))
    collector.probe_judged("x", 2, "search", 100.0, "p99<=10ms", "pass")
    collector.capacity_found("x", "p99<=10ms", 100.0, None)
    names = {name for name in _scrape(collector)}
    assert served <= names
    queried = {
        metric
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for metric in re.findall(r"grpcbench_\w+", target["expr"])
    }
    assert queried and queried <= served


@pytest.mark.integration
def test_otlp_pushes_a_run_whose_final_totals_are_the_jsons(tmp_path: Path) -> None:
    """A receiver of the test's own takes OTLP/HTTP exports; the last one holds the
    level's exact totals (exponential histogram count, calls by status), and the
    --otlp-header reaches it while the saved command line masks it."""
    pytest.importorskip("opentelemetry.sdk.metrics")
    out = tmp_path / "r.json"
    with otlp_receiver() as received:
        done = subprocess.run(
            [*GRPCBENCH, "run", "-s", "grpclib", "--rate", "200", "-z", "3s", "--warmup", "0",
             "--otlp", received.url,
             "--otlp-header", "authorization=Bearer s3cr3t", "--output", str(out)],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    exports, headers = received.exports, received.authorizations
    assert done.returncode == 0, done.stderr
    assert len(exports) >= 2 and set(headers) == {"Bearer s3cr3t"}
    data = json.loads(out.read_text())
    assert "s3cr3t" not in out.read_text() and "s3cr3t" not in done.stderr + done.stdout
    load = data["levels"][0]["load"]
    calls = sum(load["statuses"].values())
    totals: dict[str, float] = {}
    live: set[str] = set()
    last: dict[str, float] = {}  # the last export's gauges, by name (and figure)
    for export in exports:  # cumulative: the last export holds the totals
        for resource in export.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.HasField("exponential_histogram"):
                        totals[metric.name] = sum(
                            p.count for p in metric.exponential_histogram.data_points
                        )
                    elif metric.name == "grpcbench.calls":
                        totals[metric.name] = sum(p.as_int for p in metric.sum.data_points)
                    elif metric.name == "grpcbench.live.usage":
                        live |= {a.value.string_value for p in metric.gauge.data_points
                                 for a in p.attributes if a.key == "figure"}  # fmt: skip
                    if metric.HasField("gauge"):
                        for p in metric.gauge.data_points:
                            figure = [a.value.string_value for a in p.attributes
                                      if a.key == "figure"]  # fmt: skip
                            last[":".join([metric.name, *figure])] = p.as_double or p.as_int
    assert totals == {
        "rpc.client.duration": calls, "grpcbench.calls": calls,
        "grpcbench.service_time": load["service_latency"]["count"],
        "grpcbench.send_lag": load["schedule_lag"]["count"],
    }  # fmt: skip
    # Pushed while the level ran: the server's and the generator's usage so far.
    assert {"server_cpu_seconds", "server_rss_bytes", "generator_cpu_seconds"} <= live
    # Once it ended: none in flight, and the usage is the JSON's (as Prometheus's is).
    assert last["grpcbench.calls.in_flight"] == 0
    assert last["grpcbench.live.usage:generator_cpu_seconds"] == load["client_cpu_s"]
    assert (
        last["grpcbench.live.usage:server_cpu_seconds"]
        == (data["levels"][0]["server_usage"]["cpu_s"])
    )


@pytest.mark.parametrize("given", [
    "authorization: Bearer s3cr3t",  # curl's form
    "authorization:Bearer=s3cr3t",
    "Bearer s3cr3t",
])  # fmt: skip
def test_a_bad_otlp_header_is_refused_without_its_value(given: str) -> None:
    from grpcbench.base.errors import UsageError
    from grpcbench.telemetry.otlp import otlp_headers

    with pytest.raises(UsageError) as refused:
        otlp_headers((given,))
    assert "s3cr3t" not in str(refused.value) and "expected KEY=VALUE" in str(refused.value)


@pytest.mark.parametrize(("url", "environment", "said"), [
    ("http://collector.example:4318/v1/metrics", {"OTEL_EXPORTER_OTLP_HEADERS": "api-key=s3cr3t"},
     "OTEL_EXPORTER_OTLP_HEADERS would cross to collector.example in plaintext"),
    ("http://collector.example:4318/v1/metrics",
     {"OTEL_EXPORTER_OTLP_METRICS_HEADERS": "api-key=s3cr3t"},
     "OTEL_EXPORTER_OTLP_METRICS_HEADERS would cross to collector.example in plaintext"),
    ("http://user:s3cr3t@collector.example/v1/metrics", {},
     "--otlp's user and password would cross to collector.example in plaintext"),
    ("https://collector.example/v1/metrics", {"OTEL_EXPORTER_OTLP_HEADERS": "a=1,s3cr3t"},
     "OTEL_EXPORTER_OTLP_HEADERS is not KEY=VALUE,KEY=VALUE"),
    ("ftp://user:s3cr3t@collector.example/", {}, "bad --otlp 'ftp://user:***@collector"),
    ("http://user:s3cr3t@[::1/v1/metrics", {}, "bad --otlp"),
])  # fmt: skip
def test_otlp_credentials_never_cross_in_plaintext_nor_show(
    url: str,
    environment: dict[str, str],
    said: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The environment's OTLP headers and a URL's user and password are credentials as
    --otlp-header is: refused over plaintext to another host, and never shown, a
    malformed variable included (the SDK's parser logs each bad item, value and all)."""
    pytest.importorskip("opentelemetry.sdk.metrics")
    from grpcbench.base.errors import UsageError
    from grpcbench.telemetry.otlp import check_url

    for name in ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(UsageError) as refused:
        check_url(url, {})
    assert said in str(refused.value) and "s3cr3t" not in str(refused.value)
    assert "s3cr3t" not in caplog.text


def test_otlp_credentials_may_go_over_https_or_to_this_machine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("opentelemetry.sdk.metrics")
    from grpcbench.telemetry.otlp import check_url

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "api-key=s3cr3t")
    for url in (
        "https://user:pw@collector.example/v1/metrics",
        "http://user:pw@127.0.0.1:4318/v1/metrics",
        "http://localhost:4318/v1/metrics",
    ):
        check_url(url, {"authorization": "x"})
