"""The wire stack's own CPU per unary call, with no server and no socket (``nox -s wire_replay``).

The built-in generator's callback closed loop runs on one wire connection whose
transport is a stand-in: what the connection writes is parsed here, and each
request's reply (HEADERS, one DATA, trailers, pre-encoded) is handed back to
``data_received`` in the next loop iteration, as one socket read per batch. The
stand-in's own time is measured and taken out, so what is left is the client's
Python per call: framing, parsing, the stream's states, recording. No kernel, no
server and no other process share the figure, so it moves only when the code does
(a change's effect is seen in a run of seconds, where ``nox -s loadgen`` needs a
server pinned to a core and several rounds).

Prints the CPU microseconds per call of each round and their median.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

import hpack

from grpcbench.contract.calls import UnaryPlan
from grpcbench.load.callback_loops import wire_closed_loop_phase
from grpcbench.load.closed_loop import Budget
from grpcbench.load.recorders import level_recorders
from grpcbench.load.wire_calls import WireUnaryCalls
from grpcbench.model.load_result import GeneratorJob
from grpcbench.wire import frames
from grpcbench.wire.channel import WireChannel
from grpcbench.wire.connection import Connection

REQUEST = b"\n\x05world"  # helloworld.HelloRequest(name="world")
REPLY = b"\n\x0bHello world"


class ReplayingTransport:
    """Stands in for the socket: replies to every request the connection writes."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.loop = asyncio.get_running_loop()
        self.splitter = frames.FrameSplitter()
        self.started = False
        self.own_s = 0.0  # this stand-in's CPU time, taken out of the figure
        encoder = hpack.Encoder()  # never-indexed fields: each block decodes alike
        self.headers = encoder.encode([(":status", "200", True),
                                       ("content-type", "application/grpc", True)])  # fmt: skip
        self.trailers = encoder.encode([("grpc-status", "0", True), ("grpc-message", "", True)])
        self.message = b"\0" + len(REPLY).to_bytes(4, "big") + REPLY

    def write(self, data: bytes) -> None:
        start = time.process_time()
        if not self.started:
            self.started = True
            data = data[len(frames.PREFACE) :]
            self.loop.call_soon(self._deliver, frames.settings_frame({}))
        replies = []
        taken = 0  # request DATA bytes: the connection window is given back at once
        for kind, _, stream_id, payload in self.splitter.split(data):
            if kind == frames.DATA:
                taken += len(payload)
            elif kind == frames.HEADERS:
                replies.append(
                    frames.frame(frames.HEADERS, frames.END_HEADERS, stream_id, self.headers)
                    + frames.frame(frames.DATA, 0, stream_id, self.message)
                    + frames.frame(
                        frames.HEADERS,
                        frames.END_HEADERS | frames.END_STREAM,
                        stream_id,
                        self.trailers,
                    )  # fmt: skip
                )
        if taken:
            replies.insert(0, frames.window_update(0, taken))
        if replies:
            self.loop.call_soon(self._deliver, b"".join(replies))
        self.own_s += time.process_time() - start

    def _deliver(self, data: bytes) -> None:
        self.connection.data_received(data)

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass

    abort = close

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default


async def one_round(calls: int, concurrency: int) -> float:
    """CPU microseconds per call of ``calls`` calls, the stand-in's time taken out."""
    channel = WireChannel("127.0.0.1:1")
    connection = Connection(channel)
    transport = ReplayingTransport(connection)
    connection.connection_made(transport)  # type: ignore[arg-type]
    await connection.ready
    channel.connection = connection
    plan = UnaryPlan(path="/helloworld.Greeter/SayHello", request=REQUEST)
    spec = GeneratorJob.from_json(_spec_json(calls, concurrency))
    wire_calls = WireUnaryCalls([channel], plan, spec.settings.timeout_s, per_user=False)
    recorders = level_recorders(0)
    budget = Budget.for_phase(calls, 0.0, 600.0)
    start = time.process_time()
    own_before = transport.own_s
    await wire_closed_loop_phase(wire_calls, spec, budget, recorders, None)
    spent = time.process_time() - start - (transport.own_s - own_before)
    assert recorders.statuses["OK"] == calls, dict(recorders.statuses)
    connection.abort()
    return spent / calls * 1e6


def _spec_json(calls: int, concurrency: int) -> dict[str, Any]:
    return {
        "target": "127.0.0.1:1", "service": "hello",
        "plan": {"concurrency": concurrency},
        "settings": {"timeout_s": 20.0, "requests": calls},
        "share": {"concurrency": concurrency, "requests": calls, "warmup_requests": 0,
                  "connections": 1},
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    import uvloop

    results = []
    for round_number in range(1, args.rounds + 1):
        cost = uvloop.run(one_round(args.calls, args.concurrency))
        results.append(cost)
        print(f"round {round_number}: {cost:.2f} us CPU per call")
    print(f"median: {statistics.median(results):.2f} us CPU per call"
          f" ({args.calls:,} calls, concurrency {args.concurrency})")  # fmt: skip


if __name__ == "__main__":
    main()
