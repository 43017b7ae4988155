"""Judging one probe: did the server serve the offered rate within the SLO?

A probe passes only when every objective holds on latency counted from the
intended send time, errors stay within budget, the achieved rate is at least
99% of the offered one, and the generator kept its pacer without running
out of CPU. A probe the generator failed is ``generator`` - inconclusive,
never the server's failure. The order of the checks decides the blame:

1. the generator's CPU was saturated: ``generator`` (nothing else is trusted);
2. errors over budget, or an objective broken on the *service* latency (from
   the actual send, which a late generator cannot inflate): ``fail``;
3. an objective broken on the corrected latency (from the intended send) while
   the send lag's p99 is over a tenth of the tightest objective (at least 3 ms):
   ``generator`` - the server answered in time, the generator's lateness broke it.
   Lag that left every objective met does not matter: a contended host's wake-up
   spikes at a trivial rate used to end a tight SLO's search at its first probe.
   With the generator's CPU mostly idle (under ``STALL_SATURATION``) the lateness
   is the host's (its timers woke late), not the generator's capacity, and the
   judgement says so (``host_stalled``);
4. an objective broken on the corrected latency, or under 99% of the offered
   rate achieved (``achieved_rate``): ``fail``; else ``pass``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grpcbench.capacity.search import Outcome
from grpcbench.capacity.slo import Slo
from grpcbench.model.results import LevelResult

ACHIEVED_SHARE = 0.99  # of the offered rate, for a pass
LAG_SHARE = 0.10  # of the tightest objective: the most send lag a pass may have
# Late sends from a generator this idle are the host's stalls, not its limit.
STALL_SATURATION = 0.5
MIN_LAG_LIMIT_US = 3000  # the open loop's timers are whole milliseconds: ~1 ms of lag is normal


@dataclass(frozen=True)
class Judgement:
    outcome: Outcome
    reason: str  # "" for a pass
    # "generator": its sends were late while its CPU was mostly idle (host wake-ups).
    host_stalled: bool = False

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"outcome": self.outcome, "reason": self.reason}
        if self.host_stalled:
            data["host_stalled"] = True
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Judgement:
        outcome: Outcome = data["outcome"]
        return cls(outcome, str(data.get("reason", "")), bool(data.get("host_stalled", False)))


def achieved_rate(level: LevelResult, duration_s: float) -> float:
    """Calls per second the server completed during a probe of ``duration_s``.

    The calls finished in the second half of the pacer's window, over half the
    window (the generator counts them at its middle and its end): a server that keeps
    up completes what is offered, whatever its latency; one that falls behind
    completes its own rate, never more (a rate built from the drain after the window
    less the median latency counted the queueing twice and passed a 200/s server at
    211/s). Never more than the half offered, either: a generator that fell behind in
    the first half and caught up in the second finished more there than its pacer
    offered (10,141/s of 9,630/s), which is the backlog, not a rate the probe asked
    for. Results files from before these counts use that former estimate."""
    load = level.measured
    if not duration_s or level.rate == 0:  # a closed loop, or a count-based level
        return load.rps
    if len(load.window_calls) >= 2:
        middle, end = load.window_calls[:2]
        completed = (end - middle) / (duration_s / 2)
        if len(load.window_calls) == 4:  # what the pacer offered there is known
            return min(completed, offered_rate(level, duration_s))
        return completed
    drain = max(0.0, load.wall_s - duration_s)
    backlog = max(0.0, drain - load.latency.percentile_us(50) / 1e6)
    return load.count / (duration_s + backlog)


def offered_rate(level: LevelResult, duration_s: float) -> float:
    """Calls per second the pacer actually scheduled (a Poisson one varies): in
    the window's second half, where ``achieved_rate`` counts what was completed (a
    Poisson pacer's halves differ by about 1/sqrt(n), which compared with the
    whole window's average failed a 24/s probe that kept up); older files: the
    whole window's."""
    window = level.measured.window_calls
    if duration_s and len(window) == 4:
        return (window[3] - window[2]) / (duration_s / 2)
    return level.measured.count / duration_s if duration_s and level.rate else level.rate


def error_rate(level: LevelResult) -> float:
    count = level.measured.count
    return level.unexpected / count if count else 1.0


def judge(level: LevelResult, slo: Slo, max_error_rate: float, duration_s: float) -> Judgement:
    load = level.measured
    if load.client_saturated:
        return Judgement("generator", f"generator CPU saturated ({load.client_saturation:.0%})")
    errors = error_rate(level)
    if not load.count or errors > max_error_rate:
        return Judgement("fail", f"errors {errors:.2%} > {max_error_rate:.2%}")
    service = load.service_latency or load.latency
    broken = slo.breaches(service)
    if broken:
        return Judgement("fail", "; ".join(broken) + " (service time)")
    broken = slo.breaches(load.latency)
    lag_limit = max(MIN_LAG_LIMIT_US, int(slo.tightest_us * LAG_SHARE))
    lag = load.schedule_lag
    if broken and lag is not None and lag.count and lag.percentile_us(99) > lag_limit:
        late = (
            f"send lag p99 {lag.percentile_us(99) / 1000:.3g} ms > {lag_limit / 1000:.3g} ms"
            f" broke {'; '.join(broken)}"
        )
        if load.client_saturation < STALL_SATURATION:
            return Judgement(
                "generator",
                f"{late}, the generator's CPU {load.client_saturation:.0%} busy: the host"
                " woke its timers late",
                host_stalled=True,
            )
        return Judgement("generator", late)
    if broken:
        return Judgement("fail", "; ".join(broken))
    achieved, offered = achieved_rate(level, duration_s), offered_rate(level, duration_s)
    # One call of grace: the calls in flight at the two counts differ by one now and
    # then, which is 4% of a half second at 24/s.
    grace = 1 / (duration_s / 2) if duration_s else 0.0
    if offered and achieved < ACHIEVED_SHARE * offered - grace:
        return Judgement(
            "fail",
            f"achieved {achieved:,.0f}/s of {offered:,.0f}/s scheduled ({achieved / offered:.1%})",
        )
    return Judgement("pass", "")
