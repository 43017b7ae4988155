"""Which rate to probe next: exponential steps to the first failure, then bisection.

Pure (no I/O), so the known answers are tested without a server. Outcomes:
``pass`` (the SLO held at that rate), ``fail`` (it did not: the server's
failure) and ``generator`` (the generator could not offer the rate on time:
inconclusive, so the search stops and says the capacity is at least its
last pass, never that the server failed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

Outcome = Literal["pass", "fail", "generator"]
LOWEST_RATE = 1.0  # calls/s: below this the search gives up (the SLO fails at any rate)


def round_rate(rate: float) -> float:
    """Three significant figures: probes at 1234.5678/s and 1234.6/s are the same probe."""
    if rate <= 0:
        return 0.0
    digits = 3 - int(math.floor(math.log10(rate))) - 1
    return round(rate, digits)


# A host that stalls the generator at a low rate (its timers wake late while it idles)
# may let it keep time at a higher one: so many such rates are skipped, going up.
STALLS_SKIPPED = 2

# A first probe that fails is checked once above (at this factor of it, within the
# closed loop's ceiling) before the search walks down: latency is not always monotonic
# in the rate (on a contended host a slow rate waits for wake-ups a busy one does not).
ABOVE_FACTOR = 1.5


@dataclass
class RateSearch:
    """Start at ``start`` (half the closed-loop ceiling), double while it passes (halve
    while it fails), then bisect the bracket until it is within ``precision`` of its
    lower end or ``max_probes`` were spent. A first probe that fails is probed once
    above too; a pass above a failure sets that failure aside (``set_aside``): the
    capacity is above it, and the search goes on from the pass."""

    start: float
    precision: float = 0.05
    max_probes: int = 12
    passed: float | None = None  # highest rate that passed
    failed: float | None = None  # lowest rate that failed (the server's failure)
    generator_limit: float | None = None  # a rate the generator could not offer
    host_stalled: bool = False  # ... because the host stalled it (its CPU mostly idle)
    probes: list[tuple[float, Outcome]] = field(default_factory=list)
    set_aside: list[float] = field(default_factory=list)  # failures below a pass
    # Rates where the host stalled the generator before anything passed: skipped, and
    # probed above, where a busier loop sleeps less (at most STALLS_SKIPPED of them).
    stalled: list[float] = field(default_factory=list)

    def next_rate(self) -> float | None:
        """The next rate to probe, or None when the search is over."""
        if self.generator_limit is not None or len(self.probes) >= self.max_probes:
            return None
        if not self.probes:
            return round_rate(max(self.start, LOWEST_RATE))
        if self.passed is None and self.failed is None:  # only host stalls so far
            return self._above(self.stalled[-1])
        if self.failed is None:  # no failure yet: exponential steps up
            assert self.passed is not None
            return round_rate(self.passed * 2)
        if self.passed is None and len(self.probes) == 1:  # the first probe failed
            above = round_rate(min(self.failed * ABOVE_FACTOR, self.start * 2 * 0.95))
            if above > self.failed:
                return above
        if self.passed is None:  # no pass yet: exponential steps down
            lower = round_rate(self.failed / 2)
            return lower if lower >= LOWEST_RATE else None
        if (self.failed - self.passed) / self.passed <= self.precision:
            return None
        middle = round_rate((self.passed + self.failed) / 2)
        if middle in (self.passed, self.failed):  # rounding cannot split it further
            return None
        return middle

    def record(self, rate: float, outcome: Outcome, host_stalled: bool = False) -> None:
        """``host_stalled``: a ``generator`` outcome whose late sends were the host's."""
        self.probes.append((rate, outcome))
        if outcome == "pass":
            self.passed = rate if self.passed is None else max(self.passed, rate)
            if self.failed is not None and self.failed < self.passed:
                # A failure below a pass is not the capacity: set it aside, and the
                # bracket's top is the lowest failure above the pass, if any.
                self.set_aside.append(self.failed)
                above = [r for r, o in self.probes if o == "fail" and r > self.passed]
                self.failed = min(above) if above else None
        elif outcome == "fail":
            if self.passed is not None and rate < self.passed:
                self.set_aside.append(rate)
            else:
                self.failed = rate if self.failed is None else min(self.failed, rate)
        elif (
            host_stalled and self.passed is None and self.failed is None
            and len(self.stalled) < STALLS_SKIPPED and self._above(rate) is not None
        ):  # fmt: skip
            self.stalled.append(rate)
        else:
            self.generator_limit = rate
            self.host_stalled = host_stalled

    def _above(self, rate: float) -> float | None:
        """Twice ``rate``, within the closed loop's ceiling (``start`` is half of it)."""
        above = round_rate(min(rate * 2, self.start * 2 * 0.95))
        return above if above > rate else None

    @property
    def converged(self) -> bool:
        """The bracket is as narrow as asked (the capacity is known to ``precision``)."""
        if self.passed is None or self.failed is None:
            return False
        return (self.failed - self.passed) / self.passed <= self.precision

    def describe_end(self) -> str:
        """Why the search ended, in a few words (for the table)."""
        if self.generator_limit is not None:
            what = (
                f"the host stalled the generator at {self.generator_limit:g}/s (its sends"
                " late, its CPU mostly idle)"
                if self.host_stalled
                else f"the generator could not offer {self.generator_limit:g}/s"
            )
            if self.passed is None:
                return f"{what} (probe {len(self.probes)}; no rate had passed)"
            return f"{what}: capacity is at least the last pass"
        skipped = f" ({_rates(self.stalled)} skipped: host stalls)" if self.stalled else ""
        if self.passed is None:
            return f"failed at every rate probed{skipped}"
        if self.failed is None:
            return f"passed at every rate probed (up to {self.passed:g}/s){skipped}"
        aside = ""
        if self.set_aside:
            aside += f"; {_rates(self.set_aside)} failed below a pass (set aside)"
        if self.stalled:
            aside += f"; the host stalled the generator at {_rates(self.stalled)} (skipped)"
        if self.converged:
            return f"bracket {self.passed:g}-{self.failed:g}/s within {self.precision:.0%}{aside}"
        return f"bracket {self.passed:g}-{self.failed:g}/s after {len(self.probes)} probes{aside}"


def _rates(rates: list[float]) -> str:
    return ", ".join(f"{rate:g}" for rate in rates) + "/s"
