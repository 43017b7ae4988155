"""watch (seed 004): every pair once and in order, identical bytes from both cache modes."""

from __future__ import annotations

import asyncio
import time

import grpc
import psutil
import pytest

from grpcbench.base.errors import UsageError
from grpcbench.load.builtin import BuiltinDriver
from grpcbench.proto import watch_pb2
from grpcbench.servers.launcher import start_server
from grpcbench.servers.spec import parse_server_spec
from grpcbench.services.watch import check_level
from grpcbench.services.watch_store import SERIALIZED
from tests.support.factories import make_spec

pytestmark = pytest.mark.integration

KINDS = ("grpcio:workers=4", "grpclib", "grpcio-aio+uvloop")
PARAMS = {"pairs": 40, "folders": ["small", "medium"]}


async def _raw(address: str, method: str, folder: str, cache: int) -> list[bytes]:
    """The response messages as bytes, exactly as they came over the wire."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.unary_stream(
            f"/watch.StreamBench/{method}",
            request_serializer=watch_pb2.WatchRequest.SerializeToString,
            response_deserializer=None,
        )
        request = watch_pb2.WatchRequest(folder=folder, cache=cache)
        return [message async for message in call(request, timeout=30)]


@pytest.mark.parametrize("kind", KINDS)
def test_cache_modes_send_identical_bytes_and_every_pair_once(kind: str) -> None:
    async def scenario() -> None:
        server = await start_server(parse_server_spec(kind), "watch", PARAMS)
        try:
            for method, messages in (("Watch", 1), ("WatchSeparated", 40)):
                for folder in ("small", "medium"):
                    per_call = await _raw(server.address, method, folder, watch_pb2.OBJECTS)
                    cached = await _raw(server.address, method, folder, SERIALIZED)
                    assert per_call == cached and len(cached) == messages
                    for framed in (watch_pb2.FRAME, watch_pb2.TWO_WRITES):
                        if kind == "grpclib":  # prepared frames: the same messages
                            assert await _raw(server.address, method, folder, framed) == per_call
                        else:  # C-core frames messages: refused, never something else
                            with pytest.raises(grpc.aio.AioRpcError) as refused:
                                await _raw(server.address, method, folder, framed)
                            assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED
            caches = ["objects", "serialized"] + (
                ["frame", "two-writes"] if kind == "grpclib" else []
            )
            for message in ("mono", "separated"):
                for cache in caches:
                    spec = make_spec(
                        target=server.address, service="watch", concurrency=3, requests=6,
                        workload_params={"message": message, "folder": "small", "cache": cache},
                    )  # fmt: skip
                    result = await BuiltinDriver().run(spec, lambda *_: None)
                    assert result.statuses == {"OK": 6}, (message, cache)
                    stream = result.stream
                    assert stream is not None and stream.items == 6 * 40
                    assert stream.messages == 6 * (1 if message == "mono" else 40)
                    assert stream.bytes > 6 * 40 * 500
            missing = make_spec(
                target=server.address, service="watch", concurrency=1, requests=2,
                workload_params={"folder": "nope"},
            )  # fmt: skip
            result = await BuiltinDriver().run(missing, lambda *_: None)
            assert result.statuses == {"NotFound": 2}
        finally:
            await server.stop()

    asyncio.run(scenario())


@pytest.mark.parametrize("kind", KINDS)
def test_clients_leaving_mid_stream_leave_nothing_running(kind: str) -> None:
    async def scenario() -> None:
        server = await start_server(
            parse_server_spec(kind), "watch", {"pairs": 2000, "folders": ["medium"]}
        )
        try:
            process = psutil.Process(server.pid)
            threads_before = process.num_threads()
            async with grpc.aio.insecure_channel(server.address) as channel:
                method = channel.unary_stream(
                    "/watch.StreamBench/WatchSeparated",
                    request_serializer=watch_pb2.WatchRequest.SerializeToString,
                    response_deserializer=watch_pb2.SeparatedWatchResponse.FromString,
                )
                request = watch_pb2.WatchRequest(folder="medium")
                for _ in range(20):
                    call = method(request, timeout=30)
                    async for _reply in call:
                        break
                    call.cancel()
                await asyncio.sleep(1.0)
                before = sum(process.cpu_times()[:2])
                time.sleep(1.0)
                busy = sum(process.cpu_times()[:2]) - before
                assert busy < 0.3, f"server still busy {busy:.2f} s/s after clients left"
                assert process.num_threads() <= threads_before + 4
                replies = [reply async for reply in method(request, timeout=60)]
                assert [r.part for r in replies] == list(range(1, 2001))
        finally:
            await server.stop()

    asyncio.run(scenario())


def test_a_level_that_cannot_fit_in_memory_is_refused() -> None:
    with pytest.raises(UsageError, match="lower --concurrency"):
        check_level({"pairs": 1000}, {"folder": "large", "message": "mono"}, 1_000_000)
    check_level({"pairs": 1000}, {"folder": "small", "message": "mono"}, 10)


def test_cli_refuses_a_level_too_big_for_memory_before_running_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import subprocess

    from tests.conftest import GRPCBENCH

    out = tmp_path / "r.json"
    result = subprocess.run(
        [*GRPCBENCH, "run", "--scenario", "watch", "-s", "grpclib", "-c", "100000",
         "--variants", "mono-medium-objects", "--output", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "lower --concurrency" in result.stderr
    assert not out.exists()  # refused while checking the options: nothing ran
    assert "starting" not in result.stderr


@pytest.mark.integration
def test_a_levels_peak_memory_is_its_own(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A fresh server per level (watch's default): the second level's peak RSS in a full
    run agrees with the same level run alone, within 20%."""
    import json
    import subprocess

    from tests.conftest import GRPCBENCH

    def peak(variants: str, *extra: str) -> float:
        out = tmp_path / f"{variants}{len(extra)}.json"
        result = subprocess.run(
            [*GRPCBENCH, "run", "--scenario", "watch", "-s", "grpclib", "-c", "20", "-n", "20",
             "--warmup", "2", "--variants", variants, "--output", str(out), *extra],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        last = json.loads(out.read_text())["levels"][-1]
        assert last["plan"]["variant"] == "mono-small-serialized"
        return float(last["server_usage"]["peak_rss_bytes"])

    full = peak("mono-small-objects,mono-small-serialized")
    alone = peak("mono-small-serialized")
    assert abs(full - alone) / alone < 0.20, (full, alone)


def test_grpclib_only_variants_are_reported_not_available_elsewhere(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json
    import subprocess

    from tests.conftest import GRPCBENCH

    out = tmp_path / "r.json"
    result = subprocess.run(
        [*GRPCBENCH, "run", "--scenario", "watch", "-s", "grpclib", "-s", "grpcio-aio",
         "--variants", "separated-small-two-writes", "-c", "2", "-n", "4", "--warmup", "1",
         "--server-param", "pairs=20", "--output", str(out), "--debug", str(tmp_path / "log")],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    assert [level["server"] for level in data["levels"]] == ["grpclib"]
    # A kind that can run none of the levels is not started only to be stopped.
    log = (tmp_path / "log").read_text()
    assert "server starting: grpclib" in log and "server starting: grpcio-aio" not in log
    assert data["levels"][0]["load"]["statuses"] == {"OK": 4}
    [skipped] = data["unavailable"]
    assert skipped["server"] == "grpcio-aio" and "grpclib" in skipped["message"]
    assert "grpcio-aio: not available on this kind" in result.stdout
