"""How expensive is grpcbench's own load generator? (``nox -s bench``)

Starts one fixed server (grpcio-aio on its own CPU) and drives it with the
built-in generator on another CPU at a high concurrency, several times, then
prints per run and as a median:
- the generator's CPU microseconds per RPC (its cost; lower is better),
- the rate reached and whether the generator or the server was saturated,
- the ratio of generator to server CPU per RPC, measured side by side.
A number to track over time, not an assertion: machines here are noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics

from grpcbench.load.builtin import BuiltinDriver
from grpcbench.load.model import LoadSpec
from grpcbench.monitor import ProcessMonitor
from grpcbench.servers.launcher import start_server
from grpcbench.servers.spec import parse_server_spec


def _cpus() -> tuple[tuple[int, ...], tuple[int, ...]]:
    cpus = sorted(os.sched_getaffinity(0))
    return ((cpus[0],), tuple(cpus[1:])) if len(cpus) > 1 else ((), ())


async def bench(server_spec: str, concurrency: int, requests: int, repeat: int, procs: int) -> None:
    server_cpus, client_cpus = _cpus()
    server = await start_server(parse_server_spec(server_spec), "hello", {}, cpus=server_cpus)
    print(f"server {server_spec} on CPUs {list(server_cpus)}; generator on {list(client_cpus)}")
    print(f"concurrency {concurrency}, {requests} calls per run, {procs} generator process(es)\n")
    header = f"{'run':>3} {'req/s':>9} {'gen us/RPC':>11} {'srv us/RPC':>11} {'gen/srv':>8}"
    print(header + "  saturated")
    rates, gen_costs, ratios = [], [], []
    try:
        for run in range(1, repeat + 1):
            spec = LoadSpec(
                target=server.address, service="hello", concurrency=concurrency,
                requests=requests, warmup_requests=requests // 10,
                connections=max(1, concurrency // 50), cpus=client_cpus,
            )  # fmt: skip
            monitor = ProcessMonitor(server.pid)
            result = await BuiltinDriver(processes=procs).run(
                spec, lambda n: monitor.start() if n < 0 else None
            )
            usage = monitor.stop()
            gen_us = result.client_cpu_s / result.count * 1e6
            srv_us = usage.cpu_s / result.count * 1e6
            saturated = [
                name
                for name, busy in (
                    ("generator", result.client_saturated),
                    ("server", usage.cpu_fraction >= 0.9),
                )
                if busy
            ]
            rates.append(result.rps)
            gen_costs.append(gen_us)
            ratios.append(gen_us / srv_us if srv_us else float("nan"))
            print(
                f"{run:>3} {result.rps:>9.0f} {gen_us:>11.1f} {srv_us:>11.1f} {ratios[-1]:>8.2f}"
                f"  {', '.join(saturated) or '-'}"
            )
    finally:
        await server.stop()
    print(
        f"\nmedian: {statistics.median(rates):.0f} req/s, generator"
        f" {statistics.median(gen_costs):.1f} CPU us/RPC, generator/server CPU per RPC"
        f" {statistics.median(ratios):.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="grpcio-aio")
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--processes", type=int, default=1)
    args = parser.parse_args()
    asyncio.run(bench(args.server, args.concurrency, args.requests, args.repeat, args.processes))


if __name__ == "__main__":
    main()
