"""A level's wire channels with a unary plan: what the callback loops run.

Kept apart from ``load.callback_loops`` so the call sources (``load.calls``)
can make one without importing the loops.
"""

from __future__ import annotations

from collections.abc import Sequence

from grpcbench.contract.calls import UnaryPlan
from grpcbench.wire.channel import WireChannel
from grpcbench.wire.headers import RequestFields


class PreparedMethod:
    """One method's calls on the level's channels: its header blocks and body built
    once when its request is fixed, and its timeout."""

    def __init__(self, plan: UnaryPlan, channels: list[WireChannel], timeout_s: float) -> None:
        self.path = plan.path
        self.timeout_s = plan.timeout_s or timeout_s
        self.next_request = plan.next_request
        self.streaming = plan.method_type != "unary"
        self.sent = len(plan.requests) if plan.method_type in ("client-streaming", "bidi") else 0
        self.fixed = plan.request is not None or self.streaming
        self.blocks: list[RequestFields] = []
        self.body = b""
        if self.fixed:
            requests = (plan.request,) if plan.request is not None else plan.requests
            # every request message framed (gzip-compressed with -e), in one body
            self.body = b"".join(channels[0].frame(request) for request in requests)
            self.blocks = [
                channel.request_fields(plan.path, self.timeout_s, plan.metadata or None)
                for channel in channels
            ]


class WireUnaryCalls:
    """The channels of a level and the plan: the callback loops run these (the engine
    picks the loops by this type, ``engine.OWN_LOOPS``); never awaited call by call."""

    def __init__(
        self,
        channels: Sequence[WireChannel],
        plan: UnaryPlan,
        timeout_s: float,
        per_user: bool,
        least_busy: bool = False,
    ) -> None:
        self.channels = list(channels)
        self.plan = plan
        self.per_user = per_user  # user i always calls on channel i (mod the count)
        self.least_busy = least_busy  # else round-robin per call
        # Built once, before the level's phases: per phase, a 4 x 16 MB stream's body
        # (framed, then joined) took 0.15 s of the measured phase's CPU, counted as
        # its calls' (``nox -s large_messages``). One per method of a mix.
        parts = plan.parts or (plan,)
        self.methods = [PreparedMethod(part, self.channels, timeout_s) for part in parts]
