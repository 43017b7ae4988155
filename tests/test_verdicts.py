"""The verdict is checked against workloads whose limit is known by construction."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from grpcbench.load.catalogue import make_driver
from grpcbench.load.driver import DriverSettings
from grpcbench.model.placement import default_placement
from grpcbench.model.results import LevelResult
from grpcbench.run.level_options import level_context
from grpcbench.servers.launcher import start_server
from grpcbench.servers.spec import parse_server_spec
from grpcbench.targets.started import StartedServer

pytestmark = pytest.mark.integration


def _measure(
    service: str, server_params: dict[str, Any], workload: dict[str, Any], concurrency: int
) -> LevelResult:
    placement = default_placement()

    async def run() -> LevelResult:
        server = await start_server(
            parse_server_spec("grpcio-aio"), service, server_params, cpus=placement.server_cpus
        )
        try:
            context = level_context(
                server.address, service=service, concurrency=concurrency, requests=400,
                warmup=40, workload_params=workload,
            )  # fmt: skip
            return await context.measure_level(
                make_driver("builtin", DriverSettings(client_processes=1)),
                StartedServer(server),
                context.options.levels[0],
            )
        finally:
            await server.stop()

    return asyncio.run(run())


@pytest.mark.skipif(len(default_placement().client_cpus) < 1, reason="needs 2 CPUs to pin")
@pytest.mark.parametrize(
    ("service", "server_params", "workload", "concurrency", "verdict"),
    [
        ("tests.support.services:SERVER_BURNER", {"burn_ms": 3}, {}, 4, "server-bound"),
        ("tests.support.services:CLIENT_BURNER", {}, {"burn_ms": 3}, 4, "generator-bound"),
        ("tests.support.services:SLOW", {"delay_ms": 20}, {}, 2, "neither"),
    ],
)
def test_verdict_names_the_side_that_was_made_the_limit(
    service: str,
    server_params: dict[str, Any],
    workload: dict[str, Any],
    concurrency: int,
    verdict: str,
) -> None:
    level = _measure(service, server_params, workload, concurrency)
    assert level.measured.statuses == {"OK": 400}
    assert level.verdict == verdict, (
        level.server_usage,
        level.measured.client_cpu_fraction,
        level.measured.client_saturation,
        level.measured.client_steal_share,
    )
