"""Rate schedules: an open-loop level whose rate changes as it runs (``--rate-schedule``).

ghz's ``--load-schedule step|line`` and k6's stages, as one level:

- ``step:start=500,step=500,every=5s,end=5000``: 500/s for 5 s, then 1000/s,
  ... up to 5000/s for its 5 s (10 steps, 50 s); a negative step steps down;
- ``line:start=100,end=5000,over=60s``: from 100/s to 5000/s linearly over 60 s.

The timetable follows the schedule exactly: call n is due when the expected
number of calls so far, the rate's integral, reaches n (uniform arrivals), or
reaches the n-th point of a unit-rate Poisson process (poisson arrivals: an
inhomogeneous Poisson process by time rescaling). Each generator process or
cluster worker runs the same schedule scaled to its share of the rate.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Literal

from grpcbench.base.errors import UsageError
from grpcbench.base.parsing import parse_duration

ScheduleKind = Literal["step", "line"]
EXAMPLES = "step:start=500,step=500,every=5s,end=5000 or line:start=100,end=5000,over=60s"


@dataclass(frozen=True)
class RateSchedule:
    kind: ScheduleKind
    start: float  # calls/s at the start
    end: float  # calls/s at the end (step: the last step's rate)
    step: float = 0.0  # step: the change per step
    every_s: float = 0.0  # step: how long each step lasts
    over_s: float = 0.0  # line: how long the ramp lasts
    text: str = ""  # as given, for tables and the JSON

    @property
    def steps(self) -> int:
        return int(round((self.end - self.start) / self.step)) + 1 if self.kind == "step" else 0

    @property
    def duration_s(self) -> float:
        return self.steps * self.every_s if self.kind == "step" else self.over_s

    @property
    def peak(self) -> float:
        return max(self.start, self.end)

    def rate_at(self, t: float) -> float:
        """The scheduled rate at ``t`` seconds; past the end, the last rate."""
        if self.kind == "step":
            index = min(int(t // self.every_s), self.steps - 1) if t > 0 else 0
            return self.start + index * self.step
        return self.start + (self.end - self.start) * min(max(t, 0.0), self.over_s) / self.over_s

    def expected_calls(self, t: float) -> float:
        """Calls due by ``t`` seconds: the rate's integral (past the end, the last rate)."""
        t = max(t, 0.0)
        if self.kind == "step":
            full = min(int(t // self.every_s), self.steps - 1)
            done = sum(self.start + i * self.step for i in range(full)) * self.every_s
            return done + (self.start + full * self.step) * (t - full * self.every_s)
        slope = (self.end - self.start) / self.over_s
        ramp_t = min(t, self.over_s)
        ramp = self.start * ramp_t + slope * ramp_t**2 / 2
        return ramp + self.end * max(0.0, t - self.over_s)

    def time_of(self, calls: float) -> float:
        """When ``calls`` calls are expected to have been due: the inverse of the rate's
        integral (past the end, the last rate goes on)."""
        if self.kind == "step":
            elapsed = 0.0
            for index in range(self.steps):
                rate = self.start + index * self.step
                in_step = rate * self.every_s
                if calls <= in_step or index == self.steps - 1:
                    return elapsed + calls / rate
                calls -= in_step
                elapsed += self.every_s
            raise AssertionError("unreachable")  # pragma: no cover
        slope = (self.end - self.start) / self.over_s
        ramp = self.start * self.over_s + slope * self.over_s**2 / 2
        if calls > ramp:
            return self.over_s + (calls - ramp) / self.end
        if abs(slope) < 1e-12:
            return calls / self.start
        # start*t + slope*t^2/2 = calls, the root that starts at 0
        return (-self.start + math.sqrt(self.start**2 + 2 * slope * calls)) / slope

    def scaled(self, factor: float) -> RateSchedule:
        """The same schedule at ``factor`` of the rate (a generator's share)."""
        return replace(self, start=self.start * factor, end=self.end * factor,
                       step=self.step * factor)  # fmt: skip

    def describe(self) -> str:
        if self.kind == "step":
            return (
                f"ramp {self.start:g}/s to {self.end:g}/s in {self.steps} steps of"
                f" {self.every_s:g} s"
            )
        return f"ramp {self.start:g}/s to {self.end:g}/s over {self.over_s:g} s"


def schedule_timetable(
    schedule: RateSchedule, arrivals: str, seed: int | None = None
) -> Iterator[float]:
    """Intended send times (seconds from the phase's start) on ``schedule``."""
    rng = random.Random(seed)
    expected = 0.0
    while True:
        yield schedule.time_of(expected)
        expected = expected + 1 if arrivals == "uniform" else expected + rng.expovariate(1.0)


def parse_rate_schedule(text: str) -> RateSchedule:
    """``step:start=500,step=500,every=5s,end=5000`` or ``line:start=100,end=5000,over=60s``."""
    kind, _, body = text.strip().partition(":")
    wanted = {"step": ("start", "step", "every", "end"), "line": ("start", "end", "over")}
    if kind not in wanted:
        raise UsageError(f"bad --rate-schedule {text!r}: step:... or line:..., e.g. {EXAMPLES}")
    fields: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in body.split(","))):
        name, equals, value = part.partition("=")
        if not equals or name not in wanted[kind] or name in fields:
            raise UsageError(
                f"bad --rate-schedule {text!r}: {kind} takes {', '.join(wanted[kind])}"
                f" once each, e.g. {EXAMPLES}"
            )
        fields[name] = value.strip()
    missing = [name for name in wanted[kind] if name not in fields]
    if missing:
        raise UsageError(f"bad --rate-schedule {text!r}: missing {', '.join(missing)}")

    def rate(name: str) -> float:
        try:
            value = float(fields[name].removesuffix("/s"))
        except ValueError:
            raise UsageError(f"bad --rate-schedule {text!r}: {name} must be a number") from None
        if not value > 0 and name != "step":
            raise UsageError(f"bad --rate-schedule {text!r}: {name} must be above 0 calls/s")
        return value

    start, end = rate("start"), rate("end")
    if kind == "line":
        over = parse_duration(fields["over"], "--rate-schedule over")
        if over <= 0:
            raise UsageError(f"bad --rate-schedule {text!r}: over must be longer than 0")
        return RateSchedule("line", start, end, over_s=over, text=text.strip())
    step = rate("step")
    every = parse_duration(fields["every"], "--rate-schedule every")
    if every <= 0:
        raise UsageError(f"bad --rate-schedule {text!r}: every must be longer than 0")
    if step == 0 or (end - start) / step < 0:
        raise UsageError(
            f"bad --rate-schedule {text!r}: step must go from start toward end"
            " (negative to step down)"
        )
    steps = (end - start) / step
    if abs(steps - round(steps)) > 1e-9:
        raise UsageError(f"bad --rate-schedule {text!r}: end must be start plus whole steps")
    return RateSchedule("step", start, end, step=step, every_s=every, text=text.strip())
