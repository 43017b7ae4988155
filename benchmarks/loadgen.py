"""How expensive is each load generator? (``nox -s loadgen``)

Starts one fixed server (grpcio-aio, pinned to its own CPU) and drives it at a
high concurrency with each generator in turn - the built-in one in 1 and in 2
processes, and ghz when it is installed - interleaved over several rounds so
drift hits all alike. Prints per round and as medians:
- the rate reached, and the verdict on who limited it (grpcbench.verdict),
- the generator's CPU microseconds per RPC (its cost; lower is better),
- the ratios built-in / ghz and 2 / 1 built-in processes, side by side in one run.
Numbers to track over time, not assertions: machines here are noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
from dataclasses import dataclass, field

from grpcbench.load.catalogue import make_driver
from grpcbench.load.driver import DriverSettings, LoadDriver
from grpcbench.measure import measure_level
from grpcbench.options import default_placement
from grpcbench.plan import LevelPlan, LoadSettings
from grpcbench.servers.launcher import start_server
from grpcbench.servers.spec import parse_server_spec
from grpcbench.targets.base import Target
from grpcbench.targets.started import StartedServer


@dataclass
class Samples:
    rps: list[float] = field(default_factory=list)
    cpu_us_per_rpc: list[float] = field(default_factory=list)


async def _measure(
    driver: LoadDriver, target: Target, plan: LevelPlan, settings: LoadSettings
) -> tuple[float, float, str]:
    level = await measure_level(
        driver, target, plan, settings, scenario="hello", service="hello", workload_params={}
    )
    cost = level.generator_cpu_us_per_call
    assert cost is not None and level.server_usage is not None
    return level.load.rps, cost, level.verdict


async def bench(args: argparse.Namespace) -> None:
    placement = default_placement()  # the same placement as `grpcbench run`
    server_cpus, client_cpus = placement.server_cpus, placement.client_cpus
    drivers: dict[str, LoadDriver] = {}
    for entry in args.generators.split(","):
        name, _, processes = entry.partition(":")
        drivers[entry] = make_driver(name, DriverSettings(client_processes=int(processes or 1)))
    server = await start_server(parse_server_spec(args.server), "hello", {}, cpus=server_cpus)
    print(f"server {args.server} on CPUs {list(server_cpus)}; generators on {list(client_cpus)}")
    print(f"concurrency {args.concurrency}, {args.requests} calls per run\n")
    if len(client_cpus) < 2:
        print("note: the generators share one CPU, so 2 built-in processes cannot add capacity\n")
    print(f"{'round':>5} {'generator':>10} {'req/s':>9} {'CPU us/RPC':>11}  verdict")
    samples = {label: Samples() for label in drivers}
    settings = LoadSettings(
        requests=args.requests, warmup_requests=args.requests // 10, client_cpus=client_cpus
    )
    plan = LevelPlan(args.concurrency, connection=settings.connection_label(0))
    target = StartedServer(server)
    try:
        for round_number in range(1, args.repeat + 1):
            for label, driver in drivers.items():
                rps, cost, verdict = await _measure(driver, target, plan, settings)
                samples[label].rps.append(rps)
                samples[label].cpu_us_per_rpc.append(cost)
                print(f"{round_number:>5} {label:>10} {rps:>9.0f} {cost:>11.1f}  {verdict}")
    finally:
        await server.stop()
    print()
    for name, sample in samples.items():
        print(
            f"median {name:>10}: {statistics.median(sample.rps):.0f} req/s,"
            f" {statistics.median(sample.cpu_us_per_rpc):.1f} CPU us/RPC"
        )
    for a, b in (("builtin", "ghz"), ("builtin:2", "builtin")):
        if a in samples and b in samples:
            rate = statistics.median(samples[a].rps) / statistics.median(samples[b].rps)
            cost = statistics.median(samples[a].cpu_us_per_rpc) / statistics.median(
                samples[b].cpu_us_per_rpc
            )
            print(f"{a} / {b}: rate reached {rate:.2f}x, CPU per RPC {cost:.2f}x")
    print("(where the server is saturated, the rate is the server's, not the generator's max)")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--server", default="grpcio-aio")
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--generators",
        default="builtin,builtin:2" + (",ghz" if shutil.which("ghz") else ""),
        help="DRIVER[:PROCESSES],... to compare",
    )
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
