"""What does running the generator on Dask cost? (``nox -s cluster``)

One server, pinned to its own CPU, driven at one concurrency by the built-in
engine in three set-ups, interleaved over rounds so drift hits all alike:
- ``processes:2``: two generator processes (``--client-processes 2``);
- ``dask:1`` and ``dask:2``: one and two workers of a Dask LocalCluster
  (``--cluster local:2``, with ``--cluster-workers``).
Prints every run, the medians of the rate and of the client CPU microseconds
per call, and the ratios dask / processes: the engine's overhead per call.
Numbers to track, not assertions: machines here are shared and noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics

from grpcbench.load.builtin import BuiltinDriver
from grpcbench.load.cluster import ClusterDriver
from grpcbench.load.driver import LoadDriver
from grpcbench.model.placement import default_placement
from grpcbench.run.level_options import level_context
from grpcbench.servers.launcher import start_server
from grpcbench.servers.spec import parse_server_spec
from grpcbench.targets.started import StartedServer


async def bench(args: argparse.Namespace) -> None:
    placement = default_placement()
    server = await start_server(
        parse_server_spec(args.server), "hello", {}, cpus=placement.server_cpus
    )
    clusters = [ClusterDriver("local:2", 1), ClusterDriver("local:2", 2)]
    setups: dict[str, LoadDriver] = {
        "processes:2": BuiltinDriver(2),
        "dask:1": clusters[0],
        "dask:2": clusters[1],
    }
    context = level_context(
        server.address, concurrency=args.concurrency, requests=args.requests,
        warmup=args.requests // 10,
    )  # fmt: skip
    rates: dict[str, list[float]] = {name: [] for name in setups}
    costs: dict[str, list[float]] = {name: [] for name in setups}
    print(f"server {args.server} on CPUs {list(placement.server_cpus)}; clients on"
          f" {list(placement.client_cpus)}; concurrency {args.concurrency},"
          f" {args.requests} calls per run\n")  # fmt: skip
    try:
        for round_number in range(1, args.repeat + 1):
            for name, driver in setups.items():
                level = await context.measure_level(
                    driver, StartedServer(server), context.options.levels[0]
                )
                cost = level.generator_cpu_us_per_call or 0.0
                rates[name].append(level.measured.rps)
                costs[name].append(cost)
                print(f"{round_number:>5} {name:>12} {level.measured.rps:>9.0f} req/s"
                      f" {cost:>8.1f} CPU us/call  {level.verdict}")  # fmt: skip
    finally:
        for cluster in clusters:
            cluster.close()
        await server.stop()
    print()
    for name in setups:
        print(f"median {name:>12}: {statistics.median(rates[name]):>7.0f} req/s,"
              f" {statistics.median(costs[name]):>6.1f} CPU us/call")  # fmt: skip
    base_rate, base_cost = (
        statistics.median(rates["processes:2"]),
        statistics.median(costs["processes:2"]),
    )
    for name in ("dask:1", "dask:2"):
        print(f"{name} / processes:2: rate {statistics.median(rates[name]) / base_rate:.2f}x,"
              f" CPU per call {statistics.median(costs[name]) / base_cost:.2f}x")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--server", default="grpcio-aio")
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
