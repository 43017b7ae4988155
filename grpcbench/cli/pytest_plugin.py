"""pytest plugin: benchmark a server kind with grpcbench inside pytest-benchmark.

Registered through the ``pytest11`` entry point, so installing grpcbench is
enough. Two fixtures:

- ``grpcbench``: starts servers (``grpcbench.server("grpclib+uvloop")``) that
  are stopped after the test, and measures one level against one of them or a
  running server (``grpcbench.load(server, concurrency=10, requests=2000)``,
  ``grpcbench.load("127.0.0.1:50051", call="pkg.Svc/Method", data={...})``).
- ``grpcbench_benchmark``: does both inside pytest-benchmark's ``benchmark``
  fixture. pytest-benchmark's own statistics are the measured phase (seconds
  per call; OPS = calls per second; rounds = repeats), so ``pytest-benchmark
  compare`` and ``--benchmark-compare-fail`` work on the figure that matters;
  grpcbench's other figures (percentiles, server CPU, verdict, ...) go into
  ``extra_info``::

      def test_my_server(grpcbench_benchmark):
          level = grpcbench_benchmark("grpcio-aio", concurrency=10, requests=2000, rounds=3)
          assert level.measured.ok == 2000

      def test_running_server(grpcbench_benchmark):
          grpcbench_benchmark(target="127.0.0.1:50051", call="helloworld.Greeter/SayHello",
                              data={"name": "x"}, concurrency=10)

Every keyword is one of ``grpcbench run``'s options by its Python name
(``requests``, ``timeout``, ``connections="pool:2"``, ``call``, ``proto``,
``import_paths``, ``protoset``, ``data``, ``metadata``, ``cacert``, ``cname``,
``service="package.module:ATTRIBUTE"``, ``client_stack``,
``thresholds=("p99<20ms", "rps>=1000")`` - a breach fails the test -, ...). They become the
same ``RunArgs`` the command line makes, checked by the same code, and the level
is measured by the same ``Runner``, pre-flight call included: a wrong method or
service is one clear failure, never thousands of failed calls counted as a result.
A ``call=`` on a running ``target=`` gets ``run --call``'s ghz defaults (no warm-up).
A failing test fails alone, before pytest-benchmark records it, so the other
tests' results are still saved.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from grpcbench.base.errors import OneLineError
from grpcbench.model.results import LevelResult
from grpcbench.report.figures import PERCENTILES
from grpcbench.run.level_options import one_level_options
from grpcbench.servers.launcher import RunningServer, start_server
from grpcbench.servers.spec import parse_server_spec


@dataclass(frozen=True)
class RunningTarget:
    """A server somebody else runs (``pid`` to measure its CPU and memory)."""

    address: str
    pid: int | None = None


class GrpcbenchSession:
    """Servers and levels for one test, on one event loop kept between calls."""

    def __init__(self) -> None:
        self.loop = asyncio.Runner()
        self.servers: list[RunningServer] = []
        self.services: dict[int, str] = {}  # id(server) -> the service it serves

    def server(
        self, spec: str, service: str = "hello", params: Mapping[str, Any] | None = None
    ) -> RunningServer:
        """A server kind started now and stopped after the test, on the server's CPU."""
        from grpcbench.model.placement import default_placement

        server = self.loop.run(
            start_server(
                parse_server_spec(spec), service, params or {},
                cpus=default_placement().server_cpus,
            )
        )  # fmt: skip
        self.servers.append(server)
        self.services[id(server)] = service
        return server

    def target(self, address: str, pid: int | None = None) -> RunningTarget:
        return RunningTarget(address, pid)

    def stop(self, server: RunningServer) -> None:
        if server in self.servers:
            self.servers.remove(server)
        self.loop.run(server.stop())

    def measure(self, spec: str | None = None, **given: Any) -> list[LevelResult]:
        """One level, every repeat, through ``run``'s options and ``Runner``: a spec
        (grpcbench starts it for each repeat) or ``target=HOST:PORT``."""
        from grpcbench.history.options import RunKeeper
        from grpcbench.model.thresholds import breaches
        from grpcbench.run.runner import Runner

        failure = ""
        try:
            options = one_level_options(spec, **given)
            keeper = RunKeeper(options.store) if options.store else None  # store=, project=
            record = self.loop.run(Runner(options).run())
            if keeper is not None:
                keeper.keep(record)
        except OneLineError as error:  # one clear line, not grpcbench's traceback
            failure = str(error).removeprefix("grpcbench: ")
        else:
            breached = breaches(record.levels, options.thresholds)
            # `run --threshold`'s exit 99, as a failed test
            failure = "; ".join(breach.describe() for breach in breached)
        if failure:  # failed here, outside the handler: the message once, alone
            pytest.fail(f"grpcbench: {failure}", pytrace=False)
        return list(record.levels)

    def load(self, server: RunningServer | RunningTarget | str, **given: Any) -> LevelResult:
        """One level against a server started here, a ``target()`` or "HOST:PORT"; its
        CPU and RSS are measured when its pid is known."""
        address = server if isinstance(server, str) else server.address
        pid = None if isinstance(server, str) else server.pid
        if isinstance(server, RunningServer):
            given.setdefault("service", self.services.get(id(server), "hello"))
        return self.measure(target=address, target_pid=pid, **given)[-1]

    def close(self) -> None:
        for server in self.servers:
            self.loop.run(server.stop())
        self.loop.close()


def _rounded(micros: float | None) -> float | None:
    return round(micros, 1) if micros is not None else None


def extra_info(level: LevelResult) -> dict[str, Any]:
    """The figures pytest-benchmark stores beside its own timing statistics."""
    load, usage = level.measured, level.server_usage
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


def extra_info_of_rounds(levels: list[LevelResult]) -> dict[str, Any]:
    """``extra_info``'s top-level figures over every round, as pytest-benchmark's own
    OPS is: calls and statuses summed, req/s over the rounds' measured time, the
    percentiles of the merged histograms, CPU summed and per call, the busiest
    round's server saturation and the highest peak RSS; the last round's verdict
    beside every round's."""
    from collections import Counter

    from grpcbench.stats.histogram import merge_summaries

    last = levels[-1]
    info = extra_info(last)
    loads = [level.measured for level in levels]
    wall_s = sum(load.wall_s for load in loads)
    latency = merge_summaries([load.latency for load in loads])
    statuses: Counter[str] = Counter()
    for load in loads:
        statuses.update(load.statuses)
    calls = sum(statuses.values())
    info.update(
        calls=calls,
        ok=statuses["OK"],
        statuses=dict(statuses),
        requests_per_sec=round(calls / wall_s, 2) if wall_s else 0.0,
        latency_avg_ms=round(latency.mean_us / 1000, 3),
        generator_cpu_s=round(sum(load.client_cpu_s for load in loads), 4),  # summed
        generator_saturated=any(load.client_saturated for load in loads),
        verdicts=[level.verdict for level in levels],
    )
    generator_cpu_s = sum(load.client_cpu_s for load in loads)
    info["generator_cpu_us_per_call"] = round(generator_cpu_s / calls * 1e6, 1) if calls else None
    for name, percentile in PERCENTILES:
        info[f"latency_{name.replace('.', '_')}_ms"] = latency.percentile_us(percentile) / 1000
    usages = [level.server_usage for level in levels if level.server_usage]
    if usages:
        server_cpu_s = sum(usage.cpu_s for usage in usages)
        info["server_cpu_s"] = round(server_cpu_s, 4)
        info["server_cpu_saturation"] = round(max(u.cpu_saturation for u in usages), 3)
        if calls:
            info["server_cpu_us_per_call"] = round(server_cpu_s / calls * 1e6, 1)
        info["server_peak_rss_bytes"] = max(usage.peak_rss_bytes for usage in usages)
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

    def run(spec: str | None = None, **given: Any) -> LevelResult:
        # Measured before pytest-benchmark records anything: a test that fails here
        # fails alone, and the session's other results are still saved.
        levels = grpcbench.measure(spec, **given)
        seconds_per_call = [
            lv.measured.wall_s / lv.measured.count for lv in levels if lv.measured.count
        ]
        if not seconds_per_call:
            pytest.fail("grpcbench: no call finished in any round", pytrace=False)
        benchmark.pedantic(lambda: None, rounds=1, iterations=1)  # registers the statistics
        if (
            benchmark.stats is not None
        ):  # None: pytest-benchmark is off (xdist, --benchmark-disable)
            benchmark.stats.stats.data[:] = seconds_per_call
        benchmark.extra_info.update(extra_info_of_rounds(levels))
        benchmark.extra_info["rounds"] = [extra_info(level) for level in levels]
        benchmark.extra_info["requests_per_sec_rounds"] = [
            round(lv.measured.rps, 2) for lv in levels
        ]
        return levels[-1]

    return run
