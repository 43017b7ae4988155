"""ghz's channel flags on grpcbench's own transport: --authority, -e (gzip requests),
--keepalive, --max-recv-message-size and --max-send-message-size, seen on the wire
by a scripted HTTP/2 server; and end to end on a real server, both client stacks."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import subprocess
from collections import Counter
from pathlib import Path

import grpc
import pytest

from grpcbench.base.parsing import parse_size
from grpcbench.rpc.client_options import ClientOptions
from grpcbench.wire import frames
from grpcbench.wire.channel import WireChannel
from tests.conftest import GRPCBENCH
from tests.support.raw_h2 import Peer, raw_server

SAY = "/echo.Echo/Say"


def test_sizes_read_as_ghz_reads_them() -> None:
    assert parse_size("4194304", "x") == 4194304
    assert parse_size("42 MB", "x") == 42_000_000
    assert parse_size("4MiB", "x") == 4 * 2**20
    assert parse_size("1.5kb", "x") == 1500


async def _one(channel: WireChannel, body: bytes = b"x") -> str:
    try:
        await channel.unary_unary(SAY)(body, timeout=2.0)
        return "OK"
    except grpc.aio.AioRpcError as error:
        return f"{error.code().name}: {error.details()}"


def test_authority_gzip_and_keepalive_on_the_wire() -> None:
    seen: dict[str, object] = {}

    async def pings_within(peer: Peer, seconds: float) -> int:
        pings = 0
        with contextlib.suppress(TimeoutError, asyncio.IncompleteReadError):
            async with asyncio.timeout(seconds):
                while True:
                    kind, flags, _, _ = await peer.frame()
                    pings += kind == frames.PING and not flags & frames.ACK
        return pings

    async def script(peer: Peer) -> None:
        await peer.handshake()
        stream_id, headers, body = await peer.request()
        seen["headers"] = dict(headers)
        seen["body"] = body
        # The call stays open: keepalive PINGs, but at most two before the client sends
        # data again (grpc's max_pings_without_data); none once no call is open.
        seen["pings_open"] = await pings_within(peer, 0.8)
        peer.reply(stream_id, b"hi")
        seen["pings_idle"] = await pings_within(peer, 0.35)

    async def main() -> str:
        async with raw_server(script) as address:
            options = ClientOptions(authority="vhost.example", gzip=True, keepalive_s=0.1)
            channel = WireChannel(address, client=options)
            try:
                result = await _one(channel, b"hello")
                await asyncio.sleep(0.4)
                return result
            finally:
                await channel.close()

    assert asyncio.run(main()) == "OK"
    headers = seen["headers"]
    assert isinstance(headers, dict)
    assert headers[":authority"] == "vhost.example" and headers["grpc-encoding"] == "gzip"
    body = seen["body"]
    assert isinstance(body, bytes) and body[0] == 1  # the compressed flag
    assert gzip.decompress(body[5:]) == b"hello"
    assert (seen["pings_open"], seen["pings_idle"]) == (2, 0)


def test_message_size_limits_end_calls_resource_exhausted() -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, _, _ = await peer.request()
            peer.reply(stream_id, b"y" * 100)

    async def main() -> Counter[str]:
        async with raw_server(script) as address:
            receiving = WireChannel(address, client=ClientOptions(max_recv_bytes=50))
            sending = WireChannel(address, client=ClientOptions(max_send_bytes=10))
            try:
                return Counter([
                    await _one(receiving), await _one(sending, b"z" * 11),
                    await _one(sending, b"z" * 10),
                ])  # fmt: skip
            finally:
                await receiving.close()
                await sending.close()

    results = asyncio.run(main())
    assert results == Counter({
        "RESOURCE_EXHAUSTED: Stream removed (CLIENT: Received message larger than max"
        " (100 vs. 50))": 1,
        "RESOURCE_EXHAUSTED: CLIENT: Sent message larger than max (11 vs. 10)": 1,
        "OK": 1,
    })  # fmt: skip


@pytest.mark.integration
@pytest.mark.parametrize("stack", ["wire", "grpcio"])
def test_the_flags_end_to_end(stack: str, tmp_path: Path) -> None:
    from tests.support.echo_server import echo_server

    with echo_server() as address:
        base = [*GRPCBENCH, "run", "--insecure", "--call", "echo.Echo/Expand", "-c", "2",
                "-n", "20", "--client-stack", stack, address]  # fmt: skip
        out = tmp_path / "r.json"
        compressed = subprocess.run(
            [*base, "-d", '{"message": "hi", "repeat": 2}', "-e", "--keepalive", "1s",
             "--authority", "echo.example", "--output", str(out)],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert compressed.returncode == 0, compressed.stderr
        settings = json.loads(out.read_text())["options"]["load"]
        assert settings["gzip"] is True and settings["authority"] == "echo.example"
        limited = subprocess.run(
            [*base, "-d", '{"message": "hello there", "repeat": 2}', "--no-preflight",
             "--max-recv-message-size", "5", "--expect-status", "ResourceExhausted",
             "--output", str(out)],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert limited.returncode == 0, limited.stderr
        (level,) = json.loads(out.read_text())["levels"]
        assert level["load"]["statuses"] == {"ResourceExhausted": 20}


@pytest.mark.integration
@pytest.mark.parametrize("stack", ["wire", "grpcio"])
def test_a_send_limit_fails_only_the_requests_over_it(stack: str, tmp_path: Path) -> None:
    """--max-send-message-size with templated requests of two sizes: the calls whose
    request is over it fail ResourceExhausted, the others are OK, on both stacks (the
    wire stack keeps its callback loops under the flag and checks each request as it
    frames it)."""
    from tests.support.echo_server import echo_server

    out = tmp_path / "r.json"
    with echo_server() as address:
        done = subprocess.run(
            [*GRPCBENCH, "run", "--insecure", "--call", "echo.Echo/Say", "-c", "2", "-n", "20",
             "--warmup", "0", "--no-preflight", "--client-stack", stack,
             "-d", '{"message": "{{.RequestNumber}}"}', "--max-send-message-size", "3",
             "--expect-status", "ResourceExhausted", "--output", str(out), address],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (level,) = json.loads(out.read_text())["levels"]
    # Requests 0-9 serialize to 3 bytes (tag, length, a digit), 10-19 to 4.
    assert level["load"]["statuses"] == {"OK": 10, "ResourceExhausted": 10}


def test_requests_fixed_in_advance_keep_the_callback_loops_under_a_send_limit() -> None:
    from grpcbench.contract.calls import UnaryPlan
    from grpcbench.load.calls import fixed_requests_fit

    plan = UnaryPlan("/a.B/C", b"x" * 10)
    mix = UnaryPlan("/a.B/C", parts=(plan, UnaryPlan("/a.B/D", requests=(b"y" * 11,))))
    assert fixed_requests_fit(plan, 0) and fixed_requests_fit(plan, 10)
    assert not fixed_requests_fit(plan, 9)
    assert fixed_requests_fit(mix, 11) and not fixed_requests_fit(mix, 10)
    assert fixed_requests_fit(UnaryPlan("/a.B/C", next_request=lambda user: (b"", ())), 1)


def test_every_connection_strategy_dials_with_the_client_options() -> None:
    """Per-request and check-out connections come from the same Dialer as pooled ones,
    so -e (and the other channel options) reach them too."""
    from grpcbench.load.calls import CheckoutCalls, Dialer, PerRequestCalls
    from grpcbench.services.hello import SayHelloWorkload
    from grpcbench.stats.histogram import LatencyRecorder

    encodings: list[str] = []

    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, headers, _ = await peer.request()
            encodings.append(dict(headers).get("grpc-encoding", "identity"))
            peer.reply(stream_id, b"")

    async def main() -> None:
        async with raw_server(script) as address:
            dialer = Dialer(address, client=ClientOptions(gzip=True))
            workload = SayHelloWorkload({})
            for calls in (
                PerRequestCalls(dialer, workload, LatencyRecorder()),
                CheckoutCalls(dialer, workload, LatencyRecorder(), 1),
            ):
                await calls(2.0)
                if isinstance(calls, CheckoutCalls):
                    await calls.close()

    asyncio.run(main())
    assert encodings == ["gzip", "gzip"]


def test_replies_are_capped_at_grpcs_default_size_unless_told() -> None:
    """grpc's 4 MiB receive limit (ghz's too) on every channel: the load's on both
    stacks and ghz, and reflection's; 0 lifts it everywhere."""
    from grpcbench.model.plan import LoadSettings
    from grpcbench.rpc.security import PLAINTEXT

    limit = ("grpc.max_receive_message_length", 4 * 1024 * 1024)
    assert LoadSettings().max_recv_bytes == ClientOptions().max_recv_bytes == limit[1]
    assert limit in ClientOptions().grpc_options() and limit in PLAINTEXT.channel_options()
    assert not [flag for flag in ClientOptions().ghz_flags() if "recv" in flag]  # ghz's own
    unlimited = ClientOptions(max_recv_bytes=0)
    assert ("grpc.max_receive_message_length", -1) in unlimited.grpc_options()
    assert "--max-recv-message-size=2147483647" in unlimited.ghz_flags()
    assert "--max-recv-message-size=1000" in ClientOptions(max_recv_bytes=1000).ghz_flags()
