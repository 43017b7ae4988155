"""Property-based fuzz of the wire transport's frame parsing (hypothesis).

- the splitter returns the same frames however the bytes are cut into reads;
- a connection fed arbitrary bytes after a valid start never raises: it either
  keeps going or fails the connection, and every call on it gets a status.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grpcbench.wire import frames, status
from grpcbench.wire.connection import Connection
from grpcbench.wire.headers import (
    ReplyHeaderDecoder,
    RequestEncoder,
    encode_fields,
    request_fields,
)
from grpcbench.wire.stream import CLOSED, WireStream
from tests.support.memory_transport import MemoryTransport

frame_values = st.tuples(
    st.integers(0, 12),  # type (some unknown)
    st.integers(0, 255),  # flags
    st.integers(0, 2**31 - 1),  # stream id
    st.binary(max_size=300),
)


@given(st.lists(frame_values, max_size=20), st.lists(st.integers(1, 64), max_size=40))
def test_the_splitter_is_independent_of_read_boundaries(
    values: list[tuple[int, int, int, bytes]], cuts: list[int]
) -> None:
    wire = b"".join(frames.frame(*value) for value in values)
    splitter = frames.FrameSplitter()
    parsed: list[Any] = []
    position = 0
    for cut in cuts:
        parsed.extend(splitter.split(wire[position : position + cut]))
        position += cut
    parsed.extend(splitter.split(wire[position:]))
    assert parsed == values
    assert splitter.buffer == b""


@given(st.integers(frames.DEFAULT_MAX_FRAME_SIZE + 1, 2**24 - 1))
def test_an_oversized_frame_is_refused_before_its_payload(length: int) -> None:
    header = bytes([length >> 16, (length >> 8) & 0xFF, length & 0xFF, 0, 0, 0, 0, 0, 1])
    try:
        frames.FrameSplitter().split(header)
    except frames.ConnectionError_ as error:
        assert error.code == frames.FRAME_SIZE_ERROR
    else:
        raise AssertionError("accepted")


def _fed(chunks: list[bytes], calls: int) -> tuple[Connection, list[WireStream]]:
    async def main() -> tuple[Connection, list[WireStream]]:
        connection = Connection()
        transport = MemoryTransport()
        connection.connection_made(transport)  # type: ignore[arg-type]
        connection.data_received(frames.settings_frame({}))
        block = request_fields("/a.B/C", "127.0.0.1:1", "http", 1.0)
        ended: list[WireStream] = []
        # Unary calls, and request streams left OPEN with more than the default window
        # to send (so the fuzz reaches flow control and every state transition).
        streams = [
            WireStream(block, b"\0\0\0\0\0", True, ended.append, 1e18)
            if index % 2 == 0
            else WireStream(block, bytes(70_000), False, ended.append, 1e18)
            for index in range(calls)
        ]
        for stream in streams:
            connection.start(stream)
        for chunk in chunks:
            connection.data_received(chunk)
            if connection.closed:
                break
        for stream in streams:
            connection.send(stream, b"\0\0\0\0\0", True)  # the request ends (if still open)
        connection.connection_lost(None)
        await asyncio.sleep(0)
        assert sorted(id(s) for s in ended) == sorted(id(s) for s in streams)
        return connection, streams

    return asyncio.run(main())


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.binary(max_size=200), max_size=10), st.integers(0, 4))
def test_arbitrary_bytes_never_escape_the_connection(chunks: list[bytes], calls: int) -> None:
    _, streams = _fed(chunks, calls)
    for stream in streams:
        assert stream.state == CLOSED and 0 <= stream.status <= 16


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(frame_values, max_size=12), st.integers(1, 3))
def test_arbitrary_frames_never_escape_the_connection(
    values: list[tuple[int, int, int, bytes]], calls: int
) -> None:
    """Well-framed nonsense on the streams we opened (ids 1, 3, 5) and others."""
    wire = [frames.frame(kind, flags, sid % 8, payload) for kind, flags, sid, payload in values]
    _, streams = _fed(wire, calls)
    for stream in streams:
        assert stream.state == CLOSED


def test_a_well_formed_exchange_through_the_fed_connection() -> None:
    """The fuzz harness itself can produce OK (so the properties above are not vacuous)."""
    import hpack

    encoder = hpack.Encoder()
    reply = (
        frames.frame(frames.HEADERS, frames.END_HEADERS, 1, encoder.encode([(":status", "200")]))
        + frames.frame(frames.DATA, 0, 1, b"\0\0\0\0\2hi")
        + frames.frame(
            frames.HEADERS, frames.END_HEADERS | frames.END_STREAM, 1,
            encoder.encode([("grpc-status", "0")]),
        )
    )  # fmt: skip
    _, streams = _fed([reply], 1)
    assert streams[0].status == status.OK and streams[0].messages == 1


def test_cached_reply_blocks_follow_the_dynamic_table() -> None:
    """A block that only indexes the table is cached; a table change empties the cache,
    so the same bytes decode to the new entry."""
    import hpack

    encoder = hpack.Encoder()
    decoder = ReplyHeaderDecoder()
    first = encoder.encode([("grpc-status", "0")])  # inserts into the table
    indexed = encoder.encode([("grpc-status", "0")])  # refers to it
    assert decoder.decode(first).grpc_status == 0
    assert decoder.decode(indexed).grpc_status == 0
    assert indexed in decoder.cache
    other = hpack.Encoder()
    other.encode([("grpc-status", "0")])
    changed = encoder.encode([("grpc-status", "7")])  # inserted at index 62: shifts the old
    assert decoder.decode(changed).grpc_status == 7
    assert indexed not in decoder.cache
    # The same bytes as before now name the newest entry (grpc-status: 7).
    assert decoder.decode(indexed).grpc_status == 7


def test_request_blocks_are_stateless() -> None:
    """The same bytes for every call: the encoder's dynamic table stays empty."""
    first = encode_fields([("x-key", "value"), ("authorization", "Bearer a")])
    again = encode_fields([("x-key", "value"), ("authorization", "Bearer a")])
    assert first == again


def _decoded(decoder: Any, block: bytes) -> list[tuple[str, str]]:
    return [(str(n), str(v)) for n, v in decoder.decode(block)]


def test_a_repeated_request_becomes_a_few_index_bytes() -> None:
    """As grpc's own clients do: the server decodes indices, not literals, after the first call."""
    import hpack

    encoder, server = RequestEncoder(), hpack.Decoder()
    fields = request_fields("/helloworld.Greeter/SayHello", "127.0.0.1:50051", "http", 20.0)
    first = encoder.encode(fields)
    second = encoder.encode(fields)
    third = encoder.encode(fields)
    assert len(second) <= 12 < len(first) and second == third
    for block in (first, second, third):
        assert _decoded(server, block) == fields.fields


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["/a.B/C", "/a.B/D", "/x.Y/" + "z" * 300]),
            st.sampled_from([None, 1.0, 20.0]),
            st.sampled_from([(), (("k", "v"),), (("k", "w" * 500),), (("t-bin", b"\0\1"),)]),
            st.booleans(),  # templated (varying) metadata
            st.sampled_from([None, None, None, 0, 100, 4096]),  # a new peer table size
        ),
        min_size=1,
        max_size=30,
    )
)
def test_request_blocks_decode_in_order_whatever_the_table_does(
    calls: list[tuple[str, float | None, tuple[Any, ...], bool, int | None]],
) -> None:
    """The server's decoder sees exactly the fields of every call, in order, across
    evictions, cache hits and table size changes."""
    import hpack

    from grpcbench.wire.headers import metadata_fields

    encoder, server = RequestEncoder(), hpack.Decoder()
    for path, timeout, metadata, varying, table_size in calls:
        if table_size is not None:
            encoder.table_size(table_size)
        if varying:
            fields = request_fields(path, "h:1", "http", timeout, None, metadata)
        else:
            fields = request_fields(path, "h:1", "http", timeout, metadata)
        expected = fields.fields + (metadata_fields(metadata) if varying else [])
        assert _decoded(server, encoder.encode(fields)) == expected


def test_a_client_certificate_loads_without_touching_a_disk(tmp_path: Any) -> None:
    """--cert/--key reach the wire stack's TLS context from memory (memfd on Linux)."""
    import ssl

    from grpcbench.rpc.security import ChannelSecurity
    from grpcbench.wire.channel import tls_context
    from tests.support.echo_server import make_certificates

    paths = make_certificates(tmp_path)
    security = ChannelSecurity(
        cacert=str(paths.ca), root_pem=paths.ca.read_text(),
        cert_pem=paths.cert.read_text(), key_pem=paths.key.read_text(),
    )  # fmt: skip
    context = tls_context(security)
    assert isinstance(context, ssl.SSLContext)
    broken = ChannelSecurity(cert_pem=paths.cert.read_text(), key_pem="not a key")
    try:
        tls_context(broken)
    except ssl.SSLError:
        pass
    else:
        raise AssertionError("a bad key was accepted")
