"""ghz's concurrency schedule, exactly: ``--worker-schedule ghz:start,step,every[,end][,max]``,
which ``--concurrency-schedule step|line`` on a ghz line becomes (``run.ghz_compat``).

ghz changes its number of workers while the rate stays the pacer's: a worker takes
the next due call, so the schedule decides which worker ids the calls carry
(``{{.WorkerID}}``) and how many calls may wait for replies at once. Its own module
because the rules are ghz's (``load.StepWorkerTicker``), odd corners included:
with a max, the count passes ``end`` and then jumps to it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from grpcbench.base.errors import UsageError
from grpcbench.base.parsing import parse_duration

# The shortest step: the load loops look up the window of each call's send time.
MIN_EVERY_S = 0.001


@dataclass(frozen=True)
class WorkerWindow:
    """From ``since_s`` on, workers ``first`` .. ``first + count - 1`` are working:
    ghz stops the oldest workers first, so the working ones are always a run of ids."""

    since_s: float
    first: int
    count: int


@dataclass(frozen=True)
class GhzWorkers:
    """ghz's ``--concurrency-schedule step|line`` (its ``load.StepWorkerTicker``):
    ``start`` workers at once, then every ``every_s`` (line: every second) ``step``
    more, or fewer, the oldest stopped first. Without ``max_s`` the count stops
    changing once it has reached ``end`` (a step may pass it); with ``max_s`` it
    changes until the first step at or after ``max_s``, and then goes to ``end`` when the
    steps have not reached it yet, or holds."""

    start: int
    step: int
    every_s: float
    end: int = 0  # 0: none (ghz's --concurrency-end unset)
    max_s: float = 0.0  # 0: none (ghz's --concurrency-max-duration unset)
    text: str = ""

    def deltas(self) -> Iterator[tuple[float, int]]:
        """(time, change in workers) as ghz's ticker sends them; it ends when ghz's
        would say Done (the count holds from then on), or never, on an open ramp."""
        yield 0.0, self.start
        count, up, tick = self.start, self.step > 0, 0
        while True:
            tick += 1
            at = tick * self.every_s
            # ghz compares time.Since(begin) >= max when its ticker's tick arrives, about
            # ``at`` after begin: at a step due exactly at max it races (measured against
            # ghz v0.120, line, start 20, max 1s: 20 workers held once, 22 once); here
            # that step is not taken.
            if self.max_s and at >= self.max_s - 1e-9:
                reaches_end = self.end and (self.end >= count if up else self.end <= count)
                if reaches_end and self.end != count:
                    yield at, self.end - count
                return
            if not self.max_s and (self.end and count >= self.end if up else count <= self.end):
                return
            count += self.step
            yield at, self.step

    def windows(self) -> Iterator[WorkerWindow]:
        """The working workers over time: created ones minus the oldest stopped."""
        created = stopped = 0
        for at, delta in self.deltas():
            if delta > 0:
                created += delta
            else:
                stopped += min(-delta, created - stopped)
            yield WorkerWindow(at, stopped, created - stopped)

    def check(self) -> None:
        """Refuse a schedule whose steps down leave no worker: ghz would wait for ever."""
        if self.step > 0:
            return
        to_none = math.ceil(self.start / -self.step)  # steps until no worker is left
        if self.max_s:
            taken = math.ceil(self.max_s / self.every_s - 1e-9) - 1
        else:
            taken = max(0, math.ceil((self.start - self.end) / -self.step))
        if taken >= to_none:
            raise UsageError(
                f"--worker-schedule {self.text or self.describe()}: no worker is left at"
                f" {to_none * self.every_s:g} s (ghz would wait for ever): give end, max or a"
                " smaller step"
            )

    def describe(self) -> str:
        text = f"workers from {self.start}, {self.step:+d} every {self.every_s:g} s"
        text += f", to {self.end}" if self.end else ""
        return text + (f", until {self.max_s:g} s" if self.max_s else "")


def parse_worker_schedule(text: str) -> GhzWorkers:
    """``ghz:start=5,step=5,every=5s[,end=50][,max=30s]``, checked as ghz checks it."""
    shape, _, rest = text.strip().partition(":")
    fields: dict[str, str] = {}
    for part in rest.split(","):
        name, equals, value = part.partition("=")
        if not equals or name.strip() in fields:
            fields = {}
            break
        fields[name.strip()] = value.strip()
    if shape != "ghz" or not {"start", "step", "every"} <= set(fields) or not set(fields) <= {
        "start", "step", "every", "end", "max"
    }:  # fmt: skip
        raise UsageError(
            f"bad --worker-schedule {text!r}: ghz:start=N,step=N,every=DURATION"
            "[,end=N][,max=DURATION]"
        )

    def whole(name: str, signed: bool = False) -> int:
        value = fields.get(name, "0")
        digits = value[1:] if signed and value[:1] in "+-" else value
        if not digits.isdecimal() or len(digits) > 9:
            raise UsageError(f"bad --worker-schedule {name} {value!r}: a whole number of workers")
        return int(value)

    start, step, end = whole("start"), whole("step", signed=True), whole("end")
    every = parse_duration(fields["every"], "--worker-schedule every")
    max_s = parse_duration(fields["max"], "--worker-schedule max") if "max" in fields else 0.0
    if start == end:
        raise UsageError("--worker-schedule: start cannot equal end (ghz's check)")
    if step == 0:
        raise UsageError("--worker-schedule: step must not be 0 (ghz's check)")
    if every < MIN_EVERY_S:
        raise UsageError("--worker-schedule: every must be at least 1ms")
    schedule = GhzWorkers(start, step, every, end, max_s, text=text.strip())
    schedule.check()
    return schedule
