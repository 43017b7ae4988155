"""The floor of a pure-Python gRPC client: what a call costs CPython before gRPC's rules.

A uvloop ``Protocol`` on one HTTP/2 connection, closed loop of C calls of
SayHello (or ``--path`` with ``--request-hex``: a unary call or a server stream),
with only what a benchmark's call cannot do without:
- the request's frames encoded once, each call's a copy with its own stream id;
- one small object per call (its id, user, start, deadline, messages, status);
- each call's status counted, and its latency recorded in grpcbench's HDR recorder;
- deadline ordering as the wire stack watches it (the timer itself is not set);
- the connection's receive window given back, PING and SETTINGS answered;
- writes flushed once 8 are queued and at the end of each loop iteration.

And nothing of gRPC's rules: no stream states, no per-stream windows, no
CONTINUATION, no checks of flags, padding, HTTP statuses or header lists, no budget
or time limit. Whatever the wire stack spends above this is the price of those
rules in Python; what this spends above h2load is CPython's own
(``nox -s loadgen -- --generators h2load,floor,builtin``; ``nox -s streaming``
runs it on ListFeatures for the same per reply message).

Prints ``{"event": "measuring"}`` when its warm-up ends, then one JSON line:
calls, wall seconds, req/s and CPU microseconds per call (as bare_loop.py), and
the reply messages counted.

    python benchmarks/python_floor.py 127.0.0.1:50051 --concurrency 50 --requests 20000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import struct
import time

import hpack
import uvloop

from grpcbench.base.parsing import parse_host_port
from grpcbench.proto import helloworld_pb2
from grpcbench.stats.histogram import LatencyRecorder

FRAME = struct.Struct(">BHBBL")  # length (high byte, low 16 bits), type, flags, stream id
MESSAGE = struct.Struct(">BL")  # a gRPC message's compressed flag and length
DATA, HEADERS, SETTINGS, PING, WINDOW_UPDATE = 0, 1, 4, 6, 8
END_STREAM = ACK = 1
END_HEADERS = 4
WINDOW = 1 << 30  # what the client gives the server, for the connection
CREDIT_AT = WINDOW >> 2
EARLY_FLUSH = 8  # as grpcbench.wire.writer
TIMEOUT_S = 20.0
HELLO = helloworld_pb2.HelloRequest(name="world").SerializeToString()


def frame(kind: int, flags: int, stream_id: int, payload: bytes) -> bytes:
    length = len(payload)
    return FRAME.pack(length >> 16, length & 0xFFFF, kind, flags, stream_id) + payload


class Call:
    """One call: only what the loop reads."""

    __slots__ = ("id", "user", "started", "deadline", "messages", "status")

    def __init__(self, user: int, started: int) -> None:
        self.user = user
        self.started = started  # perf_counter_ns
        self.deadline = started * 1e-9 + TIMEOUT_S
        self.id = 0
        self.messages = 0
        self.status = -1


class FloorClient(asyncio.Protocol):
    """The closed loop: each call's trailers start the same user's next call."""

    def __init__(self, authority: str, concurrency: int, path: str, request: bytes) -> None:
        self.concurrency = concurrency
        self.left = 0
        self.done: asyncio.Future[None] | None = None
        self.loop = asyncio.get_event_loop()
        self.transport: asyncio.Transport | None = None
        self.buffer = b""
        self.decoder = hpack.Decoder()
        # reply header blocks, decoded once: their grpc-status (-1: none, reply headers)
        self.blocks: dict[bytes, int] = {}
        self.statuses: dict[int, int] = {}
        self.calls: dict[int, Call] = {}
        self.next_id = 1
        self.out: list[bytes] = []
        self.scheduled = False
        self.received = 0
        self.latency = LatencyRecorder()
        self.ended = 0
        self.messages = 0
        self.latest = -math.inf  # deadline ordering, as wire.deadlines.Deadlines.watch
        self.ordered = True
        self.due = math.inf
        fields = [(":method", "POST"), (":scheme", "http"),
                  (":path", path), (":authority", authority),
                  ("content-type", "application/grpc"), ("te", "trailers"),
                  ("grpc-timeout", f"{int(TIMEOUT_S)}S")]  # fmt: skip
        encoder = hpack.Encoder()
        self.first_block = bytes(encoder.encode(fields))  # fills the table
        block = bytes(encoder.encode(fields))  # the steady block: table indexes
        self.body = MESSAGE.pack(0, len(request)) + request
        self.head = FRAME.pack(0, len(block), HEADERS, END_HEADERS, 0)[:5]
        self.middle = block + FRAME.pack(0, len(self.body), DATA, END_STREAM, 0)[:5]

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.transport.write(  # type: ignore[union-attr]
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(SETTINGS, 0, 0, b"")
            + frame(WINDOW_UPDATE, 0, 0, (WINDOW - 65535).to_bytes(4, "big"))
        )  # fmt: skip

    def run(self, calls: int) -> asyncio.Future[None]:
        """Start ``calls`` calls over the users; the future is done when all ended."""
        self.left = calls
        self.done = self.loop.create_future()
        now = time.perf_counter_ns()
        for user in range(min(self.concurrency, calls)):
            self.send(user, now)
        return self.done

    def send(self, user: int, now: int) -> None:
        self.left -= 1
        call = Call(user, now)
        deadline = call.deadline
        if deadline >= self.latest:
            self.latest = deadline
        else:
            self.ordered = False
        if deadline < self.due:
            self.due = deadline
        stream_id = self.next_id
        self.next_id = stream_id + 2
        call.id = stream_id
        self.calls[stream_id] = call
        if self.first_block:
            block, self.first_block = self.first_block, b""
            self.write(frame(HEADERS, END_HEADERS, stream_id, block)
                       + frame(DATA, END_STREAM, stream_id, self.body))  # fmt: skip
            return
        sid = stream_id.to_bytes(4, "big")
        self.write(self.head + sid + self.middle + sid + self.body)

    def write(self, data: bytes) -> None:
        out = self.out
        out.append(data)
        if len(out) >= EARLY_FLUSH:
            self.flush()
        elif not self.scheduled:
            self.scheduled = True
            self.loop.call_soon(self.end_of_iteration)

    def end_of_iteration(self) -> None:
        self.scheduled = False
        self.flush()

    def flush(self) -> None:
        if self.out and self.transport is not None:
            self.transport.write(b"".join(self.out))
        self.out.clear()

    def data_received(self, data: bytes) -> None:
        if self.buffer:
            data = self.buffer + data
        size = len(data)
        position = 0
        calls = self.calls
        while size - position >= 9:
            high, low, kind, flags, stream_id = FRAME.unpack_from(data, position)
            start = position + 9
            end = start + ((high << 16) | low)
            if end > size:
                break
            position = end
            call = calls.get(stream_id)
            if kind == DATA:
                self.received += end - start
                if self.received >= CREDIT_AT:
                    self.write(frame(WINDOW_UPDATE, 0, 0, self.received.to_bytes(4, "big")))
                    self.received = 0
                if call is not None and MESSAGE.unpack_from(data, start) == (0, end - start - 5):
                    call.messages += 1
            elif kind == HEADERS:
                block = data[start:end]
                code = self.blocks.get(block)
                if code is None:  # decoded once, in order: the table in step
                    fields = {str(name): str(value) for name, value in self.decoder.decode(block)}
                    code = self.blocks[block] = int(fields.get("grpc-status", "-1"))
                if flags & END_STREAM and call is not None:
                    del calls[stream_id]
                    call.status = code
                    self.end(call)
            elif kind == SETTINGS and not flags & ACK:
                self.write(frame(SETTINGS, ACK, 0, b""))
            elif kind == PING and not flags & ACK:
                self.write(frame(PING, ACK, 0, data[start:end]))
        self.buffer = data[position:]

    def end(self, call: Call) -> None:
        now = time.perf_counter_ns()
        self.ended += 1
        self.statuses[call.status] = self.statuses.get(call.status, 0) + 1
        self.messages += call.messages
        self.latency.record((now - call.started) // 1000)
        if self.left > 0:
            self.send(call.user, now)
        elif not self.calls and self.done is not None and not self.done.done():
            self.done.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.done is not None and not self.done.done():
            self.done.set_exception(ConnectionError(f"connection lost: {exc}"))


async def floor_loop(
    target: str, concurrency: int, requests: int, warmup: int, path: str, request: bytes
) -> dict[str, float]:
    host, port = parse_host_port(target)
    loop = asyncio.get_running_loop()
    _, client = await loop.create_connection(
        lambda: FloorClient(target, concurrency, path, request), host, port
    )  # fmt: skip
    if warmup:
        await client.run(warmup)
    print(json.dumps({"event": "measuring"}), flush=True)
    ended, messages, ok = client.ended, client.messages, client.statuses.get(0, 0)
    cpu, wall = time.process_time(), time.perf_counter()
    await client.run(requests)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if client.transport is not None:
        client.transport.close()
    ended, messages = client.ended - ended, client.messages - messages
    ok = client.statuses.get(0, 0) - ok
    if ok != requests or messages < requests:  # every call OK, with a reply each
        raise SystemExit(f"{ok} of {requests} calls ended OK, with {messages} replies")
    return {"calls": requests, "wall_s": wall, "cpu_s": cpu, "rps": requests / wall,
            "cpu_us_per_call": cpu / requests * 1e6, "messages": messages}  # fmt: skip


def main() -> None:
    """The arguments and output of bare_loop.py (clients.ScriptDriver runs both)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("target")
    for option, default in (("--concurrency", 50), ("--requests", 20000), ("--warmup", 2000)):
        parser.add_argument(option, type=int, default=default)
    parser.add_argument("--path", default="/helloworld.Greeter/SayHello")
    parser.add_argument("--request-hex", default=HELLO.hex(), help="the serialized request")
    args = parser.parse_args()
    request = bytes.fromhex(args.request_hex)
    run = floor_loop(
        args.target, args.concurrency, args.requests, args.warmup, args.path, request
    )  # fmt: skip
    print(json.dumps(uvloop.run(run)))


if __name__ == "__main__":
    main()
