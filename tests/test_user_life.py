"""A user's life (--workload module:Class): each virtual user is an instance, its
on_start before its first flow and its on_stop after its last, with state its flows
read and write (Locust's on_start/on_stop), counted at the recording echo."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import REPO, run_grpcbench
from tests.support.logging_echo import EchoLog, logging_echo

PROTO = str(REPO / "examples" / "echo" / "echo.proto")
USERS = """
import asyncio
import itertools
import os

_numbers = itertools.count()


class Shopper:
    async def on_start(self, client):
        await asyncio.sleep(0.2)  # a slow log-in: not in any flow's latency
        said = await client.unary(
            "echo.Echo/Say", {"message": f"login {os.getpid()}-{next(_numbers)}"}, name="login"
        )
        self.session = said.message.split()[1]  # the user's state, from a reply
        self.flows = 0

    async def flow(self, client):
        self.flows += 1
        await client.unary("echo.Echo/Say", {"message": f"buy {self.session} {self.flows}"})

    async def on_stop(self, client):
        await client.unary(
            "echo.Echo/Say", {"message": f"logout {self.session} {self.flows}"}, name="logout"
        )


class Locked:
    async def on_start(self, client):
        await client.unary("echo.Echo/Say", {"message": "fail"}, name="login")

    async def flow(self, client):
        await client.unary("echo.Echo/Say", {"message": "buy"})


class Lazy:
    async def on_start(self, client):
        pass
"""


@pytest.fixture
def users(tmp_path: Path) -> Path:
    (tmp_path / "users.py").write_text(USERS)
    return tmp_path


def _run(address: str, where: Path, name: str, *args: str) -> dict:
    out = where / "r.json"
    done = run_grpcbench(
        "run", address, "--insecure", "--workload", f"users:{name}", "--proto", PROTO,
        "--warmup", "0", "--output", str(out), *args, cwd=where, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (level,) = json.loads(out.read_text())["levels"]
    return dict(level["load"])


def said_by_verb(log: EchoLog) -> dict[str, list[list[str]]]:
    """What the server was told, by verb: each message's words after the verb."""
    said: dict[str, list[list[str]]] = {}
    for request in log.requests("Say").elements():
        verb, *words = request[2:].decode().split()
        said.setdefault(verb, []).append(words)
    return said


@pytest.mark.integration
@pytest.mark.parametrize(
    ("stack", "extra", "users_count"),
    [
        ("wire", ["-c", "3"], 3),
        ("grpcio", ["-c", "3"], 3),
        ("wire", ["-c", "4", "--client-processes", "2"], 4),
        ("wire", ["-c", "3", "--connections", "per-user"], 3),
    ],
)
def test_each_user_logs_in_once_keeps_its_state_and_logs_out_with_it(
    users: Path, stack: str, extra: list[str], users_count: int
) -> None:
    with logging_echo() as (address, log):
        load = _run(address, users, "Shopper", "-n", "30", "--client-stack", stack, *extra)
        said = said_by_verb(log)
    # the pre-flight run is one whole life of its own: a session with one flow
    sessions = [session for (session,) in said["login"]]
    assert len(sessions) == len(set(sessions)) == users_count + 1
    bought = Counter(session for session, _ in said["buy"])
    assert sum(bought.values()) == 31 and set(bought) <= set(sessions)
    for session, flows in bought.items():  # each user's count of flows is its own state
        numbers = sorted(int(n) for s, n in said["buy"] if s == session)
        assert numbers == list(range(1, flows + 1))
    assert sorted(said["logout"]) == sorted([s, str(bought[s])] for s in sessions)
    steps = {step["name"]: step["statuses"] for step in load["steps"]}
    assert steps == {
        "login": {"OK": users_count}, "echo.Echo/Say": {"OK": 30},
        "logout": {"OK": users_count},
    }  # fmt: skip
    assert load["statuses"] == {"OK": 30}  # the flows, not the log-ins
    assert load["latency"]["max_us"] < 150_000  # the 0.2 s log-in is in no flow's latency


@pytest.mark.integration
def test_in_an_open_loop_each_arrival_is_a_whole_life(users: Path) -> None:
    with logging_echo() as (address, log):
        load = _run(address, users, "Shopper", "--rate", "50", "-n", "10")
        said = said_by_verb(log)
    assert len(said["login"]) == len(said["logout"]) == len(said["buy"]) == 11
    assert all(number == "1" for _, number in said["buy"])
    assert load["statuses"] == {"OK": 10}


@pytest.mark.integration
def test_a_failed_start_is_that_turn_s_status_and_the_user_starts_again(users: Path) -> None:
    with logging_echo() as (address, log):
        load = _run(address, users, "Locked", "-c", "1", "-n", "10",
                    "--expect-status", "NotFound")  # fmt: skip
        said = said_by_verb(log)
    assert "buy" not in said and len(said["fail"]) == 11  # the pre-flight's, then 10 turns
    assert load["statuses"] == {"NotFound": 10}
    assert {step["name"]: step["statuses"] for step in load["steps"]} == {"login": {"NotFound": 10}}


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("Lazy", "is a class: give it `async def flow(self, client)`"),
    ],
)
def test_a_class_that_cannot_be_a_user_is_one_line(users: Path, name: str, fragment: str) -> None:
    done = run_grpcbench(
        "run", "127.0.0.1:1", "--insecure", "--workload", f"users:{name}", "--proto", PROTO,
        "--dry-run", cwd=users,
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert fragment in done.stderr


@pytest.mark.integration
def test_users_start_again_in_the_measured_phase_and_only_its_steps_count(users: Path) -> None:
    with logging_echo() as (address, log):
        load = _run(address, users, "Shopper", "-c", "2", "-n", "10", "--warmup", "6")
        said = said_by_verb(log)
    assert len(said["login"]) == len(said["logout"]) == 2 + 2 + 1  # warm-up, measured, pre-flight
    assert {step["name"]: step["statuses"] for step in load["steps"]}["login"] == {"OK": 2}
