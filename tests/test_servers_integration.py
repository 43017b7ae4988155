"""Every server kind starts, becomes SERVING, takes real load, and stops."""

from __future__ import annotations

import asyncio

import grpc
import psutil
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from grpcbench.base.defaults import SERVERS as DEFAULT_SERVERS
from grpcbench.base.errors import DriverError
from grpcbench.load.builtin import BuiltinDriver
from grpcbench.load.driver import MEASUREMENT_STARTED
from grpcbench.run.arguments import RunArgs
from grpcbench.run.measure import run_monitored
from grpcbench.run.options import build_run_options
from grpcbench.servers.launcher import start_server
from grpcbench.servers.spec import parse_server_spec
from tests.support.factories import make_spec

pytestmark = pytest.mark.integration


async def _health(address: str) -> int:
    async with grpc.aio.insecure_channel(address) as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service="helloworld.Greeter"), timeout=2
        )
        return reply.status


@pytest.mark.parametrize("spec_text", DEFAULT_SERVERS)
def test_server_kind_serves_load_and_stops(spec_text: str) -> None:
    async def scenario() -> None:
        server = await start_server(parse_server_spec(spec_text), "hello", {})
        try:
            assert server.address.startswith("127.0.0.1:")
            assert await _health(server.address) == health_pb2.HealthCheckResponse.SERVING
            events: list[int] = []
            spec = make_spec(
                target=server.address, service="hello", concurrency=10,
                requests=300, warmup_requests=30, connections=2,
            )  # fmt: skip
            result = await BuiltinDriver().run(spec, lambda done, _: events.append(done))
            assert result.statuses == {"OK": 300}
            assert result.latency.count == 300
            assert (
                0
                < result.latency.min_us
                <= result.latency.percentile_us(50)
                <= result.latency.max_us
            )
            assert result.wall_s > 0 and result.client_cpu_s > 0
            assert events[0] == MEASUREMENT_STARTED
        finally:
            await server.stop()
        assert not psutil.pid_exists(server.pid) or psutil.Process(server.pid).status() == "zombie"

    asyncio.run(scenario())


def test_grpclib_stream_limit_does_not_cap_concurrency() -> None:
    """grpclib allows 100 streams per connection; 150 users must all be in flight at once.

    With a 1 s handler, 150 calls on enough connections finish in one round
    (~1 s); capped at 100 streams they would need two rounds (>= 2 s).
    """
    options = build_run_options(RunArgs(concurrency="150"))
    connections = options.settings.connections_for(options.levels[0])
    assert connections * 100 >= 150 * 2  # automatic choice keeps each connection at half the cap

    async def scenario() -> None:
        server = await start_server(
            parse_server_spec("grpclib"), "tests.support.services:SLOW", {"delay_ms": 1000}
        )
        try:
            spec = make_spec(
                target=server.address, service="tests.support.services:SLOW",
                concurrency=150, requests=150, connections=connections,
            )  # fmt: skip
            result = await BuiltinDriver().run(spec, lambda *_: None)
            assert result.statuses == {"OK": 150}
            assert result.wall_s < 1.9, (
                "calls queued: the per-connection stream limit capped the level"
            )
        finally:
            await server.stop()

    asyncio.run(scenario())


def test_errors_are_counted_by_status_never_raised() -> None:
    """A 300 ms handler with a 100 ms deadline: every call is DeadlineExceeded."""

    async def scenario() -> None:
        server = await start_server(
            parse_server_spec("grpcio-aio"), "tests.support.services:SLOW", {"delay_ms": 300}
        )
        try:
            spec = make_spec(
                target=server.address, service="tests.support.services:SLOW",
                concurrency=4, requests=8, timeout_s=0.1,
            )  # fmt: skip
            result = await BuiltinDriver().run(spec, lambda *_: None)
            assert result.statuses == {"DeadlineExceeded": 8}
            assert result.latency.count == 8
            assert 100_000 <= result.latency.min_us < 300_000
        finally:
            await server.stop()

    asyncio.run(scenario())


def test_known_service_time_gives_known_latency() -> None:
    async def scenario() -> None:
        server = await start_server(
            parse_server_spec("grpclib"), "tests.support.services:SLOW", {"delay_ms": 50}
        )
        try:
            spec = make_spec(
                target=server.address, service="tests.support.services:SLOW",
                concurrency=5, requests=20,
            )  # fmt: skip
            result = await BuiltinDriver(processes=2).run(spec, lambda *_: None)
            assert result.statuses == {"OK": 20} and result.processes == 2
            assert result.latency.min_us >= 50_000
            # 20 calls of >= 50 ms over 5 users: at least 4 rounds.
            assert result.wall_s >= 0.2
        finally:
            await server.stop()

    asyncio.run(scenario())


def test_grpcio_processes_share_the_port_and_are_measured_together() -> None:
    """grpcio:processes=2 forks two workers on one port; CPU/RSS cover all of them."""

    async def scenario() -> None:
        server = await start_server(parse_server_spec("grpcio:workers=2,processes=2"), "hello", {})
        try:
            tree = psutil.Process(server.pid).children(recursive=True)
            assert len(tree) == 2
            # SO_REUSEPORT hashes each connection to a worker: with 32 of them, the
            # chance that one worker gets none is 2**-31, and each worker that gets
            # about half serves ~1,600 calls, far above one 10 ms CPU tick (eight
            # connections left a worker one or none, and 0.0 s of CPU, in CI).
            spec = make_spec(
                target=server.address, service="hello", concurrency=32,
                requests=3200, connections=32,
            )  # fmt: skip
            monitored = await run_monitored(BuiltinDriver(), spec, server.pid)
            result, usage = monitored.measured, monitored.server
            assert result.statuses == {"OK": 3200}
            assert usage is not None and usage.processes == 3 and usage.peak_rss_bytes > 0
            worker_cpu = [p.cpu_times().user + p.cpu_times().system for p in tree]
            assert all(cpu > 0 for cpu in worker_cpu), worker_cpu
        finally:
            await server.stop()
        for process in tree:
            assert not process.is_running() or process.status() == psutil.STATUS_ZOMBIE

    asyncio.run(scenario())


def test_a_run_keeps_its_generators_from_level_to_level_and_closes_them() -> None:
    """A driver made for a run keeps each generator process for the next level (start-up
    costs 0.3 s of CPU a level otherwise), on both client stacks; each level's peak
    memory is its own; a failed level's process is never reused; the run's end lets
    them go."""

    async def scenario() -> None:
        server = await start_server(parse_server_spec("grpcio:workers=4"), "hello", {})
        driver = BuiltinDriver(processes=2, keep_processes=True)
        try:
            for stack in ("wire", "grpcio", "wire"):
                spec = make_spec(
                    target=server.address, service="hello", concurrency=4, requests=200,
                    warmup_requests=10, connections=2, client_stack=stack,
                )  # fmt: skip
                result = await driver.run(spec, lambda done, _: None)
                assert result.statuses == {"OK": 200}
                assert 0 < result.client_peak_rss_bytes < 1 << 30
            kept = list(driver.kept.values())
            assert len(kept) == 2 and [process.jobs for process in kept] == [3, 3]
            pids = [process.pid for process in kept]
            bad = make_spec(target="127.0.0.1:1", service="hello", concurrency=2, requests=2)
            with pytest.raises(DriverError):
                await driver.run(bad, lambda done, _: None)
            assert not driver.kept and all(not psutil.pid_exists(p) or
                psutil.Process(p).status() == "zombie" for p in pids)  # fmt: skip
            result = await driver.run(spec, lambda done, _: None)  # new processes
            assert result.statuses == {"OK": 200}
            assert {process.jobs for process in driver.kept.values()} == {1}
            pids = [process.pid for process in driver.kept.values()]
        finally:
            driver.close()
            await server.stop()
        gone, alive = psutil.wait_procs(
            [psutil.Process(p) for p in pids if psutil.pid_exists(p)], 5
        )
        assert not [p for p in alive if p.status() != "zombie"]

    asyncio.run(scenario())


def test_warmed_generators_run_the_first_level_and_unused_ones_exit_at_close() -> None:
    """``warm`` starts a run's generators before its first level (the runner calls it as
    the run begins): that level runs on them, not on new ones. Warmed processes that
    no level used (a run that failed before its first level) exit when the driver
    closes, and a driver that does not keep its generators warms none."""

    async def scenario() -> None:
        unkept = BuiltinDriver(processes=2)
        unkept.warm()
        assert not unkept.starting
        server = await start_server(parse_server_spec("grpcio:workers=2"), "hello", {})
        driver = BuiltinDriver(processes=2, keep_processes=True)
        try:
            driver.warm()
            warmed = await asyncio.gather(*driver.starting.values())
            spec = make_spec(target=server.address, service="hello", concurrency=2, requests=50)
            result = await driver.run(spec, lambda done, _: None)
            assert result.statuses == {"OK": 50}
            assert not driver.starting
            assert sorted(p.pid for p in driver.kept.values()) == sorted(p.pid for p in warmed)
        finally:
            driver.close()
            await server.stop()
        idle = BuiltinDriver(processes=2, keep_processes=True)
        idle.warm()
        unused = await asyncio.gather(*idle.starting.values())
        idle.close()  # their stdin closes as the loop runs on
        processes = [psutil.Process(p.pid) for p in unused]
        gone, alive = await asyncio.to_thread(psutil.wait_procs, processes, 10)
        assert not [p for p in alive if p.status() != "zombie"]
        for delay in (0.0, 0.05, 0.2):  # closed while they start, or while they import
            before = {child.pid for child in psutil.Process().children()}
            hasty = BuiltinDriver(processes=2, keep_processes=True)
            hasty.warm()
            tasks = list(hasty.starting.values())
            await asyncio.sleep(delay)
            hasty.close()  # one still importing reads the end of its stdin after that
            await asyncio.gather(*tasks, return_exceptions=True)
            new = [child for child in psutil.Process().children() if child.pid not in before]
            gone, alive = await asyncio.to_thread(psutil.wait_procs, new, 10)
            assert not [child for child in alive if child.status() != "zombie"], delay

    asyncio.run(scenario())
