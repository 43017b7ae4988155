"""paginate-vs-stream (seed 000): real SQLite data, every record exactly once, in order."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import time
from pathlib import Path

import grpc
import psutil
import pytest

from grpcbench.contract.calls import WorkloadError
from grpcbench.load.builtin import BuiltinDriver
from grpcbench.proto import users_pb2
from grpcbench.servers.launcher import start_server
from grpcbench.servers.spec import parse_server_spec
from grpcbench.services.users import build_database, prepare
from grpcbench.services.users_workload import _Checker
from tests.conftest import GRPCBENCH
from tests.support.factories import make_spec

KINDS = ("grpcio:workers=4", "grpclib", "grpclib+uvloop", "grpcio-aio", "grpcio-aio+uvloop")


def _matches(db: Path, keyword: str) -> int:
    with sqlite3.connect(db) as connection:
        query = "SELECT COUNT(1) FROM users WHERE name LIKE ?"
        return int(connection.execute(query, (f"%{keyword}%",)).fetchone()[0])


@pytest.fixture(scope="module")
def small_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    workdir = tmp_path_factory.mktemp("users")
    return Path(prepare({"users": 3000}, workdir)["db_path"])


def test_generated_names_match_like_the_seed(tmp_path: Path) -> None:
    db = tmp_path / "u.sqlite"
    build_database(db, 20_000)
    assert _matches(db, "ff") / 20_000 == pytest.approx(18081 / 110_000, abs=0.03)
    assert _matches(db, "e") / 20_000 > 0.7
    assert prepare({"users": 20_000}, tmp_path)["db_path"] == str(tmp_path / "users-20000.sqlite")


def test_checker_rejects_repeats_gaps_and_foreign_records() -> None:
    user = users_pb2.User
    checker = _Checker("ff")
    checker.add([user(id=9, name="xffx"), user(id=5, name="ffaa")])
    checker.finish(2)
    with pytest.raises(WorkloadError, match="repeated or out of order"):
        _Checker("ff").add([user(id=5, name="ff"), user(id=5, name="ff")])
    with pytest.raises(WorkloadError, match="does not match"):
        _Checker("ff").add([user(id=5, name="abc")])
    with pytest.raises(WorkloadError, match="received 1 users, the server counted 2"):
        one = _Checker("ff")
        one.add([user(id=5, name="ff")])
        one.finish(2)


@pytest.mark.integration
@pytest.mark.parametrize("kind", KINDS)
def test_every_mode_returns_every_match_once(kind: str, small_db: Path) -> None:
    expected = _matches(small_db, "ff")
    pages = -(-expected // 100)
    variants = [
        {"mode": "paginate"},
        {"mode": "stream", "fetch_concurrency": 1},
        {"mode": "stream", "fetch_concurrency": 10},
    ]

    async def scenario() -> None:
        server = await start_server(parse_server_spec(kind), "users", {"db_path": str(small_db)})
        try:
            for params in variants:
                spec = make_spec(
                    target=server.address, service="users", concurrency=2, requests=4,
                    workload_params={"keyword": "ff", "page_size": 100, **params},
                )  # fmt: skip
                result = await BuiltinDriver().run(spec, lambda *_: None)
                assert result.statuses == {"OK": 4}, params
                stream = result.stream
                assert stream is not None and stream.calls == 4
                assert stream.items == 4 * expected
                assert stream.messages == 4 * pages
                assert 0 < stream.first_message.max_us <= result.latency.max_us
        finally:
            await server.stop()

    asyncio.run(scenario())


@pytest.mark.integration
@pytest.mark.parametrize("kind", ("grpcio:workers=4", "grpclib", "grpcio-aio"))
def test_client_leaving_mid_stream_stops_the_server_work(kind: str, tmp_path: Path) -> None:
    """Twenty streams abandoned after one page of ~1600: the server must stop fetching."""
    db = Path(prepare({"users": 20_000}, tmp_path)["db_path"])

    async def scenario() -> None:
        server = await start_server(parse_server_spec(kind), "users", {"db_path": str(db)})
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                method = channel.unary_stream(
                    "/users.Users/StreamUsers",
                    request_serializer=users_pb2.StreamUsersRequest.SerializeToString,
                    response_deserializer=users_pb2.StreamUsersResponse.FromString,
                )
                request = users_pb2.StreamUsersRequest(
                    keyword="e", page_size=10, fetch_concurrency=4
                )
                for _ in range(20):
                    call = method(request, timeout=30)
                    async for _reply in call:
                        break
                    call.cancel()
                await asyncio.sleep(1.0)  # let the server notice and wind down
                process = psutil.Process(server.pid)
                before = sum(process.cpu_times()[:2])
                time.sleep(1.0)
                busy = sum(process.cpu_times()[:2]) - before
                assert busy < 0.3, f"server still busy {busy:.2f} s/s after clients left"
                # And it still serves.
                finished = [reply async for reply in method(request, timeout=60)]
                assert sum(len(reply.users) for reply in finished) == finished[0].total
        finally:
            await server.stop()

    asyncio.run(scenario())


@pytest.mark.integration
def test_cli_runs_the_scenario_with_its_variants(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    scenario = tmp_path / "pvs.toml"
    source = Path(__file__).resolve().parents[1] / "scenarios" / "paginate-vs-stream.toml"
    scenario.write_text(source.read_text().replace("users = 110000", "users = 5000"))
    result = subprocess.run(
        [*GRPCBENCH, "run", "--scenario", str(scenario), "-s", "grpclib", "-n", "2",
         "--variants", "paginate,stream-fetch-10", "--output", str(out)],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    levels = json.loads(out.read_text())["levels"]
    assert [lv["plan"]["variant"] for lv in levels] == ["paginate", "stream-fetch-10"]
    assert levels[0]["load"]["stream"]["items"] == levels[1]["load"]["stream"]["items"] > 0
    assert "paginate-vs-stream - concurrency 1, stream-fetch-10" in result.stdout
    assert "First message p50" in result.stdout and "Items/sec" in result.stdout


@pytest.mark.integration
def test_db_delay_lets_fetch_concurrency_overlap_the_waits(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """50 ms per query, 16 pages: paginate waits for each page in turn; a stream that
    fetches 10 pages at once overlaps the waits, even with the server on one core."""
    import json
    import subprocess

    from tests.conftest import GRPCBENCH

    out = tmp_path / "r.json"
    result = subprocess.run(
        [*GRPCBENCH, "run", "--scenario", "paginate-vs-stream", "-s", "grpclib",
         "--server-param", "users=2000", "--server-param", "db_delay_ms=50",
         "--workload-param", "page_size=100", "--workload-param", "keyword=a", "-n", "2",
         "--warmup", "0", "--variants", "paginate,stream-fetch-10", "--output", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    mean_ms = {
        lv["plan"]["variant"]: lv["load"]["latency"]["total_us"] / 2 / 1000 for lv in data["levels"]
    }
    pages = 1 + 1550 // 100  # ~77% of 2000 names hold an "a"
    assert mean_ms["paginate"] >= 50 * pages * 0.8
    assert mean_ms["stream-fetch-10"] < mean_ms["paginate"] / 2
    assert any(
        line.startswith("grpclib [builtin]: paginate / stream-fetch-10") for line in data["summary"]
    )
