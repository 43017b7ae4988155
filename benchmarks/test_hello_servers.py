"""Example pytest-benchmark suite: the hello scenario on every default server kind.

    nox -s bench                      # runs this suite with --benchmark-autosave
    pytest-benchmark compare          # compares the saved runs

grpcbench's figures (Requests/sec, percentiles, server CPU/RSS) are in each
benchmark's extra_info; pytest-benchmark's own timing is the level's duration.
"""

from __future__ import annotations

import pytest

from grpcbench.base.defaults import SERVERS as DEFAULT_SERVERS


@pytest.mark.parametrize("spec", DEFAULT_SERVERS)
def test_hello(grpcbench_benchmark, spec: str) -> None:  # type: ignore[no-untyped-def]
    level = grpcbench_benchmark(spec, concurrency=10, requests=3000, warmup=300)
    assert level.measured.ok == 3000
