"""The awaitable API (what flows and user workloads call) leaves no garbage that only the
cyclic GC can free. Each call's stream held its replies' bound methods while the replies
held the stream: a cycle per call, and the collector's passes over them took 13% of a
flow's CPU (py-spy --native, ``nox -s traffic``'s chain)."""

from __future__ import annotations

import asyncio
import gc

from grpcbench.wire.channel import WireChannel
from tests.support.echo_server import echo_pb2, echo_server

CALLS = 200


def test_awaited_calls_of_every_kind_leave_nothing_for_the_cyclic_gc() -> None:
    request = echo_pb2.EchoRequest(message="hi", repeat=3)

    async def calls(channel: WireChannel, count: int) -> None:
        reply = echo_pb2.EchoReply.FromString
        say = channel.unary_unary("/echo.Echo/Say", response_deserializer=reply)
        expand = channel.unary_stream("/echo.Echo/Expand", response_deserializer=reply)
        collect = channel.stream_unary("/echo.Echo/Collect")
        body = request.SerializeToString()
        for _ in range(count):
            assert (await say(body, timeout=5)).message == "hi"
            assert len(await expand(body, timeout=5).collect()) == 3
            assert len([reply async for reply in expand(body, timeout=5)]) == 3
            await collect(iter([body, body]), timeout=5)

    async def main(address: str) -> int:
        channel = WireChannel(address)
        try:
            await calls(channel, 5)  # connected, every code path warm
            gc.collect()
            gc.disable()
            try:
                await calls(channel, CALLS)
                return gc.collect()  # what only the cyclic GC could free
            finally:
                gc.enable()
        finally:
            await channel.close()

    with echo_server() as address:
        unreachable = asyncio.run(main(address))
    assert unreachable < CALLS, f"{unreachable} objects in cycles after {CALLS * 4} calls"
