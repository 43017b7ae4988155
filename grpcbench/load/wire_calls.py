"""A level's wire channels with a unary plan: what the callback loops run.

Kept apart from ``load.callback_loops`` so the call sources (``load.calls``)
can make one without importing the loops.
"""

from __future__ import annotations

from collections.abc import Sequence

from grpcbench.rpc.mix import CURRENT_PART
from grpcbench.services.base import CallStats, UnaryPlan
from grpcbench.wire.channel import WireChannel


class WireUnaryCalls:
    """The channels of a level and the plan: the callback loops run these.

    Also a ``CallFunction`` (awaitable, one call), for code that only knows those."""

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
        self.parts = plan.parts or (plan,)
        self.methods = [
            [channel.unary_unary(part.path) for part in self.parts] for channel in self.channels
        ]
        self.next = 0
        self.position = 0

    async def __call__(self, timeout: float) -> CallStats | None:
        index = self.next
        self.next = (index + 1) % len(self.channels)
        part = 0
        if self.plan.parts:  # a mix: its cycle's next method (rpc.mix)
            cycle = self.plan.cycle
            part = cycle[self.position]
            self.position = (self.position + 1) % len(cycle)
            CURRENT_PART.set(part)
        plan = self.parts[part]
        if plan.kind != "unary":  # the callback loops run a mix's streams, never this
            raise TypeError(f"{plan.path} is a stream: the callback loops run it")
        if plan.request is not None:
            request, metadata = plan.request, plan.metadata
        else:
            assert plan.next_request is not None
            request, metadata = plan.next_request(0)
        await self.methods[index][part](
            request, timeout=plan.timeout_s or timeout, metadata=metadata
        )
        return None
