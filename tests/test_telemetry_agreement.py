"""Every live series agrees with the results file at each level's end, on both exporters.

One run of two levels serves ``--prometheus`` and pushes ``--otlp`` to a receiver of the
test's own (on opentelemetry-proto). Once the run is done and lingering, every series of
each level is compared with that level in the JSON: calls by status and by outcome,
latency counts, calls in flight, CPU seconds and the level's usage, and the rates.
A series that keeps a live value past its level's end, or a level whose series went
missing, fails here (issue 51: OTLP's in-flight gauge stayed 2 and 12, its usage the
live 2.66 s against the JSON's 2.628 s).
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GRPCBENCH
from tests.support.telemetry_peers import metrics_url, otlp_receiver

pytestmark = pytest.mark.integration
pytest.importorskip("prometheus_client")
pytest.importorskip("opentelemetry.sdk.metrics")

Series = dict[tuple[str, str, str], float]  # (metric, level, the other label) -> value


def _prometheus(text: str) -> Series:
    found: Series = {}
    for name, labels, value in re.findall(r"^(grpcbench_\w+)\{([^}]*)\} (\S+)$", text, re.M):
        pairs = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        other = next((pairs[k] for k in ("status", "outcome", "side", "figure", "kind", "le")
                      if k in pairs), "")  # fmt: skip
        found[(name, pairs.get("level", ""), other)] = float(value)
    return found


def _otlp(exports: list[Any]) -> Series:
    """The last value of every data point (cumulative: the last export holds the totals)."""
    found: Series = {}
    for export in exports:
        for resource in export.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    kind = metric.WhichOneof("data")
                    for point in getattr(metric, kind).data_points:
                        attributes = {a.key: a.value.string_value for a in point.attributes}
                        other = next((attributes[k] for k in ("rpc.grpc.status", "outcome",
                                      "figure") if k in attributes), "")  # fmt: skip
                        if kind == "exponential_histogram":
                            value = float(point.count)
                        else:
                            value = point.as_double or float(point.as_int)
                        found[(metric.name, attributes.get("grpcbench.level", ""), other)] = value
    return found


def test_every_live_series_is_the_jsons_at_each_level_s_end_on_both_exporters(
    tmp_path: Path,
) -> None:
    out = tmp_path / "r.json"
    with otlp_receiver() as received:
        process = subprocess.Popen(
            [*GRPCBENCH, "run", "-s", "grpclib", "-c", "2,4", "-n", "400", "--warmup", "0",
             "--no-pin", "--prometheus", "0", "--prometheus-linger", "3s", "--otlp", received.url,
             "--output", str(out)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        scrape = metrics_url(process)
        while json.loads(out.read_text() or "{}").get("status") != "complete" if out.exists() \
                else True:  # fmt: skip
            assert process.poll() is None, process.communicate()[1]
            time.sleep(0.2)
        served = _prometheus(urllib.request.urlopen(scrape, timeout=5).read().decode())
        _, err = process.communicate(timeout=60)  # the last OTLP push is made as it stops
    assert process.returncode == 0, err
    pushed = _otlp(received.exports)
    levels = json.loads(out.read_text())["levels"]
    assert len(levels) == 2
    for level in levels:
        name = f"concurrency {level['plan']['concurrency']}"
        load, server = level["load"], level["server_usage"]
        statuses: dict[str, int] = load["statuses"]
        count, ok = sum(statuses.values()), statuses.get("OK", 0)
        usage = {"server_cpu_seconds": server["cpu_s"],
                 "generator_cpu_seconds": load["client_cpu_s"],
                 "server_peak_rss_bytes": server["peak_rss_bytes"]}  # fmt: skip
        expected_prometheus: Series = {
            **{("grpcbench_calls_total", name, s): n for s, n in statuses.items()},
            ("grpcbench_live_calls_total", name, "ok"): ok,
            ("grpcbench_live_calls_total", name, "failed"): count - ok,
            ("grpcbench_rpc_client_duration_seconds_count", name, ""): count,
            ("grpcbench_rpc_client_duration_seconds_bucket", name, "+Inf"): count,
            ("grpcbench_calls_in_flight", name, ""): 0,
            ("grpcbench_cpu_seconds_total", name, "server"): server["cpu_s"],
            ("grpcbench_cpu_seconds_total", name, "generator"): load["client_cpu_s"],
            **{("grpcbench_level_usage", name, f): v for f, v in usage.items()},
            ("grpcbench_rate", name, "achieved"): count / load["wall_s"],
        }
        for key, value in expected_prometheus.items():
            assert served.get(key) == pytest.approx(value, rel=1e-9), (key, served.get(key))
        assert ("grpcbench_rate", name, "offered") not in served  # a closed loop offers none
        expected_otlp: Series = {
            **{("grpcbench.calls", name, s): n for s, n in statuses.items()},
            ("grpcbench.calls.live", name, "ok"): ok,
            ("grpcbench.calls.live", name, "failed"): count - ok,
            ("rpc.client.duration", name, ""): count,
            ("grpcbench.calls.in_flight", name, ""): 0,
            ("grpcbench.live.usage", name, "server_cpu_seconds"): server["cpu_s"],
            ("grpcbench.live.usage", name, "generator_cpu_seconds"): load["client_cpu_s"],
            **{("grpcbench.level.usage", name, f): v for f, v in usage.items()},
        }
        for key, value in expected_otlp.items():
            assert pushed.get(key) == pytest.approx(value, rel=1e-9), (key, pushed.get(key))
