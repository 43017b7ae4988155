"""The cross-check of the verdicts with independent clients (``nox -s crosscheck``).

For each server kind (pinned to its own CPU), independent clients - the
built-in driver on its wire stack and on grpc.aio (``--client-stack grpcio``),
a bare grpc.aio loop (``bare_loop.py``), ghz and h2load when installed - each
alone on the other CPU(s), drive the same server at the same concurrency,
interleaved over rounds, a fresh server for every run. If they reach about the
same rate, the server was the limit, whatever the generator's CPU share said;
the built-in driver's verdict must then be server-bound (or both saturated).
The server's CPU per call beside each shows the requests cost it the same
whoever sends them. Prints medians; ``--save`` writes every run for
``scripts/render_results.py``. Numbers to read side by side, not assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics

from clients import make_generators, save_record  # benchmarks/, this script's directory

from grpcbench.load.driver import LoadDriver
from grpcbench.model.placement import default_placement
from grpcbench.model.results import LevelResult
from grpcbench.run.level_options import level_context
from grpcbench.servers.launcher import RunningServer, start_server
from grpcbench.servers.spec import parse_server_spec
from grpcbench.targets.started import StartedServer


async def _level(
    driver: LoadDriver, stack: str, server: RunningServer, args: argparse.Namespace
) -> LevelResult:
    """One client's level, measured the same way for all of them (run's options and
    its RunContext, as the runner and the plugin measure)."""
    context = level_context(
        server.address, concurrency=args.concurrency, requests=args.requests,
        warmup=args.requests // 10, client_stack=stack,
    )  # fmt: skip
    return await context.measure_level(driver, StartedServer(server), context.options.levels[0])


async def crosscheck(args: argparse.Namespace) -> None:
    placement = default_placement()
    clients = make_generators(args.clients)
    print(
        f"server on CPUs {list(placement.server_cpus)}, each client alone on"
        f" {list(placement.client_cpus)}; concurrency {args.concurrency},"
        f" {args.requests} calls, {args.rounds} interleaved rounds\n"
    )
    runs: list[dict[str, object]] = []
    for spec in args.servers:
        for round_number in range(1, args.rounds + 1):
            for label, (driver, stack) in clients.items():
                server = await start_server(
                    parse_server_spec(spec), "hello", {}, cpus=placement.server_cpus
                )
                try:
                    level = await _level(driver, stack, server, args)
                finally:
                    await server.stop()
                runs.append({
                    "server": spec, "round": round_number, "client": label,
                    "rps": level.measured.rps, "verdict": level.verdict,
                    "server_cpu_us_per_call": level.server_cpu_us_per_call or 0.0,
                    "client_cpu_us_per_call": level.generator_cpu_us_per_call or 0.0,
                })  # fmt: skip
                print(f"{spec:<18} {label:<16} {level.measured.rps:>9,.0f} req/s"
                      f"  server {level.server_cpu_us_per_call or 0:>5.0f} us/call"
                      f"  {level.verdict}")  # fmt: skip
        mine = [r for r in runs if r["server"] == spec]
        for label in clients:
            rates = [float(r["rps"]) for r in mine if r["client"] == label]  # type: ignore[arg-type]
            print(f"  median {label:<16} {statistics.median(rates):>9,.0f} req/s")
        print()
    if args.save:
        save_record(
            args.save, "crosscheck", concurrency=args.concurrency, requests=args.requests,
            rounds=args.rounds, runs=runs,
        )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--servers", nargs="+", default=["grpcio:workers=1", "grpclib", "grpcio-aio"]
    )
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--clients",
        default="builtin,builtin@grpcio,bare"
        + (",ghz" if shutil.which("ghz") else "")
        + (",h2load" if shutil.which("h2load") else ""),
        help="bare, h2load, DRIVER[:PROCESSES][@STACK], ...",
    )
    parser.add_argument("--save", help="write every run as JSON (scripts/render_results.py)")
    asyncio.run(crosscheck(parser.parse_args()))


if __name__ == "__main__":
    main()
