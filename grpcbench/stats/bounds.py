"""One grammar for a bound on a measured figure: ``STATISTIC OP LIMIT``.

``p99<20ms``, ``avg<=5ms``, ``max<1s``, ``rps>=5000``, ``errors<0.1%``, and a flow's
checks as k6 writes them: ``checks>=99%`` (the share of every check that held) or
``checks{NAME}>=99%`` (one check's), and any but checks of one of several scenarios
at once, with k6's tag: ``p99{scenario:readers}<10ms``. `run --threshold` takes every
statistic, operator and tag; `capacity --slo` takes the latency statistics with ``<=`` or ``<`` (an
objective is an upper bound).
Durations are Go's (``200us``, ``1m30s``), as ghz writes them. Parsed once, here,
so the two options cannot drift apart. (`compare --fail-on`'s ``rps:-5%`` is
another thing: a limit on a change between two runs, ``report.compare``.)
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from grpcbench.base.errors import UsageError
from grpcbench.base.parsing import parse_duration

if TYPE_CHECKING:  # bounds are parsed with the options, before any histogram exists
    from grpcbench.stats.histogram import LatencySummary

# Latency statistics and the percentile each reads (avg: the mean; max: 100).
LATENCY_STATISTICS: dict[str, float] = {
    "p50": 50.0, "p90": 90.0, "p95": 95.0, "p99": 99.0, "p99.9": 99.9, "avg": 0.0, "max": 100.0,
}  # fmt: skip
SHARES = ("errors", "checks")  # a share of a count: 0.1% or 0.001, at most 100%
STATISTICS = (*LATENCY_STATISTICS, "rps", *SHARES)
NAMED = ("checks",)  # the statistics that take a {NAME}
OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt,
}  # fmt: skip
UPPER = ("<=", "<")
_BOUND = re.compile(r"^\s*([a-z][a-z0-9.]*)(?:\{([^{}]*)\})?\s*(<=|<|>=|>)\s*(\S+)\s*$")


@dataclass(frozen=True)
class Bound:
    """A figure held to a limit: µs for latencies, calls/s for rps, a share for errors
    and checks (of the check ``name``, or of all of them)."""

    statistic: str
    op: str
    limit: float
    typed: str = ""  # as the user wrote it, which messages and results repeat
    name: str | None = None  # checks{NAME}
    scenario: str | None = None  # STATISTIC{scenario:NAME}: one scenario's (k6's tag)

    @property
    def text(self) -> str:
        named = "" if self.name is None else f"{{{self.name}}}"
        named += "" if self.scenario is None else f"{{scenario:{self.scenario}}}"
        shown = show_limit(self.statistic, self.limit)
        return self.typed or f"{self.statistic}{named}{self.op}{shown}"

    def holds(self, value: float) -> bool:
        return OPERATORS[self.op](value, self.limit)


def latency_us(statistic: str, latency: LatencySummary) -> float:
    """A latency statistic of a histogram, in µs."""
    if statistic == "avg":
        return latency.mean_us
    if statistic == "max":
        return float(latency.max_us)
    return float(latency.percentile_us(LATENCY_STATISTICS[statistic]))


def parse_bound(
    text: str,
    option: str,
    statistics: Collection[str] = STATISTICS,
    operators: Collection[str] = tuple(OPERATORS),
    scenario_tags: bool = False,
) -> Bound:
    """One bound, or one clear line naming ``option`` and what it takes (``scenario_tags``:
    whether it takes ``{scenario:NAME}``)."""
    match = _BOUND.match(text)
    statistic, name, op, value = match.groups() if match else ("", None, "", "")
    scenario = None
    if name is not None and name.startswith("scenario:"):
        scenario, name = name.removeprefix("scenario:").strip(), None
        if not scenario_tags or statistic == "checks" or not scenario:
            raise UsageError(
                f"bad {option} {text!r}: {{scenario:NAME}} tags a --threshold's latency, rps or"
                " errors, e.g. p99{scenario:readers}<10ms"
            )
    if statistic not in statistics or op not in operators:
        example = "p99<=10ms" if set(operators) <= set(UPPER) else "p99<20ms, rps>=5000"
        raise UsageError(
            f"bad {option} {text!r}: expected e.g. {example} ({', '.join(statistics)};"
            f" {', '.join(operators)})"
        )
    if name is not None and (statistic not in NAMED or not name.strip()):
        raise UsageError(f"bad {option} {text!r}: only checks take a {{NAME}}, e.g."
                         " checks{status is OK}>=99%")  # fmt: skip
    if statistic == "rps":
        try:
            limit = float(value.removesuffix("/s"))
        except ValueError:
            raise UsageError(f"bad {option} {text!r}: rps takes a number") from None
    elif statistic in SHARES:
        try:
            limit = float(value[:-1]) / 100 if value.endswith("%") else float(value)
        except ValueError:
            raise UsageError(f"bad {option} {text!r}: {statistic} take 0.1% or 0.001") from None
        if math.isfinite(limit) and limit > 1:
            raise UsageError(f"bad {option} {text!r}: a share is at most 100% (1)")
    else:
        limit = max(1.0, round(parse_duration(value, f"{option} {text!r}: its limit") * 1e6))
    if not math.isfinite(limit) or limit < 0:  # nan would always breach, inf never
        raise UsageError(f"bad {option} {text!r}: the limit must be a finite number, not below 0")
    return Bound(statistic, op, limit, text.strip(), name, scenario)


def show_limit(statistic: str, limit: float) -> str:
    """A limit as the grammar writes it (10ms, 1.5s, 5000, 0.1%)."""
    if statistic == "rps":
        return f"{limit:g}"
    if statistic in SHARES:
        return f"{limit * 100:g}%"
    return show_us(limit)


def show_us(us: float) -> str:
    if us >= 1_000_000:
        return f"{us / 1e6:.4g}s"
    if us >= 1000:
        return f"{us / 1000:.4g}ms"
    return f"{us:g}us"
