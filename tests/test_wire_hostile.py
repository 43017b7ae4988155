"""The wire transport against servers that break HTTP/2 or gRPC on purpose.

Every case must end each call with a counted status: never a traceback, a
hang, or a lost call. The servers are raw scripts (``tests.support.raw_h2``).
"""

from __future__ import annotations

import asyncio
import gzip
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest

from grpcbench.load.engine import run_level
from grpcbench.model.load_result import GeneratorJob
from grpcbench.wire import frames
from grpcbench.wire.channel import WireChannel
from tests.support.factories import make_spec
from tests.support.raw_h2 import Peer, grpc_message, raw_server

SAY = "/helloworld.Greeter/SayHello"
OK_HEADERS = [(":status", "200"), ("content-type", "application/grpc")]


def run(main: Callable[[], Awaitable[Any]], limit: float = 20) -> Any:
    """Run ``main`` on a fresh loop; fail on a hang or on any error the loop logged."""
    logged: list[dict[str, Any]] = []

    async def guarded() -> Any:
        asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: logged.append(ctx))
        return await asyncio.wait_for(main(), limit)

    result = asyncio.run(guarded())
    assert not logged, f"the event loop logged errors: {logged}"
    return result


async def statuses(channel: WireChannel, calls: int, timeout: float = 2.0, body: bytes = b"x"):
    method = channel.unary_unary(SAY)

    async def one() -> str:
        try:
            await method(body, timeout=timeout)
            return "OK"
        except grpc.aio.AioRpcError as error:
            return f"{error.code().name}: {error.details()}"

    return Counter(await asyncio.gather(*(one() for _ in range(calls))))


def codes(counter: Counter[str]) -> Counter[str]:
    return Counter({key.split(":")[0]: count for key, count in counter.items()})


async def call_all(script: Callable[[Peer], Awaitable[None]], calls: int = 5, **kw: Any):
    async with raw_server(script) as address:
        channel = WireChannel(address)
        try:
            return await statuses(channel, calls, **kw)
        finally:
            await channel.close()


def test_a_well_behaved_reply_is_ok() -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, headers, body = await peer.request()
            assert ("te", "trailers") in headers and ("content-type", "application/grpc") in headers
            assert any(name == "grpc-timeout" for name, _ in headers)
            assert body == b"\0\0\0\0\1x"
            peer.reply(stream_id, b"hi")

    assert run(lambda: call_all(script)) == Counter({"OK": 5})


def test_garbage_ends_every_call_unavailable() -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake()
        await peer.request()
        peer.send(b"\xff" * 64)  # a frame "header" with a 16 MiB length
        await asyncio.sleep(5)

    result = run(lambda: call_all(script))
    assert codes(result) == Counter({"UNAVAILABLE": 5})
    assert "broke HTTP/2" in next(iter(result))


def test_a_frame_over_max_frame_size_is_a_connection_error() -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake()
        stream_id, _, _ = await peer.request()
        peer.send(frames.frame(frames.DATA, 0, stream_id, b"\0" * 20_000))
        await asyncio.sleep(5)

    result = run(lambda: call_all(script, calls=1))
    assert codes(result) == Counter({"UNAVAILABLE": 1})
    assert "20000 bytes" in next(iter(result))


def test_a_zero_window_holds_the_body_until_the_deadline() -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake({frames.SETTINGS_INITIAL_WINDOW_SIZE: 0})
        while True:
            await peer.frame()  # reads, never grants window: no body arrives

    result = run(lambda: call_all(script, calls=3, timeout=0.3))
    assert codes(result) == Counter({"DEADLINE_EXCEEDED": 3})


def test_a_window_update_releases_a_large_request_in_frames() -> None:
    body = b"y" * 200_000  # over the default 65,535 window and 16 KiB frames

    async def script(peer: Peer) -> None:
        await peer.handshake()
        received = 0
        while True:
            kind, flags, stream_id, payload = await peer.frame()
            if kind == frames.DATA:
                assert len(payload) <= frames.DEFAULT_MAX_FRAME_SIZE
                received += len(payload)
                peer.send(frames.window_update(0, len(payload)))
                peer.send(frames.window_update(stream_id, len(payload)))
                if flags & frames.END_STREAM:
                    assert received == len(body) + 5
                    peer.reply(stream_id, b"done")
                    received = 0

    assert run(lambda: call_all(script, calls=1, body=body)) == Counter({"OK": 1})


def test_goaway_mid_level_loses_no_call() -> None:
    """The first connection answers 20 calls, then GOAWAY names the last it processed:
    the others are sent again on a new connection; every call gets a status."""
    connections = []

    async def script(peer: Peer) -> None:
        connections.append(peer)
        await peer.handshake()
        answered = 0
        while True:
            stream_id, _, _ = await peer.request()
            if len(connections) == 1 and answered == 20:
                peer.send(frames.goaway(stream_id - 2, frames.NO_ERROR))
                await asyncio.sleep(0.05)
                return
            peer.reply(stream_id, b"hi")
            answered += 1

    async def main() -> GeneratorJob:
        async with raw_server(script) as address:
            spec = make_spec(target=address, service="hello", concurrency=8, requests=200)
            return await run_level(spec, lambda: None, lambda done, errors: None)

    result = run(main)
    assert sum(result.statuses.values()) == 200
    assert result.statuses["OK"] == 200 and len(connections) >= 2


@pytest.mark.parametrize(
    ("error_code", "expected"),
    [
        (frames.CANCEL, "CANCELLED"),
        (frames.ENHANCE_YOUR_CALM, "RESOURCE_EXHAUSTED"),
        (frames.INTERNAL_ERROR, "INTERNAL"),
        (frames.REFUSED_STREAM, "UNAVAILABLE"),  # after one retry, refused again
    ],
)
def test_rst_stream_maps_to_grpc_statuses(error_code: int, expected: str) -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, _, _ = await peer.request()
            peer.send(frames.rst_stream(stream_id, error_code))

    assert codes(run(lambda: call_all(script, calls=10))) == Counter({expected: 10})


def test_an_rst_stream_storm_through_the_engine_counts_every_call() -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake()
        number = 0
        while True:
            stream_id, _, _ = await peer.request()
            number += 1
            if number % 3:
                peer.send(frames.rst_stream(stream_id, frames.CANCEL))
            else:
                peer.reply(stream_id, b"hi")

    async def main() -> Any:
        async with raw_server(script) as address:
            spec = make_spec(target=address, service="hello", concurrency=10, requests=300)
            return await run_level(spec, lambda: None, lambda done, errors: None)

    result = run(main)
    assert sum(result.statuses.values()) == 300
    assert set(result.statuses) == {"OK", "Cancelled"} and result.statuses["OK"] == 100


def test_a_header_block_that_grows_the_table_past_its_size() -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake()
        stream_id, _, _ = await peer.request()
        # A dynamic table size update to 8192, over the 4096 we allow (RFC 7541 4.2).
        update = bytes([0x3F, 0xE1, 0x3F])
        peer.send(frames.frame(frames.HEADERS, frames.END_HEADERS, stream_id, update))
        await asyncio.sleep(5)

    result = run(lambda: call_all(script, calls=1))
    assert codes(result) == Counter({"UNAVAILABLE": 1})
    assert "hpack" in next(iter(result))


def test_trailers_without_grpc_status_are_unknown() -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, _, _ = await peer.request()
            peer.send(peer.headers(stream_id, OK_HEADERS))
            peer.send(peer.headers(stream_id, [("x-other", "1")], end=True))

    assert codes(run(lambda: call_all(script, calls=3))) == Counter({"UNKNOWN": 3})


def test_an_http_error_without_grpc_status_maps_like_grpc() -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, _, _ = await peer.request()
            peer.send(peer.headers(stream_id, [(":status", "503")], end=True))

    assert codes(run(lambda: call_all(script, calls=2))) == Counter({"UNAVAILABLE": 2})


def test_a_trailers_only_error_with_a_percent_encoded_message() -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, _, _ = await peer.request()
            message = ("grpc-message", "no%20such%20user%3A%20%C3%A9")
            fields = [*OK_HEADERS, ("grpc-status", "5"), message]
            peer.send(peer.headers(stream_id, fields, end=True))

    result = run(lambda: call_all(script, calls=2))
    assert result == Counter({"NOT_FOUND: no such user: é": 2})


def test_a_half_sent_frame_then_close() -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake()
        stream_id, _, _ = await peer.request()
        peer.send(frames.frame(frames.DATA, 0, stream_id, b"\0" * 100)[:50])
        await peer.writer.drain()

    assert codes(run(lambda: call_all(script, calls=3))) == Counter({"UNAVAILABLE": 3})


def test_a_server_that_never_reads() -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake()
        await asyncio.sleep(30)  # reads nothing more

    result = run(lambda: call_all(script, calls=4, timeout=0.3, body=b"z" * 100_000))
    assert codes(result) == Counter({"DEADLINE_EXCEEDED": 4})


def test_continuation_padding_and_priority_are_understood() -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, _, _ = await peer.request()
            block = peer.encoder.encode(OK_HEADERS)
            # HEADERS (PADDED | PRIORITY) holding half the block, CONTINUATION the rest.
            half = len(block) // 2
            payload = bytes([3]) + b"\0\0\0\0\x10" + block[:half] + b"\0\0\0"
            flags = frames.PADDED | frames.PRIORITY_FLAG
            peer.send(frames.frame(frames.HEADERS, flags, stream_id, payload))
            rest = block[half:]
            peer.send(frames.frame(frames.CONTINUATION, frames.END_HEADERS, stream_id, rest))
            padded = b"\4" + grpc_message(b"hi") + b"\0" * 4
            peer.send(frames.frame(frames.DATA, frames.PADDED, stream_id, padded))
            peer.send(frames.frame(frames.PING, 0, 0, b"12345678"))
            peer.send(peer.headers(stream_id, [("grpc-status", "0")], end=True))  # fmt: skip

    async def main() -> tuple[Counter[str], list[Any]]:
        seen: list[Any] = []

        async def recording(peer: Peer) -> None:
            seen.append(peer)
            await script(peer)

        async with raw_server(recording) as address:
            channel = WireChannel(address)
            try:
                result = await statuses(channel, 3)
                await asyncio.sleep(0.05)
                return result, seen
            finally:
                await channel.close()

    result, peers = run(main)
    assert result == Counter({"OK": 3})


def test_ping_is_acknowledged() -> None:
    acks: list[bytes] = []

    async def script(peer: Peer) -> None:
        await peer.handshake()
        stream_id, _, _ = await peer.request()
        peer.send(frames.frame(frames.PING, 0, 0, b"abcdefgh"))
        while True:
            kind, flags, _, payload = await peer.frame()
            if kind == frames.PING and flags & frames.ACK:
                acks.append(payload)
                peer.reply(stream_id, b"hi")

    assert run(lambda: call_all(script, calls=1)) == Counter({"OK": 1})
    assert acks == [b"abcdefgh"]


def test_max_concurrent_streams_queues_the_rest() -> None:
    most_open = [0]

    async def script(peer: Peer) -> None:
        await peer.handshake({frames.SETTINGS_MAX_CONCURRENT_STREAMS: 2})
        open_streams: list[int] = []
        while True:
            stream_id, _, _ = await peer.request()
            open_streams.append(stream_id)
            most_open[0] = max(most_open[0], len(open_streams))
            if len(open_streams) == 2:
                await asyncio.sleep(0.01)
                for sid in open_streams:
                    peer.reply(sid, b"hi")
                open_streams.clear()

    assert run(lambda: call_all(script, calls=10)) == Counter({"OK": 10})
    assert most_open[0] == 2


def test_messages_across_frames_and_several_in_one_frame() -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, _, _ = await peer.request()
            peer.send(peer.headers(stream_id, OK_HEADERS))
            wire = b"".join(b"\0" + (3).to_bytes(4, "big") + b"m%02d" % i for i in range(10))
            for start in range(0, len(wire), 7):  # messages cut at every 7th byte
                peer.send(frames.frame(frames.DATA, 0, stream_id, wire[start : start + 7]))
            peer.send(peer.headers(stream_id, [("grpc-status", "0")], end=True))

    async def main() -> list[bytes]:
        async with raw_server(script) as address:
            channel = WireChannel(address)
            try:
                return [reply async for reply in channel.unary_stream(SAY)(b"", timeout=2)]
            finally:
                await channel.close()

    assert run(main) == [b"m%02d" % i for i in range(10)]


@pytest.mark.parametrize(("encoding", "expected"), [("gzip", "OK"), ("snappy", "INTERNAL")])
def test_a_compressed_reply(encoding: str, expected: str) -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, _, _ = await peer.request()
            fields = [*OK_HEADERS, ("grpc-encoding", encoding)]
            peer.send(peer.headers(stream_id, fields))
            packed = gzip.compress(b"hello")
            peer.send(frames.frame(frames.DATA, 0, stream_id, grpc_message(packed, True)))
            peer.send(peer.headers(stream_id, [("grpc-status", "0")], end=True))

    result = run(lambda: call_all(script, calls=2))
    assert codes(result) == Counter({expected: 2})
    if expected == "INTERNAL":
        assert "snappy" in next(iter(result))


def test_nothing_listening_is_unavailable_at_once() -> None:
    async def main() -> Counter[str]:
        channel = WireChannel("127.0.0.1:1")
        try:
            return await statuses(channel, 3)
        finally:
            await channel.close()

    assert codes(run(main, limit=5)) == Counter({"UNAVAILABLE": 3})


def test_no_settings_from_the_server_fails_the_connect() -> None:
    async def script(peer: Peer) -> None:
        await asyncio.sleep(30)

    async def main() -> str:
        async with raw_server(script) as address:
            channel = WireChannel(address, connect_timeout_s=0.2)
            try:
                await channel.channel_ready()
            except ConnectionError as error:
                return str(error)
            finally:
                await channel.close()
            return "connected"

    assert "sent no HTTP/2 SETTINGS within 0.2s" in run(main)


def test_metadata_and_bin_keys_reach_the_server() -> None:
    import base64

    seen: list[list[tuple[str, str]]] = []

    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, headers, _ = await peer.request()
            seen.append(headers)
            peer.reply(stream_id, b"hi")

    async def main() -> None:
        async with raw_server(script) as address:
            channel = WireChannel(address)
            try:
                method = channel.unary_unary(SAY)
                metadata = (("x-token", "abc"), ("trace-bin", b"\x00\xff\x10"))
                for _ in range(3):  # the second and third come from the encoder's cache
                    await method(b"", timeout=2, metadata=metadata)
            finally:
                await channel.close()

    run(main)
    assert len(seen) == 3
    for headers in seen:
        fields = dict(headers)
        assert fields["x-token"] == "abc"
        padded = fields["trace-bin"] + "=" * (-len(fields["trace-bin"]) % 4)
        assert base64.b64decode(padded) == b"\x00\xff\x10"


def test_stream_id_exhaustion_moves_to_a_new_connection() -> None:
    connections: list[Peer] = []

    async def script(peer: Peer) -> None:
        connections.append(peer)
        await peer.handshake()
        while True:
            stream_id, _, _ = await peer.request()
            peer.reply(stream_id, b"hi")

    async def main() -> tuple[Counter[str], int]:
        async with raw_server(script) as address:
            channel = WireChannel(address)
            try:
                await channel.channel_ready()
                assert channel.connection is not None
                channel.connection.next_id = frames.MAX_STREAM_ID - 2  # two ids left
                result = await statuses(channel, 6)
                return result, channel.connections_made
            finally:
                await channel.close()

    result, made = run(main)
    assert result == Counter({"OK": 6}) and made == 2 and len(connections) == 2


def test_a_header_block_over_max_frame_size_goes_out_in_continuations() -> None:
    seen: list[dict[str, str]] = []

    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, headers, _ = await peer.request()
            seen.append(dict(headers))
            peer.reply(stream_id, b"hi")

    async def main() -> Counter[str]:
        async with raw_server(script) as address:
            channel = WireChannel(address)
            try:
                big = (("x-big", "v" * 40_000),)  # over the 16 KiB frame: 3 frames
                method = channel.unary_unary(SAY)
                return Counter([await _ok(method(b"", timeout=2, metadata=big)) for _ in range(2)])
            finally:
                await channel.close()

    assert run(main) == Counter({"OK": 2})
    assert [len(headers["x-big"]) for headers in seen] == [40_000, 40_000]


async def _ok(call: Any) -> str:
    await call
    return "OK"


# --- grpc's answer at each edge (issue: wire must give the status grpc gives) ---------


@pytest.mark.parametrize("value", ["abc", "", "-3", "4294967296"])
def test_a_malformed_grpc_status_is_internal_as_in_grpc(value: str) -> None:
    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, _, _ = await peer.request()
            peer.send(peer.headers(stream_id, [*OK_HEADERS, ("grpc-status", value)], end=True))

    assert codes(run(lambda: call_all(script, calls=2))) == Counter({"INTERNAL": 2})


@pytest.mark.parametrize(("replies", "expected"), [(0, "OK"), (2, "INTERNAL")])
def test_a_unary_reply_without_one_message_on_both_paths(replies: int, expected: str) -> None:
    """OK with no message is OK, as grpc.aio says (it returns None); OK with two is
    Internal (grpc-go's cardinality violation; grpc core waits for the deadline), on
    the awaitable API and on the callback loops the engine runs alike."""

    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, _, _ = await peer.request()
            peer.send(peer.headers(stream_id, OK_HEADERS))
            for _ in range(replies):
                peer.send(frames.frame(frames.DATA, 0, stream_id, grpc_message(b"hi")))
            peer.send(peer.headers(stream_id, [("grpc-status", "0")], end=True))

    assert codes(run(lambda: call_all(script, calls=3))) == Counter({expected: 3})

    async def main() -> Any:
        async with raw_server(script) as address:
            spec = make_spec(target=address, service="hello", concurrency=2, requests=20)
            return await run_level(spec, lambda: None, lambda done, errors: None)

    assert run(main).statuses == {"OK" if expected == "OK" else "Internal": 20}


@pytest.mark.parametrize(("trailers_only", "expected"), [(True, "OK"), (False, "UNKNOWN")])
def test_an_http_500_with_grpc_status_0(trailers_only: bool, expected: str) -> None:
    """As grpc.aio answers (measured against this server): trailers-only, grpc-status
    wins; headers of their own with :status 500 end the call at once, Unknown,
    "Received http2 header with status: 500", whatever the trailers say."""
    head = [(":status", "500"), ("content-type", "application/grpc")]

    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, _, _ = await peer.request()
            if trailers_only:
                peer.send(peer.headers(stream_id, [*head, ("grpc-status", "0")], end=True))
                continue
            peer.send(peer.headers(stream_id, head))
            peer.send(frames.frame(frames.DATA, 0, stream_id, grpc_message(b"hi")))
            peer.send(peer.headers(stream_id, [("grpc-status", "0")], end=True))

    result = run(lambda: call_all(script, calls=2))
    if expected == "OK":
        assert result == Counter({"OK": 2})
    else:
        assert result == Counter({"UNKNOWN: Received http2 header with status: 500": 2})


def test_a_server_reset_after_the_deadline_is_deadline_exceeded() -> None:
    """grpc-go resets with CANCEL when its deadline fires: past the call's own deadline
    grpc says DeadlineExceeded, and so does wire (it said Cancelled)."""

    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, _, _ = await peer.request()
            await asyncio.sleep(0.06)
            peer.send(frames.rst_stream(stream_id, frames.CANCEL))

    assert codes(run(lambda: call_all(script, calls=2, timeout=0.05))) == Counter(
        {"DEADLINE_EXCEEDED": 2}
    )


async def _limited_calls(script: Callable[[Peer], Awaitable[None]], max_recv: int, calls: int):
    """``calls`` calls to ``script``'s server under --max-recv-message-size ``max_recv``."""
    from grpcbench.rpc.client_options import ClientOptions

    async with raw_server(script) as address:
        channel = WireChannel(address, client=ClientOptions(max_recv_bytes=max_recv))
        try:
            return await statuses(channel, calls)
        finally:
            await channel.close()


def test_the_size_limit_is_checked_on_the_inflated_reply() -> None:
    """A reply whose compressed size fits --max-recv-message-size but whose message
    does not: ResourceExhausted, as grpc checks the decompressed size."""
    big = b"x" * 4000

    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, _, _ = await peer.request()
            peer.send(peer.headers(stream_id, [*OK_HEADERS, ("grpc-encoding", "gzip")]))
            packed = gzip.compress(big)
            peer.send(frames.frame(frames.DATA, 0, stream_id, grpc_message(packed, True)))
            peer.send(peer.headers(stream_id, [("grpc-status", "0")], end=True))

    result = run(lambda: _limited_calls(script, 1000, 2))
    assert result == Counter({
        "RESOURCE_EXHAUSTED: Stream removed (CLIENT: Received message larger than max"
        " (4000 vs. 1000))": 2
    })  # fmt: skip


def test_requests_say_which_compressions_they_accept_as_grpc_does() -> None:
    seen: list[str] = []

    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, headers, _ = await peer.request()
            seen.append(dict(headers).get("grpc-accept-encoding", ""))
            peer.reply(stream_id, b"hi")

    assert run(lambda: call_all(script, calls=2)) == Counter({"OK": 2})
    assert seen == ["identity,deflate,gzip"] * 2


def test_goaway_too_many_pings_halves_the_keepalive_rate() -> None:
    """gRFC A8: a server that refuses our pings (grpc-go's ENHANCE_YOUR_CALM
    too_many_pings) is pinged half as often from then on."""
    from grpcbench.rpc.client_options import ClientOptions

    async def script(peer: Peer) -> None:
        await peer.handshake()
        stream_id, _, _ = await peer.request()
        peer.send(frames.goaway(stream_id, frames.ENHANCE_YOUR_CALM, b"too_many_pings"))
        peer.reply(stream_id, b"hi")
        await asyncio.sleep(1)

    async def main() -> tuple[str, float]:
        async with raw_server(script) as address:
            channel = WireChannel(address, client=ClientOptions(keepalive_s=10.0))
            try:
                reply = await channel.unary_unary(SAY)(b"x", timeout=2.0)
                return reply, channel.keepalive_s
            finally:
                await channel.close()

    assert run(main) == (b"hi", 20.0)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(b"bad %FF%FE x", "bad \xff\xfe x"), (b"bad \xff\xfe x", "bad \xff\xfe x"),
     (b"a%C3", "a\xc3"), (b"50%zz off", "50%zz off"), (b"caf%C3%A9", "café")],
)  # fmt: skip
def test_a_grpc_message_that_is_not_utf8_reads_as_grpc_reads_it(
    value: bytes, expected: str
) -> None:
    """grpc.aio reads such a message as Latin-1, whole (measured against this server:
    "bad %FF%FE x" is 'bad ÿþ x' there); wire gives the same text, so both stacks key
    the error distribution alike."""

    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, _, _ = await peer.request()
            fields = [*OK_HEADERS, ("grpc-status", "5"), (b"grpc-message", value)]
            peer.send(peer.headers(stream_id, fields, end=True))

    assert run(lambda: call_all(script, calls=1)) == Counter({f"NOT_FOUND: {expected}": 1})


@pytest.mark.parametrize(("size", "expected"), [(4000, "OK"), (17000, "RESOURCE_EXHAUSTED")])
def test_reply_metadata_over_grpc_s_limits_is_refused_as_grpc_refuses_it(
    size: int, expected: str
) -> None:
    """grpc's limits on received metadata: 8 KiB soft (refused with a probability that
    grows to 1 at the hard limit), 16 KiB hard (measured with grpc.aio: 17,139 bytes is
    ResourceExhausted, "received metadata size exceeds hard limit (17139 vs. 16384)")."""
    from grpcbench.wire.headers import metadata_refusal

    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, _, _ = await peer.request()
            peer.send(peer.headers(stream_id, [*OK_HEADERS, ("x-big", "a" * size)]))
            peer.send(frames.frame(frames.DATA, 0, stream_id, grpc_message(b"hi")))
            peer.send(peer.headers(stream_id, [("grpc-status", "0")], end=True))

    assert codes(run(lambda: call_all(script, calls=3))) == Counter({expected: 3})
    assert metadata_refusal(12_000, 0.0) and not metadata_refusal(12_000, 0.99)
    assert metadata_refusal(9_000, 0.05) and not metadata_refusal(9_000, 0.2)


def test_an_endless_reply_message_ends_its_call_at_grpcs_default_limit() -> None:
    """A server that streams one message without end: the call ends ResourceExhausted
    at its first frame (grpc's 4 MiB default limit, ghz's too), never growing the
    generator by what the server sends; without it the client held gigabytes."""

    async def script(peer: Peer) -> None:
        await peer.handshake()
        stream_id, _, _ = await peer.request()
        peer.send(peer.headers(stream_id, OK_HEADERS))
        peer.send(frames.frame(frames.DATA, 0, stream_id, b"\0\xff\xff\xff\xff" + b"x" * 16_000))
        for _ in range(50):  # more of the same message, while the client lets it come
            peer.send(frames.frame(frames.DATA, 0, stream_id, b"x" * 16_000))
            await asyncio.sleep(0.01)

    result = run(lambda: call_all(script, calls=1))
    assert result == Counter({
        "RESOURCE_EXHAUSTED: Stream removed (CLIENT: Received message larger than max"
        " (4294967295 vs. 4194304))": 1
    })  # fmt: skip


@pytest.mark.parametrize(("counted_past", "said"), [
    (64 << 20, "(10485760 vs. 20000)"),  # the bomb's whole size, counted, never held
    (1 << 20, "(more than 1068576 vs. 20000)"),  # past the count's bound: a lower bound
])  # fmt: skip
def test_a_decompression_bomb_is_never_inflated_past_the_limit(
    counted_past: int, said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """10 MB of zeros in 10 KB of gzip, under a 20,000-byte limit on the wire and far
    over it inflated: ResourceExhausted with the inflated size as grpc words it, and at
    most the limit held in memory."""
    import zlib

    from grpcbench.wire import messages

    monkeypatch.setattr(messages, "_COUNTED_PAST_LIMIT", counted_past)
    packer = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
    bomb = b"".join(packer.compress(b"\0" * (1 << 20)) for _ in range(10)) + packer.flush()
    assert len(bomb) < 16_000

    async def script(peer: Peer) -> None:
        await peer.handshake()
        while True:
            stream_id, _, _ = await peer.request()
            peer.send(peer.headers(stream_id, [*OK_HEADERS, ("grpc-encoding", "gzip")]))
            peer.send(frames.frame(frames.DATA, 0, stream_id, grpc_message(bomb, True)))
            peer.send(peer.headers(stream_id, [("grpc-status", "0")], end=True))

    assert run(lambda: _limited_calls(script, 20_000, 1)) == Counter({
        f"RESOURCE_EXHAUSTED: Stream removed (CLIENT: Received message larger than max {said})": 1
    })  # fmt: skip
