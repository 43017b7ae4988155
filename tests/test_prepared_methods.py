"""A level's fixed requests are framed once, before its phases: the warm-up's and the
measured phase's ``CallIssuer`` share them (built per phase, a 4 x 16 MB stream's body
was 0.15 s of the measured phase's CPU, counted as its calls')."""

from __future__ import annotations

import asyncio
from typing import Any

from grpcbench.contract.calls import UnaryPlan
from grpcbench.load.wire_calls import WireUnaryCalls
from grpcbench.load.wire_issuer import CallIssuer


class CountingChannel:
    """The two things preparing a method asks a channel for, counted."""

    def __init__(self) -> None:
        self.framed = 0

    def frame(self, message: bytes) -> bytes:
        self.framed += 1
        return len(message).to_bytes(5, "big") + message

    def request_fields(self, path: str, timeout_s: float, metadata: Any) -> tuple[str, float]:
        return (path, timeout_s)


def test_the_warm_up_and_the_measured_phase_share_one_framing() -> None:
    channel = CountingChannel()
    plan = UnaryPlan(path="/p/M", method_type="client-streaming", requests=(b"a", b"bc"))
    calls = WireUnaryCalls([channel], plan, 20.0, per_user=False)  # type: ignore[list-item]
    assert channel.framed == 2  # each message once, as the level is set up

    async def two_phases() -> tuple[CallIssuer, CallIssuer]:
        return (CallIssuer(calls, lambda _: None, lambda _: None),
                CallIssuer(calls, lambda _: None, lambda _: None))  # fmt: skip

    warm_up, measured = asyncio.run(two_phases())
    assert channel.framed == 2
    assert warm_up.methods is measured.methods
    assert measured.method.body == b"\x00\x00\x00\x00\x01a\x00\x00\x00\x00\x02bc"
    assert measured.method.blocks == [("/p/M", 20.0)]
