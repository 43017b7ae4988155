"""Connection strategies, channel sweeps and the open loop, against real servers."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from grpcbench.base.declarations import declared
from grpcbench.base.errors import UsageError
from grpcbench.load.builtin import BuiltinDriver
from grpcbench.load.open_loop import constant_send_times
from grpcbench.model.connections import parse_connection_strategy
from grpcbench.model.load_result import LoadResult
from grpcbench.model.plan import LoadSettings
from grpcbench.run.arguments import RunArgs
from grpcbench.run.measure import generator_job
from grpcbench.run.options import build_run_options
from grpcbench.run.recorded import recorded_options
from grpcbench.servers.launcher import start_server
from grpcbench.servers.spec import parse_server_spec
from tests.conftest import GRPCBENCH
from tests.support.factories import make_spec

PEERS = "tests.support.services:PEERS"
SLOW = "tests.support.services:SLOW"


def test_strategy_parsing_and_labels() -> None:
    assert parse_connection_strategy("auto").pool_size(120) == 3
    assert parse_connection_strategy("shared").label == "shared"
    assert parse_connection_strategy("4").label == "pool:4"
    strategy = parse_connection_strategy("pool:3:least-busy")
    assert (strategy.size, strategy.policy, strategy.label) == (
        3,
        "least-busy",
        "pool:3:least-busy",
    )
    assert parse_connection_strategy("per-request").pool_size(50) == 0
    for bad in ("pool:0", "pool:x", "pool:2:random", "sometimes", "-1"):
        with pytest.raises(UsageError, match="--connections"):
            parse_connection_strategy(bad)


def test_level_plans_sweep_channels_and_rates() -> None:
    options = build_run_options(RunArgs(concurrency="10,20", channels="1,4"))
    assert [p.describe() for p in options.levels] == [
        "concurrency 10, channels 1", "concurrency 10, channels 4",
        "concurrency 20, channels 1", "concurrency 20, channels 4",
    ]  # fmt: skip
    assert options.settings.connections_for(options.levels[1]) == 4
    open_loop = build_run_options(RunArgs(rate="500,1000", settings={"max_in_flight": "64"}))
    assert [(p.rate, p.concurrency) for p in open_loop.levels] == [(500, 64), (1000, 64)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"rate": "0"}, "--rate"),
        ({"rate": "fast"}, "--rate"),
        ({"rate": "100", "concurrency": "2"}, "replaces --concurrency"),
        ({"channels": "1,0"}, "--channels"),
        ({"channels": "2", "connections": "shared"}, "do not combine"),
        ({"arrivals": "bursty"}, "--arrivals"),
        ({"max_in_flight": "0"}, "--max-in-flight"),
        ({"max_in_flight": 0}, "--max-in-flight"),
        ({"client_processes": "0"}, "--client-processes"),
        ({"load": "ghz", "rate": "100"}, "use --load builtin"),
        ({"load": "ghz", "connections": "per-request"}, "use --load builtin"),
    ],
)
def test_bad_load_model_options(args: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(UsageError, match=message):
        build_run_options(_run_args(args))


def _run_args(given: dict) -> RunArgs:  # type: ignore[type-arg]
    """Load settings go by name into RunArgs.settings, as the CLI and the plugin pass them."""
    settings = {name: given.pop(name) for name in list(given) if name in declared(LoadSettings)}
    return RunArgs(**given, settings=settings)


def test_uniform_and_poisson_send_times() -> None:
    uniform = constant_send_times(100.0, "uniform")
    assert [round(next(uniform), 6) for _ in range(4)] == [0.0, 0.01, 0.02, 0.03]
    poisson = constant_send_times(1000.0, "poisson", seed=7)
    times = [next(poisson) for _ in range(20001)]
    assert times == sorted(times)
    assert times[-1] == pytest.approx(20.0, rel=0.05)  # mean gap 1/rate


def _peers_after(
    strategy: str,
    concurrency: int,
    requests: int,
    tmp_path: Path,
    opened: list[int] | None = None,
    server_spec: str = "grpcio:workers=4",
) -> Counter[str]:
    """The server's count of calls per client connection (``opened``: the connections
    the client says it opened, for checkout pools)."""
    log = tmp_path / f"peers-{strategy.replace(':', '-')}-{concurrency}.log"
    opened = [] if opened is None else opened

    async def scenario() -> None:
        server = await start_server(
            parse_server_spec(server_spec), PEERS, {"peer_log": str(log), "delay_ms": 5}
        )
        try:
            options = build_run_options(
                RunArgs(
                    scenario="hello",
                    concurrency=str(concurrency),
                    settings={"connections": strategy},
                )
            )
            settings = replace(options.settings, requests=requests, warmup_requests=0)
            spec = generator_job(settings, options.levels[0], server.address, PEERS, {})
            result = await BuiltinDriver().run(spec, lambda *_: None)
            assert result.statuses == {"OK": requests}
            if strategy == "per-request":
                assert result.connect_latency and result.connect_latency.count == requests
            elif strategy.startswith("checkout"):
                assert result.connect_latency is not None  # set-ups are measured
                opened.append(result.connect_latency.count)
            else:
                assert result.connect_latency is None
        finally:
            await server.stop()

    asyncio.run(scenario())
    return Counter(log.read_text().split())


@pytest.mark.integration
def test_per_request_opens_one_connection_per_call(tmp_path: Path) -> None:
    peers = _peers_after("per-request", 3, 30, tmp_path)
    assert len(peers) == 30 and set(peers.values()) == {1}


@pytest.mark.integration
def test_shared_uses_one_connection(tmp_path: Path) -> None:
    peers = _peers_after("shared", 4, 40, tmp_path)
    assert list(peers.values()) == [40]


@pytest.mark.integration
def test_pool_round_robin_spreads_calls_evenly(tmp_path: Path) -> None:
    peers = _peers_after("pool:3", 1, 30, tmp_path)
    assert sorted(peers.values()) == [10, 10, 10]


@pytest.mark.integration
def test_pool_least_busy_prefers_idle_connections(tmp_path: Path) -> None:
    # One call at a time: every connection is idle, so the first one is always chosen.
    peers = _peers_after("pool:3:least-busy", 1, 12, tmp_path)
    assert list(peers.values()) == [12]
    # Three users against slow calls: each user finds a different idle connection.
    busy = _peers_after("pool:3:least-busy", 3, 30, tmp_path)
    assert len(busy) == 3 and min(busy.values()) >= 5


def _open_loop_against_100ms_server(concurrency: int, requests: int, rate: float) -> LoadResult:
    async def scenario() -> LoadResult:
        server = await start_server(parse_server_spec("grpcio-aio"), SLOW, {"delay_ms": 100})
        try:
            spec = make_spec(
                target=server.address, service=SLOW, concurrency=concurrency,
                requests=requests, rate=rate,
            )  # fmt: skip
            return await BuiltinDriver().run(spec, lambda *_: None)
        finally:
            await server.stop()

    return asyncio.run(scenario())


@pytest.mark.integration
def test_open_loop_corrects_for_coordinated_omission() -> None:
    """A 100 ms server, 20 calls/s offered, at most one call in flight.

    The generator can send only every 100 ms while its pacer says every
    50 ms, so call i goes out 50*i ms late. Service time stays ~100 ms; the
    latency from the intended send time is 100 + 50*i ms (i = 0..9): up to ~550 ms.
    """

    result = _open_loop_against_100ms_server(concurrency=1, requests=10, rate=20.0)
    assert result.statuses == {"OK": 10}
    service, lag, latency = result.service_latency, result.schedule_lag, result.latency
    assert service is not None and lag is not None
    assert 100_000 <= service.percentile_us(50) < 160_000
    assert 500_000 <= latency.max_us < 750_000
    assert latency.mean_us == pytest.approx(325_000, rel=0.25)
    assert 400_000 <= lag.max_us < 650_000
    assert result.behind_schedule


@pytest.mark.integration
def test_open_loop_keeps_its_pacer_when_calls_can_overlap() -> None:
    """Same server and rate with room for calls in flight: sent on time, ~100 ms each."""

    result = _open_loop_against_100ms_server(concurrency=100, requests=50, rate=50.0)
    assert result.statuses == {"OK": 50}
    lag = result.schedule_lag
    assert lag is not None and lag.max_us < 50_000 and lag.percentile_us(50) < 5_000
    assert result.latency.percentile_us(50) < 200_000
    assert result.wall_s == pytest.approx(49 / 50 + 0.1, abs=0.25)


@pytest.mark.integration
def test_cli_rate_sweep_and_channels(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = subprocess.run(
        [*GRPCBENCH, "run", "-s", "grpcio-aio", "--rate", "200,400", "-n", "100",
         "--warmup", "10", "--channels", "1,2", "--client-processes", "2", "--output", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    levels = json.loads(out.read_text())["levels"]
    plans = [lv["plan"] for lv in levels]
    assert [(p["rate"], p["channels"], p["connection"]) for p in plans] == [
        (200, 1, "pool:1"), (200, 2, "pool:2"), (400, 1, "pool:1"), (400, 2, "pool:2"),
    ]  # fmt: skip
    for lv in levels:
        assert lv["load"]["processes"] == 2 and lv["load"]["statuses"] == {"OK": 100}
        assert lv["load"]["rate"] == lv["plan"]["rate"]
        assert lv["load"]["schedule_lag"]["count"] == 100
    assert "hello - rate 400/s, channels 2" in result.stdout
    assert "Send lag p99" in result.stdout and "Target rate" in result.stdout


def test_scenario_params_can_be_overridden() -> None:
    options = build_run_options(
        RunArgs(
            scenario="paginate-vs-stream",
            server_params=("users=1000000",),
            workload_params=("keyword=e",),
        )
    )
    assert options.scenario.server_params["users"] == 1000000
    assert options.workload_params(options.levels[0])["keyword"] == "e"
    assert recorded_options(options).to_json()["server_params"]["users"] == 1000000


@pytest.mark.integration
def test_per_user_gives_every_user_its_own_connection(tmp_path: Path) -> None:
    peers = _peers_after("per-user", 5, 50, tmp_path)
    assert len(peers) == 5 and sum(peers.values()) == 50 and min(peers.values()) >= 3


@pytest.mark.integration
def test_checkout_pool_opens_connections_when_none_is_idle(tmp_path: Path) -> None:
    # Never more calls in flight than the pool keeps: the same connections serve all.
    calm = _peers_after("checkout:4", 2, 20, tmp_path)
    assert len(calm) == 2 and sum(calm.values()) == 20
    # Four users, an empty pool at the start: every concurrent call needs a connection
    # of its own (how many more open later depends on when calls give theirs back).
    busy = _peers_after("checkout:2", 4, 40, tmp_path)
    assert len(busy) >= 4 and sum(busy.values()) == 40


def test_checkout_pool_closes_what_comes_back_together_beyond_its_size() -> None:
    """Seed 001's pool: 12 callers whose replies arrive in the same turn of the loop give
    their connections back together; 2 are kept, 10 closed, and the next round opens
    10 new ones - the churn that made the seed's pool cost about a connection per call."""
    from grpcbench.load.calls import CheckoutCalls
    from grpcbench.stats.histogram import LatencyRecorder

    class Channel:
        def __init__(self) -> None:
            self.closed = False

        async def close(self) -> None:
            self.closed = True

    opened: list[Channel] = []

    class Dialer:
        async def connect(self, timeout: float) -> tuple[Channel, int]:
            opened.append(Channel())
            return opened[-1], 1000

    async def scenario() -> None:
        reply = asyncio.Event()

        class Workload:
            def bind(self, channel: Channel) -> object:
                async def call(timeout: float) -> None:
                    await reply.wait()  # every caller's reply arrives at once

                return call

        pool = CheckoutCalls(Dialer(), Workload(), LatencyRecorder(), size=2)  # type: ignore[arg-type]
        for _ in range(2):  # two rounds of 12 callers
            reply.clear()
            calls = [asyncio.create_task(pool(1.0)) for _ in range(12)]
            await asyncio.sleep(0.01)
            reply.set()
            await asyncio.gather(*calls)
        await pool.close()

    asyncio.run(scenario())
    # Round 1 opens 12 and keeps 2; round 2 takes those 2 and opens 10 more.
    assert len(opened) == 22
    assert sum(channel.closed for channel in opened) == 22  # 20 on release, 2 at the end


@pytest.mark.integration
def test_checkout_pool_counts_every_connection_the_server_sees(tmp_path: Path) -> None:
    """The pool's connection set-ups as the server counts them (one peer address each)
    and as the client times them: the same number."""
    opened: list[int] = []
    peers = _peers_after("checkout:2", 12, 240, tmp_path, opened, "grpcio:workers=16")
    assert sum(peers.values()) == 240
    assert len(peers) >= 12  # every caller needed one at the start
    assert opened == [len(peers)]  # the client counted every set-up the server saw


def test_a_call_that_ignores_its_deadline_is_cut_by_the_phase_watchdog() -> None:
    """No per-call timer on the hot path: a workload that never returns (ignoring
    the deadline grpc would enforce) still ends the level, counted as DeadlineExceeded."""
    from grpcbench.load import closed_loop
    from grpcbench.load.closed_loop import Budget, closed_loop_phase
    from grpcbench.load.recorders import LevelRecorders
    from tests.support.factories import make_spec

    async def hangs(timeout: float) -> None:
        await asyncio.sleep(3600)

    async def scenario() -> tuple[Budget, LevelRecorders, float]:
        spec = make_spec(target="-", service="hello", concurrency=3, requests=10, timeout_s=0.1)
        budget = Budget.for_phase(10, 0.0, max_level_s=0.3)
        recorders = LevelRecorders()
        started = time.monotonic()
        await closed_loop_phase(hangs, spec, budget, recorders, None)
        return budget, recorders, time.monotonic() - started

    saved = closed_loop.WATCHDOG_GRACE_S
    closed_loop.WATCHDOG_GRACE_S = 0.2
    try:
        budget, recorders, took = asyncio.run(scenario())
    finally:
        closed_loop.WATCHDOG_GRACE_S = saved
    assert took < 2.0
    assert dict(recorders.statuses) == {"DeadlineExceeded": 3}  # the 3 calls taken
    assert budget.truncated and budget.done == 3 and budget.in_flight == 0


def test_phase_ends_are_timers_and_counts_stay_exact() -> None:
    from grpcbench.load.closed_loop import Budget, closed_loop_phase
    from grpcbench.load.recorders import LevelRecorders
    from tests.support.factories import make_spec

    async def quick(timeout: float) -> None:
        await asyncio.sleep(0.001)

    async def scenario(requests: int, duration_s: float) -> tuple[Budget, LevelRecorders, float]:
        spec = make_spec(target="-", service="hello", concurrency=4, requests=requests)
        started = time.perf_counter()  # the phase's origin, as the engine shares it
        budget = Budget.for_phase(requests, duration_s, max_level_s=30.0, start=started)
        recorders = LevelRecorders()
        await closed_loop_phase(quick, spec, budget, recorders, None)
        return budget, recorders, time.perf_counter() - started

    budget, recorders, _ = asyncio.run(scenario(101, 0.0))
    assert recorders.statuses == {"OK": 101} and recorders.latency.count == 101
    assert not budget.truncated
    budget, recorders, took = asyncio.run(scenario(0, 0.3))
    assert took >= 0.3 and recorders.latency.count == recorders.statuses["OK"] > 0


def test_large_request_data_is_saved_as_its_digest_and_file(tmp_path: Path) -> None:
    """-D with a large request: results keep its sha256, size and path, not the data
    (a 3 MB request once made a 4 MB results file); small data is kept as given."""
    import hashlib

    from grpcbench.model.results import RecordedOptions
    from grpcbench.rpc.settings import CallArgs

    big = tmp_path / "big.json"
    big.write_text(json.dumps({"name": "x" * 100_000}))
    proto = "protos/grpcbench/proto/helloworld.proto"
    recorded = {}
    for data, data_file in ((None, str(big)), ('{"name": "Joe"}', None)):
        call = CallArgs(
            call=("helloworld.Greeter/SayHello",), proto=proto, data=data, data_file=data_file
        )
        options = build_run_options(RunArgs(address="127.0.0.1:50051", call=call))
        recorded[data_file or data] = recorded_options(options)
    large = recorded[str(big)].to_json()["call"]
    assert "data" not in large and large["data_path"] == str(big)
    assert large["data_sha256"] == hashlib.sha256(big.read_bytes()).hexdigest()
    assert large["data_bytes"] == big.stat().st_size
    again = RecordedOptions.from_json(json.loads(json.dumps(recorded[str(big)].to_json())))
    assert f"data of {big.stat().st_size:,} bytes from big.json" in again.describe_params()
    assert recorded['{"name": "Joe"}'].to_json()["call"]["data"] == '{"name": "Joe"}'
