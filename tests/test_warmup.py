"""A level's warm-up (``model.warmup``): the whole --warmup before a server's first
level, each user's first calls on a later one; counted at a recording server and saved
with each level."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grpcbench.model.plan import LevelPlan, LoadSettings
from grpcbench.model.warmup import WARM_SERVER_CALLS_PER_USER, Warmup, describe_warmups
from tests.conftest import REPO, run_grpcbench
from tests.support.logging_echo import logging_echo

PROTO = str(REPO / "examples" / "echo" / "echo.proto")


@given(
    requests=st.integers(0, 10_000),
    seconds=st.sampled_from([0.0, 0.5, 2.0]),
    users=st.integers(1, 2_000),
)
def test_a_warm_server_s_warm_up_is_each_user_s_first_calls_never_more_than_asked(
    requests: int, seconds: float, users: int
) -> None:
    asked = Warmup(requests, seconds)
    warm = asked.on_warm_server(LevelPlan(concurrency=users))
    if not (requests or seconds):
        assert warm == asked  # none stays none
        return
    per_users = WARM_SERVER_CALLS_PER_USER * users
    assert warm.requests == (min(requests, per_users) if requests else per_users)
    assert warm.seconds == seconds  # a time given still bounds it
    applied = warm.applied_to(LoadSettings())
    assert (applied.warmup_requests, applied.warmup_s) == (warm.requests, warm.seconds)
    assert Warmup.from_json(json.loads(json.dumps(warm.to_json()))) == warm


def test_the_run_s_sentence_names_the_rule_only_where_a_level_used_it() -> None:
    asked = Warmup(500, 0.0)
    assert describe_warmups(asked, [asked, None, asked]) == "a warm-up of 500 calls"
    both = describe_warmups(asked, [asked, Warmup(20, 0.0)])
    assert both.startswith("a warm-up of 500 calls on a server's first level and 2 calls per user")
    assert describe_warmups(Warmup(0, 2.0), []) == "a warm-up of 2 s"
    assert Warmup(20, 2.0).describe() == "at most 20 calls in 2 s"
    assert Warmup(0, 0.0).describe() == "none"


def _run(tmp_path: Path, *args: str) -> list[dict]:
    out = tmp_path / "r.json"
    done = run_grpcbench("run", *args, "--output", str(out))
    assert done.returncode == 0, done.stderr
    return list(json.loads(out.read_text())["levels"])


@pytest.mark.integration
def test_the_server_sees_the_whole_warm_up_first_then_each_user_s_first_calls(
    tmp_path: Path,
) -> None:
    """Three levels on one running server: 50 warm-up calls, then 2 per user (5 users:
    10), then 50 again where 2 per user (40 users: 80) would be more than asked."""
    with logging_echo() as (address, log):
        levels = _run(
            tmp_path, "--target", address, "--insecure", "--proto", PROTO,
            "--call", "echo.Echo/Say", "-d", '{"message": "w"}',
            "-c", "2,5,40", "-n", "100", "--warmup", "50",
        )  # fmt: skip
        said = sum(log.requests("Say").values())
    assert [level["warmup"] for level in levels] == [
        {"requests": 50, "seconds": 0.0},
        {"requests": 10, "seconds": 0.0},
        {"requests": 50, "seconds": 0.0},
    ]
    assert [sum(level["load"]["statuses"].values()) for level in levels] == [100, 100, 100]
    assert said == 1 + (50 + 100) + (10 + 100) + (50 + 100)  # 1: the pre-flight call


@pytest.mark.integration
def test_a_fresh_server_per_level_has_the_whole_warm_up_every_level(tmp_path: Path) -> None:
    asked = ("-s", "grpclib", "-c", "2,10", "-n", "200", "--warmup", "0.2s")
    fresh = _run(tmp_path, *asked, "--server-per-level")
    assert [level["warmup"] for level in fresh] == [{"requests": 0, "seconds": 0.2}] * 2
    same = _run(tmp_path, *asked)
    assert [level["warmup"] for level in same] == [
        {"requests": 0, "seconds": 0.2},
        {"requests": 20, "seconds": 0.2},  # each user's first 2 calls, in 0.2 s at most
    ]


@pytest.mark.integration
def test_every_driver_of_a_level_has_the_level_s_warm_up(tmp_path: Path) -> None:
    """Two drivers at each level: the second runs on a server the first just warmed, but
    the level's warm-up is the level's, so they compare alike."""
    levels = _run(
        tmp_path, "-s", "grpclib", "-c", "2,10", "-n", "100", "--warmup", "50",
        "--load", "builtin,fake",
    )  # fmt: skip
    assert [(level["load"]["driver"], level["warmup"]["requests"]) for level in levels] == [
        ("builtin", 50), ("fake", 50), ("builtin", 20), ("fake", 20),
    ]  # fmt: skip
