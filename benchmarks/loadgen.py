"""How expensive is each load generator? (``nox -s bench``)

Starts one fixed server (grpcio-aio, pinned to its own CPU) and drives it at a
high concurrency with each driver in turn (the built-in one, and ghz when it is
installed), interleaved over several rounds so drift hits both alike. Prints per
round and as medians:
- the rate reached, and who was saturated (generator and/or server),
- the generator's CPU microseconds per RPC (its cost; lower is better),
- the ratios built-in / ghz, measured side by side in this one run.
Numbers to track over time, not assertions: machines here are noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
from dataclasses import dataclass, field

from grpcbench.load.driver import MEASUREMENT_STARTED, LoadDriver, make_driver
from grpcbench.load.model import LoadSpec
from grpcbench.monitor import ProcessMonitor
from grpcbench.servers.launcher import start_server
from grpcbench.servers.spec import parse_server_spec

SERVER_SATURATED = 0.9


@dataclass
class Samples:
    rps: list[float] = field(default_factory=list)
    cpu_us_per_rpc: list[float] = field(default_factory=list)


def _cpus() -> tuple[tuple[int, ...], tuple[int, ...]]:
    cpus = sorted(os.sched_getaffinity(0))
    return ((cpus[0],), tuple(cpus[1:])) if len(cpus) > 1 else ((), ())


async def _measure(driver: LoadDriver, spec: LoadSpec, pid: int) -> tuple[float, float, str]:
    monitor = ProcessMonitor(pid)
    result = await driver.run(spec, lambda n: monitor.start() if n == MEASUREMENT_STARTED else None)
    usage = monitor.stop()
    busy = [
        name
        for name, saturated in (
            ("generator", result.client_saturated),
            ("server", usage.cpu_fraction >= SERVER_SATURATED),
        )
        if saturated
    ]
    return result.rps, result.client_cpu_s / result.count * 1e6, ", ".join(busy) or "-"


async def bench(args: argparse.Namespace) -> None:
    server_cpus, client_cpus = _cpus()
    drivers = [make_driver(name, args.processes) for name in args.drivers.split(",")]
    server = await start_server(parse_server_spec(args.server), "hello", {}, cpus=server_cpus)
    print(f"server {args.server} on CPUs {list(server_cpus)}; generators on {list(client_cpus)}")
    print(f"concurrency {args.concurrency}, {args.requests} calls per run\n")
    print(f"{'round':>5} {'driver':>8} {'req/s':>9} {'CPU us/RPC':>11}  saturated")
    samples = {driver.name: Samples() for driver in drivers}
    spec = LoadSpec(
        target=server.address, service="hello", concurrency=args.concurrency,
        requests=args.requests, warmup_requests=args.requests // 10,
        connections=max(1, args.concurrency // 50), cpus=client_cpus,
    )  # fmt: skip
    try:
        for round_number in range(1, args.repeat + 1):
            for driver in drivers:
                rps, cost, busy = await _measure(driver, spec, server.pid)
                samples[driver.name].rps.append(rps)
                samples[driver.name].cpu_us_per_rpc.append(cost)
                print(f"{round_number:>5} {driver.name:>8} {rps:>9.0f} {cost:>11.1f}  {busy}")
    finally:
        await server.stop()
    print()
    for name, sample in samples.items():
        print(
            f"median {name:>8}: {statistics.median(sample.rps):.0f} req/s,"
            f" {statistics.median(sample.cpu_us_per_rpc):.1f} CPU us/RPC"
        )
    if "builtin" in samples and "ghz" in samples:
        median = statistics.median
        builtin, ghz = samples["builtin"], samples["ghz"]
        rate = median(builtin.rps) / median(ghz.rps)
        cost = median(builtin.cpu_us_per_rpc) / median(ghz.cpu_us_per_rpc)
        print(f"built-in / ghz: rate reached {rate:.2f}x, CPU per RPC {cost:.2f}x")
        print("(where the server is saturated, the rate is the server's, not the generator's max)")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--server", default="grpcio-aio")
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--processes", type=int, default=1, help="built-in generator processes")
    parser.add_argument("--drivers", default="builtin,ghz" if shutil.which("ghz") else "builtin")
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
