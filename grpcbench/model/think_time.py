"""Think time: what a virtual user does between its calls, not counted as latency.

Locust's ``wait_time`` and k6's ``sleep`` in one setting (``--think-time``):
``100ms`` waits that long after each call (Locust's ``constant``); ``50ms..150ms``
waits a uniform draw in that range (``between``); ``pace:1s`` starts a user's calls
at least that far apart, waiting what the call left of it (``constant_pacing``).
A closed loop's setting: an open loop's calls arrive at its rate, not after a user.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

from grpcbench.base.errors import UsageError
from grpcbench.base.parsing import parse_duration

ThinkKind = Literal["constant", "between", "pacing"]
MAX_THINK_S = 3600.0  # a user that thinks longer than an hour is a mistake


@dataclass(frozen=True)
class ThinkTime:
    kind: ThinkKind
    low_s: float
    high_s: float
    text: str

    def pause(self, call_s: float, draw: random.Random) -> float:
        """Seconds to wait after a call that took ``call_s``."""
        if self.kind == "constant":
            return self.low_s
        if self.kind == "between":
            return draw.uniform(self.low_s, self.high_s)
        return max(0.0, self.low_s - call_s)  # pacing: the rest of the iteration


def parse_think_time(text: str) -> ThinkTime:
    """``100ms``, ``50ms..150ms`` or ``pace:1s``; one clear line otherwise."""
    shown = text.strip()
    try:
        if shown.startswith("pace:"):
            pace = parse_duration(shown[len("pace:") :], "--think-time pace")
            found = ThinkTime("pacing", pace, pace, shown)
        elif ".." in shown:
            low_text, high_text = shown.split("..", 1)
            low = parse_duration(low_text, "--think-time")
            high = parse_duration(high_text, "--think-time")
            if high < low:
                raise UsageError("the range's end is below its start")
            found = ThinkTime("between", low, high, shown)
        else:
            wait = parse_duration(shown, "--think-time")
            found = ThinkTime("constant", wait, wait, shown)
    except UsageError:
        raise UsageError(
            f"bad --think-time {text!r}: 100ms, 50ms..150ms (a range upwards) or pace:1s"
        ) from None
    if found.high_s > MAX_THINK_S or found.high_s <= 0:
        raise UsageError(f"bad --think-time {text!r}: above 0 and at most {MAX_THINK_S:g} s")
    return found
