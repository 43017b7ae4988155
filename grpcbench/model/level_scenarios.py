"""Several scenarios at once (k6's ``scenarios``): one level whose parts each run their
own executor side by side, against the same server, over one common window.

A scenario file's ``[[scenarios]]`` tables name them. Each is one method, with its own
data, metadata, deadline and expected statuses (the keys of a ``[[mix]]`` entry,
parsed there), and one executor: ``concurrency = N`` virtual users in a closed loop
(k6's ``constant-vus``), or ``rate = R`` calls/s in an open loop (k6's
``constant-arrival-rate``), capped at ``max_in_flight``. Here lives only what makes a
part a scenario: its name and executor, and the plan each runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from grpcbench.base.errors import UsageError
from grpcbench.model.plan import LevelPlan

EXECUTOR_KEYS = ("concurrency", "rate", "max_in_flight")


@dataclass(frozen=True)
class LevelScenario:
    """One scenario's executor: ``users`` in a closed loop, or ``rate`` calls/s (at most
    ``max_in_flight`` at once; 0: the run's --max-in-flight)."""

    name: str
    users: int = 0
    rate: float = 0.0
    max_in_flight: int = 0

    def describe(self) -> str:
        """What it runs, as its own level is named: "concurrency 5", "rate 200/s"."""
        return self.plan(LevelPlan(1), self.max_in_flight).describe()

    def plan(self, level: LevelPlan, max_in_flight: int) -> LevelPlan:
        """Its own level: the level's connection strategy, its own executor."""
        if self.rate:
            cap = self.max_in_flight or max_in_flight
            return replace(level, concurrency=cap, rate=self.rate, scenarios=())
        return replace(level, concurrency=self.users, rate=0.0, scenarios=())


def split_executor(table: dict[str, Any], where: str) -> tuple[LevelScenario, dict[str, Any]]:
    """A ``[[scenarios]]`` table's executor, and the rest of it (its call's keys)."""
    name = table.get("name")
    if not isinstance(name, str) or not name.strip() or not name.isprintable():
        raise UsageError(f"{where}: every scenario needs a name (printable text), not {name!r}")
    users = table.get("concurrency")
    rate = table.get("rate")
    cap = table.get("max_in_flight")
    if (users is None) == (rate is None):
        raise UsageError(
            f"{where} ({name}): give its executor, concurrency = N (a closed loop of N"
            " users) or rate = R (R calls/s, an open loop), one of them"
        )
    if users is not None and (isinstance(users, bool) or not isinstance(users, int) or users < 1):
        raise UsageError(f"{where} ({name}): concurrency must be a positive integer, not {users!r}")
    if rate is not None and (
        isinstance(rate, bool)
        or not isinstance(rate, int | float)
        or not math.isfinite(rate)
        or rate <= 0
    ):
        raise UsageError(f"{where} ({name}): rate must be a positive number, not {rate!r}")
    if cap is not None:
        if rate is None:
            raise UsageError(
                f"{where} ({name}): max_in_flight caps an open loop's calls: give rate"
            )
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            raise UsageError(
                f"{where} ({name}): max_in_flight must be a positive integer, not {cap!r}"
            )
    executor = LevelScenario(name, users or 0, float(rate or 0.0), cap or 0)
    rest = {k: v for k, v in table.items() if k not in EXECUTOR_KEYS}
    return executor, rest


def check_names(scenarios: tuple[LevelScenario, ...]) -> None:
    names = [scenario.name for scenario in scenarios]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise UsageError(f"[[scenarios]] names repeat: {repeated[0]!r}")


def level_plan(scenarios: tuple[LevelScenario, ...], connection: str) -> LevelPlan:
    """The one level the scenarios make: its users and caps together, named by them
    (its rate stays 0: the closed loops' calls are not an open loop's)."""
    concurrency = sum(s.users or s.max_in_flight for s in scenarios)
    return LevelPlan(
        max(1, concurrency),
        connection=connection,
        scenarios=tuple(scenario.name for scenario in scenarios),
    )


def describe_parts(mix: list[dict[str, Any]]) -> str:
    """A recorded mix for headers: "mix of Say x8, Expand x1", or, its methods each a
    scenario, "scenarios readers (rate 200/s), writers (concurrency 4)"."""
    if all("executor" in part for part in mix):
        return "scenarios " + ", ".join(f"{part['name']} ({part['executor']})" for part in mix)
    return "mix of " + ", ".join(f"{part['name']} x{part['weight']}" for part in mix)
