"""Generators on Dask distributed (--cluster): exact merges, per-worker figures, faults.

A LocalCluster of 2 workers (grpcbench's own ``local:2``) against a local
server, and the real command-line tools: ``dask scheduler`` and two ``dask
worker`` processes started here, all on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from grpcbench.base.errors import UsageError
from grpcbench.base.parsing import parse_cluster
from grpcbench.load.cluster import ClusterDriver
from grpcbench.load.cluster_hosts import check_versions, spread_over_hosts, worker_version
from tests.conftest import GRPCBENCH
from tests.support.dask_cli import DASK, real_cluster
from tests.support.processes import assert_all_gone, own_children

pytest.importorskip("distributed")


def grpcbench(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*GRPCBENCH, "run", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def test_cluster_addresses() -> None:
    assert parse_cluster("local:2") == "local:2"
    assert parse_cluster("tcp://10.0.0.5:8786") == "tcp://10.0.0.5:8786"
    for bad in ("local:0", "local:x", "10.0.0.5", "tcp://host"):
        with pytest.raises(UsageError, match="bad --cluster"):
            parse_cluster(bad)


def test_a_worker_with_other_versions_is_named() -> None:
    """grpcbench, Python, grpcio, protobuf, distributed and service plugins must match."""
    mine = {"grpcbench": "1.0", "Python": "3.11.7", "grpcio": "1.85.1"}
    check_versions({"tcp://a:1": dict(mine), "tcp://b:2": dict(mine)}, expected=mine)
    with pytest.raises(UsageError, match=r"tcp://b:2 has grpcbench 0\.9"):
        check_versions({"tcp://a:1": dict(mine), "tcp://b:2": "0.9"}, expected=mine)
    with pytest.raises(UsageError, match=r"tcp://a:1 has grpcio 1\.60\.0"):
        check_versions({"tcp://a:1": {**mine, "grpcio": "1.60.0"}}, expected=mine)
    assert set(worker_version()) >= {"grpcbench", "Python", "grpcio", "protobuf"}


def test_cluster_workers_spread_over_hosts() -> None:
    addresses = ["tcp://10.0.0.1:1", "tcp://10.0.0.1:2", "tcp://10.0.0.1:3", "tcp://10.0.0.2:1"]
    assert spread_over_hosts(addresses)[:2] == ["tcp://10.0.0.1:1", "tcp://10.0.0.2:1"]


def test_a_loopback_target_for_remote_workers_is_refused() -> None:
    """Decided by resolving the host and by each worker's loopback (kernel and network
    namespace), not by reading addresses: a worker on this machine's own non-loopback
    address shares its loopback; 0.0.0.0 and localhost are loopback too."""
    from grpcbench.load.cluster_hosts import dials_this_machine, loopback_identity

    driver = object.__new__(ClusterDriver)
    driver.addresses = ["tcp://10.0.0.7:4001"]
    driver.identities = {"tcp://10.0.0.7:4001": "another-machine/1"}
    for host in ("127.0.0.1", "localhost", "0.0.0.0", "127.0.0.2", "[::1]"):
        with pytest.raises(UsageError, match="give --bind THIS_IP"):
            driver.check_reach(host)
    driver.check_reach("10.0.0.3")  # an address they can dial
    driver.identities = {"tcp://10.0.0.7:4001": loopback_identity()}  # this machine's
    driver.check_reach("127.0.0.1")  # it shares this machine's loopback
    assert not dials_this_machine("10.0.0.3") and dials_this_machine("localhost")


@pytest.mark.integration
def test_an_unreachable_scheduler_is_one_line_at_once() -> None:
    """A port nobody listens on is refused at once (Dask's connect retried it for its
    whole 10 s timeout)."""
    started = time.monotonic()
    result = grpcbench("--cluster", "tcp://127.0.0.1:9", "-s", "grpclib", "-c", "2", "-n", "10",
                       timeout=60)  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in result.stderr
    assert "refused" in result.stderr.lower() and "Traceback" not in result.stderr
    assert time.monotonic() - started < 8  # the command's start-up, not Dask's 10 s


@pytest.mark.integration
def test_local_cluster_counts_merge_exactly(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = grpcbench(
        "--cluster", "local:2", "-s", "grpcio-aio", "-c", "4,6", "-n", "301", "--warmup", "20",
        "--output", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    levels = json.loads(out.read_text())["levels"]
    assert [level["load"]["statuses"] for level in levels] == [{"OK": 301}, {"OK": 301}]
    for level in levels:
        load = level["load"]
        assert load["driver"] == "dask" and load["latency"]["count"] == 301
        workers = load["workers"]
        # The merged histogram holds every worker's calls, bucket by bucket.
        assert sum(w["calls"] for w in workers) == load["latency"]["count"]
        assert len(workers) == 2 and len({w["address"] for w in workers}) == 2
        # Each started with a chunk of its own; the rest it took from the pool as it ran.
        assert all(w["calls"] >= 19 for w in workers)
        assert all(w["cpu_s"] > 0 and w["saturation"] >= 0 for w in workers)
        assert (
            level["plan"]["concurrency"] in (4, 6)
            and load["concurrency"] == level["plan"]["concurrency"]
        )


def test_dask_tasks_never_retrieved_are_not_printed() -> None:
    """A killed worker leaves the in-process scheduler a request it cannot answer, and
    asyncio would print its TimeoutError with a traceback (CI saw it); a task of ours
    that fails unseen is still printed."""
    import logging

    from grpcbench.load.dask_logs import _DaskTaskNoise

    def record_of(filename: str) -> logging.LogRecord:
        namespace: dict[str, object] = {}
        exec(compile("def handle():\n    raise TimeoutError", filename, "exec"), namespace)  # noqa: S102
        try:
            namespace["handle"]()  # type: ignore[operator]
        except TimeoutError:
            exc_info = sys.exc_info()
        return logging.LogRecord(
            "asyncio", logging.ERROR, __file__, 1,
            "Task exception was never retrieved\nfuture: <Task finished>", None, exc_info,
        )  # fmt: skip

    noise = _DaskTaskNoise()
    assert not noise.filter(record_of("/venv/site-packages/distributed/core.py"))
    assert noise.filter(record_of("/work/grpcbench/load/engine.py"))


@pytest.mark.integration
def test_a_worker_killed_mid_level_is_a_level_error(tmp_path: Path) -> None:
    """kill -9 of one LocalCluster worker during a 30 s level: exit 4 naming the
    worker, well before the level would have ended, and no process left."""
    out = tmp_path / "r.json"
    run = subprocess.Popen(
        [*GRPCBENCH, "run", "--cluster", "local:2", "-s", "grpcio-aio", "-c", "2",
         "--duration", "30s", "--warmup", "10", "--output", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        victim = None
        while victim is None and time.monotonic() < deadline:
            time.sleep(0.5)
            workers = [
                p for p in psutil.Process(run.pid).children(recursive=True)
                if "spawn_main" in " ".join(p.cmdline())
            ]  # fmt: skip
            if len(workers) == 2:
                time.sleep(6)  # into the measured phase
                victim = workers[0]
        assert victim is not None, "no cluster worker process appeared"
        killed_at = time.monotonic()
        victim.kill()
        _, stderr = run.communicate(timeout=60)
        assert time.monotonic() - killed_at < 25
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 4, stderr
    assert "cluster worker tcp://127.0.0.1:" in stderr and "Traceback" not in stderr
    assert json.loads(out.read_text())["level_errors"]


@pytest.mark.skipif(DASK is None, reason="the dask command-line tool is not installed")
@pytest.mark.integration
def test_through_the_real_command_line_tools(tmp_path: Path) -> None:
    """A `dask scheduler` and 8 `dask worker` processes: every worker is used (some
    distributed versions list at most 5 unless asked); a coordinator killed with -9
    mid-level leaves no load on the target; the next run on the cluster starts at once."""
    import asyncio

    from grpcbench.servers.launcher import start_server
    from grpcbench.servers.spec import parse_server_spec

    with real_cluster(tmp_path, workers=8) as cluster:
        loop = asyncio.new_event_loop()
        server = None
        try:
            address, processes = cluster.address, cluster.processes
            out = tmp_path / "r.json"
            result = grpcbench(
                "--cluster", address, "--cluster-workers", "8", "-s", "grpclib", "-c", "8",
                "-n", "400", "--warmup", "16", "--output", str(out),
            )  # fmt: skip
            assert result.returncode == 0, result.stderr
            [level] = json.loads(out.read_text())["levels"]
            assert level["load"]["statuses"] == {"OK": 400} and len(level["load"]["workers"]) == 8
            # Nothing of that run is left: only the scheduler and workers the test started.
            dask = {p.pid for p in processes}
            for process in processes:
                dask |= {
                    child.pid for child in psutil.Process(process.pid).children(recursive=True)
                }
            leftovers = {p.pid for p in own_children()} - dask
            assert_all_gone(leftovers)

            # The coordinator killed with -9 mid-level: the workers' load stops with it.
            server = loop.run_until_complete(
                start_server(parse_server_spec("grpcio-aio"), "hello", {})
            )  # fmt: skip
            target = psutil.Process(server.pid)
            coordinator = subprocess.Popen(
                [*GRPCBENCH, "run", "--cluster", address, "--target", server.address, "-c", "8",
                 "--duration", "60s", "--warmup", "0"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            deadline = time.monotonic() + 60
            busy = False
            while not busy and time.monotonic() < deadline:  # until the load is on the target
                before = target.cpu_times()
                time.sleep(0.5)
                busy = sum(target.cpu_times()[:2]) - sum(before[:2]) > 0.1
            assert busy, "the cluster never loaded the target"
            coordinator.kill()
            coordinator.wait(10)
            time.sleep(2.0)  # the workers notice within a tenth of a second; Dask within two
            before = target.cpu_times()
            time.sleep(3.0)
            spent = sum(target.cpu_times()[:2]) - sum(before[:2])
            assert spent < 0.3, f"the target still burnt {spent:.2f} s of CPU in 3 s"

            started = time.monotonic()
            again = grpcbench(
                "--cluster", address, "--target", server.address, "-c", "8", "-n", "200",
                "--warmup", "0", timeout=120,
            )  # fmt: skip
            assert again.returncode == 0, again.stderr
            assert time.monotonic() - started < 30, "the next run waited for the killed one"

            # The coordinator frozen (SIGSTOP: a hung or vanished host) mid-level: Dask keeps
            # the tasks executing, but the workers stop when its lease is no longer renewed.
            frozen = subprocess.Popen(
                [*GRPCBENCH, "run", "--cluster", address, "--target", server.address, "-c", "8",
                 "--duration", "60s", "--warmup", "0"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            try:
                deadline = time.monotonic() + 60
                busy = False
                while not busy and time.monotonic() < deadline:
                    before = target.cpu_times()
                    time.sleep(0.5)
                    busy = sum(target.cpu_times()[:2]) - sum(before[:2]) > 0.1
                assert busy, "the cluster never loaded the target"
                frozen.send_signal(signal.SIGSTOP)
                time.sleep(6.0)  # the lease: LEASE_S (4 s) after its last renewal
                before = target.cpu_times()
                time.sleep(3.0)
                spent = sum(target.cpu_times()[:2]) - sum(before[:2])
                assert spent < 0.3, f"a frozen coordinator's load went on: {spent:.2f} s in 3 s"
            finally:
                frozen.send_signal(signal.SIGCONT)
                frozen.kill()
                frozen.wait(10)
        finally:
            if server is not None:
                loop.run_until_complete(server.stop())
            loop.close()


@pytest.mark.integration
def test_the_open_loop_splits_its_rate_over_the_workers(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = grpcbench(
        "--cluster", "local:2", "-s", "grpclib", "--rate", "200", "-n", "200", "--warmup", "10",
        "--output", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [level] = json.loads(out.read_text())["levels"]
    load = level["load"]
    assert load["statuses"] == {"OK": 200} and load["rate"] == pytest.approx(200)
    assert load["schedule_lag"]["count"] == 200  # corrected per worker, merged
    assert [w["calls"] for w in load["workers"]] == [100, 100]


@pytest.mark.integration
def test_the_workers_intervals_are_shown_live_merged(tmp_path: Path) -> None:
    """--interval on a cluster: each interval, merged over both workers, is shown while
    the level runs (the console's live lines, fed as telemetry is), and the merged
    series saved is the one shown."""
    out = tmp_path / "r.json"
    result = grpcbench(
        "--cluster", "local:2", "-s", "grpclib", "--rate", "200", "-z", "4s", "--warmup", "0",
        "--interval", "1s", "--output", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    shown = re.findall(r"(\d+\.\d)-(\d+\.\d) s: ([\d,]+) req/s of ([\d,]+)/s offered",
                       result.stderr)  # fmt: skip
    [level] = json.loads(out.read_text())["levels"]
    saved = level["load"]["intervals"]
    assert len(shown) >= 3, result.stderr
    # The last one shown may differ from the one saved: the level's end joins a short
    # last interval to it (intervals.finish).
    for (start, _, rate, offered), figures in zip(shown[:-1], saved, strict=False):
        assert float(start) == pytest.approx(figures["start_s"], abs=0.05)
        assert int(offered.replace(",", "")) == 200  # both workers' halves
        assert int(rate.replace(",", "")) == round(figures["rate"]), (shown, saved)


@pytest.mark.integration
def test_a_cancelled_level_stops_its_load_on_the_worker() -> None:
    """Cancelling a Dask future does not stop a running task: the task must notice that
    it was let go (Ctrl-C, a failed level, a coordinator killed) and end its load."""
    import asyncio

    from distributed import Client, LocalCluster

    from grpcbench.load.cluster_worker import run_on_worker
    from grpcbench.servers.launcher import start_server
    from grpcbench.servers.spec import parse_server_spec
    from tests.support.factories import make_spec

    async def serve() -> object:
        return await start_server(parse_server_spec("grpcio-aio"), "hello", {})

    loop = asyncio.new_event_loop()
    server = loop.run_until_complete(serve())
    try:
        spec = make_spec(
            target=server.address, service="hello", concurrency=4, duration_s=60.0,  # type: ignore[attr-defined]
            warmup_requests=10,
        )  # fmt: skip
        with (
            LocalCluster(  # threads here: no process to leak
                n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
            ) as cluster,
            Client(cluster) as client,
        ):
            future = client.submit(run_on_worker, spec.to_json(), "stop-test", 120.0,
                                       pure=False)  # fmt: skip
            from distributed import Event

            ready = Event("stop-test-ready-0", client)
            assert ready.wait(30), "the worker never warmed up"
            Event("stop-test-start", client).set()
            time.sleep(1.0)  # into the measured phase
            future.cancel()
            cancelled_at = time.monotonic()

            def busy(dask_worker: object) -> int:
                return len(dask_worker.state.executing)  # type: ignore[attr-defined]

            while time.monotonic() - cancelled_at < 15:
                if not any(client.run(busy).values()):
                    break
                time.sleep(0.1)
            stopped_in = time.monotonic() - cancelled_at
        assert stopped_in < 5, f"the worker kept its load for {stopped_in:.1f} s"
    finally:
        loop.run_until_complete(server.stop())  # type: ignore[attr-defined]
        loop.close()


def test_secrets_do_not_cross_a_plaintext_scheduler() -> None:
    from grpcbench.rpc.settings import CallArgs
    from grpcbench.run.arguments import RunArgs
    from grpcbench.run.options import build_run_options

    def options(cluster: str, allowed: bool = False) -> object:
        return build_run_options(RunArgs(
            cluster=cluster, target="127.0.0.1:50051", allow_plaintext_secrets=allowed,
            call=CallArgs(call=("helloworld.Greeter/SayHello",), metadata=("authorization=x",)),
        ))  # fmt: skip

    for plaintext in ("tcp://10.0.0.5:8786", "ws://10.0.0.5:8786"):
        with pytest.raises(UsageError, match="in plaintext: use a tls:// or wss:// scheduler"):
            options(plaintext)
        assert options(plaintext, allowed=True)
    with pytest.raises(UsageError, match="needs Dask's TLS settings.*CLIENT__KEY"):
        options("tls://10.0.0.5:8786")
    import dask.config

    client = {"cert": "client.pem", "key": "client.key"}
    with dask.config.set({"distributed.comm.tls": {"ca-file": "ca.pem", "client": client}}):
        assert options("tls://10.0.0.5:8786") and options("wss://10.0.0.5:8786")
    # Set as the refusal says, through the environment: Dask stores "ca_file" then.
    with dask.config.set({"distributed.comm.tls": {"ca_file": "ca.pem", "client": client}}):
        assert options("tls://10.0.0.5:8786")


def test_reflection_metadata_does_not_cross_a_plaintext_scheduler() -> None:
    """Without --proto a cluster worker asks the target's reflection service, so the
    --reflect-metadata goes to the workers too (a relay's dump once showed it)."""
    from grpcbench.rpc.settings import CallArgs
    from grpcbench.run.arguments import RunArgs
    from grpcbench.run.options import build_run_options

    call = CallArgs(call=("helloworld.Greeter/SayHello",), reflect_metadata="auth=s3cr3t")
    with pytest.raises(UsageError, match="would send --reflect-metadata to its workers") as said:
        build_run_options(RunArgs(cluster="tcp://10.0.0.5:8786", target="127.0.0.1:1", call=call))
    assert "s3cr3t" not in str(said.value)


def test_workers_with_several_threads_are_named_before_the_first_level() -> None:
    """One Python process is one core of client: a `dask worker` of 4 threads gives one
    generator, and the run says so instead of leaving it to be guessed."""

    class FakeClient:
        def wait_for_workers(self, count: int, timeout: float) -> None:
            pass

        def run(self, function: Callable[[], object], on_error: str = "raise") -> dict[str, object]:
            return {"tcp://10.0.0.1:1": function()}

        def scheduler_info(self, n_workers: int = -1) -> dict[str, object]:
            return {"workers": {"tcp://10.0.0.1:1": {"nthreads": 4}}}

    driver = object.__new__(ClusterDriver)
    driver.client = FakeClient()
    assert driver._choose_workers(None) == ["tcp://10.0.0.1:1"]
    assert "--nthreads 1 --nworkers N" in driver.notes[0]


def test_a_scheduler_lost_before_the_first_level_is_not_called_a_bad_install() -> None:
    """The scheduler gone while the workers are checked: one line that says so. It
    advised installing grpcbench on every worker; a worker that vanished likewise."""

    class LostClient:
        status = "closed"

        def wait_for_workers(self, count: int, timeout: float) -> None:
            pass

        def run(self, function: Callable[[], object], on_error: str = "raise") -> object:
            raise OSError("Timed out trying to connect to tcp://10.0.0.9:8786")

    driver = object.__new__(ClusterDriver)
    driver.client, driver.scheduler_address = LostClient(), "tcp://10.0.0.9:8786"
    with pytest.raises(UsageError, match="lost the Dask scheduler at tcp://10.0.0.9:8786") as said:
        driver._choose_workers(None)
    assert "install grpcbench" not in str(said.value)

    class VanishedWorker(LostClient):
        status = "running"

        def run(self, function: Callable[[], object], on_error: str = "raise") -> object:
            return {"tcp://10.0.0.1:1": OSError("connection closed")}

    driver.client = VanishedWorker()
    with pytest.raises(UsageError, match="10.0.0.1:1 did not answer") as said:
        driver._choose_workers(None)
    assert "install grpcbench" not in str(said.value)


@pytest.mark.integration
def test_target_checks_run_on_a_worker_and_keep_their_one_line() -> None:
    """With a cluster elsewhere, reaching the target, reflection and the pre-flight call
    run on a worker (the coordinator may not reach the target); their UsageError
    comes back as it is, its exit code included."""
    import asyncio

    from distributed import Client, LocalCluster

    from grpcbench.load.cluster_hosts import WorkerSite
    from grpcbench.rpc.security import PLAINTEXT
    from grpcbench.targets.external import reach

    with (
        LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                     dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):  # fmt: skip
        driver = object.__new__(ClusterDriver)
        driver.client = client
        driver.addresses = list(client.scheduler_info()["workers"])
        probe = WorkerSite(driver)
        assert probe.where.startswith("cluster worker ")
        with pytest.raises(UsageError, match="connection refused") as refused:
            asyncio.run(probe(reach, "127.0.0.1:1", PLAINTEXT))
        assert refused.value.exit_code == 2
        assert asyncio.run(probe(sum, [1, 2])) == 3


@pytest.mark.integration
def test_a_level_leaves_no_barrier_events_on_the_scheduler() -> None:
    """A long-lived cluster must not keep every level's Dask events or queues."""
    import asyncio

    from distributed import Client, LocalCluster

    from grpcbench.servers.launcher import start_server
    from grpcbench.servers.spec import parse_server_spec
    from tests.support.factories import make_spec

    loop = asyncio.new_event_loop()
    server = loop.run_until_complete(start_server(parse_server_spec("grpcio-aio"), "hello", {}))
    try:
        with (
            # Worker processes: two generators on threads of one process can deadlock
            # CPython's GIL against an exiting thread (cpython#72998, seen here once).
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         dashboard_address=None) as cluster,
            Client(cluster) as client,
        ):  # fmt: skip
            driver = ClusterDriver(cluster.scheduler_address)
            try:
                spec = make_spec(target=server.address, service="hello", concurrency=4,
                                 requests=200, warmup_requests=8)  # fmt: skip
                result = loop.run_until_complete(driver.run(spec, lambda *_: None))
            finally:
                driver.close()
            assert result.statuses == {"OK": 200} and len(result.workers) == 2

            def events(dask_scheduler: object) -> int:
                return len(dask_scheduler.extensions["events"]._events)  # type: ignore[attr-defined]

            def queues(dask_scheduler: object) -> int:
                return len(dask_scheduler.extensions["queues"].queues)  # type: ignore[attr-defined]

            assert client.run_on_scheduler(events) == 0
            # The level's pool of calls (work stealing) is gone too.
            assert client.run_on_scheduler(queues) == 0
    finally:
        loop.run_until_complete(server.stop())
        loop.close()


@pytest.mark.integration
def test_a_local_cluster_says_nothing_of_a_taken_dashboard_port() -> None:
    """Dask's scheduler serves HTTP on :8787 by default and warned when another cluster
    had it; grpcbench's LocalCluster listens on loopback, on any free port."""
    import contextlib
    import socket

    with contextlib.ExitStack() as stack:
        taken = stack.enter_context(socket.socket())
        with contextlib.suppress(OSError):  # already taken by someone else: as good
            taken.bind(("127.0.0.1", 8787))
            taken.listen()
        result = grpcbench("--cluster", "local:1", "-s", "grpclib", "-c", "2", "-n", "50")
    assert result.returncode == 0, result.stderr
    assert "already in use" not in result.stderr and "UserWarning" not in result.stderr


def test_a_worker_without_grpcbench_is_named() -> None:
    class Client:
        def wait_for_workers(self, n: int, timeout: float) -> None:
            pass

        def run(self, function: object, on_error: str = "raise") -> dict[str, object]:
            assert on_error == "return"  # each worker's own answer, a failure included
            return {"tcp://10.0.0.9:4001": ModuleNotFoundError("No module named 'grpcbench'"),
                    "tcp://10.0.0.8:4001": {"grpcbench": "x"}}  # fmt: skip

    driver = object.__new__(ClusterDriver)
    driver.client = Client()
    with pytest.raises(
        UsageError, match=r"cluster worker tcp://10\.0\.0\.9:4001 cannot run grpcbench"
    ):
        driver._choose_workers(None)


def test_a_worker_says_why_its_level_was_stopped() -> None:
    """A cancelled level and a coordinator gone silent read differently (the one message
    for both read like a deliberate release); the load stops within a poll either way."""
    from grpcbench.base.errors import DriverError
    from grpcbench.load.cluster_worker import _until_abandoned

    async def stopped(reason: str) -> tuple[str, bool]:
        load = asyncio.ensure_future(asyncio.sleep(30))
        polls = iter(["", reason])
        with pytest.raises(DriverError) as said:
            await _until_abandoned(load, lambda: next(polls, reason))
        return str(said.value), load.cancelled()

    for reason in ("the coordinator cancelled this level", "the coordinator went silent"):
        message, cancelled = asyncio.run(stopped(reason))
        assert message == f"stopped: {reason}" and cancelled
