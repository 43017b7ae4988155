"""The shipped Grafana dashboard, proven against a real Prometheus (Debian's package).

Prometheus scrapes ``run --prometheus`` (an open loop, so service time and send lag
are served) and ``capacity --prometheus`` every second. Then every query of
docs/grafana/grpcbench.json is evaluated through Prometheus's HTTP API at a moment
while each command served its final figures (``--prometheus-linger``): each must
return data, and the counts must be the results files' (the dashboard is a view
of the same figures, not an estimate of them).

Prometheus's own default scrape interval is a minute. Every rate window of the dashboard
is ``$__rate_interval`` (Grafana's: at least four scrape intervals), so its panels have
data at that interval too; a second test proves it with a run longer than two scrapes.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GRPCBENCH

pytest.importorskip("prometheus_client")
DASHBOARD = Path(__file__).resolve().parents[1] / "docs/grafana/grpcbench.json"
CAPACITY_PANEL = "Capacity search"  # its queries have data while a capacity search runs
SCRAPE_S = 1
DEFAULT_SCRAPE_S = 60  # Prometheus's, when its configuration gives none


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _prometheus_binary() -> str:
    found = shutil.which("prometheus")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("prometheus is missing in CI: .ci/run must install Debian's prometheus")
        pytest.skip("prometheus not installed (apt-get install prometheus)")
    return found


def _query(api: str, expr: str, at: float) -> list[dict[str, Any]]:
    url = f"{api}/api/v1/query?" + urllib.parse.urlencode({"query": expr, "time": f"{at:.3f}"})
    answer = json.loads(urllib.request.urlopen(url, timeout=10).read())
    assert answer["status"] == "success", (expr, answer)
    return list(answer["data"]["result"])


def _values(api: str, expr: str, at: float) -> list[float]:
    return [float(item["value"][1]) for item in _query(api, expr, at)]


def _serve_until_complete(command: list[str], out: Path, timeout_s: float) -> float:
    """Run ``command`` (which lingers after writing ``out``); the moment, on Prometheus's
    clock (this machine's), when its final figures had been scraped."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)  # fmt: skip
    deadline = time.monotonic() + timeout_s
    try:
        while not out.exists() or json.loads(out.read_text() or "{}").get("status") != "complete":
            assert process.poll() is None, process.communicate()[1]
            assert time.monotonic() < deadline, "the command did not finish"
            time.sleep(0.2)
        time.sleep(3 * SCRAPE_S)  # lingering: the final figures are scraped meanwhile
        scraped = time.time()
        _, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return scraped


def _substituted(expr: str, scrape_s: float) -> str:
    """The query Grafana sends: every run, and ``$__rate_interval`` as Grafana computes it
    for a panel whose step is the scrape interval, max(step + scrape, 4 x scrape)."""
    return expr.replace('"$run_id"', '".*"').replace("$__rate_interval", f"{4 * scrape_s:g}s")


@contextlib.contextmanager
def _prometheus(tmp_path: Path, targets: list[int], scrape_s: float | None) -> Iterator[str]:
    """A real Prometheus scraping ``targets``, every ``scrape_s`` or at its default
    interval (None); yields its API's URL once it scrapes them all."""
    binary = _prometheus_binary()
    api_port = _free_port()
    config = tmp_path / f"prometheus-{scrape_s}.yml"
    listed = ", ".join(f"'127.0.0.1:{port}'" for port in targets)
    config.write_text(
        (
            f"global:\n  scrape_interval: {scrape_s:g}s\n  evaluation_interval: {scrape_s:g}s\n"
            if scrape_s
            else ""
        )  # fmt: skip
        + "scrape_configs:\n  - job_name: grpcbench\n    static_configs:\n"
        + f"      - targets: [{listed}]\n"
    )
    prometheus = subprocess.Popen(
        [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / f'data-{scrape_s}'}",
         f"--web.listen-address=127.0.0.1:{api_port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    api = f"http://127.0.0.1:{api_port}"
    try:
        # Ready, and scraping every target (down until the commands serve): Prometheus
        # applies its targets up to 5 s after it starts, and a scrape missed then would
        # lose the first seconds of the run.
        deadline = time.monotonic() + 30 + 2 * (scrape_s or DEFAULT_SCRAPE_S)
        while True:
            assert time.monotonic() < deadline, "prometheus did not start scraping"
            with contextlib.suppress(OSError):
                if len(_query(api, 'up{job="grpcbench"}', time.time())) == len(targets):
                    break
            time.sleep(0.2)
        yield api
    finally:
        prometheus.terminate()
        prometheus.wait(timeout=30)


@pytest.mark.integration
def test_every_dashboard_query_returns_the_runs_figures_from_a_real_prometheus(
    tmp_path: Path,
) -> None:
    run_port, capacity_port = _free_port(), _free_port()
    with _prometheus(tmp_path, [run_port, capacity_port], SCRAPE_S) as api:
        run_out, capacity_out = tmp_path / "run.json", tmp_path / "capacity.json"
        run_at = _serve_until_complete(
            [*GRPCBENCH, "run", "-s", "grpclib", "--rate", "200", "-z", "6s", "--warmup", "0",
             "--interval", "1s", "--prometheus", f"127.0.0.1:{run_port}",
             "--prometheus-linger", "8s", "--output", str(run_out)],
            run_out, 90,
        )  # fmt: skip
        capacity_at = _serve_until_complete(
            [*GRPCBENCH, "capacity", "-s", "grpclib", "--slo", "p99<=2s",
             "--probe-duration", "1s", "--probe-warmup", "0.2s", "--confirmations", "0",
             "--max-probes", "3", "--prometheus", f"127.0.0.1:{capacity_port}",
             "--prometheus-linger", "8s", "--output", str(capacity_out)],
            capacity_out, 120,
        )  # fmt: skip

        dashboard = json.loads(DASHBOARD.read_text())
        variable = dashboard["templating"]["list"][1]["query"]
        metric = variable.removeprefix("label_values(").split(",")[0]
        assert _query(api, f"count by (run_id) ({metric})", run_at)  # the run_id variable
        # The run's panels as Grafana draws them while the level runs: a scrape after the
        # level's last interval, so each rate window holds calls (by `run_at`, lingering,
        # a window can lie past the level, where a rate is 0 and a quantile NaN, as
        # Grafana draws it then; CI on 93706dc evaluated one there).
        (level,) = json.loads(run_out.read_text())["levels"]
        level_end = datetime.fromisoformat(level["finished_at"]).timestamp()
        run_panels_at = min(run_at, level_end + SCRAPE_S)
        for panel in dashboard["panels"]:
            at = capacity_at if panel["title"].startswith(CAPACITY_PANEL) else run_panels_at
            for target in panel["targets"]:
                values = _values(api, _substituted(target["expr"], SCRAPE_S), at)
                assert values, f"{panel['title']!r}: no data for {target['expr']}"
                assert not any(math.isnan(v) for v in values), (panel["title"], values)

        load = level["load"]
        calls = sum(load["statuses"].values())
        assert _values(api, "sum(grpcbench_calls_total)", run_at) == [calls]
        assert _values(api, "sum(grpcbench_live_calls_total)", run_at) == [calls]
        for name, key in (("grpcbench_rpc_client_duration_seconds", "latency"),
                          ("grpcbench_service_time_seconds", "service_latency"),
                          ("grpcbench_send_lag_seconds", "schedule_lag")):  # fmt: skip
            assert _values(api, f"{name}_count", run_at) == [load[key]["count"]]
        (server_cpu,) = _values(api, 'grpcbench_cpu_seconds_total{side="server"}', run_at)
        assert server_cpu == pytest.approx(level["server_usage"]["cpu_s"])
        (offered,) = _values(api, 'grpcbench_rate{kind="offered"}', run_at)
        assert offered == 200
        # Over a window that holds the whole level, the rate the panels draw comes to the
        # level's calls: Prometheus's increase, extrapolated by up to half the mean
        # scrape gap at each edge (so a few scrapes' worth above, never far below).
        (increase,) = _values(api, "sum(increase(grpcbench_live_calls_total[60s]))", run_at)
        assert calls * 0.9 <= increase <= calls * 1.25

        capacity = json.loads(capacity_out.read_text())["capacity"]
        judged = sum(len(probe["judgements"]) for probe in capacity["probes"])
        ceilings = sum(probe["phase"] == "ceiling" for probe in capacity["probes"])
        exported = _values(api, "count(grpcbench_capacity_probe_rate)", capacity_at)
        assert exported == [judged + ceilings]  # the ceiling probe: judged by none, "estimate"
        (found,) = capacity["found"]
        searched = _values(api, 'grpcbench_capacity{figure="searched"}', capacity_at)
        assert searched == ([found["capacity"]] if found["capacity"] is not None else [])


@pytest.mark.integration
def test_every_run_panel_has_data_at_prometheus_s_default_scrape_interval(
    tmp_path: Path,
) -> None:
    """At one scrape a minute, a fixed [30s] window holds at most one sample and every
    rate panel is empty; ``$__rate_interval`` (4 minutes here) holds the run's scrapes.
    A linger of a scrape interval lets the finished level's figures be scraped."""
    dashboard = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    assert not [e for e in exprs if "rate(" in e and "[$__rate_interval]" not in e]
    run_port = _free_port()
    with _prometheus(tmp_path, [run_port], None) as api:
        seconds = DEFAULT_SCRAPE_S + 10  # a scrape while calls go on, and one after
        ran = subprocess.run(
            [*GRPCBENCH, "run", "-s", "grpclib", "--rate", "50", "-z", f"{seconds}s",
             "--warmup", "0", "--prometheus", f"127.0.0.1:{run_port}",
             "--prometheus-linger", f"{seconds}s", "--output", str(tmp_path / "run.json")],
            capture_output=True, text=True, timeout=2 * seconds + 90, check=False,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        at = time.time() - 1  # the final figures were scraped while the run lingered
        for panel in dashboard["panels"]:
            if panel["title"].startswith(CAPACITY_PANEL):
                continue
            for target in panel["targets"]:
                values = _values(api, _substituted(target["expr"], DEFAULT_SCRAPE_S), at)
                assert values, f"{panel['title']!r}: no data for {target['expr']}"
                assert not any(math.isnan(v) for v in values), (panel["title"], values)
