"""A level's wire channels with a unary plan: what the callback loops run.

Kept apart from ``load.callback_loops`` so the call sources (``load.calls``)
can make one without importing the loops.
"""

from __future__ import annotations

from collections.abc import Sequence

from grpcbench.services.base import CallStats, Metadata, UnaryPlan
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
        self.methods = [channel.unary_unary(plan.path) for channel in self.channels]
        self.next = 0

    async def __call__(self, timeout: float) -> CallStats | None:
        index = self.next
        self.next = (index + 1) % len(self.channels)
        request, metadata = self._request(0)
        await self.methods[index](request, timeout=timeout, metadata=metadata)
        return None

    def _request(self, user: int) -> tuple[bytes, Metadata]:
        plan = self.plan
        if plan.request is not None:
            return plan.request, plan.metadata
        assert plan.next_request is not None
        return plan.next_request(user)
