"""Rate schedules: an open-loop level whose rate changes as it runs (``--rate-schedule``).

ghz's ``--load-schedule step|line`` and k6's stages, as one level:

- ``step:start=500,step=500,every=5s,end=5000``: 500/s for 5 s, then 1000/s,
  ... up to 5000/s for its 5 s (10 steps, 50 s); a negative step steps down;
- ``line:start=100,end=5000,over=60s``: from 100/s to 5000/s linearly over 60 s;
- ``ghz:start=50,step=10,every=5s,end=150``: ghz's own semantics, which a ghz line's
  ``--load-schedule`` becomes (``model.ghz_schedule``).

Every open loop is paced by a ``Pacer`` (ghz's interface): ``ConstantRate`` for
``--rate``; ``StepSchedule``, ``LineSchedule`` or ``GhzSchedule`` for a rate
schedule (a pacer whose rate changes). Its send times (``send_times``) follow the
rate exactly: call n is due when the expected number of calls so far, the rate's
integral, reaches n (uniform arrivals), or reaches the n-th point of a unit-rate
Poisson process (poisson arrivals: an inhomogeneous Poisson process by time
rescaling). Each generator process or cluster worker runs the same schedule scaled
to its share of the rate.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from grpcbench.base.errors import UsageError
from grpcbench.base.parsing import parse_duration
from grpcbench.model.ghz_schedule import GhzSchedule


class Pacer(Protocol):
    """When an open loop's calls are due (ghz's ``Pacer``): a constant rate, or a rate
    schedule. The open loop, its offered-rate figures and a level's name ask a pacer,
    never which kind it is."""

    @property
    def peak(self) -> float:
        """The highest rate, calls/s."""
        ...

    @property
    def duration_s(self) -> float:
        """How long its rate changes; 0 for a constant rate (as long as the level)."""
        ...

    def rate_at(self, t: float) -> float:
        """The rate due at ``t`` seconds, calls/s (past the end, the last rate)."""
        ...

    def expected_calls(self, t: float) -> float:
        """Calls due by ``t`` seconds: the rate's integral (past the end, the last rate)."""
        ...

    def time_of(self, calls: float) -> float:
        """When ``calls`` calls are due: the inverse of ``expected_calls``."""
        ...

    def scaled(self, factor: float) -> Pacer:
        """The same pace at ``factor`` of the rate (a generator's share)."""
        ...

    def describe(self) -> str: ...


@dataclass(frozen=True)
class ConstantRate:
    """``--rate R``: R calls/s for the whole level."""

    rate: float

    @property
    def peak(self) -> float:
        return self.rate

    @property
    def duration_s(self) -> float:
        return 0.0

    def rate_at(self, t: float) -> float:
        return self.rate

    def expected_calls(self, t: float) -> float:
        return self.rate * max(t, 0.0)

    def time_of(self, calls: float) -> float:
        return calls / self.rate

    def scaled(self, factor: float) -> ConstantRate:
        return ConstantRate(self.rate * factor)

    def describe(self) -> str:
        return f"rate {self.rate:g}/s"


@dataclass(frozen=True)
class StepSchedule:
    """``step:start=500,step=500,every=5s,end=5000``: each rate for ``every_s``."""

    start: float  # calls/s of the first step
    end: float  # calls/s of the last step
    step: float  # the change per step (negative: steps down)
    every_s: float  # how long each step lasts
    text: str = ""  # as given, for tables and the JSON

    sets_level_length = True  # the level lasts the ramp

    @property
    def steps(self) -> int:
        return int(round((self.end - self.start) / self.step)) + 1

    @property
    def peak(self) -> float:
        return max(self.start, self.end)

    @property
    def duration_s(self) -> float:
        return self.steps * self.every_s

    def rate_at(self, t: float) -> float:
        index = min(int(t // self.every_s), self.steps - 1) if t > 0 else 0
        return self.start + index * self.step

    def expected_calls(self, t: float) -> float:
        t = max(t, 0.0)
        full = min(int(t // self.every_s), self.steps - 1)
        done = sum(self.start + i * self.step for i in range(full)) * self.every_s
        return done + (self.start + full * self.step) * (t - full * self.every_s)

    def time_of(self, calls: float) -> float:
        elapsed = 0.0
        for index in range(self.steps):
            rate = self.start + index * self.step
            in_step = rate * self.every_s
            if calls <= in_step or index == self.steps - 1:
                return elapsed + calls / rate
            calls -= in_step
            elapsed += self.every_s
        raise AssertionError("unreachable")  # pragma: no cover

    def scaled(self, factor: float) -> StepSchedule:
        return replace(self, start=self.start * factor, end=self.end * factor,
                       step=self.step * factor)  # fmt: skip

    def describe(self) -> str:
        return (
            f"ramp {self.start:g}/s to {self.end:g}/s in {self.steps} steps of {self.every_s:g} s"
        )


@dataclass(frozen=True)
class LineSchedule:
    """``line:start=100,end=5000,over=60s``: from one rate to another, linearly."""

    start: float
    end: float
    over_s: float  # how long the ramp lasts
    text: str = ""

    sets_level_length = True  # the level lasts the ramp

    @property
    def peak(self) -> float:
        return max(self.start, self.end)

    @property
    def duration_s(self) -> float:
        return self.over_s

    @property
    def _slope(self) -> float:
        return (self.end - self.start) / self.over_s

    def rate_at(self, t: float) -> float:
        return self.start + self._slope * min(max(t, 0.0), self.over_s)

    def expected_calls(self, t: float) -> float:
        t = max(t, 0.0)
        ramp_t = min(t, self.over_s)
        ramp = self.start * ramp_t + self._slope * ramp_t**2 / 2
        return ramp + self.end * max(0.0, t - self.over_s)

    def time_of(self, calls: float) -> float:
        slope = self._slope
        ramp = self.start * self.over_s + slope * self.over_s**2 / 2
        if calls > ramp:
            return self.over_s + (calls - ramp) / self.end
        if abs(slope) < 1e-12:
            return calls / self.start
        # start*t + slope*t^2/2 = calls, the root that starts at 0
        return (-self.start + math.sqrt(self.start**2 + 2 * slope * calls)) / slope

    def scaled(self, factor: float) -> LineSchedule:
        return replace(self, start=self.start * factor, end=self.end * factor)

    def describe(self) -> str:
        return f"ramp {self.start:g}/s to {self.end:g}/s over {self.over_s:g} s"


class RateSchedule(Pacer, Protocol):
    """``--rate-schedule``: a pacer whose rate changes as the level runs, as given."""

    @property
    def text(self) -> str:
        """As the user gave it, for tables and the JSON."""
        ...

    def describe(self) -> str:
        """In words, for the run's header ("ramp 500/s to 5000/s in 10 steps of 5 s")."""
        ...

    @property
    def sets_level_length(self) -> bool:
        """The level lasts the schedule (step:, line:); else -n or -z ends it (ghz:)."""
        ...


def mean_rate(pacer: Pacer) -> float:
    """Calls/s offered on average over the pacer's changing part (a constant: its rate)."""
    if not pacer.duration_s:
        return pacer.peak
    return pacer.expected_calls(pacer.duration_s) / pacer.duration_s


def send_times(pacer: Pacer, arrivals: str, seed: int | None = None) -> Iterator[float]:
    """Intended send times (seconds from the phase's start) at ``pacer``'s pace: call n
    is due when n calls are expected (uniform), or at the n-th point of a unit-rate
    Poisson process mapped through the pacer (poisson: time rescaling)."""
    rng = random.Random(seed)
    expected = 0.0
    while True:
        yield pacer.time_of(expected)
        expected = expected + 1 if arrivals == "uniform" else expected + rng.expovariate(1.0)


class ShapeFields:
    """A shape's ``name=value`` fields as given, read with one clear error each."""

    def __init__(self, text: str, values: Mapping[str, str]) -> None:
        self.text = text.strip()
        self.values = values

    def bad(self, problem: str) -> UsageError:
        return UsageError(f"bad --rate-schedule {self.text!r}: {problem}")

    def rate(self, name: str, signed: bool = False) -> float:
        """Calls/s (``500`` or ``500/s``); above 0 unless ``signed`` (a step down)."""
        try:
            value = float(self.values[name].removesuffix("/s"))
        except ValueError:
            raise self.bad(f"{name} must be a number") from None
        if not math.isfinite(value) or (not value > 0 and not signed):
            raise self.bad(f"{name} must be above 0 calls/s")
        return value

    def duration(self, name: str) -> float:
        """A duration longer than 0 (``5s``, ``1m``)."""
        seconds = parse_duration(self.values[name], f"--rate-schedule {name}")
        if seconds <= 0:
            raise self.bad(f"{name} must be longer than 0")
        return seconds


def _step(fields: ShapeFields) -> RateSchedule:
    start, end, step = fields.rate("start"), fields.rate("end"), fields.rate("step", signed=True)
    every = fields.duration("every")
    if step == 0 or (end - start) / step < 0:
        raise fields.bad("step must go from start toward end (negative to step down)")
    steps = (end - start) / step
    if abs(steps - round(steps)) > 1e-9:
        raise fields.bad("end must be start plus whole steps")
    return StepSchedule(start, end, step=step, every_s=every, text=fields.text)


def _ghz(fields: ShapeFields) -> RateSchedule:
    start, step = fields.rate("start"), fields.rate("step", signed=True)
    every = fields.duration("every")
    end = fields.rate("end") if "end" in fields.values else 0.0
    max_s = fields.duration("max") if "max" in fields.values else 0.0
    horizon = fields.duration("horizon") if "horizon" in fields.values else 0.0
    if step == 0:
        raise fields.bad("step must not be 0")
    if end and (end - start) / step < 0:
        raise fields.bad("step must go from start toward end (negative to step down)")
    schedule = GhzSchedule(start, step, every, end, max_s, horizon, text=fields.text)
    if max_s and not end and schedule.hold <= 0:
        raise fields.bad("the rate reaches 0/s before max: give end, a smaller step or max")
    if step < 0 and not (end or max_s):
        raise fields.bad("a step down needs end or max (the rate would reach 0/s)")
    return schedule


def _line(fields: ShapeFields) -> RateSchedule:
    start, end = fields.rate("start"), fields.rate("end")
    return LineSchedule(start, end, over_s=fields.duration("over"), text=fields.text)


@dataclass(frozen=True)
class ScheduleShape:
    """One shape ``--rate-schedule`` takes. Its name, fields and example are all the
    option's parser, help, errors and ghz's refusal message say of it, so a new shape
    is its pacer class plus one entry in ``SHAPES``."""

    name: str
    fields: tuple[str, ...]
    example: str
    build: Callable[[ShapeFields], RateSchedule]
    optional: tuple[str, ...] = ()  # fields that may be left out


SHAPES: dict[str, ScheduleShape] = {
    shape.name: shape
    for shape in (
        ScheduleShape(
            "step", ("start", "step", "every", "end"), "step:start=500,step=500,every=5s,end=5000",
            _step,
        ),
        ScheduleShape("line", ("start", "end", "over"), "line:start=100,end=5000,over=60s", _line),
        ScheduleShape(
            "ghz", ("start", "step", "every", "end", "max", "horizon"),
            "ghz:start=50,step=10,every=5s,end=150", _ghz, optional=("end", "max", "horizon"),
        ),
    )
}  # fmt: skip


def shape_examples() -> str:
    """Every shape's example: "step:... or line:..."."""
    return " or ".join(shape.example for shape in SHAPES.values())


def parse_rate_schedule(text: str) -> RateSchedule:
    """A shape's text (``SHAPES``), e.g. ``step:start=500,step=500,every=5s,end=5000``."""
    name, _, body = text.strip().partition(":")
    shape = SHAPES.get(name)
    if shape is None:
        known = " or ".join(f"{known}:..." for known in SHAPES)
        raise UsageError(f"bad --rate-schedule {text!r}: {known}, e.g. {shape_examples()}")
    values: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in body.split(","))):
        field_name, equals, value = part.partition("=")
        if not equals or field_name not in shape.fields or field_name in values:
            raise UsageError(
                f"bad --rate-schedule {text!r}: {name} takes {', '.join(shape.fields)}"
                f" once each, e.g. {shape.example}"
            )
        values[field_name] = value.strip()
    missing = [
        field_name
        for field_name in shape.fields
        if field_name not in values and field_name not in shape.optional
    ]
    if missing:
        raise UsageError(f"bad --rate-schedule {text!r}: missing {', '.join(missing)}")
    return shape.build(ShapeFields(text, values))
