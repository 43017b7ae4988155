"""The pytest plugin, tested with pytest's own pytester in a separate pytest run."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest_plugins = ["pytester"]

pytestmark = pytest.mark.integration

SUITE = """
def test_hello(grpcbench_benchmark):
    level = grpcbench_benchmark("grpcio-aio", concurrency=2, requests=60, warmup=6)
    assert level.load.ok == 60


def test_two_servers(grpcbench):
    first = grpcbench.server("grpclib")
    second = grpcbench.server("grpcio:workers=2")
    for server in (first, second):
        level = grpcbench.load(server, concurrency=3, requests=30, warmup=0)
        assert level.load.statuses == {"OK": 30}
        assert level.server_usage is not None
"""


def test_fixtures_feed_pytest_benchmark_storage(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_subprocess(
        "--benchmark-autosave", "--benchmark-storage=file://store", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=2)
    (saved,) = (pytester.path / "store").rglob("*.json")
    data = json.loads(saved.read_text())
    (bench,) = data["benchmarks"]
    extra = bench["extra_info"]
    assert extra["grpcbench_server"] == "grpcio-aio" and extra["calls"] == 60
    assert extra["requests_per_sec"] > 0 and extra["latency_p99_ms"] >= extra["latency_p50_ms"]
    assert extra["server_cpu_s"] >= 0 and extra["server_peak_rss_bytes"] > 0

    compared = subprocess.run(
        [sys.executable, "-c", "from pytest_benchmark.cli import main; main()",
         "--storage", "file://store", "compare"],
        cwd=pytester.path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    assert "test_hello" in compared.stdout
