"""A level's wire channels with a unary plan: what the callback loops run.

Kept apart from ``load.callback_loops`` so the call sources (``load.calls``)
can make one without importing the loops.
"""

from __future__ import annotations

from collections.abc import Sequence

from grpcbench.contract.calls import UnaryPlan
from grpcbench.wire.channel import WireChannel


class WireUnaryCalls:
    """The channels of a level and the plan: the callback loops run these (the engine
    picks the loops by this type, ``engine.OWN_LOOPS``); never awaited call by call."""

    def __init__(
        self,
        channels: Sequence[WireChannel],
        plan: UnaryPlan,
        per_user: bool,
        least_busy: bool = False,
    ) -> None:
        self.channels = list(channels)
        self.plan = plan
        self.per_user = per_user  # user i always calls on channel i (mod the count)
        self.least_busy = least_busy  # else round-robin per call
