"""Mixes, feeders and flows on Dask workers (--cluster local:2), counted at the server."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import REPO, run_grpcbench
from tests.support.logging_echo import logging_echo

pytest.importorskip("distributed")
PROTO = str(REPO / "examples" / "echo" / "echo.proto")
FLOW = """
async def chain(client):
    said = await client.unary("echo.Echo/Say", {"message": "create"}, name="create")
    await client.unary("echo.Echo/Say", {"message": said.message + "/read"}, name="read")
    client.check("created", said.message == "create")
    async with client.conversation("echo.Echo/Chat", name="talk") as talk:
        await talk.send({"message": said.message})
        back = await talk.receive()
        await talk.send({"message": back.message + "/again"})
"""


def _level(tmp_path: Path, address: str, *args: str) -> dict:
    out = tmp_path / "r.json"
    done = run_grpcbench(
        "run", "--target", address, "--insecure", "--cluster", "local:2", "--proto", PROTO,
        "--warmup", "0",
        "--output", str(out), *args, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (level,) = json.loads(out.read_text())["levels"]
    assert level["load"]["driver"] == "dask" and len(level["load"]["workers"]) == 2
    return level["load"]


@pytest.mark.integration
def test_a_mix_a_feeder_and_a_flow_on_two_dask_workers(tmp_path: Path) -> None:
    (tmp_path / "flows.py").write_text(FLOW)
    (tmp_path / "r.jsonl").write_text("".join(f'{{"message": "m{n}"}}\n' for n in range(30)))
    with logging_echo() as (address, log):
        mix = _level(
            tmp_path, address, "--call", "echo.Echo/Say:3", "--call", "echo.Echo/Expand:1",
            "-d", '{"message": "hi"}', "-c", "4", "-n", "400",
        )  # fmt: skip
        seen_mix = log.methods()
    with logging_echo() as (address, log):
        feed = _level(
            tmp_path, address, "--call", "echo.Echo/Say", "-D", "r.jsonl", "--feed", "once",
            "-c", "2", "-n", "1000",
        )  # fmt: skip
        seen_feed = Counter(request[2:].decode() for request in log.requests("Say").elements())
    with logging_echo() as (address, log):
        flow = _level(tmp_path, address, "--workload", "flows:chain", "-c", "4", "-n", "100")
        seen_flow = Counter(request[2:].decode() for request in log.requests("Say").elements())
        chats = [[request[2:].decode() for request in chat] for chat in log.chats]
    # Each worker keeps its own cycle: the level is within one call per worker of 3:1.
    methods = {m["name"]: sum(m["statuses"].values()) for m in mix["methods"]}
    assert sum(methods.values()) == 400 and abs(methods["echo.Echo/Say"] - 300) <= 2
    assert seen_mix["Say"] == methods["echo.Echo/Say"] + 1  # and one pre-flight call
    # once: every line once over both workers (the pre-flight call sent the first again)
    assert seen_feed == Counter({f"m{n}": 1 for n in range(30)}) + Counter({"m0": 1})
    assert feed["statuses"] == {"OK": 30}
    # a flow's steps, merged over the workers; each read names its create's reply
    assert {s["name"]: s["statuses"] for s in flow["steps"]} == {
        "create": {"OK": 100}, "read": {"OK": 100}, "talk": {"OK": 100},
    }  # fmt: skip
    assert seen_flow == {"create": 101, "create/read": 101}
    assert flow["checks"] == [{"name": "created", "passed": 100, "failed": 0}]  # merged
    assert chats == [["create", "create/again"]] * 101  # each second message from a reply


@pytest.mark.integration
def test_users_with_a_life_on_two_dask_workers(tmp_path: Path) -> None:
    """--workload module:Class on Dask: each worker's users log in once and keep their
    state; the log-ins and log-outs are steps, merged over the workers."""
    from tests.test_user_life import USERS, said_by_verb

    (tmp_path / "users.py").write_text(USERS)
    with logging_echo() as (address, log):
        load = _level(tmp_path, address, "--workload", "users:Shopper", "-c", "4", "-n", "40")
        said = {verb: len(words) for verb, words in said_by_verb(log).items()}
    assert said == {"login": 4 + 1, "buy": 40 + 1, "logout": 4 + 1}  # + the pre-flight's life
    assert {s["name"]: s["statuses"] for s in load["steps"]} == {
        "login": {"OK": 4}, "echo.Echo/Say": {"OK": 40}, "logout": {"OK": 4},
    }  # fmt: skip


@pytest.mark.integration
def test_a_flow_s_feeder_on_two_dask_workers_takes_each_worker_s_own_rows(tmp_path: Path) -> None:
    (tmp_path / "flows.py").write_text(
        "async def fed(client):\n"
        "    await client.unary('echo.Echo/Say', client.row('names.jsonl'), name='say')\n"
    )
    (tmp_path / "names.jsonl").write_text("".join(f'{{"message": "m{n}"}}\n' for n in range(10)))
    with logging_echo() as (address, log):
        load = _level(tmp_path, address, "--workload", "flows:fed", "-c", "2", "-n", "40")
        seen = Counter(request[2:].decode() for request in log.requests("Say").elements())
    # worker i of 2 takes lines i, i+2, ...: every line comes, each about as often
    assert set(seen) == {f"m{n}" for n in range(10)} and seen.total() == 41
    assert max(seen.values()) - min(seen.values()) <= 3
    assert load["steps"][0]["statuses"] == {"OK": 40}


@pytest.mark.integration
def test_think_time_on_two_dask_workers(tmp_path: Path) -> None:
    """--think-time reaches the workers' users: 2 users (one per worker), 20 calls each
    a 50 ms pause after the last, so the level lasts at least 10 pauses; no pause is
    in any call's latency."""
    with logging_echo() as (address, log):
        load = _level(tmp_path, address, "--call", "echo.Echo/Say", "-d", '{"message": "m"}',
                      "-c", "2", "-n", "20", "--think-time", "50ms")  # fmt: skip
        arrivals = sorted(log.arrivals[1:])  # the pre-flight call first
    assert load["statuses"] == {"OK": 20} and len(arrivals) == 20
    assert load["wall_s"] >= 9 * 0.05
    assert load["latency"]["max_us"] < 50_000
    assert arrivals[-1] - arrivals[0] >= 9 * 0.05
