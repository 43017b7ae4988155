"""Header blocks: stateless request blocks, and reply blocks decoded once and cached.

Requests are encoded without the dynamic table (static-table indices and
never-indexed literals), so one encoded block can be sent on any stream of any
connection, and per-call fields (grpc-timeout, templated metadata) are blocks
appended to a fixed prefix. Replies use the server's dynamic table, so one
``hpack.Decoder`` per connection decodes every block in order; a block whose
decoding left the table unchanged is cached by its bytes, because decoding it
again in the same table gives the same headers (``ReplyHeaderDecoder``).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence

import hpack

from grpcbench.wire import frames
from grpcbench.wire.status import decode_message, encode_timeout, parse_status

USER_AGENT = "grpcbench-wire/1"
# Our SETTINGS_MAX_HEADER_LIST_SIZE: the most decoded header bytes a reply may carry.
MAX_HEADER_LIST_SIZE = 1 << 20
# A reply's decoded headers as (name, value) bytes pairs.
HeaderList = list[tuple[bytes, bytes]]


def _stateless_encoder() -> hpack.Encoder:
    return hpack.Encoder()


_ENCODER = _stateless_encoder()


def encode_fields(fields: Iterable[tuple[str, str]]) -> bytes:
    """Fields as never-indexed literals (static-table matches stay indexed): no
    dynamic-table state on either side, so the bytes can be reused anywhere."""
    block = _ENCODER.encode([(name, value, True) for name, value in fields], huffman=True)
    assert not _ENCODER.header_table.dynamic_entries  # stateless by construction
    return bytes(block)


def metadata_fields(metadata: Sequence[tuple[str, str | bytes]] | None) -> list[tuple[str, str]]:
    """gRPC metadata as header fields: ``-bin`` values base64 (unpadded, as grpc sends)."""
    fields = []
    for key, value in metadata or ():
        if key.endswith("-bin"):
            raw = value if isinstance(value, bytes) else value.encode()
            fields.append((key, base64.b64encode(raw).rstrip(b"=").decode()))
        else:
            fields.append((key, value.decode() if isinstance(value, bytes) else value))
    return fields


def request_prefix(path: str, authority: str, scheme: str) -> bytes:
    """The fields every call of a method carries, in gRPC's order (reserved first)."""
    return encode_fields(
        [
            (":method", "POST"),
            (":scheme", scheme),
            (":path", path),
            (":authority", authority),
            ("content-type", "application/grpc"),
            ("te", "trailers"),
            ("user-agent", USER_AGENT),
        ]
    )


class TimeoutBlocks:
    """grpc-timeout fields, encoded once per distinct value (a level uses one)."""

    def __init__(self) -> None:
        self.cache: dict[float, bytes] = {}

    def __call__(self, timeout_s: float) -> bytes:
        block = self.cache.get(timeout_s)
        if block is None:
            if len(self.cache) > 256:
                self.cache.clear()
            field = ("grpc-timeout", encode_timeout(timeout_s))
            block = self.cache[timeout_s] = encode_fields([field])
        return block


class HeaderInfo:
    """A decoded reply block and the fields the transport reads from it, parsed once."""

    __slots__ = ("headers", "grpc_status", "grpc_message", "http_status", "encoding")

    def __init__(self, headers: HeaderList) -> None:
        self.headers = headers
        self.grpc_status = -1  # absent
        self.grpc_message = ""
        self.http_status = 0
        self.encoding = b""
        for name, value in headers:
            if name == b"grpc-status":
                self.grpc_status = parse_status(value)
            elif name == b"grpc-message":
                self.grpc_message = decode_message(value)
            elif name == b":status":
                self.http_status = int(value) if value.isdigit() and len(value) == 3 else 0
            elif name == b"grpc-encoding":
                self.encoding = value


class ReplyHeaderDecoder:
    """One connection's reply decoder: hpack's, with a cache of blocks that leave the
    table as it was. Any block that changes the table empties the cache."""

    __slots__ = ("decoder", "cache")

    def __init__(self, table_size: int = 4096) -> None:
        self.decoder = hpack.Decoder(max_header_list_size=MAX_HEADER_LIST_SIZE)
        self.decoder.max_allowed_table_size = table_size
        self.cache: dict[bytes, HeaderInfo] = {}

    def decode(self, block: bytes) -> HeaderInfo:
        info = self.cache.get(block)
        if info is not None:
            return info
        table = self.decoder.header_table
        before = (table._current_size, tuple(table.dynamic_entries))
        try:
            headers = [(bytes(n), bytes(v)) for n, v in self.decoder.decode(block, raw=True)]
        except hpack.HPACKError as error:
            raise frames.ConnectionError_(
                frames.COMPRESSION_ERROR, f"a header block hpack cannot decode: {error}"
            ) from None
        except (IndexError, ValueError, UnicodeDecodeError) as error:
            raise frames.ConnectionError_(
                frames.COMPRESSION_ERROR, f"a malformed header block: {error}"
            ) from None
        info = HeaderInfo(headers)
        if (table._current_size, tuple(table.dynamic_entries)) == before:
            if len(self.cache) > 64:
                self.cache.clear()
            self.cache[block] = info
        else:
            self.cache.clear()
        return info
