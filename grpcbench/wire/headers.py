"""Header blocks: requests encoded per connection and cached, replies decoded and cached.

Requests use the dynamic table as grpc's own clients do, so after a
connection's first call a request's header block is a few index bytes: the
server decodes what it would decode from grpc-go or grpcio, and its CPU per
call is not inflated by the instrument. Each connection has one
``hpack.Encoder`` and encodes in the order frames leave; once encoding a
request's fields leaves the table unchanged, those bytes are what every later
call with the same fields encodes to, so they are cached by the fields' key
(``RequestEncoder``). Fields that change per call (templated metadata) are
encoded apart, as never-indexed literals that leave no state
(``encode_fields``), and appended to the cached block.

Replies use the server's dynamic table, so one ``hpack.Decoder`` per
connection decodes every block in order; a block whose decoding left the table
unchanged is cached by its bytes, because decoding it again in the same table
gives the same headers (``ReplyHeaderDecoder``).
"""

from __future__ import annotations

import base64
from collections.abc import Hashable, Iterable, Sequence

import hpack

from grpcbench.wire import frames
from grpcbench.wire.status import OK, decode_message, encode_timeout, parse_status

USER_AGENT = "grpcbench-wire/1"
# Our SETTINGS_MAX_HEADER_LIST_SIZE: the most decoded header bytes a reply may carry.
MAX_HEADER_LIST_SIZE = 1 << 20
# A reply's decoded headers as (name, value) bytes pairs.
HeaderList = list[tuple[bytes, bytes]]


_ENCODER = hpack.Encoder()  # only ever given never-indexed fields: its table stays empty


def encode_fields(fields: Iterable[tuple[str, str]]) -> bytes:
    """Fields as never-indexed literals (static-table matches stay indexed): no
    dynamic-table state on either side, so the bytes can go in any block."""
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


class RequestFields:
    """A call's request headers: the fields that repeat from call to call (``key``, an
    identity token, names them for the encoder's cache: hashing it is free) and a
    stateless tail of per-call fields."""

    __slots__ = ("key", "fields", "tail")

    def __init__(
        self, fields: list[tuple[str, str]], tail: bytes = b"", key: Hashable | None = None
    ) -> None:
        self.key = key if key is not None else object()
        self.fields = fields
        self.tail = tail

    def with_tail(self, tail: bytes) -> RequestFields:
        """The same repeating fields (and cache entry) with another per-call tail."""
        return RequestFields(self.fields, tail, self.key)


def request_fields(
    path: str,
    authority: str,
    scheme: str,
    timeout_s: float | None,
    metadata: Sequence[tuple[str, str | bytes]] | None = None,
    varying: Sequence[tuple[str, str | bytes]] | None = None,
) -> RequestFields:
    """The fields of a call, in gRPC's order (reserved first); ``metadata`` repeats
    (indexed), ``varying`` changes per call (never indexed, in the tail)."""
    fields = [
        (":method", "POST"),
        (":scheme", scheme),
        (":path", path),
        (":authority", authority),
        ("content-type", "application/grpc"),
        ("te", "trailers"),
        # What grpc sends: a server that picks compression per call (grpc-go's
        # SetSendCompressor) compresses for wire calls as it does for grpc's.
        ("grpc-accept-encoding", "identity,deflate,gzip"),
        ("user-agent", USER_AGENT),
    ]
    if timeout_s is not None:
        fields.append(("grpc-timeout", encode_timeout(timeout_s)))
    fields.extend(metadata_fields(metadata))
    tail = encode_fields(metadata_fields(varying)) if varying else b""
    return RequestFields(fields, tail)


class RequestFrames:
    """A whole unary request as it left a connection once: its HEADERS frame's first 5
    bytes (``head``), then the stream id, the header block and DATA's first 5 bytes
    (``middle``), the stream id again, and ``body``. The next call with the same
    fields and body is these bytes with its own stream id: no encoding, no framing."""

    __slots__ = ("body", "head", "middle", "length")

    def __init__(self, body: bytes, head: bytes, middle: bytes) -> None:
        self.body = body
        self.head = head
        self.middle = middle
        self.length = len(body)  # what it takes from the connection's send window


class RequestEncoder:
    """One connection's request encoder: hpack's, with the dynamic table, plus a cache
    of each fields' steady-state block (valid while the table stays as it is), and of
    the whole unary requests sent with those blocks (``unary``)."""

    __slots__ = ("encoder", "cache", "unary")

    def __init__(self) -> None:
        self.encoder = hpack.Encoder()
        self.cache: dict[Hashable, bytes] = {}
        self.unary: dict[RequestFields, RequestFrames] = {}

    def table_size(self, size: int) -> None:
        """The peer's SETTINGS_HEADER_TABLE_SIZE: hpack announces it in the next block."""
        if size != self.encoder.header_table_size:
            self.encoder.header_table_size = size
            self.forget()

    def forget(self) -> None:
        """Blocks and frames no longer valid: the table, or the peer's settings, changed."""
        self.cache.clear()
        self.unary.clear()

    def encode(self, request: RequestFields) -> bytes:
        block = self.cache.get(request.key)
        if block is None:
            table = self.encoder.header_table
            before = (table.maxsize, tuple(table.dynamic_entries))
            block = bytes(self.encoder.encode(request.fields, huffman=True))
            if (table.maxsize, tuple(table.dynamic_entries)) == before and not (
                block and block[0] & 0xE0 == 0x20  # a table size update is not repeatable
            ):
                if len(self.cache) > 256:
                    self.cache.clear()
                self.cache[request.key] = block
            else:
                self.forget()
        return block + request.tail if request.tail else block

    def remember_unary(
        self, request: RequestFields, body: bytes, head: bytes, middle: bytes
    ) -> None:
        """A whole request just framed (``RequestFrames``): kept when its block is the
        fields' steady one and nothing in it changes per call, the first body only (a
        workload whose request varies frames each one anew)."""
        if request.tail or request.key not in self.cache or request in self.unary:
            return
        if len(self.unary) > 256:
            self.unary.clear()
        self.unary[request] = RequestFrames(body, head, middle)


class HeaderInfo:
    """A decoded reply block and the fields the transport reads from it, parsed once."""

    __slots__ = (
        "headers", "grpc_status", "grpc_message", "http_status", "encoding", "size", "plain",
        "plain_ok",
    )  # fmt: skip

    def __init__(self, headers: HeaderList) -> None:
        self.headers = headers
        self.grpc_status = -1  # absent
        self.grpc_message = ""
        self.http_status = 0
        self.encoding = b""
        # Metadata size as grpc counts it against its limits: name, value and 32 each.
        self.size = sum(len(name) + len(value) for name, value in headers) + 32 * len(headers)
        for name, value in headers:
            if name == b"grpc-status":
                self.grpc_status = parse_status(value)
            elif name == b"grpc-message":
                self.grpc_message = decode_message(value)
            elif name == b":status":
                self.http_status = int(value) if value.isdigit() and len(value) == 3 else 0
            elif name == b"grpc-encoding":
                self.encoding = value
        # Nothing here to check further: HTTP 200 (or none) and under grpc's soft limit.
        self.plain = self.http_status in (0, 200) and self.size <= METADATA_SOFT_LIMIT
        self.plain_ok = self.plain and self.grpc_status == OK  # OK trailers, plain


# grpc's limits on received metadata (GRPC_ARG_MAX_METADATA_SIZE and its hard limit):
# above the soft one a call is refused with a probability that grows to 1 at the hard one.
METADATA_SOFT_LIMIT = 8 * 1024
METADATA_HARD_LIMIT = 16 * 1024


def metadata_refusal(size: int, draw: float) -> str | None:
    """grpc's refusal of a reply's metadata of ``size`` bytes (``draw`` uniform in [0, 1)),
    in its words, or None when it is taken."""
    if size > METADATA_HARD_LIMIT:
        return f"received metadata size exceeds hard limit ({size} vs. {METADATA_HARD_LIMIT})"
    over = (size - METADATA_SOFT_LIMIT) / (METADATA_HARD_LIMIT - METADATA_SOFT_LIMIT)
    if size > METADATA_SOFT_LIMIT and draw < over:
        return f"received metadata size exceeds soft limit ({size} vs. {METADATA_SOFT_LIMIT})"
    return None


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
