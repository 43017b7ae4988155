"""--threshold: parsing, checking each level, exit 99 with everything saved, the plugin."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grpcbench.base.errors import UsageError
from grpcbench.model.thresholds import EXIT_BREACHED, breaches, parse_threshold
from tests.support.factories import level

pytest_plugins = ["pytester"]
GRPCBENCH = [sys.executable, "-P", "-m", "grpcbench"]


def test_thresholds_parse_and_check_every_figure() -> None:
    fast = level("grpcio", latencies_us=(1000, 2000, 3000, 4000))  # 4 calls in 1 s
    assert parse_threshold("p99<20ms").holds(fast)
    assert not parse_threshold("p50<=1ms").holds(fast)
    assert parse_threshold("avg<2.6ms").holds(fast) and not parse_threshold("max<4ms").holds(fast)
    assert parse_threshold("rps>=4").holds(fast) and not parse_threshold("rps>4").holds(fast)
    failing = level("grpcio", statuses={"OK": 3, "Unavailable": 1})
    assert not parse_threshold("errors<10%").holds(failing)
    assert parse_threshold("errors<=0.25").holds(failing)
    (breach,) = breaches([fast, failing], [parse_threshold("errors<1%")])
    assert breach.level is failing and "errors<1% breached: grpcio" in breach.describe()
    assert "(25.00%)" in breach.describe()
    for bad in ("p98<1ms", "rps=<5", "errors<lots", "p99<soon", "rps>=fast"):
        with pytest.raises(UsageError, match="bad --threshold"):
            parse_threshold(bad)


def test_checks_thresholds_hold_a_share_of_all_checks_or_of_one() -> None:
    """k6's thresholds on checks: the share of all checks that held, or of one named
    check's; a level where no such check ran breaches (its gate was never reached)."""
    from dataclasses import replace

    from grpcbench.model.level_parts import CheckFigures

    base = level("grpcio")
    checked = replace(base, measured=replace(base.measured, checks=(
        CheckFigures("status is OK", 99, 1), CheckFigures("has a name", 60, 40))))  # fmt: skip
    assert parse_threshold("checks{status is OK}>=99%").holds(checked)
    assert not parse_threshold("checks{status is OK}>99%").holds(checked)
    assert not parse_threshold("checks>=80%").holds(checked)  # 159 of 200
    assert parse_threshold("checks>=0.795").holds(checked)
    (breach,) = breaches([checked], [parse_threshold("checks{has a name}>=99%")])
    assert "checks{has a name}>=99% breached: grpcio" in breach.describe()
    assert "(60.00%)" in breach.describe()
    for absent in ("checks>=0%", "checks{status is OK}>=0%", "checks<100%"):
        assert not parse_threshold(absent).holds(base), absent
    (breach,) = breaches([checked], [parse_threshold("checks{gone}>=0%")])
    assert "(no such check ran)" in breach.describe()
    for bad, said in (
        ("p99{x}<1ms", "only checks take a {NAME}"), ("checks{}>=1%", "only checks take"),
        ("checks>=101%", "a share is at most 100%"), ("errors<2", "a share is at most 100%"),
        ("checks>=lots", "checks take 0.1% or 0.001"),
    ):  # fmt: skip
        with pytest.raises(UsageError, match=re.escape(said)):
            parse_threshold(bad)


@pytest.mark.integration
def test_a_breach_is_named_saved_and_exits_99(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    done = subprocess.run(
        [*GRPCBENCH, "run", "-s", "grpcio-aio", "-c", "2", "-n", "200", "--warmup", "20",
         "--threshold", "p99<0.001ms", "--threshold", "errors<1%", "--output", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == EXIT_BREACHED, done.stderr
    assert "threshold p99<0.001ms breached: grpcio-aio at concurrency 2" in done.stdout
    assert "errors<1% breached" not in done.stdout
    data = json.loads(out.read_text())
    assert data["status"] == "complete" and data["options"]["thresholds"] == [
        "p99<0.001ms",
        "errors<1%",
    ]
    shown = subprocess.run([*GRPCBENCH, "show", str(out)], capture_output=True, text=True,
                           check=False)  # fmt: skip
    assert "threshold p99<0.001ms breached" in shown.stdout
    held = subprocess.run(
        [*GRPCBENCH, "run", "-s", "grpcio-aio", "-c", "2", "-n", "200", "--warmup", "20",
         "--threshold", "p99<10s"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert held.returncode == 0 and "breached" not in held.stdout


def test_a_bad_threshold_is_one_line_before_anything_starts() -> None:
    done = subprocess.run([*GRPCBENCH, "run", "--threshold", "p99<soon"], capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 2 and "bad --threshold" in done.stderr
    assert "starting" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.integration
def test_the_plugin_fails_a_test_on_a_breach(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_gate="""
def test_gated(grpcbench_benchmark):
    grpcbench_benchmark("grpcio-aio", concurrency=2, requests=40, warmup=0,
                        thresholds="p99<0.001ms")

def test_held(grpcbench_benchmark):
    grpcbench_benchmark("grpcio-aio", concurrency=2, requests=40, warmup=0,
                        thresholds=["p99<10s", "rps>=1"])
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*threshold p99<0.001ms breached: grpcio-aio at concurrency 2*"])


def test_thresholds_and_slos_share_one_grammar() -> None:
    """One parser (stats.bounds): the same text means the same bound to --threshold and
    to --slo; --slo takes the latency statistics with an upper bound only."""
    from grpcbench.base.errors import UsageError
    from grpcbench.capacity.slo import parse_slo
    from grpcbench.model.thresholds import parse_threshold

    for text in ("p99<=200us", "p95<1m30s", "avg<=5ms", "p99.9<2s", "max<=1s"):
        bound = parse_threshold(text).bound
        (objective,) = parse_slo(text).objectives
        assert (objective.statistic, objective.limit_us, objective.strict) == (
            bound.statistic, bound.limit, bound.op == "<")  # fmt: skip
    for text in ("rps>=5000", "p99>=1ms"):
        parse_threshold(text)
        with pytest.raises(UsageError, match="bad --slo"):
            parse_slo(text)
