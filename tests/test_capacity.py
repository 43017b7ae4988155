"""grpcbench capacity: the SLO parser, the search on known answers, the probe's judge,
and whole searches on servers whose capacity is set by construction."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from grpcbench.base.errors import UsageError
from grpcbench.capacity.probe import achieved_rate, judge
from grpcbench.capacity.search import RateSearch
from grpcbench.capacity.slo import parse_slo
from grpcbench.model.plan import LevelPlan
from grpcbench.model.results_file import load_run
from grpcbench.stats.histogram import LatencyRecorder
from tests.support.factories import level
from tests.support.host import STEAL_LIMIT, cpu_hogs, cpu_ticks, steal_share

GRPCBENCH = [sys.executable, "-P", "-m", "grpcbench"]


@pytest.fixture
def hogs() -> Any:
    """The known answers hold beside CPU hogs too: $GRPCBENCH_TEST_HOGS of them (nox -s
    capacity_under_load runs these tests beside 4 on two cores), none by default."""
    with cpu_hogs() as count:
        yield count


def test_slos_parse_and_bad_ones_are_one_line() -> None:
    slo = parse_slo("p50<=2ms, p99<10ms,max<=1s")
    assert [(o.statistic, o.limit_us, o.strict) for o in slo.objectives] == [
        ("p50", 2000, False), ("p99", 10_000, True), ("max", 1_000_000, False),
    ]  # fmt: skip
    assert slo.tightest_us == 2000
    assert parse_slo(slo.text) == slo  # saved as text, read back the same
    for bad in ("p98<=1ms", "p99>=1ms", "p99<=soon", "", "p99<=0ms"):
        with pytest.raises(UsageError, match="bad --slo"):
            parse_slo(bad)


def _search_against(capacity: float, start: float, precision: float = 0.05) -> RateSearch:
    """The search against a server that passes exactly up to ``capacity``."""
    search = RateSearch(start, precision, max_probes=12)
    while (rate := search.next_rate()) is not None:
        search.record(rate, "pass" if rate <= capacity else "fail")
    return search


@pytest.mark.parametrize("capacity", [3.7, 200.0, 1234.0, 48_000.0])
@pytest.mark.parametrize("ceiling", [0.5, 1.0, 3.0])  # the closed-loop estimate, x capacity
def test_the_search_brackets_a_known_capacity_within_its_precision(
    capacity: float, ceiling: float
) -> None:
    search = _search_against(capacity, start=capacity * ceiling / 2)
    assert search.passed is not None and search.failed is not None
    assert search.passed <= capacity < search.failed
    assert search.converged and search.passed >= capacity / 1.05 - 0.01
    assert len(search.probes) <= 10


def test_the_search_stops_at_a_rate_the_generator_cannot_offer() -> None:
    search = RateSearch(100.0)
    search.record(search.next_rate() or 0, "pass")  # 100
    search.record(search.next_rate() or 0, "generator")  # 200: inconclusive
    assert search.next_rate() is None
    assert search.passed == 100 and search.failed is None
    assert "could not offer 200/s" in search.describe_end()


def test_a_host_stall_before_any_pass_is_skipped_going_up() -> None:
    """Late sends from an idle generator at a low rate (host wake-ups) do not end the
    search: it probes twice the rate, within the closed loop's ceiling (2 x start)."""
    search = RateSearch(100.0)
    search.record(search.next_rate() or 0, "generator", host_stalled=True)  # 100: skipped
    assert search.next_rate() == 190  # twice, capped at 95% of the ceiling
    search.record(190, "pass")
    assert search.next_rate() == 380 and search.stalled == [100]
    search.record(380, "fail")
    assert "the host stalled the generator at 100/s (skipped)" in search.describe_end()
    # Stalled at every rate it can reach: it ends, saying so (not "could not offer").
    stalled = RateSearch(100.0)
    stalled.record(stalled.next_rate() or 0, "generator", host_stalled=True)
    stalled.record(stalled.next_rate() or 0, "generator", host_stalled=True)
    assert stalled.next_rate() is None
    assert stalled.describe_end() == (
        "the host stalled the generator at 190/s (its sends late, its CPU mostly idle)"
        " (probe 2; no rate had passed)"
    )


def test_a_server_that_fails_every_rate_has_no_capacity() -> None:
    search = _search_against(0.5, start=64)
    assert search.passed is None and "failed at every rate" in search.describe_end()


def _probe(latency_ms: float, *, rate: float = 100, calls: int = 100, errors: int = 0,
           lag_ms: float = 0, client_cpu_s: float = 0.1):  # type: ignore[no-untyped-def]  # fmt: skip
    from dataclasses import replace

    recorder, lag = LatencyRecorder(), LatencyRecorder()
    for _ in range(calls):
        recorder.record(int(latency_ms * 1000))
        lag.record(int(lag_ms * 1000))
    base = level("grpcio", statuses={"OK": calls - errors, "Unavailable": errors} if errors
                 else {"OK": calls}, client_cpu_s=client_cpu_s)  # fmt: skip
    load = replace(
        base.measured, latency=recorder.summary(), service_latency=recorder.summary(),
        schedule_lag=lag.summary(), rate=rate, wall_s=calls / rate,
    )  # fmt: skip
    return replace(base, measured=load, plan=LevelPlan(1000, rate=rate))


def test_the_judge_blames_the_right_side() -> None:
    slo = parse_slo("p99<=10ms")
    assert judge(_probe(5), slo, 0.001, 1.0).outcome == "pass"
    assert judge(_probe(20), slo, 0.001, 1.0).outcome == "fail"
    errors = judge(_probe(5, errors=5), slo, 0.001, 1.0)
    assert errors.outcome == "fail" and "errors 5.00%" in errors.reason
    # A generator whose CPU ran out: inconclusive, never the server's failure.
    starved = judge(_probe(20, client_cpu_s=1.0), slo, 0.001, 1.0)
    assert starved.outcome == "generator" and "saturated" in starved.reason
    # Late sends that broke the objective while the server answered in time: the
    # generator's failure too; late sends that left it met do not matter.
    late = _probe(5, lag_ms=8)
    recorder = LatencyRecorder()
    for _ in range(100):
        recorder.record(13_000)  # from the intended send: 5 ms of service + 8 ms late
    late = replace(late, measured=replace(late.measured, latency=recorder.summary()))
    judged = judge(late, slo, 0.001, 1.0)
    assert judged.outcome == "generator" and "send lag" in judged.reason
    # Its CPU 10% busy: the host woke its timers late, and the judgement says so; at
    # 70% (busy, though not saturated) the lateness may be its own.
    assert judged.host_stalled and "the host woke its timers late" in judged.reason
    busy = replace(late, measured=replace(late.measured, client_cpu_s=0.7))
    judged = judge(busy, slo, 0.001, 1.0)
    assert judged.outcome == "generator" and not judged.host_stalled
    assert judge(_probe(5, lag_ms=4), slo, 0.001, 1.0).outcome == "pass"
    # Too few calls finished for the rate offered: the server's.
    short = judge(
        replace(_probe(5), measured=replace(_probe(5).measured, wall_s=1.1)), slo, 0.001, 1.0
    )
    # A server that keeps up with a long latency is not slow: the drain is its latency.
    slow_but_keeping_up = replace(_probe(500), measured=replace(_probe(500).measured, wall_s=1.5))
    assert judge(slow_but_keeping_up, parse_slo("p99<=1s"), 0.001, 1.0).outcome == "pass"
    assert short.outcome == "fail" and "of 100/s scheduled" in short.reason


def test_the_achieved_rate_is_what_was_completed_in_the_windows_second_half() -> None:
    """A server behind its offered rate is credited with what it completed, however
    much its latency grew; one that keeps up with a long latency is not penalised."""
    behind = replace(_probe(254), measured=replace(_probe(254).measured, window_calls=(180, 366)))
    assert achieved_rate(behind, 2.0) == 186.0  # (366 - 180) calls in the last second
    keeping_up = replace(
        _probe(900), measured=replace(_probe(900).measured, window_calls=(10, 110))
    )
    assert achieved_rate(keeping_up, 2.0) == 100.0


def test_a_tighter_slo_never_allows_more_than_a_looser_one() -> None:
    """The audit's contended machine: p99<=2s found 180/s and p99<=50ms 191/s. The
    looser one is credited 191/s (those probes pass it too), and both say the two
    searches disagreed; an SLO on another statistic is left alone."""
    from grpcbench.capacity.record import Found
    from grpcbench.run.capacity_runner import CapacitySearch

    assert parse_slo("p99<=50ms").implies(parse_slo("p99<=2s"))
    assert not parse_slo("p99<=2s").implies(parse_slo("p99<=50ms"))
    assert not parse_slo("p50<=1ms").implies(parse_slo("p99<=2s"))
    assert parse_slo("p50<=1ms,p99<=1s").implies(parse_slo("p99<=2s"))
    slos = [parse_slo(t) for t in ("p99<=2s", "p99<=50ms", "p50<=1ms")]
    found = [
        Found("s", "p99<=2s", 180.0, "bracketed", True, False),
        Found("s", "p99<=50ms", 191.0, "bracketed", True, False),
        Found("s", "p50<=1ms", 300.0, "bracketed", True, False),
        Found("other", "p99<=2s", 100.0, "bracketed", True, False),
    ]
    told: list[tuple[str, float | None]] = []
    search = SimpleNamespace(
        settings=SimpleNamespace(slos=slos),
        capacity=SimpleNamespace(found=found),
        export=lambda: None,
        run=SimpleNamespace(events=SimpleNamespace(
            capacity_found=lambda server, slo, rate, confirmed: told.append((slo, rate))
        )),
    )  # fmt: skip
    CapacitySearch._hold_slos_in_order(search, "s")  # type: ignore[arg-type]
    loose, tight, other_statistic, other_server = found
    assert loose.capacity == 191.0 and "disagree" in loose.end and "unreliable" in loose.end
    assert tight.capacity == 191.0 and "p99<=2s's search missed" in tight.end
    assert other_statistic.capacity == 300.0 and other_statistic.end == "bracketed"
    assert other_server.capacity == 100.0
    assert told == [("p99<=2s", 191.0)]


def test_a_backlog_caught_up_is_not_credited_above_what_was_offered() -> None:
    """The generator fell behind in the first half (90 sent of 100 scheduled) and
    caught up in the second (110 finished of 100 scheduled): credited 100/s, the rate
    offered there, not 110/s."""
    base = _probe(5, rate=100, calls=200)
    caught_up = replace(base, measured=replace(base.measured, window_calls=(90, 200, 100, 200)))
    assert achieved_rate(caught_up, 2.0) == 100.0


def test_what_was_achieved_is_held_to_what_was_scheduled_in_the_same_half() -> None:
    """A Poisson pacer scheduled 19 calls in its second half and 29 in its first:
    19 completed there is keeping up, though under 99% of the window's 24/s. One
    call short of the half's schedule is within grace; three short is not."""
    slo = parse_slo("p99<=2s")

    def probe(window: tuple[int, ...]) -> Any:
        base = _probe(25, rate=24, calls=48)
        return replace(base, measured=replace(base.measured, window_calls=window))

    assert judge(probe((29, 48, 29, 48)), slo, 0.001, 2.0).outcome == "pass"
    assert judge(probe((29, 47, 29, 48)), slo, 0.001, 2.0).outcome == "pass"
    short = judge(probe((29, 45, 29, 48)), slo, 0.001, 2.0)
    assert short.outcome == "fail" and "of 19/s scheduled" in short.reason
    # The same counts without the schedule's (an older file): held to 24/s, failed.
    assert judge(probe((29, 48)), slo, 0.001, 2.0).outcome == "fail"


def test_a_missed_confirmation_steps_down_to_a_rate_already_passed() -> None:
    """After a miss at 202/s the loose SLO tries 196/s, which the tight SLO's search
    passed, not 192/s (5% below): a loose SLO never confirms less than a tight one
    on the same server because of where its step down landed."""
    from grpcbench.capacity.probe import Judgement
    from grpcbench.capacity.record import CapacityRecord, CapacitySettings, Probe
    from grpcbench.run.capacity_runner import CapacitySearch

    loose = parse_slo("p99<=2s")
    runner = CapacitySearch.__new__(CapacitySearch)
    runner.settings = CapacitySettings(slos=(loose,))
    runner.capacity = CapacityRecord(runner.settings)
    outcomes = {0: "pass", 1: "pass", 2: "fail", 3: "pass"}
    runner._judge = lambda level, slo: Judgement(outcomes[level], "")  # type: ignore[method-assign]
    record = type("Record", (), {"levels": list(outcomes)})()
    runner._runner = type("Runner", (), {"record": record})()  # type: ignore[assignment]
    probed = [("a", 196.0), ("b", 199.0), ("a", 199.0), ("a", 150.0)]
    for index, (server, rate) in enumerate(probed):
        runner.capacity.probes.append(Probe(index, server, "search", rate))
    # 199/s failed on server a (b is another server), 150/s is out of the 5% step.
    assert runner._below("a", loose, 202.0) == 196.0
    assert runner._below("a", loose, 196.0) == round(196 * 0.95)
    assert runner._below("c", loose, 202.0) == 192.0


def test_a_rate_confirmed_under_a_tight_slo_is_confirmed_under_the_loose_one() -> None:
    """The loose SLO confirmed 192/s after stepping down from its own knee; the tight
    SLO, confirming after it, filled 196/s with three passes that pass the loose SLO
    too, so the loose SLO's confirmed rate rises to 196/s. A rate above the loose
    search's capacity, one with a miss, or another server's is not credited."""
    from grpcbench.capacity.probe import Judgement
    from grpcbench.capacity.record import CapacityRecord, CapacitySettings, Found, Probe
    from grpcbench.model.events import NullEvents
    from grpcbench.run.capacity_runner import CapacitySearch

    loose, tight = parse_slo("p99<=2s"), parse_slo("p99<=25ms")
    runner = CapacitySearch.__new__(CapacitySearch)
    runner.settings = CapacitySettings(slos=(loose, tight), confirmations=3)
    runner.capacity = CapacityRecord(runner.settings)
    runner.export = lambda: None  # type: ignore[method-assign]
    runner._runner = SimpleNamespace(events=NullEvents())  # type: ignore[assignment]
    runner._confirmations = {
        ("a", 210.0): [0, 1, 2],  # above the loose search's capacity
        ("a", 199.0): [3, 4, 5],  # its last run missed both SLOs
        ("a", 196.0): [6, 7, 8],
        ("a", 192.0): [9, 10, 11],
        ("b", 200.0): [12, 13, 14],  # another server
    }
    for (server, rate), levels in runner._confirmations.items():
        for index in levels or []:
            outcome = "fail" if index == 5 else "pass"
            verdicts = {slo.text: Judgement(outcome, "") for slo in (loose, tight)}
            runner.capacity.probes.append(Probe(index, server, "confirm", rate, verdicts))

    def found(slo: str, capacity: float, confirmed: float | None) -> Found:
        return Found("a", slo, capacity, "", True, False, confirmed)

    runner.capacity.found = [found(loose.text, 202.0, 192.0), found(tight.text, 196.0, 196.0)]
    runner._credit_shared_confirmations("a")
    assert [f.confirmed for f in runner.capacity.found] == [196.0, 196.0]
    runner.capacity.found = [found(loose.text, 202.0, None)]  # none of its own confirmed
    runner._credit_shared_confirmations("b")
    assert runner.capacity.found[0].confirmed is None
    runner._credit_shared_confirmations("a")
    assert runner.capacity.found[0].confirmed == 196.0


@pytest.mark.parametrize(
    ("stalled", "retried"),
    [
        (500.0, True),  # half the closed loop's 1000/s: measured again, and it passes
        (875.0, False),  # past 75% of it: a miss there bounds the search at once
    ],
)
def test_a_miss_far_below_the_closed_loop_is_measured_again(stalled: float, retried: bool) -> None:
    """A server that served 1000/s closed-loop and keeps p99 up to 900/s, but stalls
    once, in its first probe at ``stalled``: below 75% of the estimate that one stall
    must not cap the search (grpcio-aio+uvloop found 3,500/s where it serves 6,500)."""
    from types import SimpleNamespace

    from grpcbench.capacity.probe import Judgement
    from grpcbench.capacity.record import CapacityRecord, CapacitySettings, Probe
    from grpcbench.model.events import NullEvents
    from grpcbench.run.capacity_runner import CapacitySearch

    slo = parse_slo("p99<=10ms")
    runner = CapacitySearch.__new__(CapacitySearch)
    runner.settings = CapacitySettings(slos=(slo,))
    runner.capacity = CapacityRecord(runner.settings)
    levels: list[SimpleNamespace] = []

    async def no_wait(*_: object, **__: object) -> None:
        return None

    runner._runner = SimpleNamespace(  # type: ignore[assignment]
        record=SimpleNamespace(levels=levels), preflight=no_wait,
        events=NullEvents(),
    )  # fmt: skip
    runner.open_plan = runner.ceiling_plan = LevelPlan(50, 0, 0.0)

    async def probe(target: object, plan: LevelPlan, phase: str, repeat: int = 0) -> int:
        rate = plan.rate or 0.0
        stall = rate == stalled and not any(lv.rate == rate for lv in levels)
        load = SimpleNamespace(count=1000, wall_s=1.0)
        levels.append(SimpleNamespace(rate=rate, measured=load, unexpected=0, stall=stall))
        runner.capacity.probes.append(Probe(len(levels) - 1, "s", phase, rate))  # type: ignore[arg-type]
        return len(levels) - 1

    def judge(level: SimpleNamespace, _: object) -> Judgement:
        return Judgement("fail" if level.stall or level.rate > 900 else "pass", "")

    runner._settle = no_wait  # type: ignore[method-assign]
    runner._probe = probe  # type: ignore[method-assign]
    runner._judge = judge  # type: ignore[method-assign]
    runner.export = lambda: None  # type: ignore[method-assign]
    target = SimpleNamespace(label="s", address="", pid=None)
    import asyncio

    search = asyncio.run(runner._search(target))[slo.text]  # type: ignore[arg-type]
    probes_at = [lv.rate for lv in levels].count(stalled)
    assert probes_at == (2 if retried else 1)
    assert search.passed is not None
    assert (search.passed > stalled) == retried


def _capacity(tmp_path: Path, *argv: str) -> tuple[subprocess.CompletedProcess[str], dict]:  # type: ignore[type-arg]
    out = tmp_path / "capacity.json"
    done = subprocess.run(
        [*GRPCBENCH, "capacity", *argv, "--output", str(out), "--probe-duration", "2s",
         "--probe-warmup", "500ms", "--sample-interval", "off"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    return done, json.loads(out.read_text()) if out.exists() else {}


@pytest.mark.integration
def test_capacity_of_a_server_with_a_known_ceiling(tmp_path: Path, hogs: int) -> None:
    """hello with a 20 ms handler on 4 workers serves at most 200 calls/s: on a uniform
    pacer a loose SLO finds it, confirmed on fresh servers; and the results file
    is an ordinary one that show and report read. The found rate may sit one bracket
    (--precision 5%) below the first failing rate, and one confirmation step (5%)
    below that: 188 with the bracket 188-194/s is a correct answer on a busy machine.
    On a host whose 20 ms sleeps run long (a VM with CPU steal: 24 ms at p50), the
    ceiling is lower: it is measured first, as 4 calls always in flight serve it."""
    ceiling = min(200.0, _served_by_four_in_flight(tmp_path))
    done, data = _capacity(
        tmp_path, "-s", "grpcio:workers=4", "--server-param", "delay_ms=20", "-c", "20",
        "--slo", "p99<=2s", "--repeat", "2",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (found,) = data["capacity"]["found"]
    assert ceiling * 0.95 * 0.95 <= found["capacity"] <= 210, (found, ceiling)
    assert found["converged"] and not found["generator_limited"]
    probes = data["capacity"]["probes"]
    assert [p["phase"] for p in probes[:2]] == ["ceiling", "search"]
    assert sum(p["phase"] == "search" for p in probes) <= 10
    # Confirmed on fresh servers, one at a time; a rate's first miss ends its
    # confirmations and steps down, at most 5% (the search's rate sits on the knee: fresh
    # servers pass it only sometimes).
    confirms = [p for p in probes if p["phase"] == "confirm"]
    rates = list(dict.fromkeys(p["rate"] for p in confirms))
    assert rates[0] == found["capacity"] and len(rates) <= 3
    assert all(later < earlier for earlier, later in zip(rates, rates[1:], strict=False))
    for rate in rates[:-1]:  # left after a miss, which was its last run
        outcomes = [p["judgements"]["p99<=2s"]["outcome"] for p in confirms if p["rate"] == rate]
        assert 1 <= len(outcomes) <= 2 and outcomes[-1] != "pass" and "fail" not in outcomes[:-1]
    last = [p["judgements"]["p99<=2s"]["outcome"] for p in confirms if p["rate"] == rates[-1]]
    assert last == ["pass", "pass"] if found["confirmed"] is not None else 1 <= len(last) <= 2
    if found["confirmed"] is not None:
        assert found["confirmed"] == rates[-1] >= 0.9 * found["capacity"]
        at = [p for p in confirms if p["rate"] == rates[-1]]
        assert all(p["judgements"]["p99<=2s"]["outcome"] == "pass" for p in at)
    assert "capacity under p99<=2s" in done.stdout and "probes of grpcio:workers=4" in done.stdout
    results = tmp_path / "capacity.json"
    assert len(load_run(results).levels) == len(probes)
    # What each open-loop probe achieved is what the server completed: never above its
    # physical ceiling (a 235/s probe reported 211/s on this 200/s server), counted by
    # the generator in the second half of the pacer's window.
    for probe in load_run(results).levels:
        if probe.rate:
            # finished by the middle and the end; scheduled before the middle and the end
            assert len(probe.measured.window_calls) == 4
            # a uniform pacer: rate x 2 s scheduled, half of it before the middle
            assert abs(probe.measured.window_calls[3] - probe.rate * 2) <= 2
            assert abs(probe.measured.window_calls[2] - probe.rate) <= 2
            assert achieved_rate(probe, 2.0) <= 200 * 1.04, (
                probe.rate,
                probe.measured.window_calls,
            )
    shown = subprocess.run([*GRPCBENCH, "show", str(results)], capture_output=True, text=True,
                           check=False)  # fmt: skip
    assert shown.returncode == 0 and "capacity under p99<=2s" in shown.stdout
    compared = subprocess.run(
        [*GRPCBENCH, "compare", str(results), str(results), "--fail-on", "capacity:-5%"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    assert "p99<=2s - grpcio:workers=4: Capacity" in compared.stdout and "= 1.00" in compared.stdout
    pytest.importorskip("matplotlib")
    report = subprocess.run([*GRPCBENCH, "report", str(results), "--svg", str(tmp_path)],
                            capture_output=True, text=True, check=False)  # fmt: skip
    assert report.returncode == 0, report.stderr
    assert "capacity (p99&lt;=2s)" in (tmp_path / "capacity.svg").read_text()


def _served_by_four_in_flight(tmp_path: Path) -> float:
    """Calls/s of the 4-worker, 20 ms server with 4 calls always in flight: each worker
    always busy, so its ceiling on this host (less a round trip per call)."""
    out = tmp_path / "ceiling.json"
    done = subprocess.run(
        [*GRPCBENCH, "run", "-s", "grpcio:workers=4", "--server-param", "delay_ms=20",
         "-c", "4", "-n", "400", "--warmup", "20", "--output", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (level,) = json.loads(out.read_text())["levels"]
    return sum(level["load"]["statuses"].values()) / float(level["load"]["wall_s"])


def _unless_the_host_took_it(since: tuple[int, int], failure: str) -> None:
    """Skip, naming the steal, when the host took over ``STEAL_LIMIT`` of the CPUs'
    time while a few-ms SLO was searched (tests/support/host.py); else fail."""
    stolen = steal_share(since)
    if stolen > STEAL_LIMIT:
        pytest.skip(f"the host (hypervisor) took {stolen:.1%} of the CPUs' time during the"
                    f" search, so the few-ms SLO measured the host: {failure}")  # fmt: skip
    pytest.fail(f"{failure} (host steal {stolen:.1%})")


# Beside CPU hogs the tight SLO is issue 41's: a server sharing its core with two hogs
# wakes its handlers late (p99 30-47 ms for a 20 ms sleep, measured), so handler + 5 ms
# plus an idle sleep's lateness is met at no rate; 50 ms is, below the ceiling.
TIGHT_BESIDE_HOGS_MS = 50


def _tight_slo_ms(handler_ms: float = 20.0, hogs: int = 0) -> int:
    """A tight p99 for a handler that sleeps ``handler_ms``: 5 ms above it, plus the
    99th percentile of this host's own oversleep. A virtual machine's vCPU is now and
    then descheduled for several ms (seen: a 20 ms sleep's p99 8 ms late on an idle
    host), and then no server meets a p99 of handler + 5 ms at any rate: a search's
    "none" there is the true answer, not the one this test is about."""
    import math
    import time

    if hogs:
        return TIGHT_BESIDE_HOGS_MS

    late = []
    for _ in range(150):
        started = time.perf_counter()
        time.sleep(handler_ms / 1000)
        late.append((time.perf_counter() - started) * 1000 - handler_ms)
    late.sort()
    return max(25, math.ceil(handler_ms + 5 + late[int(len(late) * 0.99)]))


@pytest.mark.integration
def test_a_tight_slo_finds_less_on_a_random_pacer(tmp_path: Path, hogs: int) -> None:
    """Poisson arrivals queue now and then even below the ceiling, so p99 <= 25 ms on a
    20 ms handler (more on a host that oversleeps: ``_tight_slo_ms``) holds only well
    below 200/s; both SLOs share the probes they can."""
    tight = f"p99<={_tight_slo_ms(hogs=hogs)}ms"
    since = cpu_ticks()
    done, data = _capacity(
        tmp_path, "-s", "grpcio:workers=4", "--server-param", "delay_ms=20", "-c", "20",
        "--slo", "p99<=2s", "--slo", tight, "--arrivals", "poisson", "--repeat", "0",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = {f["slo"]: f["capacity"] for f in data["capacity"]["found"]}
    if found[tight] is None or found["p99<=2s"] is None:
        _unless_the_host_took_it(since, f"no capacity found: {found}")
    assert found[tight] < 0.8 * found["p99<=2s"]
    # Each SLO searches within its own --max-probes; a probe both can use is shared
    # (judged for both), so the two searches together take fewer than twice that.
    search = [p for p in data["capacity"]["probes"] if p["phase"] == "search"]
    limit = data["capacity"]["settings"]["max_probes"]
    assert len(search) < 2 * limit
    assert any(len(p["judgements"]) == 2 for p in search)


@pytest.mark.integration
def test_a_tight_slo_is_lower_and_steady_across_three_fresh_servers(
    tmp_path: Path, hogs: int
) -> None:
    """p99 <= 25 ms on a 20 ms handler (more on a host that oversleeps:
    ``_tight_slo_ms``), on a uniform pacer: at most the loose SLO's capacity (well
    under it on a random pacer: the test above), and its confirmations on 3 fresh
    servers agree (achieved rate's cv under 3%). Uniform, because a Poisson
    pacer's own count of calls varies by about 1/sqrt(n)."""
    from grpcbench.capacity.record import CapacityRecord, Confirmed

    tight_slo = f"p99<={_tight_slo_ms(hogs=hogs)}ms"
    since = cpu_ticks()
    done, data = _capacity(
        tmp_path, "-s", "grpcio:workers=4", "--server-param", "delay_ms=20", "-c", "20",
        "--slo", "p99<=2s", "--slo", tight_slo, "--repeat", "3",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = CapacityRecord.from_json(data["capacity"])
    run = load_run(tmp_path / "capacity.json")
    found = {f.slo: f for f in record.found}
    tight, loose = found[tight_slo], found["p99<=2s"]
    if tight.capacity is None or loose.capacity is None:
        _unless_the_host_took_it(since, f"no capacity found: {tight}, {loose}")
    assert tight.capacity is not None and loose.capacity is not None
    stalled = [
        probe["rate"] for probe in data["capacity"]["probes"]
        if probe["phase"] == "confirm"
        and probe["judgements"].get(tight_slo, {}).get("host_stalled")
    ]  # fmt: skip
    if tight.confirmed is None and stalled:
        # The run's own diagnosis (capacity.probe): the generator, mostly idle, sent late
        # because the host woke its timers late; the few-ms SLO measured the host. (CI on
        # cbfe468: its confirmations at 189/s and 184/s, so 194/s stayed unconfirmed.)
        pytest.skip(f"the host stalled the generator's timers in {tight_slo}'s confirmations"
                    f" at {stalled} req/s: {tight}")  # fmt: skip
    assert tight.reported <= loose.reported
    confirmed = Confirmed.of(
        record.confirmations(run, tight), record.settings.probe_duration_s, parse_slo(tight.slo)
    )
    assert confirmed is not None and 1 <= confirmed.runs <= 3
    assert confirmed.cv < 0.03, confirmed
    assert [name for name, _, _ in confirmed.objectives] == ["p99"]
    if tight.confirmed is not None:
        assert confirmed.runs == confirmed.passed == 3


@pytest.mark.integration
def test_the_error_budget_caps_the_capacity(tmp_path: Path) -> None:
    """A server that refuses calls beyond 150/s: the latency SLO alone would pass far
    above it; the error budget stops the search there."""
    done, data = _capacity(
        tmp_path, "--service", "tests.support.services:RATE_LIMITED", "-s", "grpcio:workers=4",
        "--server-param", "limit_rps=150", "-c", "4", "--slo", "p99<=1s",
        "--max-error-rate", "0.01", "--repeat", "0",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (found,) = data["capacity"]["found"]
    assert 135 <= found["capacity"] <= 160, found
    reasons = [j["reason"] for p in data["capacity"]["probes"]
               for j in p["judgements"].values() if j["outcome"] == "fail"]  # fmt: skip
    assert reasons and all("errors" in reason for reason in reasons)


@pytest.mark.integration
def test_every_probe_runs_on_the_generator_processes_asked_for(tmp_path: Path) -> None:
    """--client-processes drives every probe (a fast server's capacity needs more than
    one generator process where there are cores for them), and the processes' figures
    merge into one probe: the known 150/s limit is found as with one process."""
    done, data = _capacity(
        tmp_path, "--service", "tests.support.services:RATE_LIMITED", "-s", "grpcio:workers=4",
        "--server-param", "limit_rps=150", "-c", "4", "--slo", "p99<=1s",
        "--max-error-rate", "0.01", "--repeat", "0", "--client-processes", "2",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (found,) = data["capacity"]["found"]
    assert 135 <= found["capacity"] <= 160, found
    levels = data["levels"]
    assert levels and all(level["load"]["processes"] == 2 for level in levels)


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--slo", "p99<=soon"], "bad --slo"),
        (["--slo", "p99<=1s", "--precision", "150%"], "bad --precision"),
        (["--slo", "p99<=1s", "--rate", "100"], "No such option"),
        (["--slo", "p99<=1s", "--load", "builtin,ghz"], "one driver"),
        (["-c", "2"], "Missing option '--slo'"),
    ],
)
def test_bad_capacity_options_are_one_line(argv: list[str], fragment: str) -> None:
    done = subprocess.run([*GRPCBENCH, "capacity", *argv], capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert fragment in done.stderr and "Traceback" not in done.stderr


def test_the_chart_tells_an_unconfirmed_capacity_from_a_confirmed_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A confirmed capacity is a filled star; an unconfirmed one a hollow star whose
    legend says so (they looked the same)."""
    from grpcbench.capacity.record import CapacityRecord
    from grpcbench.report import capacity_chart
    from grpcbench.report.chart_kit import pyplot

    figures: list[Any] = []
    monkeypatch.setattr(
        capacity_chart, "finish_chart", lambda plt, figure, *_: figures.append(figure)
    )
    results = Path(__file__).resolve().parents[1] / "docs" / "results" / "capacity.json"
    run = load_run(results)
    record = CapacityRecord.from_json(run.capacity or {})
    first = record.found[0]
    record.found[0] = replace(first, confirmed=None)
    capacity_chart.capacity_chart(pyplot(), run, record)
    (axes,) = figures[0].axes
    stars = {line.get_label(): line for line in axes.get_lines() if line.get_marker() == "*"}
    hollow = f"{first.server} capacity ({first.slo}): {first.capacity:,.0f}/s (unconfirmed)"
    assert stars[hollow].get_markerfacecolor() == "none"
    filled = [line for label, line in stars.items() if label != hollow]
    assert filled and all(line.get_markerfacecolor() != "none" for line in filled)
    assert all("(unconfirmed)" not in label for label in stars if label != hollow)


def test_a_failure_below_a_pass_is_set_aside_and_the_search_goes_up() -> None:
    """Latency is not monotonic in the rate on a contended host: 93/s failed a tight
    SLO (wake-up latency) where 185-190/s passed. A first probe that fails is probed
    once above; a pass there sets the failure aside and the search climbs on."""
    capacity, noisy = 190.0, (93.0, 47.0)  # passes up to 190/s, except these slow rates
    search = RateSearch(93.0)
    while (rate := search.next_rate()) is not None:
        search.record(rate, "pass" if rate <= capacity and rate not in noisy else "fail")
    assert search.passed is not None and search.failed is not None
    assert search.passed <= capacity < search.failed and search.passed >= capacity / 1.05
    assert search.set_aside == [93.0] and "failed below a pass (set aside)" in search.describe_end()


def test_a_first_failure_confirmed_above_walks_down_as_before() -> None:
    search = RateSearch(100.0)
    search.record(search.next_rate() or 0, "fail")  # 100
    assert search.next_rate() == 150  # once above, within the closed loop's ceiling
    search.record(150, "fail")
    assert search.next_rate() == 50 and not search.set_aside
