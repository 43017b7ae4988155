"""A bare grpc.aio client: the reference the built-in driver and ghz are checked against.

Forty lines with nothing of grpcbench in the loop: C tasks share one channel
(or ceil(C/50) like grpcbench), each calls SayHello until N calls are done.
Prints ``{"event": "measuring"}`` when its warm-up ends, then one JSON line:
calls, wall seconds, req/s and CPU microseconds per call.

    python benchmarks/bare_loop.py 127.0.0.1:50051 --concurrency 50 --requests 20000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import time

import grpc

from grpcbench.proto import helloworld_pb2, helloworld_pb2_grpc


async def bare_loop(target: str, concurrency: int, requests: int, warmup: int) -> dict[str, float]:
    channels = [
        grpc.aio.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])
        for _ in range(max(1, math.ceil(concurrency / 50)))
    ]
    stubs = [helloworld_pb2_grpc.GreeterStub(channel) for channel in channels]
    request = helloworld_pb2.HelloRequest(name="world")
    remaining = 0

    async def user(stub: helloworld_pb2_grpc.GreeterStub) -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await stub.SayHello(request, timeout=20)

    async def phase(calls: int) -> None:
        nonlocal remaining
        remaining = calls
        await asyncio.gather(*(user(stubs[i % len(stubs)]) for i in range(concurrency)))

    await phase(warmup)
    print(json.dumps({"event": "measuring"}), flush=True)
    cpu, wall = time.process_time(), time.perf_counter()
    await phase(requests)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    for channel in channels:
        await channel.close()
    return {"calls": requests, "wall_s": wall, "cpu_s": cpu, "rps": requests / wall,
            "cpu_us_per_call": cpu / requests * 1e6}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("target")
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--warmup", type=int, default=2000)
    args = parser.parse_args()
    result = asyncio.run(bare_loop(args.target, args.concurrency, args.requests, args.warmup))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
