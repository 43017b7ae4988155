"""ghz's own rate schedule, exactly: ``--rate-schedule ghz:start,step,every[,end][,max]``,
which ``--load-schedule step|line`` on a ghz line becomes (``run.ghz_compat``).

Its own module because ghz's semantics differ from ``step:`` and ``line:``
(``model.schedule``): the rate changes then holds, and the schedule does not set
the level's length; -n or -z does, as in ghz.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class GhzSchedule:
    """ghz's ``--load-schedule step|line`` exactly (ghz's ``load.StepPacer``): the rate
    starts at ``start`` and changes by ``step`` every ``every_s`` (line: every second,
    by the slope), then holds: at ``end`` once a step would pass it, or from ``max_s``
    at the rate reached. With neither it keeps changing. Unlike ``step:`` and
    ``line:``, the schedule does not set the level's length: -n or -z does, as in ghz;
    ``horizon_s`` (when the level is expected to end) bounds an open ramp's peak."""

    start: float
    step: float
    every_s: float
    end: float = 0.0  # 0: none (ghz's --load-end unset)
    max_s: float = 0.0  # 0: none (ghz's --load-max-duration unset)
    horizon_s: float = 0.0  # the level's expected length, for an open ramp's peak
    text: str = ""

    sets_level_length = False

    @property
    def const_at(self) -> float:
        """When the rate stops changing (0: never)."""
        if self.max_s:
            return self.max_s
        if not self.end:
            return 0.0
        # The first step boundary whose rate passes ``end`` (ghz's initialize()).
        steps = (self.end - self.start) / self.step
        return (math.floor(steps + 1e-9) + 1) * self.every_s

    @property
    def hold(self) -> float:
        """The rate from ``const_at`` on."""
        if self.end:
            return self.end
        return self.start + self.step * math.floor(self.max_s / self.every_s + 1e-9)

    def _ramp_rate(self, index: int) -> float:
        return self.start + self.step * index

    def _ramp_calls(self, index: int) -> float:
        """Calls due in the ramp's first ``index`` whole steps."""
        return self.every_s * (index * self.start + self.step * index * (index - 1) / 2)

    @property
    def peak(self) -> float:
        horizon = self.const_at or self.horizon_s
        last = self._ramp_rate(max(0, math.ceil(horizon / self.every_s) - 1)) if horizon else 0.0
        rates = [self.start, last] + ([self.hold] if self.const_at else [])
        return max(rates)

    @property
    def duration_s(self) -> float:
        return self.const_at or self.horizon_s

    def rate_at(self, t: float) -> float:
        if self.const_at and t >= self.const_at:
            return self.hold
        return max(0.0, self._ramp_rate(int(max(t, 0.0) // self.every_s)))

    def expected_calls(self, t: float) -> float:
        t = max(t, 0.0)
        const_at = self.const_at
        ramp_t = min(t, const_at) if const_at else t
        index = int(ramp_t // self.every_s)
        calls = self._ramp_calls(index) + self._ramp_rate(index) * (ramp_t - index * self.every_s)
        if const_at and t > const_at:
            calls += self.hold * (t - const_at)
        return calls

    def time_of(self, calls: float) -> float:
        const_at = self.const_at
        if const_at:
            ramp = self.expected_calls(const_at)
            if calls >= ramp:
                return const_at + (calls - ramp) / self.hold
        # The whole steps before ``calls``: the root of _ramp_calls(n) = calls, then
        # corrected by one either way for rounding.
        a, b = self.step * self.every_s / 2, self.every_s * (self.start - self.step / 2)
        if abs(a) < 1e-12:
            index = int(calls // (self.every_s * self.start))
        else:
            root = b * b + 4 * a * calls
            index = int((-b + math.sqrt(max(root, 0.0))) / (2 * a)) if root >= 0 else 0
        index = max(index, 0)
        while index > 0 and self._ramp_calls(index) > calls:
            index -= 1
        while self._ramp_calls(index + 1) <= calls and self._ramp_rate(index) > 0:
            index += 1
        rate = self._ramp_rate(index)
        if rate <= 0:
            return math.inf
        return index * self.every_s + (calls - self._ramp_calls(index)) / rate

    def scaled(self, factor: float) -> GhzSchedule:
        return replace(self, start=self.start * factor, step=self.step * factor,
                       end=self.end * factor)  # fmt: skip

    def describe(self) -> str:
        change = f"{self.step:+g}/s every {self.every_s:g} s"
        then = f" to {self.hold:g}/s, then held" if self.const_at else ""
        return f"ghz ramp from {self.start:g}/s, {change}{then}"
