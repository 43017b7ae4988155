"""How long a level warms up before it is measured.

``--warmup`` warms a server that has served nothing yet: its first calls pay for
lazy imports, allocations and thread start-up, and a level measured from a cold
start can have a heavier tail. A later level on the same server process (and the same
workload variant) finds it warm: what is new there is only the level's users and
their connections. So such a level discards at most ``WARM_SERVER_CALLS_PER_USER``
calls per user (and never more than ``--warmup`` asked, nor for longer): each user's
first calls, over its new connection, are not measured.

``nox -s warmup`` measures both halves of this, rendered in docs/measurement.md
("What the warm-up buys"). Every level's warm-up is saved with its results.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from grpcbench.base.defaults import WARM_SERVER_CALLS_PER_USER
from grpcbench.model.plan import LevelPlan, LoadSettings

__all__ = ["WARM_SERVER_CALLS_PER_USER", "Warmup", "describe_warmups"]


@dataclass(frozen=True)
class Warmup:
    """A level's warm-up: at most ``requests`` calls (0: no count) and at most
    ``seconds`` (0: no time); both 0 is none."""

    requests: int
    seconds: float

    @classmethod
    def asked(cls, settings: LoadSettings) -> Warmup:
        """``--warmup`` as given: a server's first level."""
        return cls(settings.warmup_requests, settings.warmup_s)

    def on_warm_server(self, plan: LevelPlan) -> Warmup:
        """This warm-up for a level on a server that has served one already: each user's
        first calls only (an open loop's users are its cap on calls in flight)."""
        if not (self.requests or self.seconds):
            return self
        per_users = WARM_SERVER_CALLS_PER_USER * max(plan.concurrency, 1)
        return Warmup(min(self.requests, per_users) if self.requests else per_users, self.seconds)

    def applied_to(self, settings: LoadSettings) -> LoadSettings:
        return replace(settings, warmup_requests=self.requests, warmup_s=self.seconds)

    def describe(self) -> str:
        """ "500 calls", "2 s", "at most 20 calls in 2 s", "none"."""
        if self.requests and self.seconds:
            return f"at most {self.requests} calls in {self.seconds:g} s"
        if self.requests:
            return f"{self.requests} calls"
        return f"{self.seconds:g} s" if self.seconds else "none"

    def to_json(self) -> dict[str, Any]:
        return {"requests": self.requests, "seconds": self.seconds}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Warmup:
        return cls(int(data["requests"]), float(data["seconds"]))


def describe_warmups(asked: Warmup, levels: Iterable[Warmup | None]) -> str:
    """A run's warm-ups in a sentence: "a warm-up of 500 calls", or, when later levels
    on a warm server had less, both (None: a file from before levels saved theirs)."""
    if all(level in (None, asked) for level in levels):
        return f"a warm-up of {asked.describe()}"
    return (
        f"a warm-up of {asked.describe()} on a server's first level and"
        f" {WARM_SERVER_CALLS_PER_USER} calls per user (at most that) on its later ones"
    )
