"""pytest plugin: benchmark a server kind with grpcbench inside pytest-benchmark.

Registered through the ``pytest11`` entry point, so installing grpcbench is
enough. Two fixtures:

- ``grpcbench``: starts servers (``grpcbench.server("grpclib+uvloop")``) that
  are stopped after the test, reaches running ones
  (``grpcbench.target("127.0.0.1:50051")``), and drives a level against either
  (``grpcbench.load(server, concurrency=10, requests=2000)``).
- ``grpcbench_benchmark``: does both inside pytest-benchmark's ``benchmark``
  fixture. pytest-benchmark's own statistics are the measured phase (seconds
  per call; OPS = calls per second; rounds = repeats), so ``pytest-benchmark
  compare`` and ``--benchmark-compare-fail`` work on the figure that matters;
  grpcbench's other figures (percentiles, server CPU, verdict, ...) go into
  ``extra_info``::

      def test_my_server(grpcbench_benchmark):
          level = grpcbench_benchmark("grpcio-aio", concurrency=10, requests=2000, rounds=3)
          assert level.load.ok == 2000

      def test_running_server(grpcbench_benchmark):
          grpcbench_benchmark(target="127.0.0.1:50051", concurrency=10)

A service of your own is a ``ServiceDefinition``, passed as
``service="package.module:ATTRIBUTE"``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from grpcbench.errors import UsageError
from grpcbench.load.catalogue import make_driver
from grpcbench.load.connections import parse_connection_strategy
from grpcbench.measure import measure_level
from grpcbench.options import default_placement
from grpcbench.plan import LevelPlan, LoadSettings
from grpcbench.report.figures import PERCENTILES
from grpcbench.results import LevelResult
from grpcbench.servers.launcher import RunningServer, start_server
from grpcbench.servers.spec import parse_server_spec
from grpcbench.settings import declared
from grpcbench.targets.base import Target, TargetContext
from grpcbench.targets.external import ExternalTargetPlan
from grpcbench.targets.started import StartedServer


def load_settings(warmup: int | None = None, **settings: Any) -> LoadSettings:
    """The plugin's load settings: ``run``'s declarations and defaults (a scenario file
    may set others for ``run``); an unknown name is one clear error."""
    known = declared(LoadSettings)
    unknown = sorted(set(settings) - set(known))
    if unknown:
        raise UsageError(
            f"grpcbench: unknown load setting(s) {', '.join(unknown)}"
            f" (known: warmup, {', '.join(known)})"
        )
    if warmup is not None:
        settings.update(warmup_requests=warmup, warmup_s=0.0)
    if isinstance(settings.get("connections"), str):
        settings["connections"] = parse_connection_strategy(settings["connections"])
    return LoadSettings(**settings)


class GrpcbenchSession:
    """Servers and load for one test, on one event loop kept between calls."""

    def __init__(self) -> None:
        self.loop = asyncio.Runner()
        self.servers: list[RunningServer] = []
        self.placement = default_placement()

    def server(
        self, spec: str, service: str = "hello", params: Mapping[str, Any] | None = None
    ) -> RunningServer:
        server = self.loop.run(
            start_server(
                parse_server_spec(spec), service, params or {}, cpus=self.placement.server_cpus
            )
        )
        self.servers.append(server)
        return server

    def target(self, address: str, pid: int | None = None) -> Target:
        """A server somebody else runs, checked reachable (``pid`` to measure it)."""
        plan = ExternalTargetPlan(address, pid)

        async def reach() -> Target:
            async with plan.open(TargetContext(service="hello")) as target:
                return target

        return self.loop.run(reach())

    def stop(self, server: RunningServer) -> None:
        if server in self.servers:
            self.servers.remove(server)
        self.loop.run(server.stop())

    def load(
        self,
        server: RunningServer | Target,
        *,
        concurrency: int = 10,
        driver: str = "builtin",
        service: str = "hello",
        workload_params: Mapping[str, Any] | None = None,
        **settings: Any,
    ) -> LevelResult:
        """One closed-loop level against ``server`` (one grpcbench started, or a
        ``target()``); the server's CPU and RSS are measured when its pid is known.

        ``settings``: any load setting by its name in ``plan.LoadSettings``
        (``requests``, ``timeout_s``, ``client_stack``, ``connections="pool:2"``,
        ...; ``warmup`` is a call count), checked as ``run`` checks them."""
        settings.setdefault("client_cpus", self.placement.client_cpus)
        chosen = load_settings(**settings)
        plan = LevelPlan(concurrency, connection=chosen.connection_label(0))
        return self.loop.run(
            measure_level(
                make_driver(driver),
                StartedServer(server) if isinstance(server, RunningServer) else server,
                plan,
                chosen,
                scenario=service,
                service=service,
                workload_params=dict(workload_params or {}),
            )
        )

    def close(self) -> None:
        for server in self.servers:
            self.loop.run(server.stop())
        self.loop.close()


def _rounded(micros: float | None) -> float | None:
    return round(micros, 1) if micros is not None else None


def extra_info(level: LevelResult) -> dict[str, Any]:
    """The figures pytest-benchmark stores beside its own timing statistics."""
    load, usage = level.load, level.server_usage
    info: dict[str, Any] = {
        "grpcbench_server": level.server,
        "grpcbench_driver": level.driver,
        "concurrency": level.concurrency,
        "calls": load.count,
        "ok": load.ok,
        "statuses": load.statuses,
        "requests_per_sec": round(load.rps, 2),
        "latency_avg_ms": round(load.latency.mean_us / 1000, 3),
        "generator_cpu_s": round(load.client_cpu_s, 4),
        "generator_saturated": load.client_saturated,
        "generator_cpu_us_per_call": _rounded(level.generator_cpu_us_per_call),
        "verdict": level.verdict,
    }
    for name, percentile in PERCENTILES:  # latency_p50_ms ... latency_p99_9_ms
        info[f"latency_{name.replace('.', '_')}_ms"] = load.latency.percentile_us(percentile) / 1000
    if usage:
        info["server_cpu_s"] = round(usage.cpu_s, 4)
        info["server_cpu_saturation"] = round(usage.cpu_saturation, 3)
        if level.server_cpu_us_per_call is not None:
            info["server_cpu_us_per_call"] = _rounded(level.server_cpu_us_per_call)
        info["server_peak_rss_bytes"] = usage.peak_rss_bytes
    return info


@pytest.fixture
def grpcbench() -> Iterator[GrpcbenchSession]:
    session = GrpcbenchSession()
    try:
        yield session
    finally:
        session.close()


@pytest.fixture
def grpcbench_benchmark(
    request: pytest.FixtureRequest, grpcbench: GrpcbenchSession
) -> Callable[..., LevelResult]:
    """pytest-benchmark's ``benchmark`` with grpcbench's measured phase as its statistics.

    Each round is one level (``rounds`` = repeats, each on a fresh server when
    grpcbench starts it). pytest-benchmark would time a whole round - start-up
    and warm-up included - so its timings are replaced by the measured phase's
    seconds per call: its Min/Max/Mean/StdDev are seconds per call, its OPS is
    calls per second (the harmonic mean over rounds), and
    ``--benchmark-compare-fail`` gates on those."""
    benchmark: Any = None
    # Failed below, outside the handler, so the message stands alone.
    with contextlib.suppress(pytest.FixtureLookupError):
        benchmark = request.getfixturevalue("benchmark")
    if benchmark is None:
        pytest.fail(
            "grpcbench_benchmark needs pytest-benchmark: pip install 'grpcbench[pytest]'",
            pytrace=False,
        )

    def run(
        spec: str | None = None,
        *,
        target: str | None = None,
        target_pid: int | None = None,
        rounds: int = 1,
        service: str = "hello",
        params: Mapping[str, Any] | None = None,
        **load: Any,
    ) -> LevelResult:
        if (spec is None) == (target is None):
            raise UsageError("grpcbench_benchmark: give a server spec or target=HOST:PORT")
        levels: list[LevelResult] = []

        def one_round() -> LevelResult:
            if target is not None:
                level = grpcbench.load(
                    grpcbench.target(target, target_pid), service=service, **load
                )
            else:
                assert spec is not None
                server = grpcbench.server(spec, service, params)
                try:
                    level = grpcbench.load(server, service=service, **load)
                finally:
                    grpcbench.stop(server)
            levels.append(level)
            return level

        benchmark.pedantic(one_round, rounds=rounds, iterations=1)
        benchmark.stats.stats.data[:] = [
            lv.load.wall_s / lv.load.count for lv in levels if lv.load.count
        ]
        benchmark.extra_info.update(extra_info(levels[-1]))
        benchmark.extra_info["requests_per_sec_rounds"] = [round(lv.load.rps, 2) for lv in levels]
        return levels[-1]

    return run
