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
          assert level.load.ok == 2000

      def test_running_server(grpcbench_benchmark):
          grpcbench_benchmark(target="127.0.0.1:50051", call="helloworld.Greeter/SayHello",
                              data={"name": "x"}, concurrency=10)

Every keyword is one of ``grpcbench run``'s options by its Python name
(``requests``, ``timeout``, ``connections="pool:2"``, ``call``, ``proto``,
``import_paths``, ``protoset``, ``data``, ``metadata``, ``cacert``, ``cname``,
``service="package.module:ATTRIBUTE"``, ``client_stack``, ...). They become the
same ``RunArgs`` the command line makes, checked by the same code, and the level
is measured by the same ``Runner``, pre-flight call included: a wrong method or
service is one clear failure, never thousands of failed calls counted as a result.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import pytest

from grpcbench.errors import UsageError
from grpcbench.options import RunArgs, RunOptions, build_run_options
from grpcbench.report.figures import PERCENTILES
from grpcbench.results import LevelResult
from grpcbench.rpc.security import ChannelSecurity
from grpcbench.rpc.settings import CallArgs
from grpcbench.servers.launcher import RunningServer, start_server
from grpcbench.servers.spec import parse_server_spec

# Names the plugin took before it took run's: the same options.
_ALIASES = {"driver": "load", "params": "server_params", "rounds": "repeat"}
_TLS = tuple(f.name for f in fields(ChannelSecurity))
_CALL = tuple(f.name for f in fields(CallArgs) if f.name != "security")
# RunArgs fields a test does not give: set by the plugin, or output files.
_NOT_GIVEN = {"settings", "call", "servers", "target", "address", "target_pid", "output",
              "markdown", "csv", "report", "exports"}  # fmt: skip
DEFAULT_CONCURRENCY = 10  # a scenario's list of levels is for `run`, not one assertion
_RUN = tuple(f.name for f in fields(RunArgs) if f.name not in _NOT_GIVEN)


def _listed(value: Any) -> str:
    """10 or [2, 10] or "2,10" -> "2,10", as the command line takes lists."""
    if isinstance(value, str):
        return value
    if isinstance(value, Sequence):
        return ",".join(str(item) for item in value)
    return str(value)


def _params(value: Mapping[str, Any] | Sequence[str]) -> tuple[str, ...]:
    """{"users": 1000} -> ("users=1000",): the command line's KEY=VALUE."""
    if isinstance(value, Mapping):
        return tuple(f"{key}={json.dumps(item)}" for key, item in value.items())
    return tuple(value)


def _json_text(value: Any) -> Any:
    return value if value is None or isinstance(value, str) else json.dumps(value)


def run_args(
    spec: str | None = None,
    *,
    target: str | None = None,
    target_pid: int | None = None,
    **given: Any,
) -> RunArgs:
    """The plugin's keywords as ``grpcbench run``'s options (one ``RunArgs``)."""
    if (spec is None) == (target is None):
        raise UsageError("grpcbench: give a server spec or target=HOST:PORT")
    run: dict[str, Any] = {}
    call: dict[str, Any] = {}
    tls: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    for name, value in given.items():
        name = _ALIASES.get(name, name)
        if name in ("concurrency", "rate", "channels", "variants", "client_cpus", "server_cpus"):
            run[name] = _listed(value)
        elif name in ("server_params", "workload_params"):
            run[name] = _params(value)
        elif name == "client_processes":
            run[name] = str(value)
        elif name in _RUN:
            run[name] = value
        elif name in ("data", "metadata"):
            text = _json_text(value)
            call[name] = (text,) if name == "metadata" else text
        elif name == "import_paths":
            call[name] = _listed(value)
        elif name in _CALL:
            call[name] = value
        elif name in _TLS:
            tls[name] = value
        else:  # a load setting, or one clear error from its declarations
            settings[name] = value
    return RunArgs(
        **run,
        servers=(spec,) if spec else (),
        target=target,
        target_pid=target_pid,
        settings=settings,
        call=CallArgs(**call, security=ChannelSecurity(**tls)),
    )


def one_level_options(spec: str | None = None, **given: Any) -> RunOptions:
    """``run``'s options for one level on one target (a test asserts on one result);
    concurrency 10 unless a concurrency or a rate is given."""
    if "concurrency" not in given and "rate" not in given:
        given["concurrency"] = DEFAULT_CONCURRENCY
    options = build_run_options(run_args(spec, **given))
    if len(options.levels) != 1 or len(options.targets) != 1 or len(options.drivers) != 1:
        raise UsageError(
            "grpcbench: one call measures one level of one server with one driver"
            f" ({len(options.levels)} level(s), {len(options.targets)} server(s),"
            f" {len(options.drivers)} driver(s) given)"
        )
    return options


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
        from grpcbench.options import default_placement

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
        from grpcbench.runner import Runner

        runner = Runner(one_level_options(spec, **given))
        try:
            record = self.loop.run(runner.run())
        except UsageError as error:  # one clear line, not grpcbench's traceback
            pytest.fail(f"grpcbench: {error}", pytrace=False)
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

    def run(spec: str | None = None, **given: Any) -> LevelResult:
        levels: list[LevelResult] = []

        def rounds() -> None:
            levels.extend(grpcbench.measure(spec, **given))

        benchmark.pedantic(rounds, rounds=1, iterations=1)
        benchmark.stats.stats.data[:] = [
            lv.load.wall_s / lv.load.count for lv in levels if lv.load.count
        ]
        benchmark.extra_info.update(extra_info(levels[-1]))
        benchmark.extra_info["rounds"] = [extra_info(level) for level in levels]
        benchmark.extra_info["requests_per_sec_rounds"] = [round(lv.load.rps, 2) for lv in levels]
        return levels[-1]

    return run
