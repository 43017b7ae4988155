"""The three-client cross-check of the verdicts (``nox -s crosscheck``).

For each server kind (pinned to its own CPU), three independent clients - the
built-in driver, ghz (when installed) and a bare grpc.aio loop
(``bare_loop.py``) - each alone on the other CPU(s), drive the same server at
the same concurrency, interleaved over rounds. If they reach about the same
rate, the server was the limit, whatever the generator's CPU share said; the
built-in driver's verdict must then be server-bound (or both saturated).
Prints medians per server and client, and the built-in driver's verdict.
Numbers to read side by side, not assertions: machines here are noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics

from loadgen import BareLoopDriver  # benchmarks/, this script's directory

from grpcbench.load.catalogue import make_driver
from grpcbench.load.driver import DriverSettings
from grpcbench.measure import measure_level
from grpcbench.options import default_placement
from grpcbench.plan import LevelPlan, LoadSettings
from grpcbench.results import LevelResult
from grpcbench.servers.launcher import RunningServer, start_server
from grpcbench.servers.spec import parse_server_spec
from grpcbench.targets.started import StartedServer


async def _level(client: str, server: RunningServer, args: argparse.Namespace) -> LevelResult:
    """One client's level, measured the same way for all three."""
    placement = default_placement()
    settings = LoadSettings(
        requests=args.requests, warmup_requests=args.requests // 10,
        client_cpus=placement.client_cpus,
    )  # fmt: skip
    driver = (
        BareLoopDriver()
        if client == "bare loop"
        else make_driver(client, DriverSettings(client_processes=1))
    )
    return await measure_level(
        driver,
        StartedServer(server),
        LevelPlan(args.concurrency, connection="auto"),
        settings,
        scenario="hello",
        service="hello",
        workload_params={},
    )


async def crosscheck(args: argparse.Namespace) -> None:
    placement = default_placement()
    clients = ["builtin", "bare loop"] + (["ghz"] if shutil.which("ghz") else [])
    print(
        f"server on CPUs {list(placement.server_cpus)}, each client alone on"
        f" {list(placement.client_cpus)}; concurrency {args.concurrency},"
        f" {args.requests} calls, {args.rounds} interleaved rounds\n"
    )
    print(f"{'server':<18} {'client':<10} {'req/s (median)':>15} {'rounds':>28}  verdict")
    for spec in args.servers:
        rates: dict[str, list[float]] = {client: [] for client in clients}
        verdicts: list[str] = []
        for _ in range(args.rounds):
            for client in clients:
                server = await start_server(
                    parse_server_spec(spec), "hello", {}, cpus=placement.server_cpus
                )
                try:
                    level = await _level(client, server, args)
                    rates[client].append(level.load.rps)
                    if client == "builtin":
                        verdicts.append(level.verdict)
                finally:
                    await server.stop()
        for client in clients:
            shown = ", ".join(f"{r:,.0f}" for r in rates[client])
            verdict = ", ".join(dict.fromkeys(verdicts)) if client == "builtin" else ""
            median = statistics.median(rates[client])
            print(f"{spec:<18} {client:<10} {median:>15,.0f} {shown:>28}  {verdict}")
        reference = statistics.median(rates["bare loop"])
        ratios = ", ".join(
            f"{c} / bare loop = {statistics.median(rates[c]) / reference:.2f}x"
            for c in clients
            if c != "bare loop"
        )
        print(f"{'':<18} {ratios}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--servers", nargs="+", default=["grpcio:workers=1", "grpclib", "grpcio-aio"]
    )
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=2)
    asyncio.run(crosscheck(parser.parse_args()))


if __name__ == "__main__":
    main()
